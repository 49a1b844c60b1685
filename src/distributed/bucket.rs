//! DIBMS and DistributedBMS (Blanchard, Fu & Knoth 2024).
//!
//! Both start with the first phase of bucketMultiSelect on every rank: a sample of 1024 keys
//! drawn in proportion to the ranks' sizes gives the buckets (bins of keys, each with buckets in
//! proportion to its share of the sample, see [`BinnedSpec`]), every rank counts its
//! elements in the buckets, the counts are summed at the root, which names the active buckets;
//! every rank keeps only its elements of those. DistributedBMS then gathers the kept elements
//! at the root and sorts them. DIBMS leaves them where they are and refines: the active
//! buckets' extremes (reduced by maximum) become the next pass's intervals, with buckets in
//! proportion to their counts, until every wanted rank lies in a bucket of one value (see
//! [`search`](super::search) for why that is exact).
//!
//! Before the first count the ranks may sketch it (count a sixteenth of their data): the root
//! predicts from the sketches which buckets will hold the wanted ranks, and the count copies
//! those buckets' keys, so that the reduction after it reads the copy rather than all the
//! data again. The prediction changes what is read, never a count: a bucket it missed makes
//! the reduction read the data.

use rayon::prelude::*;

use crate::element::{Element, RadixKey};
use crate::error::{Error, Result};

use super::communicator::ReduceOp;
use super::link::Link;
use super::plan::{BinnedSpec, BucketPlan, IntervalSpec};
use super::search::{Search, SAMPLES};
use super::setup::Agreed;
use super::shard::{bytes_to_keys, keys_to_bytes, Shard};
use super::traffic::Phase;

/// The root's word for "another pass follows, its intervals after this word".
const PASS: u64 = 0;
/// The root's word for "done, the results follow".
pub(crate) const DONE: u64 = 1;
/// The root's word for "the first pass follows, its bins after this word" (with
/// [`SKETCH`] added: "sketch it first").
const BINNED_PASS: u64 = 2;
/// Added to [`BINNED_PASS`]: the ranks sketch the pass before they count.
const SKETCH: u64 = 1;

/// The values a rank holds on average from which the first pass may be sketched: below, the
/// sketch's pass and exchange cost more than the read of the data it spares (4 ranks of 2^26
/// values on H100s took 2.44 ms with it, 2.17 before it; 4 of 2^30 gain; see BENCHMARKS.md).
pub(crate) const SKETCH_FROM: u64 = 1 << 27;

/// How the reduced problem is finished.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Finish {
    /// Gather the active buckets' elements at the root and sort them (DistributedBMS).
    Gather,
    /// Refine the buckets where the data lies (DIBMS).
    Iterate,
}

/// The options of a bucket-based run.
pub(crate) struct BucketRun<'f> {
    pub buckets: usize,
    pub seed: u64,
    pub omit_nan: bool,
    pub finish: Finish,
    /// The values a rank holds on average from which the first pass may be sketched.
    pub sketch_from: u64,
    /// At the root: the payload of the results broadcast from the keys found.
    pub results: &'f dyn Fn(Vec<u64>) -> Vec<u64>,
}

