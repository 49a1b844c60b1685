//! Approximate selection: an element whose rank is close to the one asked for, with its exact
//! rank range, from one level of SampleSelect.
//!
//! One level sorts a sample, takes up to 127 splitters and counts how many values fall below,
//! on and between them (Ribizel & Anzt 2020, §2.3 and §5.8). The counts give every splitter's
//! exact rank range, so the splitter whose range is closest to `k` is returned together with
//! that range: the caller knows the rank error exactly, not only a bound.
//!
//! **Bound.** When `k` falls on a splitter's range the error is 0. Otherwise `k` lies among the
//! values strictly between two neighbouring splitters (or below the first or above the last),
//! and the error is at most the number of those values — at most half of it, plus one, between
//! two splitters. With a sample of about 2 000 values and 127 splitters, that group holds about
//! `n / 128` values, and rarely more than `n / 64` (the sample quantiles' spread, §2.2). Inputs
//! of at most a few thousand values are selected exactly (error 0).

use crate::element::Element;

/// An approximate order statistic: a value of the data and the exact range of ranks it
/// occupies there, close to the rank asked for.
///
/// `value` occupies the ranks `rank_lo..rank_hi` (0-based, ascending, NaN policy applied as
/// for [`Selector::select`](crate::Selector::select)): exactly `rank_lo` values are smaller and
/// `rank_hi - rank_lo` are equal to it (by key). [`rank_error`](Approximate::rank_error) is the
/// distance from `k` to that range.
///
/// ```
/// use kselect::Selector;
/// let data: Vec<u64> = (0..100_000u64).map(|i| i * 7919 % 100_000).collect();
/// let a = Selector::new().select_approximate(&data, 50_000).unwrap();
/// assert_eq!(a.k, 50_000);
/// // Every value occurs once: value v has rank v.
/// assert_eq!(a.rank_lo, a.value as usize);
/// assert_eq!(a.rank_hi, a.rank_lo + 1);
/// assert!(a.rank_error() <= 100_000 / 64);
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Approximate<T> {
    /// The value returned.
    pub value: T,
    /// The rank asked for.
    pub k: usize,
    /// The smallest rank `value` occupies (the number of smaller values).
    pub rank_lo: usize,
    /// One past the largest rank `value` occupies (the number of values not larger).
    pub rank_hi: usize,
}

impl<T> Approximate<T> {
    /// The distance from `k` to the ranks `value` occupies: 0 when `value` is the exact answer.
    ///
    /// ```
    /// let a = kselect::Approximate { value: 7, k: 10, rank_lo: 4, rank_hi: 8 };
    /// assert_eq!(a.rank_error(), 3); // rank 7 is the closest rank of `value`
    /// ```
    pub fn rank_error(&self) -> usize {
        rank_distance(self.k, self.rank_lo, self.rank_hi)
    }

    /// Whether `value` is the exact element of rank `k`.
    ///
    /// ```
    /// let a = kselect::Approximate { value: 7, k: 5, rank_lo: 4, rank_hi: 8 };
    /// assert!(a.is_exact());
    /// ```
    pub fn is_exact(&self) -> bool {
        self.rank_error() == 0
    }
}

/// The distance from rank `k` to the ranks `lo..hi`.
fn rank_distance(k: usize, lo: usize, hi: usize) -> usize {
    if k < lo {
        lo - k
    } else if k >= hi {
        k + 1 - hi
    } else {
        0
    }
}

/// The splitter of one SampleSelect level whose rank range is closest to `k` (the lower one
/// on a tie), as `(index, rank_lo, rank_hi)`.
///
/// `counts` holds the level's `2m + 1` bucket counts for `m` splitters (bucket `2j + 1`: the
/// values equal to splitter `j`; bucket `2j`: those strictly between splitters `j - 1` and
/// `j`). Splitters whose range starts at or beyond `len` (NaNs when the policy omits them) or
/// that occur nowhere are skipped; `None` when no splitter is left.
pub(crate) fn closest_splitter(
    counts: &[u64],
    m: usize,
    k: usize,
    len: usize,
) -> Option<(usize, usize, usize)> {
    let mut best: Option<(usize, usize, usize)> = None;
    let mut before = 0usize;
    for j in 0..m {
        let below = counts.get(2 * j).copied().unwrap_or(0) as usize;
        let equal = counts.get(2 * j + 1).copied().unwrap_or(0) as usize;
        let lo = before + below;
        let hi = lo + equal;
        before = hi;
        if equal == 0 || lo >= len {
            continue;
        }
        let better = match best {
            None => true,
            Some((_, blo, bhi)) => rank_distance(k, lo, hi) < rank_distance(k, blo, bhi),
        };
        if better {
            best = Some((j, lo, hi));
        }
    }
    best
}

/// An exact result: `value` is the element of rank `k` and occupies `lo..hi`.
pub(crate) fn exact<T: Element>(value: T, k: usize, lo: usize, hi: usize) -> Approximate<T> {
    Approximate {
        value,
        k,
        rank_lo: lo,
        rank_hi: hi,
    }
}

/// Unit tests of the choice among splitters.
#[cfg(test)]
mod tests {
    use super::*;

    /// Ranges from counts, the nearest one, ties to the lower splitter.
    #[test]
    fn picks_the_nearest_range() {
        // Buckets: 3 below s0, s0 twice, 4 between, s1 once, 5 above.
        let counts = [3, 2, 4, 1, 5];
        assert_eq!(closest_splitter(&counts, 2, 0, 15), Some((0, 3, 5)));
        assert_eq!(closest_splitter(&counts, 2, 4, 15), Some((0, 3, 5)));
        assert_eq!(closest_splitter(&counts, 2, 6, 15), Some((0, 3, 5)));
        assert_eq!(closest_splitter(&counts, 2, 7, 15), Some((1, 9, 10)));
        assert_eq!(closest_splitter(&counts, 2, 9, 15), Some((1, 9, 10)));
        // Ranks 5..8 between: rank 6 is 2 from both, the lower splitter wins.
        assert_eq!(
            closest_splitter(&[3, 2, 3, 1, 5], 2, 6, 14),
            Some((0, 3, 5))
        );
        assert_eq!(closest_splitter(&counts, 2, 14, 15), Some((1, 9, 10)));
    }

    /// Splitters beyond the rank space (NaNs under `Omit`) and empty ones are never returned.
    #[test]
    fn skips_splitters_outside_the_rank_space() {
        let counts = [3, 2, 4, 1, 5];
        assert_eq!(closest_splitter(&counts, 2, 8, 9), Some((0, 3, 5)));
        assert_eq!(closest_splitter(&counts, 2, 1, 3), None);
        assert_eq!(closest_splitter(&[3, 0, 4], 1, 1, 7), None);
    }

    /// The distance to a half-open range.
    #[test]
    fn rank_error_is_the_distance_to_the_range() {
        let a = |k| {
            Approximate {
                value: 0u8,
                k,
                rank_lo: 4,
                rank_hi: 8,
            }
            .rank_error()
        };
        assert_eq!((a(0), a(3), a(4), a(7), a(8), a(12)), (4, 1, 0, 0, 1, 5));
    }
}
