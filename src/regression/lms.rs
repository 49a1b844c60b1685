//! Least median of squares, generalized to the `h`-th order statistic (MASS `lqs`'s "lqs"
//! criterion): the `b` minimizing the `h`-th smallest absolute residual `|y_i - x_i b|`.
//!
//! 1. **Elemental starts.** All `p`-subsets when `C(n, p) <= max(nsamp, exhaustive_limit)`,
//!    otherwise `nsamp` random ones (singular subsets are skipped and counted, as in `lqs`).
//!    Each gives the exact fit of its `p` rows.
//! 2. **Intercept adjustment** (with an intercept, as `lqs` does): with the slopes fixed, the
//!    intercept that minimizes the `h`-th smallest absolute residual is the midpoint of the
//!    shortest window of `h` consecutive sorted residuals; the objective becomes half its width.
//! 3. **Refinement** of the 20 best distinct starts: the minimax fit of the `h` rows with the
//!    smallest absolute residuals (see [`chebyshev`](super::chebyshev)) never raises the
//!    objective; it is repeated (with the intercept adjustment) while the objective decreases.
//!    This reaches fits that no elemental subset gives, so the objective can be below `lqs`'s.
//! 4. **Drop moves** (up to 1000 rows): from each of the 2 best distinct refined fits, each row
//!    at the largest of the `h` smallest absolute residuals (the rows that hold the minimax fit)
//!    is dropped in turn, the other `h - 1` refitted by minimax and refined again; the best
//!    result replaces the fit when it is better, until none is. Up to 200 rows, where one level
//!    finds nothing better, the moves search two levels deep (the drop moves of each result
//!    too). A subset of rows met again on another path is not refitted. This escapes local
//!    optima of step 3 (on hbk it reaches the optimum of the exhaustive search from 2000 random
//!    starts).
//!
//! **Large data** (more than 8192 rows, random starts): steps 1 and 2 score the starts on a
//! random subsample of 8192 rows, at the same fraction `h / n` of its rows; the 20 best are
//! scored on all rows, and the 2 best of those refined by step 3 on all rows (no drop moves),
//! the minimax fits of their `h` rows by constraint generation (see
//! [`chebyshev`](super::chebyshev)). The fit's objective is always that of all rows.
//!
//! The objective is found by selection (never a sort); the intercept adjustment sorts the
//! residuals (the exact algorithm for that one-dimensional problem). Steps 1 and 2 score the
//! starts on the fit's [`Engine`]: the CPU, or a GPU that scores thousands at once (a batched
//! sort and a batched selection of their residuals); steps 3 and 4 run on the CPU, except, on
//! large data, the scores of step 3's fits on all rows, by the engine.

use std::collections::HashMap;
use std::convert::Infallible;

use rayon::prelude::*;

use crate::error::{Error, Result};
use crate::regression::chebyshev::minimax;
use crate::regression::csteps::{hth_smallest, Best, Candidate};
use crate::regression::design::{dot, Design, Rows, Sample, PARALLEL_ROWS};
use crate::regression::engine::Engine;
use crate::regression::error::RegressionError;
use crate::regression::fit::Found;
use crate::regression::linalg::solve_square;
use crate::regression::progress::{FitStage, Progress};
use crate::regression::subsets::{next_combination, unrank_combination, Rng, Search, Starts};
use crate::Selector;

/// Candidates refined.
const KEEP: usize = 20;
/// The best distinct refined candidates improved by drop moves.
const IMPROVED: usize = 2;
/// The most minimax steps of one descent.
const MAX_STEPS: usize = 50;
/// The most rounds of drop moves per candidate.
const MAX_ROUNDS: usize = 30;
/// Up to this many rows the drop moves search two levels deep (one level above).
const DEEP_DROPS_MAX_N: usize = 200;
/// Above this many rows there are no drop moves (their cost grows as `n p` per move).
const DROPS_MAX_N: usize = 1000;
/// Starts handled per parallel task.
const BLOCK: u64 = 64;
/// Starts whose exact fits are scored by one call of the engine.
const SCORE_BATCH: u64 = 1 << 14;
/// The random stream of the starts.
const STAGE_STARTS: u64 = 11;
/// The random stream of the subsample of large data.
const STAGE_SUBSAMPLE: u64 = 12;
/// Above this many rows, random starts are scored on a random subsample of this many rows;
/// the best are then scored on all rows.
const SUBSAMPLE_ROWS: usize = 8192;
/// Above [`SUBSAMPLE_ROWS`] rows, the candidates descended on all rows.
const LARGE_REFINED: usize = 2;

