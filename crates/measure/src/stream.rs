//! Bandwidth kernels: the four read:write mixes over 64-bit words.
//!
//! Bytes are counted the STREAM way: what the kernel itself reads plus what
//! it writes. Write-allocate traffic (a plain store first reads its line)
//! is not counted, which is why the write-only mix uses non-temporal stores
//! where the CPU has them: they skip that read.

use serde::{Deserialize, Serialize};

/// Which mix of reads and writes a bandwidth run performs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Mix {
    /// Sum every word.
    #[serde(rename = "read")]
    Read,
    /// `c[i] = a[i] + b[i]`: two read streams, one write stream.
    #[serde(rename = "2:1")]
    TwoReadsOneWrite,
    /// `b[i] = a[i] + 1`: one read stream, one write stream. (A plain copy
    /// would be turned into `memcpy`, which switches to non-temporal
    /// stores on its own above a size glibc picks.)
    #[serde(rename = "1:1")]
    OneReadOneWrite,
    /// `a[i] = x`, with non-temporal stores on x86_64.
    #[serde(rename = "write")]
    Write,
}

impl Mix {
    pub fn name(self) -> &'static str {
        match self {
            Mix::Read => "read",
            Mix::TwoReadsOneWrite => "2:1",
            Mix::OneReadOneWrite => "1:1",
            Mix::Write => "write",
        }
    }

    /// Runs one pass over `words` and returns the bytes it read plus wrote.
    /// The buffer is split into as many equal arrays as the mix has streams.
    pub fn pass(self, words: &mut [u64]) -> usize {
        match self {
            Mix::Read => {
                std::hint::black_box(read_sum(words));
                words.len() * 8
            }
            Mix::TwoReadsOneWrite => {
                let third = words.len() / 3;
                let (a, rest) = words.split_at_mut(third);
                let (b, c) = rest.split_at_mut(third);
                add(&mut c[..third], a, b);
                third * 3 * 8
            }
            Mix::OneReadOneWrite => {
                let half = words.len() / 2;
                let (a, b) = words.split_at_mut(half);
                increment_copy(&mut b[..half], a);
                half * 2 * 8
            }
            Mix::Write => {
                fill(words, 0x5a5a_5a5a_5a5a_5a5a);
                words.len() * 8
            }
        }
    }
}

/// Eight independent sums so the adds never wait on each other and the
/// loop is limited by loads, not by one dependency chain.
pub fn read_sum(words: &[u64]) -> u64 {
    let mut sums = [0u64; 8];
    let chunks = words.chunks_exact(8);
    let tail = chunks.remainder();
    for chunk in chunks {
        for (sum, word) in sums.iter_mut().zip(chunk) {
            *sum = sum.wrapping_add(*word);
        }
    }
    let mut total = tail.iter().fold(0u64, |acc, w| acc.wrapping_add(*w));
    for sum in sums {
        total = total.wrapping_add(sum);
    }
    total
}

pub fn add(c: &mut [u64], a: &[u64], b: &[u64]) {
    for ((c, a), b) in c.iter_mut().zip(a).zip(b) {
        *c = a.wrapping_add(*b);
    }
}

pub fn increment_copy(b: &mut [u64], a: &[u64]) {
    for (b, a) in b.iter_mut().zip(a) {
        *b = a.wrapping_add(1);
    }
}

/// Whether [`fill`] uses non-temporal stores on this build.
pub const NON_TEMPORAL_STORES: bool = cfg!(any(target_arch = "x86_64", target_arch = "aarch64"));

/// Writes `value` to every word, bypassing the caches where possible.
pub fn fill(words: &mut [u64], value: u64) {
    #[cfg(target_arch = "x86_64")]
    {
        if std::arch::is_x86_feature_detected!("avx") {
            // SAFETY: the CPU has AVX, checked just above.
            unsafe { fill_avx(words, value) };
        } else {
            fill_sse2(words, value);
        }
    }
    #[cfg(target_arch = "aarch64")]
    fill_stnp(words, value);
    #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
    words.fill(value);
}