/// Runs DIBMS or DistributedBMS; every rank gets the results payload and the number of
/// passes over the data.
pub(crate) fn run<T: Element>(
    link: &mut Link<'_>,
    shard: &mut dyn Shard<T>,
    agreed: &Agreed,
    ranks: Option<Vec<usize>>,
    opts: &BucketRun<'_>,
) -> Result<(Vec<u64>, usize)> {
    let mut search = ranks.map(|r| Search::new(&r, opts.buckets));
    if agreed.min == agreed.max {
        // One value, known to every rank from the setup.
        let decision = found(&mut search, opts, |s| s.resolve_all(agreed.min));
        return Ok((finish_words(link.down(Phase::Results, decision)?)?, 0));
    }
    // Phase 1, Create: the sample, in proportion to the ranks' sizes.
    let count = (SAMPLES * agreed.local.included).div_ceil(agreed.n);
    let seed = opts.seed ^ (link.rank() as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    let sample = link.local(shard.sample(count as usize, opts.omit_nan, seed));
    let heard = link.gather(
        Phase::CreateSampled,
        sample.as_deref().map(keys_to_bytes::<u64>),
        sample.as_ref().map_or(0, |s| s.len() as u64),
    )?;
    let decision = match (&mut search, heard) {
        (Some(s), Some(all)) => {
            let keys: Vec<u64> = all.iter().flat_map(|b| bytes_to_keys::<u64>(b)).collect();
            let spec = s.sampled_plan(agreed.min, agreed.max, &keys);
            let share = agreed.n / link.size() as u64;
            let worth = share >= opts.sketch_from && s.worth_sketching(agreed.n);
            let sketch = worth as u64 * SKETCH;
            Ok(std::iter::once(BINNED_PASS + sketch)
                .chain(spec.to_words())
                .collect())
        }
        _ => Ok(Vec::new()),
    };
    let mut words = link.down(Phase::CreateSampled, decision)?;
    let mut passes = 0;
    loop {
        let sampled = passes == 0;
        passes += 1;
        let (assign, reduce) = if sampled {
            (Phase::AssignSampled, Phase::ReduceSampled)
        } else {
            (Phase::AssignRefine, Phase::ReduceRefine)
        };
        let plan = link.local(plan_from(&words));
        let len = plan.as_ref().map_or(0, |p| p.buckets());
        let keep = match words.first() == Some(&(BINNED_PASS + SKETCH)) {
            true => predicted(link, shard, &search, plan.as_ref(), agreed.n)?,
            false => Vec::new(),
        };
        // Assign: every rank's counts summed at the root, which names the active buckets.
        let counts = match &plan {
            Some(p) => link.local(shard.count(p, &keep)),
            None => None,
        };
        let heard = link.up(assign, counts, len, ReduceOp::Sum)?;
        let decision = match (&mut search, heard) {
            (Some(s), Some(c)) => s.identify(&c),
            _ => Ok(Vec::new()),
        };
        let active: Vec<usize> = link
            .down(reduce, decision)?
            .iter()
            .map(|&b| b as usize)
            .collect();
        // Reduce: every rank keeps its elements of the active buckets.
        let extremes = match &plan {
            Some(p) => link.local(shard.reduce(p, &active)),
            None => None,
        };
        if opts.finish == Finish::Gather {
            return gather_and_sort(link, shard, search, opts, extremes.is_some())
                .map(|w| (w, passes));
        }
        // Phase 2, Create: the active buckets' extremes, and the next pass's intervals.
        let flat = extremes.map(|e| {
            e.iter()
                .flat_map(|&(max, not_min)| [max, not_min])
                .collect()
        });
        let heard = link.up(Phase::CreateRefine, flat, 2 * active.len(), ReduceOp::Max)?;
        let (phase, decision) = match (&mut search, heard) {
            (Some(s), Some(e)) => match s.refine(&e) {
                Ok(Some(specs)) => (Phase::CreateRefine, Ok(pass_words(&specs))),
                Ok(None) => (Phase::Results, found(&mut search, opts, |_| ())),
                Err(e) => (Phase::CreateRefine, Err(e)),
            },
            _ => (Phase::CreateRefine, Ok(Vec::new())),
        };
        words = link.down(phase, decision)?;
        if words.first() == Some(&DONE) {
            return Ok((finish_words(words)?, passes));
        }
    }
}

/// The buckets of a sketched pass whose keys the count copies: every rank's sketch of the
/// pass summed at the root, which predicts them (an empty list when none is worth copying).
fn predicted<T: Element>(
    link: &mut Link<'_>,
    shard: &mut dyn Shard<T>,
    search: &Option<Search>,
    plan: Option<&BucketPlan<T>>,
    n: u64,
) -> Result<Vec<usize>> {
    let len = plan.map_or(0, |p| p.buckets() + 1);
    let sketch = match plan {
        Some(p) => link.local(shard.sketch(p)),
        None => None,
    };
    let heard = link.up(Phase::PredictSampled, sketch, len, ReduceOp::Sum)?;
    let decision = match (search, heard) {
        (Some(s), Some(sketches)) => s.predict(&sketches, n),
        _ => Ok(Vec::new()),
    };
    let keep: Vec<usize> = link
        .down(Phase::PredictSampled, decision)?
        .into_iter()
        .map(|b| b as usize)
        .collect();
    let buckets = plan.map_or(0, |p| p.buckets());
    if keep.iter().any(|&b| b >= buckets) || !keep.is_sorted() {
        return Err(Error::Communication(
            "the buckets to copy from the root are malformed".into(),
        ));
    }
    Ok(keep)
}

/// DistributedBMS's second phase: the kept elements gathered at the root, sorted there, and
/// every wanted rank read off.
fn gather_and_sort<T: Element>(
    link: &mut Link<'_>,
    shard: &mut dyn Shard<T>,
    mut search: Option<Search>,
    opts: &BucketRun<'_>,
    reduced: bool,
) -> Result<Vec<u64>> {
    let keys = if reduced {
        link.local(shard.keys(opts.omit_nan))
    } else {
        None
    };
    let values = keys.as_ref().map_or(0, |k| k.len() as u64);
    let heard = link.gather(
        Phase::Gather,
        keys.as_deref().map(keys_to_bytes::<T::Key>),
        values,
    )?;
    let decision = match (&mut search, heard) {
        (Some(s), Some(all)) => {
            let mut sorted: Vec<u64> = all
                .iter()
                .flat_map(|b| bytes_to_keys::<T::Key>(b))
                .map(RadixKey::to_u64)
                .collect();
            sorted.par_sort_unstable();
            s.finish_from_sorted(&sorted)
                .and_then(|()| found(&mut search, opts, |_| ()))
        }
        _ => Ok(Vec::new()),
    };
    finish_words(link.down(Phase::Results, decision)?)
}

/// The root's results broadcast once `settle` has found every rank: `DONE` and the payload.
fn found(
    search: &mut Option<Search>,
    opts: &BucketRun<'_>,
    settle: impl FnOnce(&mut Search),
) -> Result<Vec<u64>> {
    let Some(mut s) = search.take() else {
        return Ok(Vec::new());
    };
    settle(&mut s);
    if !s.done() {
        return Err(Error::Communication(
            "the search ended with ranks unfound".into(),
        ));
    }
    Ok(std::iter::once(DONE)
        .chain((opts.results)(s.into_found()))
        .collect())
}

/// The payload after the `DONE` word of a results broadcast.
pub(crate) fn finish_words(mut words: Vec<u64>) -> Result<Vec<u64>> {
    if words.first() != Some(&DONE) {
        return Err(Error::Communication(
            "the results broadcast is malformed".into(),
        ));
    }
    words.remove(0);
    Ok(words)
}

/// A later pass's broadcast: `PASS` and the intervals.
fn pass_words(specs: &[IntervalSpec]) -> Vec<u64> {
    std::iter::once(PASS)
        .chain(IntervalSpec::to_words(specs))
        .collect()
}

/// The plan of a pass's broadcast: intervals after `PASS`, bins after `BINNED_PASS` (sketched
/// or not).
fn plan_from<T: Element>(words: &[u64]) -> Result<BucketPlan<T>> {
    match words.split_first() {
        Some((&PASS, rest)) => BucketPlan::from_words(rest),
        Some((&w, rest)) if w == BINNED_PASS || w == BINNED_PASS + SKETCH => {
            BucketPlan::from_binned(&BinnedSpec::from_words(rest)?)
        }
        _ => Err(Error::Communication("a pass broadcast is malformed".into())),
    }
}