/// Buffers reused across starts.
struct Work {
    abs: Vec<f64>,
    sorted: Vec<f64>,
    a: Vec<f64>,
    selector: Selector,
}

impl Work {
    fn new(p: usize) -> Work {
        Work {
            abs: Vec::new(),
            sorted: Vec::new(),
            a: Vec::with_capacity(p * p),
            selector: Selector::new().parallel(false),
        }
    }
}

/// The LMS objective of `b`: the `h`-th smallest absolute residual.
fn objective(rows: Rows<'_>, b: &[f64], h: usize, work: &mut Work) -> Option<f64> {
    residuals_into(rows, b, &mut work.abs, f64::abs);
    if rows.n >= PARALLEL_ROWS {
        hth_smallest(&Selector::new(), &work.abs, h)
    } else {
        hth_smallest(&work.selector, &work.abs, h)
    }
}

/// `out` becomes `op` of the residuals of `b`, on several threads for many rows.
fn residuals_into(rows: Rows<'_>, b: &[f64], out: &mut Vec<f64>, op: fn(f64) -> f64) {
    let residual = |i: usize| op(rows.y[i] - dot(rows.row(i), b));
    out.clear();
    if rows.n >= PARALLEL_ROWS {
        out.par_extend((0..rows.n).into_par_iter().map(residual));
    } else {
        out.extend((0..rows.n).map(residual));
    }
}

/// Moves the intercept of `b` (column 0) to the midpoint of the shortest window of `h` sorted
/// residuals; returns half the window's width, the objective of the adjusted `b` (the `h`-th
/// smallest absolute residual about the midpoint: no `h` residuals lie closer together).
fn adjust_intercept(rows: Rows<'_>, b: &mut [f64], h: usize, work: &mut Work) -> f64 {
    residuals_into(rows, b, &mut work.sorted, |r| r);
    if rows.n >= PARALLEL_ROWS {
        work.sorted.par_sort_unstable_by(f64::total_cmp);
    } else {
        work.sorted.sort_unstable_by(f64::total_cmp);
    }
    let s = &work.sorted;
    let mut best = 0;
    let mut width = f64::INFINITY;
    for j in 0..=(s.len() - h) {
        let w = s[j + h - 1] - s[j];
        if w < width {
            width = w;
            best = j;
        }
    }
    b[0] += 0.5 * (s[best] + s[best + h - 1]);
    0.5 * width
}

/// The candidate of an exact fit `b`: adjusted and scored.
fn score(
    rows: Rows<'_>,
    mut b: Vec<f64>,
    h: usize,
    intercept: bool,
    work: &mut Work,
) -> Option<Candidate> {
    let objective = if intercept {
        Some(adjust_intercept(rows, &mut b, h, work)).filter(|t| !t.is_nan())?
    } else {
        objective(rows, &b, h, work)?
    };
    Some(Candidate { b, objective })
}

/// The exact fit of rows `idx`, or `None` when singular.
fn elemental(rows: Rows<'_>, idx: &[usize], work: &mut Work) -> Option<Vec<f64>> {
    work.a.clear();
    let mut b = Vec::with_capacity(rows.p);
    for &i in idx {
        work.a.extend_from_slice(rows.row(i));
        b.push(rows.y[i]);
    }
    solve_square(&mut work.a, &mut b, rows.p).then_some(b)
}

/// The rows of the `h` smallest absolute residuals of `b` (ties in index order) into `idx`;
/// returns the objective (the largest of them). Leaves the absolute residuals in `work.abs`.
fn h_rows(
    rows: Rows<'_>,
    b: &[f64],
    h: usize,
    work: &mut Work,
    idx: &mut Vec<usize>,
) -> Option<f64> {
    let t = objective(rows, b, h, work)?;
    idx.clear();
    let below = work.abs.iter().filter(|&&v| v < t).count();
    let mut ties = h - below;
    for (i, &v) in work.abs.iter().enumerate() {
        if v < t {
            idx.push(i);
        } else if v == t && ties > 0 {
            ties -= 1;
            idx.push(i);
        }
    }
    Some(t)
}

