//! A small seeded generator (SplitMix64) for shuffling chase cycles: fast,
//! reproducible from its seed, and with no dependency to pull in. It is not
//! for cryptography, only for defeating hardware prefetchers.

#[derive(Debug, Clone)]
pub struct SplitMix64(u64);

impl SplitMix64 {
    pub fn new(seed: u64) -> Self {
        SplitMix64(seed)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `0..bound` (multiply-shift; the bias for bounds far below
    /// 2^64 is negligible). `bound` must be non-zero.
    pub fn below(&mut self, bound: usize) -> usize {
        ((u128::from(self.next_u64()) * bound as u128) >> 64) as usize
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stays_below_its_bound_and_is_reproducible() {
        let mut a = SplitMix64::new(7);
        let mut b = SplitMix64::new(7);
        for bound in 1..1000 {
            let x = a.below(bound);
            assert!(x < bound);
            assert_eq!(x, b.below(bound));
        }
    }
}
