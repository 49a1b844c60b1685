//! DIBMS and DistributedBMS (Blanchard, Fu & Knoth 2024).
//!
//! Both start with the first phase of bucketMultiSelect on every rank: a sample of 1024 keys
//! drawn in proportion to the ranks' sizes gives the buckets (bins of keys, each with buckets in
//! proportion to its share of the sample, see [`BinnedSpec`]; drawn in the setup exchange,
//! with open buckets for the keys outside the bins, when the run leaves no value out, so that
//! no pass over the data precedes the first count: see [`open`]), every rank counts its
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
use super::setup::{refuse_nans, Agreed, Choose};
use super::shard::{bytes_to_keys, keys_to_bytes, Shard};
use super::traffic::Phase;
use super::DistributedAlgorithm;

/// The root's word for "another pass follows, its intervals after this word".
const PASS: u64 = 0;
/// The root's word for "done, the results follow".
pub(crate) const DONE: u64 = 1;
/// The root's word for "the first pass follows, its bins after this word" (with
/// [`SKETCH`] added: "sketch it first").
const BINNED_PASS: u64 = 2;
/// Added to [`BINNED_PASS`]: the ranks sketch the pass before they count.
const SKETCH: u64 = 1;
/// The root's list of active buckets that says "the count found NaNs, which are refused".
const FIND_NAN: u64 = u64::MAX;
/// The root's word after a pass's extremes when some active bucket still holds two values but
/// all of them hold few enough ([`gather_at_most`]): the ranks send the keys they kept to the
/// root, which sorts them, instead of refining the buckets in more passes.
const GATHER_NEXT: u64 = u64::MAX - 1;

/// The most elements of the active buckets, over all ranks, that DIBMS gathers at the root
/// rather than refining: what one more pass's counts alone would send (`buckets` from each
/// rank but the root, or from the one rank), so that the gather sends fewer values in fewer
/// messages than the passes it replaces. (A pass whose extremes settle every bucket ends
/// without either.)
fn gather_at_most(buckets: usize, ranks: usize) -> u64 {
    (buckets * ranks.saturating_sub(1).max(1)) as u64
}

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
    /// NaNs are refused: an open run's first count must find none.
    pub refuse_nans: bool,
    pub finish: Finish,
    /// The values a rank holds on average from which the first pass may be sketched.
    pub sketch_from: u64,
    /// At the root: the payload of the results broadcast from the keys found.
    pub results: &'f dyn Fn(Vec<u64>) -> Vec<u64>,
}

/// Runs DIBMS or DistributedBMS after the setup exchange; every rank gets the results
/// payload and the number of passes over the data.
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
    let sample = link.local(shard.sample(count as usize, opts.omit_nan, sample_seed(link, opts)));
    let heard = link.gather(
        Phase::CreateSampled,
        sample.as_deref().map(keys_to_bytes::<u64>),
        sample.as_ref().map_or(0, |s| s.len() as u64),
    )?;
    let decision = match (&mut search, heard) {
        (Some(s), Some(all)) => {
            let keys: Vec<u64> = all.iter().flat_map(|b| bytes_to_keys::<u64>(b)).collect();
            let spec = s.sampled_plan(agreed.min, agreed.max, &keys);
            Ok(first_pass_words(s, &spec, agreed.n, link.size(), opts))
        }
        _ => Ok(Vec::new()),
    };
    let words = link.down(Phase::CreateSampled, decision)?;
    passes(link, shard, search, words, agreed.n, opts, false)
}

/// The seed of this rank's sample.
fn sample_seed(link: &Link<'_>, opts: &BucketRun<'_>) -> u64 {
    opts.seed ^ (link.rank() as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15)
}

/// The first pass's broadcast: `BINNED_PASS` (with `SKETCH` when the ranks should sketch it
/// first: from [`BucketRun::sketch_from`] values a rank, when the search expects the copy to
/// pay) and the bins.
fn first_pass_words(
    search: &Search,
    spec: &BinnedSpec,
    n: u64,
    ranks: usize,
    opts: &BucketRun<'_>,
) -> Vec<u64> {
    let share = n / ranks as u64;
    let worth = share >= opts.sketch_from && search.worth_sketching(n);
    std::iter::once(BINNED_PASS + worth as u64 * SKETCH)
        .chain(spec.to_words())
        .collect()
}