/// Minimax steps from `c` while the objective decreases (module documentation, step 3).
fn descend(rows: Rows<'_>, h: usize, intercept: bool, c: Candidate, work: &mut Work) -> Candidate {
    let scored = |b, work: &mut Work| Ok::<_, Infallible>(score(rows, b, h, intercept, work));
    match descend_with(rows, h, c, work, scored) {
        Ok(c) => c,
        Err(never) => match never {},
    }
}

/// Minimax steps from `c` while the objective decreases, each fit scored by `scored`.
fn descend_with<E>(
    rows: Rows<'_>,
    h: usize,
    mut c: Candidate,
    work: &mut Work,
    mut scored: impl FnMut(Vec<f64>, &mut Work) -> std::result::Result<Option<Candidate>, E>,
) -> std::result::Result<Candidate, E> {
    let mut idx = Vec::with_capacity(h);
    for _ in 0..MAX_STEPS {
        if h_rows(rows, &c.b, h, work, &mut idx).is_none() {
            break;
        }
        let Some(b) = minimax(rows, &idx, &c.b) else {
            break;
        };
        match scored(b, work)? {
            Some(next) if next.objective < c.objective => c = next,
            _ => break,
        }
    }
    Ok(c)
}

/// The candidates reached from minimax fits of row subsets, by subset (its rows in increasing
/// order): a subset met again on another path of the drop moves is not fitted again.
type Reached = HashMap<Vec<usize>, Option<Candidate>>;

/// The best of the drop moves from `c`: for each row at the largest residual of the `h` best
/// (the rows that hold the minimax fit), the minimax fit of the other `h - 1`, followed by
/// [`descend`]; with `depth > 1`, the drop moves of each of those too.
fn drop_moves(
    rows: Rows<'_>,
    h: usize,
    intercept: bool,
    c: &Candidate,
    depth: usize,
    work: &mut Work,
    reached: &mut Reached,
) -> Option<Candidate> {
    let mut idx = Vec::with_capacity(h);
    let t = h_rows(rows, &c.b, h, work, &mut idx)?;
    let active: Vec<usize> = idx
        .iter()
        .copied()
        .filter(|&i| work.abs[i] >= t * (1.0 - 1e-9))
        .take(2 * (rows.p + 1))
        .collect();
    let mut best: Option<Candidate> = None;
    let offer = |next: Candidate, best: &mut Option<Candidate>| {
        if best.as_ref().is_none_or(|b| next.objective < b.objective) {
            *best = Some(next);
        }
    };
    for &drop in &active {
        let rest: Vec<usize> = idx.iter().copied().filter(|&i| i != drop).collect();
        let next = match reached.get(&rest) {
            Some(known) => known.clone(),
            None => {
                let next = minimax(rows, &rest, &c.b)
                    .and_then(|b| score(rows, b, h, intercept, work))
                    .map(|next| descend(rows, h, intercept, next, work));
                reached.insert(rest, next.clone());
                next
            }
        };
        let Some(next) = next else {
            continue;
        };
        if depth > 1 {
            if let Some(deeper) = drop_moves(rows, h, intercept, &next, depth - 1, work, reached) {
                offer(deeper, &mut best);
            }
        }
        offer(next, &mut best);
    }
    best
}

/// The best drop moves from a descended `c` while they improve: one level deep, and where that
/// finds nothing better, two levels (up to 200 rows); none above 1000 rows.
fn improve_by_drops(
    rows: Rows<'_>,
    h: usize,
    intercept: bool,
    mut c: Candidate,
    work: &mut Work,
) -> Candidate {
    if rows.n > DROPS_MAX_N {
        return c;
    }
    let deepest = if rows.n <= DEEP_DROPS_MAX_N { 2 } else { 1 };
    let mut reached = Reached::new();
    let mut depth = 1;
    for _ in 0..MAX_ROUNDS {
        match drop_moves(rows, h, intercept, &c, depth, work, &mut reached) {
            Some(next) if next.objective < c.objective => {
                c = next;
                depth = 1;
            }
            _ if depth < deepest => depth += 1,
            _ => break,
        }
    }
    c
}

