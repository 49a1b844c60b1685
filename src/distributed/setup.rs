//! The exchange every algorithm starts with: each rank's size, NaNs and extremes to the root;
//! the root applies the NaN policy to the whole data, checks the wanted ranks against the
//! global size, picks the algorithm, and tells every rank.

use crate::element::Element;
use crate::error::{Error, Result};
use crate::select::NanPolicy;

use super::link::Link;
use super::shard::{bytes_to_keys, keys_to_bytes, LocalStats, Shard};
use super::traffic::Phase;
use super::DistributedAlgorithm;

/// What every rank knows after the setup exchange.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Agreed {
    /// Values the ranks refer to, over all ranks.
    pub n: u64,
    /// The smallest and largest included keys over all ranks.
    pub min: u64,
    pub max: u64,
    /// The algorithm the root chose.
    pub algorithm: DistributedAlgorithm,
    /// This rank's own statistics.
    pub local: LocalStats,
}

/// The root's choice of algorithm once it knows the global size and the number of ranks.
pub(crate) type Choose<'a> = &'a dyn Fn(u64, usize) -> DistributedAlgorithm;

/// Runs the setup exchange. The root gets the wanted ranks back (from `ranks_of`, given the
/// global number of values); the other ranks get `None`.
pub(crate) fn agree<T: Element>(
    link: &mut Link<'_>,
    shard: &mut dyn Shard<T>,
    policy: NanPolicy,
    choose: Choose<'_>,
    ranks_of: impl FnOnce(usize) -> Result<Vec<usize>>,
) -> Result<(Agreed, Option<Vec<usize>>)> {
    let omit = omits_nan::<T>(policy);
    let local = link.local(shard.stats(omit));
    let bytes = local.map(|s| keys_to_bytes::<u64>(&s.to_words()));
    let heard = link.gather(Phase::Setup, bytes, LocalStats::WORDS as u64)?;
    let mut ranks = None;
    let decision = match heard {
        Some(all) => decide(&all, policy, choose, ranks_of).map(|(words, r)| {
            ranks = Some(r);
            words
        }),
        None => Ok(Vec::new()),
    };
    let words = link.down(Phase::Setup, decision)?;
    let [n, min, max, code] = words[..] else {
        return Err(Error::Communication("the setup reply is malformed".into()));
    };
    let agreed = Agreed {
        n,
        min,
        max,
        algorithm: DistributedAlgorithm::from_code(code)?,
        // A rank whose statistics failed has returned at the failure exchange.
        local: local
            .ok_or_else(|| Error::Communication("the setup went on after a failure".into()))?,
    };
    Ok((agreed, ranks))
}

/// The error every rank returns when a count found NaNs that the policy refuses: every
/// rank's statistics gathered at the root, which names the first NaN's global index.
/// Collective.
pub(crate) fn refuse_nans<T: Element>(link: &mut Link<'_>, shard: &mut dyn Shard<T>) -> Error {
    let mut exchange = || -> Result<()> {
        let local = link.local(shard.stats(false));
        let bytes = local.map(|s| keys_to_bytes::<u64>(&s.to_words()));
        let heard = link.gather(Phase::Setup, bytes, LocalStats::WORDS as u64)?;
        let decision = match heard {
            Some(all) => parse_stats(&all).and_then(|stats| {
                Err(nans_found(&stats).unwrap_or_else(|| {
                    Error::Communication("a count found NaNs that the ranks do not hold".into())
                }))
            }),
            None => Ok(Vec::new()),
        };
        link.down(Phase::Setup, decision).map(drop)
    };
    match exchange() {
        Err(e) => e,
        Ok(()) => Error::Communication("the report of the NaNs found went missing".into()),
    }
}

/// Whether the policy leaves NaNs out for this element type.
pub(crate) fn omits_nan<T: Element>(policy: NanPolicy) -> bool {
    T::DTYPE.is_float() && policy == NanPolicy::Omit
}

/// The root's decision from every rank's statistics: `[n, min, max, algorithm]` and the ranks.
fn decide(
    all: &[Vec<u8>],
    policy: NanPolicy,
    choose: Choose<'_>,
    ranks_of: impl FnOnce(usize) -> Result<Vec<usize>>,
) -> Result<(Vec<u64>, Vec<usize>)> {
    let stats = parse_stats(all)?;
    if policy == NanPolicy::Error {
        if let Some(e) = nans_found(&stats) {
            return Err(e);
        }
    }
    let (mut n, mut min, mut max) = (0u64, u64::MAX, 0u64);
    for s in &stats {
        n += s.included;
        if s.included > 0 {
            min = min.min(s.min);
            max = max.max(s.max);
        }
    }
    if n == 0 {
        return Err(Error::EmptyInput);
    }
    let ranks = ranks_of(n as usize)?;
    let algorithm = choose(n, ranks.len());
    Ok((vec![n, min, max, algorithm.code()], ranks))
}

/// Every rank's statistics, from the words each sent.
fn parse_stats(all: &[Vec<u8>]) -> Result<Vec<LocalStats>> {
    all.iter()
        .map(|b| LocalStats::from_words(&bytes_to_keys::<u64>(b)))
        .collect::<Option<_>>()
        .ok_or_else(|| Error::Communication("a rank's statistics are malformed".into()))
}

/// The NaNs of all ranks as the error one process gives for them: their count and the global
/// index of the first (`None` when there are none).
fn nans_found(stats: &[LocalStats]) -> Option<Error> {
    let (mut offset, mut nans, mut first_nan) = (0u64, 0u64, None);
    for s in stats {
        if s.nans > 0 && first_nan.is_none() {
            first_nan = Some(offset + s.first_nan);
        }
        offset += s.len;
        nans += s.nans;
    }
    first_nan.map(|first| Error::NanInInput {
        count: nans as usize,
        first_index: first as usize,
    })
}
