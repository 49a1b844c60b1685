//! QuickSelect (Hoare, 1961) on the CPU: a pivot drawn from the remaining keys, one three-way
//! partition of them per level, and the part holding the rank kept.
//!
//! The pivot is the median of three keys at random positions, so a level keeps about half of
//! its keys on average (expected linear time; the positions come from a fixed-seed stream, so
//! a run is reproducible). Keys equal to the pivot form a part of their own: a rank among them
//! is answered at once, and runs of equal values cost one level. Fewer than [`SORT_BELOW`]
//! remaining keys are sorted. Works on a copy of the keys (`n` keys of workspace); `data` is
//! not modified.

use crate::element::Element;
use crate::random::SplitMix64;

/// At most this many remaining keys are sorted instead of partitioned.
const SORT_BELOW: usize = 32;

/// Seed of the pivot positions (mixed with the input's length).
const SEED: u64 = 0x0B1C_4A3E_5E1E_C7ED;

/// The element of rank `k` (`k < data.len()`) of `data`.
pub(crate) fn select<T: Element>(data: &[T], k: usize, _parallel: bool) -> T {
    let mut keys: Vec<T::Key> = data.iter().map(|x| x.to_key()).collect();
    T::from_key(select_keys(&mut keys, k))
}

/// The key of rank `k` (`k < keys.len()`) of `keys`, which are reordered.
pub(crate) fn select_keys<K: Ord + Copy>(keys: &mut [K], mut k: usize) -> K {
    let mut rng = SplitMix64::new(SEED ^ keys.len() as u64);
    let mut part = keys;
    loop {
        let n = part.len();
        if n <= SORT_BELOW {
            part.sort_unstable();
            return part[k];
        }
        let pivot = median_of_three(part[rng.below(n)], part[rng.below(n)], part[rng.below(n)]);
        let (below, not_above) = partition_three_way(part, pivot);
        if k < below {
            part = &mut part[..below];
        } else if k < not_above {
            return pivot;
        } else {
            k -= not_above;
            part = &mut part[not_above..];
        }
    }
}

/// The middle one of three keys.
fn median_of_three<K: Ord + Copy>(a: K, b: K, c: K) -> K {
    a.max(b).min(a.min(b).max(c))
}

/// Reorders `keys` into those below `pivot`, those equal to it and those above it (Dijkstra's
/// Dutch national flag); returns where the equal ones start and end.
fn partition_three_way<K: Ord + Copy>(keys: &mut [K], pivot: K) -> (usize, usize) {
    let (mut below, mut next, mut above) = (0, 0, keys.len());
    while next < above {
        match keys[next].cmp(&pivot) {
            std::cmp::Ordering::Less => {
                keys.swap(below, next);
                below += 1;
                next += 1;
            }
            std::cmp::Ordering::Equal => next += 1,
            std::cmp::Ordering::Greater => {
                above -= 1;
                keys.swap(next, above);
            }
        }
    }
    (below, above)
}

/// Unit tests against the sort reference.
#[cfg(test)]
mod tests {
    use super::*;
    use crate::select::host::testing::matches_sort_on_adversarial_inputs;

    matches_sort_on_adversarial_inputs!(super::select);

    #[test]
    fn median_of_three_is_the_middle_key() {
        for (a, b, c) in [
            (1, 2, 3),
            (1, 3, 2),
            (2, 1, 3),
            (2, 3, 1),
            (3, 1, 2),
            (3, 2, 1),
        ] {
            assert_eq!(median_of_three(a, b, c), 2);
        }
        assert_eq!(median_of_three(5, 5, 1), 5);
    }

    #[test]
    fn the_partition_puts_equal_keys_between_smaller_and_larger_ones() {
        let mut keys = [5u32, 1, 5, 9, 0, 5, 7, 2];
        let (below, not_above) = partition_three_way(&mut keys, 5);
        assert_eq!((below, not_above), (3, 6));
        assert!(keys[..3].iter().all(|&k| k < 5));
        assert!(keys[3..6].iter().all(|&k| k == 5));
        assert!(keys[6..].iter().all(|&k| k > 5));
    }
}