/// The exact fits of starts `first..last` (`None` when singular), in parallel blocks: every
/// `p`-subset in lexicographic order when `exhaustive`, else start `i`'s random one.
fn elementals(
    rows: Rows<'_>,
    s: &Search,
    exhaustive: bool,
    first: u64,
    last: u64,
) -> Vec<Option<Vec<f64>>> {
    let (n, p) = (rows.n, rows.p);
    let blocks = (last - first).div_ceil(BLOCK);
    let fits: Vec<Vec<Option<Vec<f64>>>> = (0..blocks)
        .into_par_iter()
        .map_init(
            || Work::new(p),
            |work, block| {
                let lo = first + block * BLOCK;
                let hi = (lo + BLOCK).min(last);
                let mut idx = Vec::with_capacity(p);
                if exhaustive {
                    unrank_combination(lo, n, p, &mut idx);
                }
                let mut out = Vec::with_capacity((hi - lo) as usize);
                for start in lo..hi {
                    if !exhaustive {
                        Rng::stream(s.seed, STAGE_STARTS, start).distinct(p, n, &mut idx);
                    }
                    out.push(elemental(rows, &idx, work));
                    if exhaustive {
                        next_combination(&mut idx, n);
                    }
                }
                out
            },
        )
        .collect();
    fits.into_iter().flatten().collect()
}

/// Each exact fit of `fits` scored on the CPU ([`Engine::score_lms`]).
pub(crate) fn score_all(design: &Design, h: usize, fits: Vec<Vec<f64>>) -> Vec<Option<Candidate>> {
    score_rows(design.rows(), h, design.intercept, fits)
}

/// Each exact fit of `fits` scored on `rows` at coverage `h`, in parallel.
fn score_rows(
    rows: Rows<'_>,
    h: usize,
    intercept: bool,
    fits: Vec<Vec<f64>>,
) -> Vec<Option<Candidate>> {
    fits.into_par_iter()
        .map_init(
            || Work::new(rows.p),
            |work, b| score(rows, b, h, intercept, work),
        )
        .collect()
}

/// Where the starts of a search are scored: all rows on the engine, or a subsample of large
/// data on the CPU.
enum Scoring {
    AllRows,
    Subsample { sample: Sample, h: usize },
}

impl Scoring {
    /// A subsample of [`SUBSAMPLE_ROWS`] rows when there are more (random starts only), its
    /// coverage the same fraction of its rows.
    fn of(rows: Rows<'_>, s: &Search, exhaustive: bool) -> Scoring {
        if exhaustive || rows.n <= SUBSAMPLE_ROWS {
            return Scoring::AllRows;
        }
        let mut pick =
            Rng::stream(s.seed, STAGE_SUBSAMPLE, 0).permutation_prefix(rows.n, SUBSAMPLE_ROWS);
        pick.sort_unstable();
        let sample = Sample::gather(rows, &pick);
        let h = (s.h as u128 * SUBSAMPLE_ROWS as u128 / rows.n as u128) as usize;
        Scoring::Subsample {
            sample,
            h: h.clamp(rows.p + 1, SUBSAMPLE_ROWS),
        }
    }

    /// The scores of `fits`.
    fn score(
        &self,
        engine: &mut dyn Engine,
        h: usize,
        intercept: bool,
        fits: Vec<Vec<f64>>,
    ) -> Result<Vec<Option<Candidate>>> {
        match self {
            Scoring::AllRows => engine.score_lms(h, fits),
            Scoring::Subsample { sample, h } => Ok(score_rows(sample.rows(), *h, intercept, fits)),
        }
    }
}

