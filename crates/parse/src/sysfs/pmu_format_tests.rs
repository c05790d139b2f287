//! Where the strings come from:
//! - "this VM": read from /sys/bus/event_source/devices on the project's
//!   2-CPU KVM guest (kernel 6.18, "AMD EPYC" CPU model): `msr/format/event`,
//!   `msr/events/tsc`, `uprobe/format/retprobe`, `uprobe/format/ref_ctr_offset`.
//! - "intel core": the strings arch/x86/events/intel/core.c and
//!   arch/x86/events/core.c write to `cpu/format/*` and `cpu/events/*`.
//! - "amd core": arch/x86/events/amd/core.c, `cpu/format/event`.
//! - "arm": arch/arm64 PMUv3 `armv8_pmuv3_0/format/event` and its
//!   `events/cpu_cycles`.

use super::*;
use proptest::prelude::*;

fn field(word: ConfigWord, mask: u64) -> FormatField {
    FormatField { word, mask }
}

fn intel_formats() -> BTreeMap<String, FormatField> {
    [
        ("event", "config:0-7\n"),
        ("umask", "config:8-15\n"),
        ("edge", "config:18\n"),
        ("pc", "config:19\n"),
        ("any", "config:21\n"),
        ("inv", "config:23\n"),
        ("cmask", "config:24-31\n"),
        ("ldlat", "config1:0-15\n"),
        ("offcore_rsp", "config1:0-63\n"),
    ]
    .into_iter()
    .map(|(name, text)| (name.to_string(), parse_format(text).unwrap()))
    .collect()
}

#[test]
fn formats_of_this_vm() {
    assert_eq!(
        parse_format("config:0-63\n").unwrap(),
        field(ConfigWord::Config, u64::MAX)
    );
    assert_eq!(parse_format("config:0\n").unwrap(), field(ConfigWord::Config, 1));
    assert_eq!(
        parse_format("config:32-63\n").unwrap(),
        field(ConfigWord::Config, 0xffff_ffff_0000_0000)
    );
}

#[test]
fn formats_of_intel_amd_and_arm() {
    let intel = intel_formats();
    assert_eq!(intel["event"], field(ConfigWord::Config, 0xff));
    assert_eq!(intel["umask"], field(ConfigWord::Config, 0xff00));
    assert_eq!(intel["any"], field(ConfigWord::Config, 1 << 21));
    assert_eq!(intel["ldlat"], field(ConfigWord::Config1, 0xffff));
    assert_eq!(intel["offcore_rsp"].width_bits(), 64);
    // AMD's 12-bit event select is split over two ranges.
    let amd = parse_format("config:0-7,32-35\n").unwrap();
    assert_eq!(amd, field(ConfigWord::Config, 0xf_0000_00ff));
    assert_eq!(amd.width_bits(), 12);
    assert_eq!(parse_format("config:0-15\n").unwrap().width_bits(), 16);
}

#[test]
fn malformed_formats_are_errors() {
    for text in [
        "",
        "config",
        "config:",
        "config:64",
        "config:0-64",
        "config:7-0",
        "config4:0-7",
        "attr:0-7",
        "config:a-b",
        "config:0-7,",
        "config:-1",
        "config:+3",
        "config:0--7",
        "config:18446744073709551616",
    ] {
        assert!(parse_format(text).is_err(), "{text:?} was accepted");
    }
    assert!(parse_format(&format!("config:{}", "0,".repeat(3000))).is_err());
}

#[test]
fn aliases_of_this_vm_and_intel() {
    assert_eq!(
        parse_event("event=0x00\n").unwrap(),
        vec![Term {
            name: "event".into(),
            value: TermValue::Number(0)
        }]
    );
    let mem_loads = parse_event("event=0xcd,umask=0x1,ldlat=3\n").unwrap();
    assert_eq!(mem_loads.len(), 3);
    assert_eq!(mem_loads[2].value, TermValue::Number(3));
    let config = encode(&mem_loads, &intel_formats()).unwrap();
    assert_eq!(config.config, 0x01cd);
    assert_eq!(config.config1, 3);
    // ref-cycles is the pseudo-event 0x00 with umask 3.
    let ref_cycles = encode(&parse_event("event=0x00,umask=0x03\n").unwrap(), &intel_formats()).unwrap();
    assert_eq!(ref_cycles.config, 0x0300);
    let cycles = encode(&parse_event("event=0x3c\n").unwrap(), &intel_formats()).unwrap();
    assert_eq!(
        cycles,
        Config {
            config: 0x3c,
            ..Config::default()
        }
    );
}