/// Arm's non-temporal pair stores, two 32-byte STNPs per 64-byte line:
/// without the hint a write reads each line first (read-for-ownership), so
/// "write" bandwidth would count that traffic too. Advanced SIMD (the Q
/// registers) is part of every AArch64 CPU.
#[cfg(target_arch = "aarch64")]
fn fill_stnp(words: &mut [u64], value: u64) {
    const LINE_WORDS: usize = 8;
    let misaligned = words.as_ptr().align_offset(LINE_WORDS * 8).min(words.len());
    let (head, rest) = words.split_at_mut(misaligned);
    head.fill(value);
    let lines = rest.len() / LINE_WORDS;
    let (middle, tail) = rest.split_at_mut(lines * LINE_WORDS);
    tail.fill(value);
    if lines == 0 {
        return;
    }
    // SAFETY: `middle` is `lines` whole, 64-byte aligned lines of this
    // slice, and the loop writes exactly those bytes (64 a turn, `lines`
    // turns, lines > 0); the barrier orders the stores before what
    // follows, as x86's sfence does.
    unsafe {
        std::arch::asm!(
            "dup {pattern:v}.2d, {value}",
            "2:",
            "stnp {pattern:q}, {pattern:q}, [{at}]",
            "stnp {pattern:q}, {pattern:q}, [{at}, #32]",
            "add {at}, {at}, #64",
            "subs {left}, {left}, #1",
            "b.ne 2b",
            "dmb ishst",
            value = in(reg) value,
            pattern = out(vreg) _,
            at = inout(reg) middle.as_mut_ptr() => _,
            left = inout(reg) lines => _,
            options(nostack),
        );
    }
}

/// 32-byte streaming stores, two per cache line: the widest the CPU is
/// known to have, as fewer, fuller write-combining flushes reach memory
/// faster.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx")]
unsafe fn fill_avx(words: &mut [u64], value: u64) {
    use std::arch::x86_64::{__m256i, _mm256_set1_epi64x, _mm256_stream_si256, _mm_sfence};
    // SAFETY: `align_to_mut` yields a correctly aligned, in-bounds view of
    // the same words; `__m256i` has no invalid bit patterns.
    let (head, middle, tail) = unsafe { words.align_to_mut::<__m256i>() };
    head.fill(value);
    tail.fill(value);
    // SAFETY: AVX is enabled for this function (the caller checked); every
    // pointer comes from the aligned `middle` slice; the fence orders the
    // streaming stores before anything that follows.
    unsafe {
        let pattern = _mm256_set1_epi64x(value as i64);
        for slot in middle.iter_mut() {
            _mm256_stream_si256(slot, pattern);
        }
        _mm_sfence();
    }
}

/// 16-byte streaming stores; SSE2 is part of every x86_64 CPU.
#[cfg(target_arch = "x86_64")]
fn fill_sse2(words: &mut [u64], value: u64) {
    use std::arch::x86_64::{__m128i, _mm_set1_epi64x, _mm_sfence, _mm_stream_si128};
    // SAFETY: as in `fill_avx`.
    let (head, middle, tail) = unsafe { words.align_to_mut::<__m128i>() };
    head.fill(value);
    tail.fill(value);
    // SAFETY: SSE2 is baseline on x86_64; pointers come from `middle`.
    unsafe {
        let pattern = _mm_set1_epi64x(value as i64);
        for slot in middle.iter_mut() {
            _mm_stream_si128(slot, pattern);
        }
        _mm_sfence();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// Every mix touches every byte it claims, and computes the right thing.
        #[test]
        fn kernels_touch_every_word(len in 0usize..600, seed: u64) {
            let words: Vec<u64> = (0..len as u64).map(|i| i.wrapping_mul(seed | 1)).collect();
            prop_assert_eq!(read_sum(&words), words.iter().fold(0u64, |a, w| a.wrapping_add(*w)));

            let mut filled = words.clone();
            fill(&mut filled, 9);
            prop_assert!(filled.iter().all(|w| *w == 9));
            #[cfg(target_arch = "x86_64")]
            {
                let mut filled = words.clone();
                fill_sse2(&mut filled, 7);
                prop_assert!(filled.iter().all(|w| *w == 7));
            }

            let mut copy = words.clone();
            let bytes = Mix::OneReadOneWrite.pass(&mut copy);
            let half = len / 2;
            prop_assert_eq!(bytes, half * 16);
            for i in 0..half {
                prop_assert_eq!(copy[half + i], words[i].wrapping_add(1));
            }

            let mut sum = words.clone();
            let bytes = Mix::TwoReadsOneWrite.pass(&mut sum);
            let third = len / 3;
            prop_assert_eq!(bytes, third * 24);
            for i in 0..third {
                prop_assert_eq!(sum[2 * third + i], words[i].wrapping_add(words[third + i]));
            }
            prop_assert_eq!(Mix::Read.pass(&mut sum), len * 8);
            prop_assert_eq!(Mix::Write.pass(&mut sum), len * 8);
        }
    }

    #[test]
    fn mix_names_round_trip_through_json() {
        for mix in [Mix::Read, Mix::TwoReadsOneWrite, Mix::OneReadOneWrite, Mix::Write] {
            let json = serde_json::to_string(&mix).unwrap();
            assert_eq!(json, format!("\"{}\"", mix.name()));
        }
    }
}