/// The start of a bucket-based run that leaves no value out (NaNs ordered last or refused),
/// from [`open`].
pub(crate) struct Opened {
    /// The algorithm the root chose.
    pub algorithm: DistributedAlgorithm,
    /// Values over all ranks.
    pub n: u64,
    search: Option<Search>,
    words: Vec<u64>,
}

/// Keys each rank draws at random in the open setup: the first [`SAMPLES`] are its sample,
/// and the smallest and largest of them all bound the first pass's bins, so that the buckets
/// outside the bins hold about one value in this many of the rank's (as about one in 8192
/// lies in a bucket of the bins), and ranks there cost the later passes little.
const EXTREME_DRAWS: usize = 1 << 14;

/// The root's reply to the open setup that asks for the setup with statistics instead.
const WITH_STATISTICS: u64 = u64::MAX;

/// The setup and the first pass's sample in one exchange, for a run that leaves no value
/// out: every rank sends its size and keys drawn at random (their extremes and a sample of
/// them, see [`EXTREME_DRAWS`]); the root, from the global size, checks the wanted ranks
/// (`ranks_of`), picks the algorithm (`choose`) and sends an open binned plan (bins between
/// the drawn extremes, a bucket each for the keys below and above them, and one for NaN's
/// key), so that no pass over the data comes before the first count: the
/// extremes are not needed, and NaNs are counted in their own bucket (refused after the
/// count when [`BucketRun::refuse_nans`]). `None` when the wanted ranks are wrong and NaNs
/// are refused: then the setup with statistics follows, which reports a NaN before a rank,
/// as one process does.
pub(crate) fn open<T: Element>(
    link: &mut Link<'_>,
    shard: &mut dyn Shard<T>,
    choose: Choose<'_>,
    ranks_of: &dyn Fn(usize) -> Result<Vec<usize>>,
    opts: &BucketRun<'_>,
) -> Result<Option<Opened>> {
    let len = shard.len();
    let top = T::Key::MAX.to_u64();
    // A short part's extremes need no more draws than it has values.
    let draws = EXTREME_DRAWS.min((len as usize).max(SAMPLES as usize));
    let drawn = shard.sample(draws, false, sample_seed(link, opts));
    let sent = link.local(drawn).map(|d| {
        let below_top = || d.iter().copied().filter(|&k| k < top);
        let lo = below_top().min().unwrap_or(u64::MAX);
        let hi = below_top().max().unwrap_or(0);
        let sample = d.iter().take(SAMPLES as usize).copied();
        let words: Vec<u64> = [len, lo, hi].into_iter().chain(sample).collect();
        keys_to_bytes::<u64>(&words)
    });
    let values = sent.as_ref().map_or(0, |b| (b.len() / 8) as u64);
    let heard = link.gather(Phase::Setup, sent, values)?;
    let mut search = None;
    let decision = match heard {
        Some(all) => open_plan::<T>(&all, choose, ranks_of, link.size(), opts).map(|(w, s)| {
            search = s;
            w
        }),
        None => Ok(Vec::new()),
    };
    let words = link.down(Phase::Setup, decision)?;
    match words[..] {
        [WITH_STATISTICS] => Ok(None),
        [n, code, ref first @ ..] => Ok(Some(Opened {
            algorithm: DistributedAlgorithm::from_code(code)?,
            n,
            search,
            words: first.to_vec(),
        })),
        _ => Err(Error::Communication("the setup reply is malformed".into())),
    }
}

