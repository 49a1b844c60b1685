//! randomizedSelect (Monroe, Wendelberger & Michalak, 2011) on the CPU: two splitters from a
//! random sample bracket the rank, one pass over the input counts the keys below the lower
//! splitter and copies those between the two, and the rank is selected among the copies.
//!
//! The sample holds `s ≈ n^(2/3)` keys, one at a random position in each of `s` equal strides.
//! For `p = (k + ½) / n` and `σ = √(s·p·(1 − p))`, the splitters are the sample's keys of ranks
//! `p·s ± (4σ + 2)` (the smallest or largest key there is past the sample's ends): the bracket
//! holds rank `k` with high probability and about `8σ·n / s` keys, `4·n^(2/3)` at the median.
//! The pass counts the keys equal to each splitter apart and copies
//! only those strictly between them, so a value repeated many times costs no workspace: a rank
//! on a splitter's duplicates is that splitter. The rank among the copies is found by
//! quickselect ([`quick::cpu::select_keys`]). When the bracket misses the rank (a sample that
//! misrepresents the input, rarely), quickselect runs on all the keys: the result is always
//! exact. The pass runs on several threads for long inputs with `parallel`.

use crate::element::{Element, RadixKey};
use crate::random::SplitMix64;
use crate::select::host::{collect_where, map_chunks};
use crate::select::quick;

/// Seed of the sample positions (mixed with the input's length).
const SEED: u64 = 0x5EED_0F5A_3F1E;

/// Values of a block of the pass: small enough to stay in the L1 cache between its count and
/// its copy.
const CACHED_BLOCK: usize = 4096;

/// Samples never hold fewer keys than this (or the whole input, when shorter).
const MIN_SAMPLE: usize = 256;

/// What the pass finds in one part of the input.
#[derive(Default)]
struct Bracket<K> {
    /// Keys below the lower splitter.
    below: usize,
    /// Keys equal to the lower splitter.
    at_lower: usize,
    /// Keys equal to the upper splitter (when the splitters differ).
    at_upper: usize,
    /// The keys strictly between the splitters, in input order.
    between: Vec<K>,
}

/// The element of rank `k` (`k < data.len()`) of `data`.
pub(crate) fn select<T: Element>(data: &[T], k: usize, parallel: bool) -> T {
    let n = data.len();
    let mut sample = sample_keys(data);
    sample.sort_unstable();
    let (lower, upper) = splitters(&sample, k, n);
    let parts = map_chunks(data, parallel, |chunk| count_and_copy(chunk, lower, upper));
    let mut all = Bracket::default();
    for part in parts {
        all.below += part.below;
        all.at_lower += part.at_lower;
        all.at_upper += part.at_upper;
        all.between.extend(part.between);
    }
    T::from_key(match locate(&all, k) {
        Located::Lower => lower,
        Located::Upper => upper,
        Located::Between(rank) => quick::cpu::select_keys(&mut all.between, rank),
        Located::Missed => {
            let mut keys: Vec<T::Key> = data.iter().map(|x| x.to_key()).collect();
            quick::cpu::select_keys(&mut keys, k)
        }
    })
}

/// One key at a random position in each of `s ≈ n^(2/3)` equal strides of `data`.
fn sample_keys<T: Element>(data: &[T]) -> Vec<T::Key> {
    let n = data.len();
    let s = ((n as f64).powf(2.0 / 3.0) as usize).clamp(MIN_SAMPLE.min(n), n);
    let mut rng = SplitMix64::new(SEED ^ n as u64);
    (0..s)
        .map(|j| {
            let start = j * n / s;
            let end = (j + 1) * n / s;
            data[start + rng.below(end - start)].to_key()
        })
        .collect()
}

