//! SplitMix64 (Steele, Lea and Flood), the crate's one seeded generator: sampling positions in
//! the selection algorithms, the streams of the regression's subsets, the operators and
//! signals of the recovery experiments. A seed gives the same numbers on every platform.

/// The SplitMix64 generator, seeded with its initial state.
///
/// Each number: `state += GAMMA`, then [`mix`] of the state.
#[derive(Clone, Debug)]
pub(crate) struct SplitMix64 {
    state: u64,
}

impl SplitMix64 {
    /// The increment of the state per number drawn (the golden ratio's fraction).
    pub(crate) const GAMMA: u64 = 0x9E37_79B9_7F4A_7C15;

    /// The generator whose state is `seed`.
    pub(crate) fn new(seed: u64) -> Self {
        SplitMix64 { state: seed }
    }

    /// The next 64 random bits.
    #[inline]
    pub(crate) fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(Self::GAMMA);
        mix(self.state)
    }

    /// A random integer below `n` by the multiply-shift `(u * n) >> 64` (0 when `n` is 0).
    #[inline]
    pub(crate) fn below(&mut self, n: usize) -> usize {
        ((self.next_u64() as u128 * n as u128) >> 64) as usize
    }
}

/// SplitMix64's finaliser: a bijective mix of the 64 bits.
#[inline]
pub(crate) fn mix(z: u64) -> u64 {
    let z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    let z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reference_values() {
        // The first outputs of SplitMix64 seeded with 1234567 (the reference implementation's
        // example).
        let mut rng = SplitMix64::new(1234567);
        let expected = [
            6457827717110365317u64,
            3203168211198807973,
            9817491932198370423,
            4593380528125082431,
            16408922859458223821,
        ];
        for e in expected {
            assert_eq!(rng.next_u64(), e);
        }
    }

    #[test]
    fn below_is_in_range() {
        let mut rng = SplitMix64::new(7);
        for _ in 0..10_000 {
            assert!(rng.below(13) < 13);
        }
        assert_eq!(rng.below(0), 0);
    }
}
