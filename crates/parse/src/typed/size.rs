//! Byte sizes as people type them: `64K`, `1.5G`, and sweeps `16K..1G`
//! (every power of two in between) or `32K,1M,256M`.

use super::TypedError;

/// A sweep's sizes, in order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sizes(pub Vec<usize>);

/// `4096`, `64K`, `256M`, `1G`, `1.5G` (K/M/G/T are powers of 1024; a
/// trailing `B` or `iB` is allowed), 1 byte to 1 PiB.
pub fn size_bytes(text: &str) -> Result<usize, TypedError> {
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
    let value: f64 = number.trim().parse().map_err(|_| TypedError::NotSize {
        text: trimmed.to_string(),
    })?;
    let bytes = value * (1u64 << shift) as f64;
    if !(1.0..=(1u64 << 50) as f64).contains(&bytes) {
        return Err(TypedError::SizeOutOfRange {
            text: trimmed.to_string(),
        });
    }
    Ok(bytes as usize)
}

/// A buffer's size, from `min_bytes` to `max_bytes`.
pub fn buffer_bytes(text: &str, min_bytes: usize, max_bytes: usize) -> Result<usize, TypedError> {
    let bytes = size_bytes(text)?;
    if !(min_bytes..=max_bytes).contains(&bytes) {
        return Err(TypedError::BufferOutOfRange {
            text: text.trim().to_string(),
            min_bytes,
            max_bytes,
        });
    }
    Ok(bytes)
}

/// A sweep of buffer sizes, each `min_bytes` to `max_bytes`: a range
/// `from..to` (every power of two of `from` up to `to`, and `to`), or a
/// comma list of at most `max_count` sizes.
pub fn size_sweep(text: &str, min_bytes: usize, max_bytes: usize, max_count: usize) -> Result<Sizes, TypedError> {
    let buffer = |text: &str| buffer_bytes(text, min_bytes, max_bytes);
    if let Some((from, to)) = text.split_once("..") {
        let (from, to) = (buffer(from)?, buffer(to)?);
        if from > to {
            return Err(TypedError::Backwards { text: text.to_string() });
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
    let sizes = text.split(',').map(buffer).collect::<Result<Vec<_>, _>>()?;
    if sizes.len() > max_count {
        return Err(TypedError::TooMany {
            count: sizes.len(),
            what: "sizes",
            max: max_count,
        });
    }
    Ok(Sizes(sizes))
}

/// A limit in bytes as a message says it: `4K`, `16T` (the largest unit
/// that divides it), or bytes.
pub(super) fn short(bytes: usize) -> String {
    [(40, 'T'), (30, 'G'), (20, 'M'), (10, 'K')]
        .into_iter()
        .find(|&(shift, _)| bytes >= 1 << shift && bytes.is_multiple_of(1 << shift))
        .map_or_else(
            || bytes.to_string(),
            |(shift, unit)| format!("{}{unit}", bytes >> shift),
        )
}
