//! quickMultiSelect (Blanchard et al. 2016): one quickselect recursion shared by many ranks.
//!
//! The requested ranks are sorted and deduplicated; a segment is partitioned three ways around a
//! pivot (`< p`, `== p`, `> p`) and the recursion continues only into the parts that still hold
//! requested ranks, so `r` ranks cost `O(n log r)` expected work instead of `r` selections.
//! Ranks that land in the `== p` part are answered at once (which also makes inputs with many
//! duplicates finish quickly). The pivot is the sample quantile at the middle requested rank of
//! the segment (an evenly spread sample of up to 63 keys); a recursion-depth limit falls back to
//! sorting the segment, so the worst case stays `O(n log n)`. Independent parts run on several
//! threads for large inputs.
//!
//! Workspace: a copy of the `n` keys (the input is never modified), plus `O(r)` for the ranks.

use rayon::prelude::*;

use crate::element::Element;
use crate::select::host::use_parallel;
use crate::select::PARALLEL_THRESHOLD;

/// Segments at most this long are sorted.
const SORT_BELOW: usize = 48;

/// The elements of `ranks` (each `< data.len()`, any order, repeats allowed), in the order given.
pub(crate) fn multiselect<T: Element>(data: &[T], ranks: &[usize], parallel: bool) -> Vec<T> {
    let mut keys: Vec<T::Key> = if use_parallel(parallel, data.len()) {
        data.par_iter().map(|x| x.to_key()).collect()
    } else {
        data.iter().map(|x| x.to_key()).collect()
    };
    let mut unique = ranks.to_vec();
    unique.sort_unstable();
    unique.dedup();
    let found = multiselect_keys(&mut keys, &unique, parallel);
    ranks
        .iter()
        .map(|k| {
            let i = unique.binary_search(k).expect("every rank was requested");
            T::from_key(found[i])
        })
        .collect()
}

/// The keys of the sorted, deduplicated `ranks` (each `< keys.len()`) among `keys`, reordering
/// `keys` (no other workspace).
pub(crate) fn multiselect_keys<K: Ord + Copy + Send + Sync>(
    keys: &mut [K],
    ranks: &[usize],
    parallel: bool,
) -> Vec<K> {
    debug_assert!(ranks.windows(2).all(|w| w[0] < w[1]));
    debug_assert!(ranks.last().is_none_or(|&k| k < keys.len()));
    let mut out = vec![None; ranks.len()];
    let depth = 2 * (usize::BITS - keys.len().leading_zeros()) + 8;
    recurse(keys, ranks, 0, &mut out, depth, parallel);
    out.into_iter()
        .map(|k| k.expect("every rank is answered"))
        .collect()
}

/// Answers `ranks` (relative to the whole array; this segment starts at rank `offset`) into
/// `out` (one slot per rank).
fn recurse<K: Ord + Copy + Send + Sync>(
    seg: &mut [K],
    ranks: &[usize],
    offset: usize,
    out: &mut [Option<K>],
    depth: u32,
    parallel: bool,
) {
    if ranks.is_empty() {
        return;
    }
    if seg.len() <= SORT_BELOW || depth == 0 {
        seg.sort_unstable();
        for (slot, &k) in out.iter_mut().zip(ranks) {
            *slot = Some(seg[k - offset]);
        }
        return;
    }
    let target = ranks[ranks.len() / 2] - offset;
    let pivot = choose_pivot(seg, target);
    let (n_lt, n_eq_seen) = partition_lt(seg, pivot);
    let first_right = ranks.partition_point(|&k| k - offset < n_lt);
    // Split off the `== p` part when the right side is needed and the pivot is repeated (always
    // when nothing was smaller, so that every step makes progress).
    let n_eq = if first_right < ranks.len() && (n_lt == 0 || n_eq_seen > 1) {
        partition_eq(&mut seg[n_lt..], pivot)
    } else {
        0
    };
    let first_gt = ranks.partition_point(|&k| k - offset < n_lt + n_eq);
    let (left, rest) = seg.split_at_mut(n_lt);
    let right = &mut rest[n_eq..];
    let (out_left, out_rest) = out.split_at_mut(first_right);
    let (out_eq, out_right) = out_rest.split_at_mut(first_gt - first_right);
    out_eq.iter_mut().for_each(|slot| *slot = Some(pivot));
    let (ranks_left, ranks_rest) = ranks.split_at(first_right);
    let ranks_right = &ranks_rest[first_gt - first_right..];
    let worth_threads = parallel
        && !ranks_left.is_empty()
        && !ranks_right.is_empty()
        && left.len().min(right.len()) >= PARALLEL_THRESHOLD / 2;
    let right_offset = offset + n_lt + n_eq;
    let depth = depth - 1;
    let mut go_left = || recurse(left, ranks_left, offset, out_left, depth, parallel);
    let mut go_right = || recurse(right, ranks_right, right_offset, out_right, depth, parallel);
    if worth_threads {
        rayon::join(go_left, go_right);
    } else {
        go_left();
        go_right();
    }
}