#[test]
fn amd_split_event_select_fills_the_high_range() {
    let mut formats = BTreeMap::new();
    formats.insert("event".to_string(), parse_format("config:0-7,32-35").unwrap());
    formats.insert("umask".to_string(), parse_format("config:8-15").unwrap());
    let config = encode(&parse_event("event=0x1c0,umask=0x02").unwrap(), &formats).unwrap();
    assert_eq!(config.config, (1 << 32) | 0x02c0);
    let too_wide = encode(&parse_event("event=0x1000").unwrap(), &formats).unwrap_err();
    assert!(too_wide.0.contains("does not fit the field's 12 bits"), "{too_wide}");
}

#[test]
fn bare_terms_config_words_and_sampling_terms() {
    let formats = intel_formats();
    let config = encode(&parse_event("event=0xc0,edge,inv").unwrap(), &formats).unwrap();
    assert_eq!(config.config, 0xc0 | (1 << 18) | (1 << 23));
    // A whole word by name, decimal numbers, and period ignored.
    let config = encode(&parse_event("config=60,config2=0x5,period=2000003").unwrap(), &formats).unwrap();
    assert_eq!((config.config, config.config2), (60, 5));
}

#[test]
fn a_value_only_the_user_can_give_is_not_guessed() {
    // The `?` form of Documentation/ABI/testing/sysfs-bus-event_source-devices-events
    // (powerpc hv_24x7 writes e.g. `core=?`); this string is built in that form.
    let terms = parse_event("domain=0x2,offset=0xe0,core=?,lpar=0x0").unwrap();
    assert_eq!(terms[2].value, TermValue::Ask);
    let mut formats = BTreeMap::new();
    for (name, bits) in [
        ("domain", "config:0-3"),
        ("offset", "config:16-31"),
        ("core", "config:32-47"),
    ] {
        formats.insert(name.to_string(), parse_format(bits).unwrap());
    }
    formats.insert("lpar".to_string(), parse_format("config1:0-15").unwrap());
    let error = encode(&terms, &formats).unwrap_err();
    assert!(error.0.contains("needs a value for `core`"), "{error}");
}

#[test]
fn unknown_fields_are_refused() {
    let error = encode(&parse_event("event=0x3c,frob=1").unwrap(), &intel_formats()).unwrap_err();
    assert!(error.0.contains("`frob` is not a field in format/"), "{error}");
}

#[test]
fn malformed_aliases_are_errors() {
    for text in [
        "",
        "\n",
        "event=",
        "=0x3c",
        "event=0xzz",
        "event=0x",
        "event=-1",
        "event=0x3c,event=0x3d",
        "event=0x3c,,umask=1",
        "event = 0x3c; rm -rf",
        "ev ent=1",
        "event=18446744073709551616",
        "event=0x10000000000000000",
    ] {
        assert!(parse_event(text).is_err(), "{text:?} was accepted");
    }
    let many = (0..65).map(|i| format!("t{i}=1")).collect::<Vec<_>>().join(",");
    assert!(parse_event(&many).unwrap_err().0.contains("more than 64 terms"));
    assert!(parse_event(&"a".repeat(5000)).is_err());
}

#[test]
fn deposit_matches_a_bit_by_bit_reference() {
    assert_eq!(deposit(0b1011, 0b1111_0000), 0b1011_0000);
    assert_eq!(deposit(0xfff, 0xf_0000_00ff), 0xf_0000_00ff);
    assert_eq!(deposit(u64::MAX, u64::MAX), u64::MAX);
    assert_eq!(deposit(5, 0), 0);
}

proptest! {
    #[test]
    fn parsers_never_panic(text in "\\PC{0,80}") {
        let _ = parse_format(&text);
        if let Ok(terms) = parse_event(&text) {
            let _ = encode(&terms, &intel_formats());
        }
    }

    #[test]
    fn encoded_values_read_back(event in 0u64..256, umask in 0u64..256) {
        let text = format!("event={event:#x},umask={umask}");
        let config = encode(&parse_event(&text).unwrap(), &intel_formats()).unwrap();
        prop_assert_eq!(config.config, event | (umask << 8));
    }
}
