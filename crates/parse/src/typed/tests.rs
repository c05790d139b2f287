use std::time::Duration;

use super::*;

const WEEK: Duration = Duration::from_secs(7 * 24 * 3600);
const MS: Duration = Duration::from_millis(1);

fn watch(text: &str) -> Result<Duration, String> {
    duration_in(text, MS, WEEK).map_err(|e| e.to_string())
}

#[test]
fn durations_in_every_unit() {
    assert_eq!(watch("500ms"), Ok(Duration::from_millis(500)));
    assert_eq!(watch("1.5s"), Ok(Duration::from_millis(1500)));
    assert_eq!(
        watch("2").unwrap_err(),
        "`2` has no unit: write 2ms or 2s (units: ms, s, m, h); give a duration from 1ms to 7 days (168h)"
    );
    assert!(watch("500").unwrap_err().contains("has no unit"));
    assert_eq!(watch("2m"), Ok(Duration::from_secs(120)));
    assert_eq!(watch("168h"), Ok(WEEK));
    let hour = Duration::from_secs(3600);
    assert_eq!(duration_in("1h", Duration::from_millis(100), hour), Ok(hour));
}

#[test]
fn hostile_durations_are_refused_not_panics() {
    for text in [
        "1e23s",
        "1e23",
        "18446744073709551616s",
        "9223372036854775807s",
        "nan",
        "NaNs",
        "inf",
        "infs",
        "-inf",
        "-1s",
        "0s",
        "0",
        "169h",
        "1e-300s",
        "",
        "s",
        "1d",
        "1 s s",
        "0x10s",
    ] {
        let error = watch(text).unwrap_err();
        assert!(error.contains("from 1ms to 7 days (168h)"), "{text}: {error}");
    }
    let interval = |t: &str| duration_in(t, Duration::from_millis(100), Duration::from_secs(3600));
    assert!(interval("99ms").unwrap_err().to_string().contains("from 100ms to 1h"));
    assert!(interval("61m").is_err());
    assert_eq!(
        duration_in("1e23s", Duration::from_millis(10), WEEK)
            .unwrap_err()
            .to_string(),
        "`1e23s` is out of range: give a duration from 10ms to 7 days (168h)"
    );
    assert_eq!(
        duration_in("soon", Duration::from_secs(1), Duration::from_secs(86_400))
            .unwrap_err()
            .to_string(),
        "`soon` is not a duration like 500ms, 1s, 2m or 1h; give a duration from 1s to 1 day (24h)"
    );
}

#[test]
fn millis_take_milliseconds_or_a_duration() {
    let sample_ms = |t: &str| millis_in(t, MS, Duration::from_secs(60), "a sample length in milliseconds");
    assert_eq!(sample_ms("40"), Ok(40));
    assert_eq!(sample_ms("40ms"), Ok(40));
    assert_eq!(sample_ms("0.5s"), Ok(500));
    for bad in ["0", "60001", "61s", "0.1ms", "-1", "nan", "", "40us"] {
        assert!(sample_ms(bad).is_err(), "{bad}");
    }
    assert_eq!(
        sample_ms("60001").unwrap_err().to_string(),
        "`60001` is not a sample length in milliseconds from 1 to 60000"
    );
}

#[test]
fn whole_numbers_with_limits() {
    let pid = |t: &str| whole_in(t, 1, 4_194_304, "a process id");
    assert_eq!(pid("1"), Ok(1));
    assert_eq!(pid(" 4194304 "), Ok(4_194_304));
    for text in ["0", "4194305", "-1", "+1", "1.0", "0x10", "", "18446744073709551616"] {
        let error = pid(text).unwrap_err().to_string();
        assert_eq!(error, format!("`{text}` is not a process id from 1 to 4194304"));
    }
}

