//! The generator behind every random operator and signal of the module: SplitMix64, with
//! standard normals (Box–Muller) and uniform integers derived from it in a
//! fixed, documented way, so that a seed gives the same draws on every platform.

/// 2^-53, the spacing of the doubles Box–Muller draws.
const TWO_POW_MINUS_53: f64 = 1.0 / (1u64 << 53) as f64;

use crate::random::SplitMix64;

/// SplitMix64 ([`crate::random::SplitMix64`]), seeded with its initial state, with:
///
/// - [`normal`](Rng::normal): Box–Muller from two draws `a`, `b`: `u1 = ((a >> 11) + 0.5)
///   2^-53` (in `(0, 1)`), `u2 = (b >> 11) 2^-53`, `r = sqrt(-2 ln u1)`, the pair
///   `r cos(2 pi u2)`, `r sin(2 pi u2)`: the first returned, the second kept for the next call;
/// - [`below`](Rng::below): `(u * b) >> 64` in 128-bit arithmetic, in `[0, b)`.
#[derive(Clone, Debug)]
pub(crate) struct Rng {
    bits: SplitMix64,
    spare: Option<f64>,
}

impl Rng {
    /// The generator whose state is `seed`.
    pub(crate) fn new(seed: u64) -> Rng {
        Rng {
            bits: SplitMix64::new(seed),
            spare: None,
        }
    }

    /// The next 64 random bits.
    pub(crate) fn next_u64(&mut self) -> u64 {
        self.bits.next_u64()
    }

    /// A standard normal value (Box–Muller, the second value of each pair kept for the next
    /// call).
    pub(crate) fn normal(&mut self) -> f64 {
        if let Some(z) = self.spare.take() {
            return z;
        }
        let a = self.next_u64();
        let b = self.next_u64();
        let u1 = ((a >> 11) as f64 + 0.5) * TWO_POW_MINUS_53;
        let u2 = (b >> 11) as f64 * TWO_POW_MINUS_53;
        let r = (-2.0 * u1.ln()).sqrt();
        let angle = 2.0 * std::f64::consts::PI * u2;
        self.spare = Some(r * angle.sin());
        r * angle.cos()
    }

    /// A uniform integer in `[0, bound)` (0 when `bound` is 0).
    pub(crate) fn below(&mut self, bound: usize) -> usize {
        self.bits.below(bound)
    }

    /// `count` distinct integers below `bound`, every subset equally likely, sorted
    /// ascending: Floyd's algorithm, for `j` from `bound - count` to `bound - 1` in turn,
    /// `t = below(j + 1)` chosen unless already chosen, `j` chosen otherwise. Memory is
    /// proportional to `count` (or to `bound` when that is at most 64 times `count`).
    ///
    /// Needs `count <= bound`.
    pub(crate) fn distinct_below(&mut self, count: usize, bound: usize) -> Vec<usize> {
        debug_assert!(count <= bound);
        let mut chosen = Vec::with_capacity(count);
        if count <= 64 {
            for j in bound - count..bound {
                let t = self.below(j + 1);
                chosen.push(if chosen.contains(&t) { j } else { t });
            }
        } else if bound / 64 <= count {
            let mut marks = vec![false; bound];
            for j in bound - count..bound {
                let t = self.below(j + 1);
                let pick = if marks[t] { j } else { t };
                marks[pick] = true;
                chosen.push(pick);
            }
        } else {
            let mut marks = std::collections::HashSet::with_capacity(count);
            for j in bound - count..bound {
                let t = self.below(j + 1);
                let pick = if marks.contains(&t) { j } else { t };
                marks.insert(pick);
                chosen.push(pick);
            }
        }
        chosen.sort_unstable();
        chosen
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normal_moments() {
        let mut rng = Rng::new(42);
        let count = 200_000;
        let (mut sum, mut sum_sq) = (0.0, 0.0);
        for _ in 0..count {
            let z = rng.normal();
            assert!(z.is_finite());
            sum += z;
            sum_sq += z * z;
        }
        let mean = sum / count as f64;
        let var = sum_sq / count as f64 - mean * mean;
        assert!(mean.abs() < 0.01, "mean {mean}");
        assert!((var - 1.0).abs() < 0.02, "variance {var}");
    }

    #[test]
    fn distinct_below_draws_distinct_sorted_subsets_uniformly() {
        let mut rng = Rng::new(3);
        let mut hits = [0usize; 10];
        for _ in 0..20_000 {
            let s = rng.distinct_below(3, 10);
            assert_eq!(s.len(), 3);
            assert!(s.windows(2).all(|w| w[0] < w[1]));
            assert!(s.iter().all(|&i| i < 10));
            s.iter().for_each(|&i| hits[i] += 1);
        }
        // Each index is chosen with probability 3/10: 6000 of 20000 draws.
        for h in hits {
            assert!((5600..6400).contains(&h), "{hits:?}");
        }
        assert_eq!(rng.distinct_below(10, 10), (0..10).collect::<Vec<_>>());
        assert!(rng.distinct_below(0, 10).is_empty());
    }

    #[test]
    fn distinct_below_is_the_same_set_whatever_the_bookkeeping() {
        // Floyd's algorithm by a plain scan, against the three forms.
        for (count, bound) in [(5, 9), (64, 64), (65, 1000), (100, 100_000), (300, 301)] {
            let mut rng = Rng::new(count as u64);
            let mut reference = Rng::new(count as u64);
            let mut expected = Vec::new();
            for j in bound - count..bound {
                let t = reference.below(j + 1);
                expected.push(if expected.contains(&t) { j } else { t });
            }
            expected.sort_unstable();
            assert_eq!(rng.distinct_below(count, bound), expected);
        }
    }
}