/// A pivot near the key of relative rank `target` of `seg` (`seg.len() > SORT_BELOW`): the
/// sample quantile of an evenly spread sample.
fn choose_pivot<K: Ord + Copy>(seg: &[K], target: usize) -> K {
    let n = seg.len();
    let s = if n < 1024 { 15 } else { 63 };
    let mut sample = [seg[0]; 63];
    let step = n / s;
    for (i, slot) in sample[..s].iter_mut().enumerate() {
        // Odd multipliers of the step, shifted within it, avoid periodic patterns of the input.
        *slot = seg[i * step + (i * 7 + step / 2) % step];
    }
    let sample = &mut sample[..s];
    sample.sort_unstable();
    let q = ((target as u128 * s as u128) / n as u128) as usize;
    sample[q.min(s - 1)]
}

/// Moves the keys `< pivot` to the front (branch-free Lomuto); returns how many there are and
/// how many keys equal the pivot.
fn partition_lt<K: Ord + Copy>(seg: &mut [K], pivot: K) -> (usize, usize) {
    let mut j = 0;
    let mut eq = 0;
    for i in 0..seg.len() {
        let x = seg[i];
        seg.swap(i, j);
        j += (x < pivot) as usize;
        eq += (x == pivot) as usize;
    }
    (j, eq)
}

/// Moves the keys equal to `pivot` to the front of `seg` (whose keys are all `>= pivot`);
/// returns how many there are.
fn partition_eq<K: Ord + Copy>(seg: &mut [K], pivot: K) -> usize {
    let mut j = 0;
    for i in 0..seg.len() {
        let x = seg[i];
        seg.swap(i, j);
        j += (x == pivot) as usize;
    }
    j
}

/// Unit tests against the sort reference.
#[cfg(test)]
mod tests {
    use super::*;
    use crate::random::SplitMix64;
    use crate::select::host::testing::matches_sort_on_adversarial_inputs;
    use crate::select::sort_choose;

    matches_sort_on_adversarial_inputs!(multiselect multiselect);

    /// Many ranks (any order, repeats) agree with sort&choose.
    #[test]
    fn many_ranks_match_sort() {
        let mut rng = SplitMix64::new(1);
        for n in [1usize, 2, 3, 100, 1000, 100_000, PARALLEL_THRESHOLD + 7] {
            let data: Vec<f64> = (0..n)
                .map(|i| {
                    if i % 5 == 0 {
                        3.0
                    } else {
                        rng.below(1 << 20) as f64
                    }
                })
                .collect();
            let keys = sort_choose::cpu::sorted_keys(&data, true);
            for count in [1usize, 2, 7, 100] {
                let ranks: Vec<usize> =
                    (0..count).map(|_| rng.below(n)).chain([0, n - 1]).collect();
                let got = multiselect(&data, &ranks, true);
                let want: Vec<f64> = ranks.iter().map(|&k| f64::from_key(keys[k])).collect();
                assert_eq!(got, want, "n={n} count={count}");
            }
        }
    }
}