/// The root's reply to the open setup (`n`, the algorithm's code and the first pass's
/// broadcast) from every rank's size, the extremes of its draws below the top key and its
/// sample (its share taken from the front, in proportion to its size); and the search.
fn open_plan<T: Element>(
    all: &[Vec<u8>],
    choose: Choose<'_>,
    ranks_of: &dyn Fn(usize) -> Result<Vec<usize>>,
    size: usize,
    opts: &BucketRun<'_>,
) -> Result<(Vec<u64>, Option<Search>)> {
    let parts: Vec<Vec<u64>> = all.iter().map(|b| bytes_to_keys::<u64>(b)).collect();
    if parts.iter().any(|p| p.len() < 3) {
        return Err(Error::Communication("a rank's size is missing".into()));
    }
    let n: u64 = parts.iter().map(|p| p[0]).sum();
    if n == 0 {
        return Err(Error::EmptyInput);
    }
    let ranks = match ranks_of(n as usize) {
        Ok(ranks) => ranks,
        Err(_) if opts.refuse_nans => return Ok((vec![WITH_STATISTICS], None)),
        Err(e) => return Err(e),
    };
    let algorithm = choose(n, ranks.len());
    if algorithm == DistributedAlgorithm::SortChoose {
        return Err(Error::Communication(
            "sort&choose needs the setup's statistics".into(),
        ));
    }
    let sample: Vec<u64> = parts
        .iter()
        .flat_map(|p| {
            let share = (SAMPLES * p[0]).div_ceil(n) as usize;
            p[3..].iter().take(share).copied()
        })
        .collect();
    let lo = parts.iter().map(|p| p[1]).min().unwrap_or(u64::MAX);
    let hi = parts.iter().map(|p| p[2]).max().unwrap_or(0);
    let mut search = Search::new(&ranks, opts.buckets);
    let extremes = (lo <= hi).then_some((lo, hi));
    let spec = search.open_plan(&sample, extremes, T::Key::MAX.to_u64());
    let words = [n, algorithm.code()]
        .into_iter()
        .chain(first_pass_words(&search, &spec, n, size, opts))
        .collect();
    Ok((words, Some(search)))
}

/// Runs DIBMS or DistributedBMS after [`open`].
pub(crate) fn run_opened<T: Element>(
    link: &mut Link<'_>,
    shard: &mut dyn Shard<T>,
    opened: Opened,
    opts: &BucketRun<'_>,
) -> Result<(Vec<u64>, usize)> {
    let Opened {
        n, search, words, ..
    } = opened;
    passes(link, shard, search, words, n, opts, opts.refuse_nans)
}

/// The passes over the data, from the first pass's broadcast `words` on, over `n` values;
/// `check_nans`: the first count's last bucket (NaN's key) must be empty, else every rank
/// returns [`Error::NanInInput`].
fn passes<T: Element>(
    link: &mut Link<'_>,
    shard: &mut dyn Shard<T>,
    mut search: Option<Search>,
    mut words: Vec<u64>,
    n: u64,
    opts: &BucketRun<'_>,
    check_nans: bool,
) -> Result<(Vec<u64>, usize)> {
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
            true => predicted(link, shard, &search, plan.as_ref(), n)?,
            false => Vec::new(),
        };
        // Assign: every rank's counts summed at the root, which names the active buckets.
        let counts = match &plan {
            Some(p) => link.local(shard.count(p, &keep)),
            None => None,
        };
        let heard = link.up(assign, counts, len, ReduceOp::Sum)?;
        let decision = match (&mut search, heard) {
            (Some(_), Some(c)) if sampled && check_nans && c.last() > Some(&0) => {
                Ok(vec![FIND_NAN])
            }
            (Some(s), Some(c)) => s.identify(&c),
            _ => Ok(Vec::new()),
        };
        let listed = link.down(reduce, decision)?;
        if listed == [FIND_NAN] {
            return Err(refuse_nans(link, shard));
        }
        let active: Vec<usize> = listed.iter().map(|&b| b as usize).collect();
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
        let few = gather_at_most(opts.buckets, link.size());
        let (phase, decision) = match (&mut search, heard) {
            (Some(s), Some(e)) if s.kept() <= few && s.some_unsettled(&e) => {
                (Phase::CreateRefine, Ok(vec![GATHER_NEXT]))
            }
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
        if words == [GATHER_NEXT] {
            return gather_and_sort(link, shard, search, opts, true).map(|w| (w, passes));
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