/// The lower and upper splitters for rank `k` of `n` values, from the sorted `sample`: the
/// smallest or largest key there is where the bracket reaches past the sample's ends.
fn splitters<K: RadixKey>(sample: &[K], k: usize, n: usize) -> (K, K) {
    let s = sample.len() as f64;
    let p = (k as f64 + 0.5) / n as f64;
    let margin = 4.0 * (s * p * (1.0 - p)).sqrt() + 2.0;
    let (lower, upper) = ((p * s - margin).floor(), (p * s + margin).ceil());
    let lower = if lower < 0.0 {
        K::MIN
    } else {
        sample[lower as usize]
    };
    let upper = if upper >= s {
        K::MAX
    } else {
        sample[upper as usize]
    };
    (lower, upper)
}

/// Counts the keys of `chunk` below and at the splitters and copies those between them.
fn count_and_copy<T: Element>(chunk: &[T], lower: T::Key, upper: T::Key) -> Bracket<T::Key> {
    let mut bracket = Bracket::default();
    // Block by block, so that the copy reads what the count just read from cache: one pass
    // over memory.
    for block in chunk.chunks(CACHED_BLOCK) {
        for &x in block {
            let key = x.to_key();
            bracket.below += usize::from(key < lower);
            bracket.at_lower += usize::from(key == lower);
            bracket.at_upper += usize::from(key == upper && upper != lower);
        }
        bracket.between.extend(collect_where(
            block,
            |x: T| {
                let key = x.to_key();
                lower < key && key < upper
            },
            |x: T| x.to_key(),
        ));
    }
    bracket
}

/// Where rank `k` lies among the pass's counts.
#[derive(Debug, PartialEq)]
enum Located {
    /// On the lower splitter's duplicates.
    Lower,
    /// At this rank among the keys between the splitters.
    Between(usize),
    /// On the upper splitter's duplicates.
    Upper,
    /// Below the lower splitter or above the upper one.
    Missed,
}

/// Where rank `k` lies among the counts of `bracket`.
fn locate<K>(bracket: &Bracket<K>, k: usize) -> Located {
    let lower_end = bracket.below + bracket.at_lower;
    let between_end = lower_end + bracket.between.len();
    if k < bracket.below {
        Located::Missed
    } else if k < lower_end {
        Located::Lower
    } else if k < between_end {
        Located::Between(k - lower_end)
    } else if k < between_end + bracket.at_upper {
        Located::Upper
    } else {
        Located::Missed
    }
}

/// Unit tests against the sort reference.
#[cfg(test)]
mod tests {
    use super::*;
    use crate::select::host::testing::matches_sort_on_adversarial_inputs;

    matches_sort_on_adversarial_inputs!(super::select);

    /// The bracket of a uniform input holds the rank and about `4·n^(2/3)` keys or fewer.
    #[test]
    fn the_bracket_holds_the_rank_and_few_keys() {
        let n = 1 << 20;
        let mut rng = SplitMix64::new(3);
        let data: Vec<u32> = (0..n).map(|_| rng.next_u64() as u32).collect();
        for k in [0, n / 100, n / 2, n - 1] {
            let mut sample = sample_keys(&data);
            sample.sort_unstable();
            let (lower, upper) = splitters(&sample, k, n);
            let bracket = count_and_copy(&data, lower, upper);
            assert_ne!(locate(&bracket, k), Located::Missed, "rank {k}");
            let bound = 5.0 * (n as f64).powf(2.0 / 3.0);
            let copies = bracket.between.len();
            assert!((copies as f64) < bound, "rank {k}: {copies} copies");
        }
    }

    /// Ranks on the splitters' duplicates and outside the bracket.
    #[test]
    fn ranks_are_located_among_the_counts() {
        let bracket = Bracket {
            below: 10,
            at_lower: 2,
            at_upper: 3,
            between: vec![7u32; 5],
        };
        let located: Vec<Located> = [9, 10, 11, 12, 16, 17, 19, 20]
            .iter()
            .map(|&k| locate(&bracket, k))
            .collect();
        assert_eq!(
            located,
            [
                Located::Missed,
                Located::Lower,
                Located::Lower,
                Located::Between(0),
                Located::Between(4),
                Located::Upper,
                Located::Upper,
                Located::Missed
            ]
        );
    }
}