#[test]
fn typed_lists_take_numactl_and_strided_forms() {
    let cpus = |t: &str| id_list(t, IdList::parse_input, 32 * 1024);
    let nodes = |t: &str| id_list(t, IdList::parse_nodes_input, 32 * 1024);
    assert_eq!(cpus("0-6:2,9").unwrap().ids(), &[0, 2, 4, 6, 9]);
    assert_eq!(nodes("0-3,8").unwrap().ids(), &[0, 1, 2, 3, 8]);
    for bad in ["", " ", "0-30:0", "3-1", "x", "1,,2", "0-1024:2"] {
        let error = nodes(bad).unwrap_err().to_string();
        assert!(!error.contains('\n'), "{bad}: {error}");
    }
    let long = vec!["1"; 20_000].join(",");
    assert_eq!(
        cpus(&long).unwrap_err().to_string(),
        "the list is 39999 bytes long; at most 32768 (write ranges like 0-63 or 0-62:2)"
    );
}

#[test]
fn delay_lists() {
    let delays = |t: &str| delays_ns(t, 1_000_000, 64);
    assert_eq!(delays("0,2000"), Ok(DelaysNs(vec![0, 2000])));
    assert!(delays("1000001").unwrap_err().to_string().contains("from 0 to 1000000"));
    assert!(delays("18446744073709551615").is_err());
    assert_eq!(
        delays(&vec!["1"; 65].join(",")).unwrap_err().to_string(),
        "65 delays given; at most 64"
    );
    assert!(delays("1,,2").is_err());
}

const BUFFER_MIN: usize = 4 << 10;
const BUFFER_MAX: usize = 16 << 40;

fn buffer(text: &str) -> Result<usize, TypedError> {
    buffer_bytes(text, BUFFER_MIN, BUFFER_MAX)
}

fn sweep(text: &str) -> Result<Sizes, TypedError> {
    size_sweep(text, BUFFER_MIN, BUFFER_MAX, 64)
}

#[test]
fn sizes_with_suffixes() {
    assert_eq!(size_bytes("4096"), Ok(4096));
    assert_eq!(size_bytes("64K"), Ok(65536));
    assert_eq!(size_bytes("256m"), Ok(256 << 20));
    assert_eq!(size_bytes("1GiB"), Ok(1 << 30));
    assert_eq!(size_bytes("1.5G"), Ok(3 << 29));
    assert_eq!(
        size_bytes("lots").unwrap_err().to_string(),
        "`lots` is not a size such as 64K, 256M or 1G"
    );
    assert_eq!(
        size_bytes("0").unwrap_err().to_string(),
        "`0` is out of range (1 byte to 1 PiB)"
    );
}

#[test]
fn sweeps_as_ranges_and_lists() {
    assert_eq!(
        sweep("16K..128K"),
        Ok(Sizes(vec![16 << 10, 32 << 10, 64 << 10, 128 << 10]))
    );
    assert_eq!(sweep("16K..40K"), Ok(Sizes(vec![16 << 10, 32 << 10, 40 << 10])));
    assert_eq!(sweep("32K,1M"), Ok(Sizes(vec![32 << 10, 1 << 20])));
    assert_eq!(
        sweep("1G..16K").unwrap_err().to_string(),
        "`1G..16K`: the range runs backwards"
    );
}

#[test]
fn hostile_sizes_are_refused() {
    for text in [
        "1e400K",
        "nan",
        "inf",
        "-1K",
        "17T",
        "1P",
        "18446744073709551616",
        "2K",
        "",
        "K",
        "1..2",
    ] {
        assert!(buffer(text).is_err(), "{text}");
    }
    assert_eq!(
        buffer("17T").unwrap_err().to_string(),
        "`17T` is out of range: a buffer is 4K to 16T"
    );
    assert_eq!(buffer("16T"), Ok(BUFFER_MAX));
    assert!(sweep("4K..1P").is_err());
    assert!(sweep(&vec!["4K"; 65].join(","))
        .unwrap_err()
        .to_string()
        .contains("at most 64"));
    assert_eq!(sweep("4K..16T").map(|s| s.0.len()), Ok(33));
}

#[test]
fn limits_in_bytes_read_as_typed() {
    assert_eq!(size::short(4 << 10), "4K");
    assert_eq!(size::short(16 << 40), "16T");
    assert_eq!(size::short(3 << 29), "1536M");
    assert_eq!(size::short(1000), "1000");
}
