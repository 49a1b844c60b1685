//! Distributed sort&choose, the baseline: every rank sorts its keys, sorted runs are merged
//! pairwise up a binary tree toward the root (rank `r + 2^l` sends to rank `r` at level `l`),
//! and the root reads every wanted rank off the whole sorted data.

use rayon::prelude::*;

use crate::element::{Element, RadixKey};
use crate::error::{Error, Result};
use crate::select::host::{chunk_len, use_parallel};

use super::bucket::{finish_words, DONE};
use super::link::Link;
use super::shard::{bytes_to_keys, keys_to_bytes, Shard};
use super::traffic::Phase;

/// Runs sort&choose; every rank gets the results payload (`results` maps the keys found at
/// the root to it).
pub(crate) fn run<T: Element>(
    link: &mut Link<'_>,
    shard: &mut dyn Shard<T>,
    ranks: Option<Vec<usize>>,
    omit_nan: bool,
    results: &dyn Fn(Vec<u64>) -> Vec<u64>,
) -> Result<Vec<u64>> {
    // The local sort: the shard gives its keys sorted.
    let mut keys = link.local(shard.keys(omit_nan));
    let (rank, size) = (link.rank(), link.size());
    let mut step = 1;
    while step < size {
        if rank % (2 * step) == step {
            let values = keys.as_ref().map_or(0, |k| k.len() as u64);
            link.send(
                Phase::Merge,
                rank - step,
                keys.as_deref().map(keys_to_bytes::<T::Key>),
                values,
            )?;
            keys = None;
            break;
        }
        if rank + step < size {
            let other = link.receive(rank + step)?;
            keys = match (keys, other) {
                (Some(mine), Some(b)) => Some(merge(&mine, &bytes_to_keys::<T::Key>(&b))),
                _ => None,
            };
        }
        step *= 2;
    }
    let decision = match (ranks, keys) {
        (Some(ranks), Some(sorted)) => ranks
            .iter()
            .map(|&r| sorted.get(r).map(|k| k.to_u64()))
            .collect::<Option<Vec<u64>>>()
            .ok_or_else(|| Error::Communication("the merged data is shorter than counted".into()))
            .map(|found| std::iter::once(DONE).chain(results(found)).collect()),
        _ => Ok(Vec::new()),
    };
    finish_words(link.down(Phase::Results, decision)?)
}

/// Two ascending runs merged into one (of equal keys, `a`'s first), in parallel when long: the
/// output cut into pieces, each piece's start in both runs found by a binary search, each
/// piece merged on its own.
fn merge<K: RadixKey>(a: &[K], b: &[K]) -> Vec<K> {
    let mut out = vec![K::default(); a.len() + b.len()];
    if !use_parallel(true, out.len()) {
        merge_into(a, b, &mut out);
        return out;
    }
    let piece = chunk_len(out.len());
    out.par_chunks_mut(piece).enumerate().for_each(|(c, o)| {
        let i = taken_from_first(a, b, c * piece);
        merge_into(&a[i..], &b[c * piece - i..], o);
    });
    out
}

/// How many of the first `k` values of the merge of `a` and `b` come from `a` (`k` at most
/// their total length).
fn taken_from_first<K: RadixKey>(a: &[K], b: &[K], k: usize) -> usize {
    let (mut lo, mut hi) = (k.saturating_sub(b.len()), k.min(a.len()));
    while lo < hi {
        // Taking `i` from `a` and `k - i` (at least 1) from `b`: too few from `a` when the
        // last taken from `b` is not below the first left in `a`.
        let i = lo + (hi - lo) / 2;
        if b[k - i - 1] >= a[i] {
            lo = i + 1;
        } else {
            hi = i;
        }
    }
    lo
}

/// The first `out.len()` values of the merge of `a` and `b` (which hold at least that many).
fn merge_into<K: RadixKey>(a: &[K], b: &[K], out: &mut [K]) {
    let (mut i, mut j) = (0, 0);
    for o in out {
        if j < b.len() && (i == a.len() || b[j] < a[i]) {
            *o = b[j];
            j += 1;
        } else {
            *o = a[i];
            i += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn merge_keeps_order() {
        assert_eq!(
            merge(&[1u32, 4, 4, 9], &[0, 4, 10]),
            vec![0, 1, 4, 4, 4, 9, 10]
        );
        assert_eq!(merge::<u64>(&[], &[3]), vec![3]);
        assert_eq!(merge::<u64>(&[3], &[]), vec![3]);
        assert!(merge::<u32>(&[], &[]).is_empty());
    }

    #[test]
    fn pieces_of_a_long_merge_meet() {
        // Runs of many ties and of different lengths, so that pieces start inside runs of
        // equal keys, of either side, and past the end of one run.
        let mut rng = crate::random::SplitMix64::new(5);
        for (la, lb, range) in [
            (300_000, 70_000, 7),
            (1000, 200_000, 1000),
            (150_000, 150_000, 1 << 30),
        ] {
            let mut a: Vec<u32> = (0..la).map(|_| rng.below(range) as u32).collect();
            let mut b: Vec<u32> = (0..lb).map(|_| rng.below(range) as u32).collect();
            a.sort_unstable();
            b.sort_unstable();
            let mut expected = [a.clone(), b.clone()].concat();
            expected.sort_unstable();
            assert_eq!(merge(&a, &b), expected);
        }
    }
}
