//! bucketSelect (Alabi et al. 2012) on the CPU.
//!
//! The values are projected linearly onto [`BUCKETS`] equal-width buckets between the smallest
//! and the largest candidate (`bucket = (x - min) · B / (max - min)`, in `f64`), the buckets are
//! counted (in parallel chunks, merged), and the bucket holding rank `k` becomes the candidate
//! set of the next level (copied out in one pass that also finds its minimum and maximum). Like
//! the paper's Phase I, every level reduces the problem size; it ends when the smallest and
//! largest candidate are the same key, or when few candidates remain (then they are selected
//! on their keys).
//!
//! Robustness: the projection is monotone (every rounding step is), so buckets hold contiguous
//! key ranges and the result is exact whatever the rounding. `±inf` and NaN are counted apart
//! (they are the extreme keys) and never projected; a range that overflows `f64` is projected
//! at half scale. When the projection cannot separate the candidates (the paper's failure on
//! near-equal values: a range so small that `B / (max - min)` overflows, `-0.0` next to `+0.0`,
//! 64-bit integers that round to one `f64`, or every candidate landing in one bucket), or when
//! two levels in a row keep more than half of their candidates (the paper's "bucket killer":
//! values spread over many orders of magnitude, each level peeling off only the largest), the
//! remaining candidates are finished by radix select on their keys.
//!
//! Workspace: the candidate copy of each level — expected `n / B` values for smooth data, at
//! most `n` (values or keys) in the worst case — plus `B` counters per chunk.

use crate::element::{Element, RadixKey};
use crate::select::bucket::Projection;
use crate::select::host::{finite, finite_census, locate, map_chunks};
use crate::select::radix;

/// Buckets per level (the paper's `B = 2^10`).
const BUCKETS: usize = 1 << 10;

/// At most this many candidates are selected directly on their keys.
const FINISH: usize = 64;

/// The element of rank `k` (`k < data.len()`).
pub(crate) fn select<T: Element>(data: &[T], k: usize, parallel: bool) -> T {
    let stats = finite_census(data, parallel);
    let k = match stats.finite_rank::<T>(data.len(), k) {
        Ok(k) => k,
        Err(key) => return T::from_key(key),
    };
    T::from_key(levels(data, k, stats.min, stats.max, parallel))
}

/// The levels of bucketSelect: rank `k` among the finite values of `data`, whose keys span
/// `min..=max`.
fn levels<T: Element>(
    data: &[T],
    mut k: usize,
    min: T::Key,
    max: T::Key,
    parallel: bool,
) -> T::Key {
    // The first level reads the input (skipping non-finite values); later levels their copy.
    let mut copy: Option<Vec<T>> = None;
    let (mut min, mut max) = (min, max);
    // Consecutive levels that kept more than half of their candidates.
    let mut poor = 0;
    loop {
        let cands: &[T] = copy.as_deref().unwrap_or(data);
        let first = copy.is_none();
        if min == max {
            return min;
        }
        if !first && cands.len() <= FINISH {
            let mut keys: Vec<T::Key> = cands.iter().map(|x| x.to_key()).collect();
            return *keys.select_nth_unstable(k).1;
        }
        let projection = Projection::new(
            T::from_key(min).to_f64(),
            T::from_key(max).to_f64(),
            BUCKETS,
        );
        let Some(p) = projection else {
            return finish_radix(cands, first, k, parallel);
        };
        let hist = count(cands, p, first, parallel);
        let total: usize = hist.iter().sum();
        let (b, before) = locate(&hist, k);
        if hist[b] == total {
            // Every candidate in one bucket: the projection cannot tell them apart.
            return finish_radix(cands, first, k, parallel);
        }
        if hist[b] > total / 2 {
            // A poor split (a few far outliers stretch the range; twice in a row is the
            // "bucket killer" of values spread over many magnitudes): radix digits finish.
            poor += 1;
            if poor == 2 {
                return finish_radix(cands, first, k, parallel);
            }
        } else {
            poor = 0;
        }
        k -= before;
        let (next, lo, hi) = extract(cands, p, b, first, parallel);
        copy = Some(next);
        min = lo;
        max = hi;
    }
}

/// The bucket counts of the candidates (the finite values when `first`).
fn count<T: Element>(cands: &[T], p: Projection, first: bool, parallel: bool) -> Vec<usize> {
    let parts = map_chunks(cands, parallel, |chunk| {
        let mut h = vec![0u32; BUCKETS];
        for &x in chunk {
            if !first || finite(x) {
                h[p.bucket(x.to_f64())] += 1;
            }
        }
        h
    });
    let mut total = vec![0usize; BUCKETS];
    for h in parts {
        for (t, c) in total.iter_mut().zip(h) {
            *t += c as usize;
        }
    }
    total
}

/// Copies the candidates of bucket `b` and returns them with their extreme keys.
fn extract<T: Element>(
    cands: &[T],
    p: Projection,
    b: usize,
    first: bool,
    parallel: bool,
) -> (Vec<T>, T::Key, T::Key) {
    let parts = map_chunks(cands, parallel, |chunk| {
        let mut out = Vec::new();
        let (mut lo, mut hi) = (T::Key::MAX, T::Key::MIN);
        for &x in chunk {
            if (!first || finite(x)) && p.bucket(x.to_f64()) == b {
                out.push(x);
                let key = x.to_key();
                lo = lo.min(key);
                hi = hi.max(key);
            }
        }
        (out, lo, hi)
    });
    let (mut lo, mut hi) = (T::Key::MAX, T::Key::MIN);
    let mut all = Vec::with_capacity(parts.iter().map(|(o, _, _)| o.len()).sum());
    for (out, l, h) in parts {
        all.extend_from_slice(&out);
        lo = lo.min(l);
        hi = hi.max(h);
    }
    (all, lo, hi)
}

/// Rank `k` among the candidates (the finite values when `first`), by radix select on keys.
fn finish_radix<T: Element>(cands: &[T], first: bool, k: usize, parallel: bool) -> T::Key {
    let keys: Vec<T::Key> = cands
        .iter()
        .filter(|&&x| !first || finite(x))
        .map(|x| x.to_key())
        .collect();
    radix::cpu::select_keys(&keys, k, parallel)
}

/// Unit tests against the sort reference.
#[cfg(test)]
mod tests {
    use super::*;
    use crate::select::host::testing::matches_sort_on_adversarial_inputs;

    matches_sort_on_adversarial_inputs!(super::select);

    /// Ranges that overflow `f64`, denormal ranges and integers sharing an `f64`.
    #[test]
    fn huge_range_and_tiny_range() {
        let data = [f64::MAX, -f64::MAX, 0.0, 1.0, -1.0, f64::MIN_POSITIVE];
        let mut sorted = data;
        sorted.sort_by(f64::total_cmp);
        for (k, want) in sorted.iter().enumerate() {
            assert_eq!(select(&data, k, false), *want);
        }
        let tiny: Vec<f64> = (0..1000).map(|i| f64::from_bits(i % 7)).collect();
        let mut sorted = tiny.clone();
        sorted.sort_by(f64::total_cmp);
        for k in [0, 500, 999] {
            assert_eq!(select(&tiny, k, false).to_bits(), sorted[k].to_bits());
        }
        let big: Vec<i64> = (0..5000).map(|i| i64::MAX - (i % 100)).collect();
        let mut sorted = big.clone();
        sorted.sort_unstable();
        for k in [0, 2500, 4999] {
            assert_eq!(select(&big, k, false), sorted[k]);
        }
    }
}