/// Runs the LMS search on `design`, the starts scored by `engine` (or on a subsample of large
/// data), the best refined on the CPU, their scores on all rows of large data by `engine`.
pub(crate) fn search(
    design: &Design,
    s: &Search,
    engine: &mut dyn Engine,
    progress: &Progress,
) -> Result<Found> {
    let rows = design.rows();
    let (n, p, h) = (design.n, design.p, s.h);
    let Starts {
        count: starts,
        exhaustive,
    } = Starts::of(n, p, s.nsamp, s.exhaustive_limit);
    let intercept = design.intercept;
    let scoring = Scoring::of(rows, s, exhaustive);
    let mut best = Best::new(KEEP);
    let mut singular = 0;
    let mut first = 0;
    let stage = progress.stage(FitStage::Starts, starts);
    // Batches of about 2^24 residuals at least: a progress report every few seconds at most.
    let batch = ((1u64 << 24) / n as u64).clamp(BLOCK, SCORE_BATCH);
    while first < starts {
        let last = (first + batch).min(starts);
        let mut ids = Vec::new();
        let mut fits = Vec::new();
        for (start, fit) in (first..last).zip(elementals(rows, s, exhaustive, first, last)) {
            match fit {
                Some(b) => {
                    ids.push(start);
                    fits.push(b);
                }
                None => singular += 1,
            }
        }
        for (start, c) in ids
            .into_iter()
            .zip(scoring.score(engine, h, intercept, fits)?)
        {
            if let Some(c) = c {
                best.offer(c, start);
            }
        }
        stage.advance(last - first);
        first = last;
    }
    if best.is_empty() {
        return Err(RegressionError::NoStartFits {
            p,
            singular,
            starts: starts as usize,
        }
        .into());
    }
    let best = match scoring {
        Scoring::AllRows => refine_all(rows, h, intercept, best.into_candidates(), progress),
        Scoring::Subsample { .. } => refine_large(rows, h, engine, best, progress)?,
    }
    .ok_or(RegressionError::NoFit)?;
    Ok(Found {
        b: best.b,
        starts: starts as usize,
        singular,
        exhaustive,
    })
}

/// The best of `candidates` after each descends and each distinct one is improved by drop
/// moves, in parallel on the CPU.
fn refine_all(
    rows: Rows<'_>,
    h: usize,
    intercept: bool,
    candidates: Vec<Candidate>,
    progress: &Progress,
) -> Option<Candidate> {
    let stage = progress.stage(FitStage::Refinement, 2 * candidates.len() as u64);
    let descended = stage.map_each(
        candidates,
        || Work::new(rows.p),
        |work, c| descend(rows, h, intercept, c, work),
    );
    // Starts that descend to the same fit are improved once.
    let descended_len = descended.len();
    let mut distinct: Vec<Candidate> = Vec::with_capacity(descended_len);
    for c in descended {
        if !distinct
            .iter()
            .any(|d| d.objective == c.objective && d.b == c.b)
        {
            distinct.push(c);
        }
    }
    // The best of them go on to the drop moves.
    distinct.sort_by(|a, b| a.objective.total_cmp(&b.objective));
    distinct.truncate(IMPROVED);
    stage.advance((descended_len - distinct.len()) as u64);
    stage
        .map_each(
            distinct,
            || Work::new(rows.p),
            |work, c| improve_by_drops(rows, h, intercept, c, work),
        )
        .into_iter()
        .reduce(|a, b| if b.objective < a.objective { b } else { a })
}

/// Large data: the starts kept from the subsample scored on all rows by `engine`, and the
/// [`LARGE_REFINED`] best of them descended, their minimax fits on the CPU, their scores by
/// `engine`.
fn refine_large(
    rows: Rows<'_>,
    h: usize,
    engine: &mut dyn Engine,
    kept: Best,
    progress: &Progress,
) -> Result<Option<Candidate>> {
    let fits: Vec<Vec<f64>> = kept.into_candidates().into_iter().map(|c| c.b).collect();
    let stage = progress.stage(FitStage::Refinement, (fits.len() + LARGE_REFINED) as u64);
    let mut best = Best::new(LARGE_REFINED);
    for (i, c) in engine.score_lms(h, fits)?.into_iter().enumerate() {
        if let Some(c) = c {
            best.offer(c, i as u64);
        }
        stage.advance(1);
    }
    let mut work = Work::new(rows.p);
    let mut found: Option<Candidate> = None;
    for c in best.into_candidates() {
        let c = descend_with(rows, h, c, &mut work, |b, _: &mut Work| {
            Ok::<_, Error>(engine.score_lms(h, vec![b])?.pop().flatten())
        })?;
        if found.as_ref().is_none_or(|f| c.objective < f.objective) {
            found = Some(c);
        }
        stage.advance(1);
    }
    Ok(found)
}
