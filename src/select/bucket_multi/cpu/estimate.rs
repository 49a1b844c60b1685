//! Order statistics bracketed by one counting pass: bucketMultiSelect's first pass alone, for
//! approximate quantiles with guaranteed bounds.
//!
//! The pass counts every bucket of the projection (`piecewise.rs`), so for each rank the
//! bucket holding it, the number of values below that bucket and the bucket's key range are
//! known exactly: the element of the rank lies in the bucket's key range, and exactly the
//! bucket's values share that range. An estimate inside the range comes from the bucket's
//! linear piece (the rank's position among the bucket's values, mapped onto the coordinates the
//! bucket spans), clamped to the range. Inputs shorter than [`MIN_LEN`] are selected exactly.

use crate::element::{Element, RadixKey};
use crate::select::bucket_multi::cpu::piecewise::{from_coordinate, Real};
use crate::select::bucket_multi::cpu::{bucket_target, count_buckets, fit, MIN_LEN};
use crate::select::floyd_rivest;
use crate::select::host::map_chunks;

/// What one counting pass knows about the element of a rank.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Bracket<T> {
    /// The smallest value the element can be (a key range's start, as a value).
    pub(crate) lower: T,
    /// The largest value it can be.
    pub(crate) upper: T,
    /// Exactly this many values are below `lower` (by key).
    pub(crate) below: usize,
    /// Exactly this many values are at most `upper` (by key).
    pub(crate) upto: usize,
    /// An estimate of the element, in `lower..=upper`.
    pub(crate) estimate: T,
}

/// The brackets of `ranks` (each `< data.len()`, any order) in the order given, and the number
/// of NaNs in `data` (counted by the pass).
pub(crate) fn brackets<T: Element>(
    data: &[T],
    ranks: &[usize],
    parallel: bool,
) -> (Vec<Bracket<T>>, usize) {
    if data.len() < MIN_LEN {
        return exact(data, ranks, parallel);
    }
    if T::Key::BITS == 32 {
        brackets_in::<T, f32>(data, ranks, parallel)
    } else {
        brackets_in::<T, f64>(data, ranks, parallel)
    }
}

/// [`brackets`] with the projection computing in `F`.
fn brackets_in<T: Element, F: Real>(
    data: &[T],
    ranks: &[usize],
    parallel: bool,
) -> (Vec<Bracket<T>>, usize) {
    let n = data.len();
    let p = fit::<T, F>(data, bucket_target(n, ranks.len()), parallel);
    let (_, totals) = count_buckets(data, &p, parallel);
    let nans = if T::DTYPE.is_float() {
        totals[p.top]
    } else {
        0
    };
    let mut before = Vec::with_capacity(totals.len());
    let mut sum = 0;
    for &t in &totals {
        before.push(sum);
        sum += t;
    }
    let bracket = |k: usize| -> Bracket<T> {
        // The bucket holding rank `k`: the last one starting at or below it.
        let b = before.partition_point(|&s| s <= k) - 1;
        let (below, size) = (before[b], totals[b]);
        let (lo, hi) = if b == p.top {
            (T::Key::MAX, T::Key::MAX)
        } else {
            p.key_range::<T>(b)
                .expect("a bucket holding values has keys")
        };
        let estimate = if b == p.top {
            T::from_key(lo)
        } else {
            let (start, end) = p.coordinate_range(b);
            let at = (k - below) as f64 + 0.5;
            let guess: T = from_coordinate(start + (end - start) * at / size as f64, p.by_key);
            T::from_key(guess.to_key().clamp(lo, hi))
        };
        Bracket {
            lower: T::from_key(lo),
            upper: T::from_key(hi),
            below,
            upto: below + size,
            estimate,
        }
    };
    (ranks.iter().map(|&k| bracket(k)).collect(), nans)
}

/// Exact brackets of a short input: each element, with the counts of values below and at most
/// it.
fn exact<T: Element>(data: &[T], ranks: &[usize], parallel: bool) -> (Vec<Bracket<T>>, usize) {
    let (values, nans) = floyd_rivest::multiselect_counting_nans(data, ranks, parallel);
    let brackets = values
        .into_iter()
        .map(|x| {
            let key = x.to_key();
            let counts = map_chunks(data, parallel, |chunk| {
                chunk.iter().fold((0, 0), |(lt, le), y| {
                    let k = y.to_key();
                    (lt + (k < key) as usize, le + (k <= key) as usize)
                })
            });
            let (below, upto) = counts
                .iter()
                .fold((0, 0), |(a, b), &(lt, le)| (a + lt, b + le));
            Bracket {
                lower: x,
                upper: x,
                below,
                upto,
                estimate: x,
            }
        })
        .collect();
    (brackets, nans)
}

/// Unit tests: the brackets hold the exact elements and the counts are exact.
#[cfg(test)]
mod tests {
    use super::*;
    use crate::select::host::testing::{inputs, Gen};
    use crate::select::sort_choose;

    /// Checks the brackets of a few ranks of every adversarial input of `n` values.
    fn check<T: Gen>(n: usize) {
        for (name, data) in inputs::<T>(n, 31) {
            let keys = sort_choose::cpu::sorted_keys(&data, false);
            let ranks = [0, 1, n / 3, n / 2, n - 2, n - 1];
            let (got, nans) = brackets(&data, &ranks, true);
            assert_eq!(nans, data.iter().filter(|x| x.is_nan()).count(), "{name}");
            for (&k, b) in ranks.iter().zip(&got) {
                let (lo, hi, x) = (b.lower.to_key(), b.upper.to_key(), keys[k]);
                assert!(lo <= x && x <= hi, "{} {name} k={k}: {b:?}", T::DTYPE);
                let est = b.estimate.to_key();
                assert!(lo <= est && est <= hi, "{} {name} k={k}: {b:?}", T::DTYPE);
                assert_eq!(b.below, keys.partition_point(|&y| y < lo), "{name} k={k}");
                assert_eq!(b.upto, keys.partition_point(|&y| y <= hi), "{name} k={k}");
            }
        }
    }

    /// Every element type, short (exact) and long inputs.
    #[test]
    fn brackets_hold_the_elements() {
        for n in [100, MIN_LEN + 3, 70_000] {
            check::<f32>(n);
            check::<f64>(n);
            check::<i32>(n);
            check::<i64>(n);
            check::<u32>(n);
            check::<u64>(n);
        }
    }
}
