//! Byte sizes as people type them: `64K`, `1.5G`, and sweeps `16K..1G`
//! (every power of two in between) or `32K,1M,256M`.

/// The smallest buffer worth measuring: one base page.
pub const BUFFER_MIN_BYTES: usize = 4 << 10;
/// A fixed backstop for buffers (16 TiB, beyond any one node today); the
/// node's free memory is checked against the real size before allocating.
pub const BUFFER_MAX_BYTES: usize = 16 << 40;
/// Sizes in one sweep; each is a full measurement.
pub const SWEEP_MAX: usize = 64;

/// A sweep's sizes, in order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sizes(pub Vec<usize>);

/// `4096`, `64K`, `256M`, `1G`, `1.5G` (K/M/G/T are powers of 1024; a
/// trailing `B` or `iB` is allowed).
pub fn parse_size(text: &str) -> Result<usize, String> {
    let trimmed = text.trim();
    let upper = trimmed.to_ascii_uppercase();
    let body = upper
        .strip_suffix("IB")
        .or_else(|| upper.strip_suffix('B'))
        .unwrap_or(&upper);
    let (number, shift) = match body.chars().last() {
        Some('K') => (&body[..body.len() - 1], 10),
        Some('M') => (&body[..body.len() - 1], 20),
        Some('G') => (&body[..body.len() - 1], 30),
        Some('T') => (&body[..body.len() - 1], 40),
        _ => (body, 0),
    };
    let value: f64 = number
        .trim()
        .parse()
        .map_err(|_| format!("`{trimmed}` is not a size such as 64K, 256M or 1G"))?;
    let bytes = value * (1u64 << shift) as f64;
    if !(1.0..=(1u64 << 50) as f64).contains(&bytes) {
        return Err(format!("`{trimmed}` is out of range (1 byte to 1 PiB)"));
    }
    Ok(bytes as usize)
}

/// A measurement buffer: a size from 4K to 16T.
pub fn buffer_size(text: &str) -> Result<usize, String> {
    let bytes = parse_size(text)?;
    if !(BUFFER_MIN_BYTES..=BUFFER_MAX_BYTES).contains(&bytes) {
        return Err(format!("`{}` is out of range: a buffer is 4K to 16T", text.trim()));
    }
    Ok(bytes)
}

/// A sweep of buffer sizes, each 4K to 16T, at most 64 of them.
pub fn parse_sizes(text: &str) -> Result<Sizes, String> {
    if let Some((from, to)) = text.split_once("..") {
        let (from, to) = (buffer_size(from)?, buffer_size(to)?);
        if from > to {
            return Err(format!("`{text}`: the range runs backwards"));
        }
        let mut sizes = Vec::new();
        let mut size = from;
        while size <= to {
            sizes.push(size);
            size *= 2;
        }
        if sizes.last() != Some(&to) {
            sizes.push(to);
        }
        return Ok(Sizes(sizes));
    }
    let sizes = text.split(',').map(buffer_size).collect::<Result<Vec<_>, _>>()?;
    if sizes.len() > SWEEP_MAX {
        return Err(format!("{} sizes given; at most {SWEEP_MAX}", sizes.len()));
    }
    Ok(Sizes(sizes))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_with_suffixes() {
        assert_eq!(parse_size("4096"), Ok(4096));
        assert_eq!(parse_size("64K"), Ok(65536));
        assert_eq!(parse_size("256m"), Ok(256 << 20));
        assert_eq!(parse_size("1GiB"), Ok(1 << 30));
        assert_eq!(parse_size("1.5G"), Ok(3 << 29));
        assert!(parse_size("lots").is_err());
        assert!(parse_size("0").is_err());
    }

    #[test]
    fn sweeps_as_ranges_and_lists() {
        assert_eq!(
            parse_sizes("16K..128K"),
            Ok(Sizes(vec![16 << 10, 32 << 10, 64 << 10, 128 << 10]))
        );
        assert_eq!(parse_sizes("16K..40K"), Ok(Sizes(vec![16 << 10, 32 << 10, 40 << 10])));
        assert_eq!(parse_sizes("32K,1M"), Ok(Sizes(vec![32 << 10, 1 << 20])));
        assert!(parse_sizes("1G..16K").is_err());
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
            assert!(buffer_size(text).is_err(), "{text}");
        }
        assert_eq!(buffer_size("16T"), Ok(BUFFER_MAX_BYTES));
        assert!(parse_sizes("4K..1P").is_err());
        assert!(parse_sizes(&vec!["4K"; 65].join(","))
            .unwrap_err()
            .contains("at most 64"));
        assert_eq!(parse_sizes("4K..16T").map(|s| s.0.len()), Ok(33));
    }
}
