//! Distributed sort&choose, the baseline: every rank sorts its keys, sorted runs are merged
//! pairwise up a binary tree toward the root (rank `r + 2^l` sends to rank `r` at level `l`),
//! and the root reads every wanted rank off the whole sorted data.

use crate::element::{Element, RadixKey};
use crate::error::{Error, Result};

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

/// Two ascending runs merged into one.
fn merge<K: RadixKey>(a: &[K], b: &[K]) -> Vec<K> {
    let mut out = Vec::with_capacity(a.len() + b.len());
    let (mut i, mut j) = (0, 0);
    while i < a.len() && j < b.len() {
        if b[j] < a[i] {
            out.push(b[j]);
            j += 1;
        } else {
            out.push(a[i]);
            i += 1;
        }
    }
    out.extend_from_slice(&a[i..]);
    out.extend_from_slice(&b[j..]);
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn merge_keeps_order() {
        assert_eq!(
            super::merge(&[1u32, 4, 4, 9], &[0, 4, 10]),
            vec![0, 1, 4, 4, 4, 9, 10]
        );
        assert_eq!(super::merge::<u64>(&[], &[3]), vec![3]);
    }
}
