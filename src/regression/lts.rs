//! FAST-LTS (Rousseeuw and Van Driessen 2006): the search for the `h`-subset whose
//! least-squares fit has the smallest sum of squared residuals over its own `h` best rows.
//!
//! 1. **Starts.** All `p`-subsets when `C(n, p) <= max(nsamp, exhaustive_limit)` (skipping the
//!    singular ones), otherwise `nsamp` random `p`-subsets. A random `p`-subset whose exact fit
//!    is singular grows by random rows until its least-squares fit is determined (the rule of
//!    the paper); the starts whose subset reaches `h` rows without a fit are counted as
//!    singular. Each start's fit is followed by two C-steps, and the 10 best distinct results
//!    are kept.
//! 2. **Large `n`** (`n >= 600`): the starts run on subsamples instead. The rows are split at
//!    random into `k = min(5, n / 300)` disjoint groups of a merged set of `min(n, 1500)` rows;
//!    each group gets `nsamp / k` starts with two C-steps at `h_g = floor(n_g h / n)` and keeps
//!    its 10 best; the merged set runs two C-steps at `floor(n_m h / n)` from those (up to 50)
//!    and keeps 10.
//! 3. **Convergence.** The 10 kept candidates are iterated on all rows until their objective no
//!    longer decreases (at most 100 C-steps each). From `n = 5000` on, where these C-steps
//!    dominate the time, the candidates race instead: 4 C-steps each, the better half goes on,
//!    and so on until one is left, which is iterated to convergence. These C-steps run on the
//!    fit's [`Engine`]: the CPU, or a GPU that steps all candidates at once.
//! 4. **Exchanges** (`n < 600`): each converged candidate is refined by pairwise swaps of a row
//!    of its `h`-subset with a row outside (Hawkins' feasible solution algorithm, see
//!    [`exchange`](super::exchange)), which reach optima the C-steps stop short of.
//! 5. **Polish.** The best is refitted on its `h`-subset by Householder QR (instead of the
//!    normal equations), with further C-steps while they decrease the objective (on a GPU: by
//!    normal equations refined from the residuals, [`Engine::polish`]).
//!
//! Two cases are exact instead: `h = n` is ordinary least squares, and a model with the
//! intercept alone is the univariate LTS location, the mean of the `h` consecutive sorted
//! values with the smallest sum of squares about their mean (robustbase's `rfmcduni` rule
//! picks the middle one of tied windows).
//!
//! Every random start draws from its own generator (seed, stage, start index): results do not
//! depend on the number of threads.

use rayon::prelude::*;

use crate::error::{Error, Result};
use crate::regression::csteps::{gather, iterate, Best, Candidate, Work};
use crate::regression::design::{Design, Rows};
use crate::regression::engine::{Engine, MAX_STEPS};
use crate::regression::error::RegressionError;
use crate::regression::exchange;
use crate::regression::fit::Found;
use crate::regression::linalg::{least_squares, solve_square};
use crate::regression::progress::{FitStage, Progress, StageProgress};
use crate::regression::subsets::{next_combination, unrank_combination, Rng, Search, Starts};

/// Groups of the nested subsampling.
const GROUPS: usize = 5;
/// Rows per group.
const GROUP_ROWS: usize = 300;
/// Candidates kept at each stage.
const KEEP: usize = 10;
/// C-steps per start and in the merged set.
const SHORT_STEPS: usize = 2;
/// Below this many rows the converged candidates are refined by pairwise exchanges.
const EXCHANGE_MAX_N: usize = 600;
/// From this many rows the candidates race instead of all converging.
const RACE_MIN_N: usize = 5000;
/// C-steps per round of the race.
const RACE_STEPS: usize = 4;
/// Exhaustive starts handled per parallel task.
const ENUM_BLOCK: u64 = 64;

/// Random streams: the stage numbers of [`Rng::stream`].
const STAGE_STARTS: u64 = 1;
const STAGE_SPLIT: u64 = 2;

/// Runs FAST-LTS (or the exact special cases) on `design`; the C-steps on all rows and the
/// least squares of `h = n` run on `engine`.
///
/// `merged` is [`merged_rows`]`(n, s.seed)` when the caller has it (the fit draws it while the
/// data are set up); it is drawn here otherwise.
pub(crate) fn search(
    design: &Design,
    s: &Search,
    merged: Option<Vec<usize>>,
    engine: &mut dyn Engine,
    progress: &Progress,
) -> Result<Found> {
    let (n, p, h) = (design.n, design.p, s.h);
    if h == n {
        let all: Vec<usize> = (0..n).collect();
        let b = engine
            .fit_rows(&all, &vec![0.0; p])?
            .ok_or_else(singular_design)?;
        return Ok(Found {
            b,
            starts: 0,
            singular: 0,
            exhaustive: true,
        });
    }
    if p == 1 && design.intercept {
        return Ok(Found {
            b: vec![location(&design.y, h)],
            starts: 0,
            singular: 0,
            exhaustive: true,
        });
    }

    let Starts {
        count: total,
        exhaustive,
    } = Starts::of(n, p, s.nsamp, s.exhaustive_limit);
    let (kept, starts, singular) = if exhaustive {
        let stage = progress.stage(FitStage::Starts, total);
        enumerate_starts(design.rows(), h, total, &stage)
    } else if nested(n) {
        let merged = merged.unwrap_or_else(|| merged_rows(n, s.seed).unwrap_or_default());
        nested_starts(design, s, &merged, progress)
    } else {
        let stage = progress.stage(FitStage::Starts, s.nsamp as u64);
        random_starts(design.rows(), h, s.nsamp, 0, s.seed, &stage)
    };
    if kept.is_empty() {
        return Err(RegressionError::NoStartFits {
            p,
            singular,
            starts,
        }
        .into());
    }
    let candidates = kept.into_candidates();
    // The candidates converge, then (small n) each is refined by exchanges.
    let exchanges = n < EXCHANGE_MAX_N;
    // A unit for each candidate's convergence, one for each exchange, one for the polish.
    let units = candidates.len() as u64 * (1 + u64::from(exchanges)) + 1;
    let stage = progress.stage(FitStage::Refinement, units);
    let refined = converge(engine, n, h, candidates, &stage)?;
    let refined: Vec<Candidate> = if exchanges {
        let rows = design.rows();
        stage.map_each(
            refined,
            || Work::new(p),
            |work, c| exchange::refine(rows, h, c, work),
        )
    } else {
        refined
    };
    let best = refined
        .into_iter()
        .reduce(|a, b| if b.objective < a.objective { b } else { a })
        .ok_or_else(singular_design)?;
    let b = engine.polish(h, best)?;
    stage.advance(1);
    Ok(Found {
        b,
        starts,
        singular,
        exhaustive,
    })
}

fn singular_design() -> Error {
    RegressionError::NoFit.into()
}

/// The candidates iterated to convergence on `engine` (module documentation, step 3): all of
/// them below [`RACE_MIN_N`] rows; above, a race: [`RACE_STEPS`] C-steps for each, the better
/// half goes on, until one is left to converge. Each candidate is a unit of `stage` once it is
/// dropped or has converged.
fn converge(
    engine: &mut dyn Engine,
    n: usize,
    h: usize,
    candidates: Vec<Candidate>,
    stage: &StageProgress<'_>,
) -> Result<Vec<Candidate>> {
    let mut pool = candidates;
    if n >= RACE_MIN_N {
        while pool.len() > 1 {
            pool = engine.step_all(h, pool, RACE_STEPS)?;
            // A stable sort keeps the earlier candidate of equal objectives.
            pool.sort_by(|a, b| a.objective.total_cmp(&b.objective));
            let dropped = pool.len() / 2;
            pool.truncate(pool.len() - dropped);
            stage.advance(dropped as u64);
        }
    }
    let converged = engine.step_all(h, pool, MAX_STEPS)?;
    stage.advance(converged.len() as u64);
    Ok(converged)
}

/// The exact fit of a `p`-subset (rows `idx` of `rows`), or `None` when it is singular.
fn elemental(rows: Rows<'_>, idx: &[usize], a: &mut Vec<f64>) -> Option<Vec<f64>> {
    let p = rows.p;
    a.clear();
    let mut b = Vec::with_capacity(p);
    for &i in idx {
        a.extend_from_slice(rows.row(i));
        b.push(rows.y[i]);
    }
    solve_square(a, &mut b, p).then_some(b)
}

/// The fit of a random start in `rows`: an exact fit of `p` random rows, grown by random rows
/// (least squares) while singular, up to `h` rows. `None` when still singular.
fn random_fit(rows: Rows<'_>, h: usize, rng: &mut Rng) -> Option<Vec<f64>> {
    let p = rows.p;
    let mut idx = Vec::with_capacity(p);
    rng.distinct(p, rows.n, &mut idx);
    let mut a = Vec::with_capacity(p * p);
    if let Some(b) = elemental(rows, &idx, &mut a) {
        return Some(b);
    }
    while idx.len() < h.max(p + 1).min(rows.n) {
        let next = loop {
            let i = rng.below(rows.n);
            if !idx.contains(&i) {
                break i;
            }
        };
        idx.push(next);
        let (x, y) = gather(rows, &idx);
        if let Some(b) = least_squares(&x, &y, idx.len(), p) {
            return Some(b);
        }
    }
    None
}

/// `nsamp` random starts drawn from `pool` (start indices `first..first + nsamp`), each with
/// two C-steps in `pool` at `h`; the best 10. Returns (best, starts, singular starts).
fn random_starts(
    pool: Rows<'_>,
    h: usize,
    nsamp: usize,
    first: u64,
    seed: u64,
    stage: &StageProgress<'_>,
) -> (Best, usize, usize) {
    let p = pool.p;
    let (best, singular) = (0..nsamp as u64)
        .into_par_iter()
        .fold(
            || (Best::new(KEEP), 0usize, Work::new(p)),
            |(mut best, mut singular, mut work), s| {
                let start = first + s;
                let mut rng = Rng::stream(seed, STAGE_STARTS, start);
                match random_fit(pool, h, &mut rng) {
                    Some(b) => {
                        if let Some(c) = iterate(pool, h, b, SHORT_STEPS, &mut work) {
                            best.offer(c, start);
                        }
                    }
                    None => singular += 1,
                }
                stage.advance(1);
                (best, singular, work)
            },
        )
        .map(|(best, singular, _)| (best, singular))
        .reduce(
            || (Best::new(KEEP), 0),
            |(a, sa), (b, sb)| (a.merge(b), sa + sb),
        );
    (best, nsamp, singular)
}

/// Every `p`-subset of the rows as a start, each with two C-steps.
fn enumerate_starts(
    rows: Rows<'_>,
    h: usize,
    total: u64,
    stage: &StageProgress<'_>,
) -> (Best, usize, usize) {
    let (n, p) = (rows.n, rows.p);
    let blocks = total.div_ceil(ENUM_BLOCK);
    let (best, singular) = (0..blocks)
        .into_par_iter()
        .fold(
            || (Best::new(KEEP), 0usize, Work::new(p)),
            |(mut best, mut singular, mut work), block| {
                let first = block * ENUM_BLOCK;
                let last = (first + ENUM_BLOCK).min(total);
                let mut comb = Vec::with_capacity(p);
                unrank_combination(first, n, p, &mut comb);
                let mut a = Vec::with_capacity(p * p);
                for rank in first..last {
                    match elemental(rows, &comb, &mut a) {
                        Some(b) => {
                            if let Some(c) = iterate(rows, h, b, SHORT_STEPS, &mut work) {
                                best.offer(c, rank);
                            }
                        }
                        None => singular += 1,
                    }
                    next_combination(&mut comb, n);
                }
                stage.advance(last - first);
                (best, singular, work)
            },
        )
        .map(|(best, singular, _)| (best, singular))
        .reduce(
            || (Best::new(KEEP), 0),
            |(a, sa), (b, sb)| (a.merge(b), sa + sb),
        );
    (best, total as usize, singular)
}

/// Whether the random starts of `n` rows run on nested subsamples (module documentation, step 2).
pub(crate) fn nested(n: usize) -> bool {
    n >= 2 * GROUP_ROWS
}

/// The rows of the merged set of the nested subsampling of `n` rows under `seed` (module
/// documentation, step 2): the first `min(n, 1500)` of a random permutation of the rows (one
/// stream of draws over all `n` rows); `None` below 600 rows, which have no subsampling.
pub(crate) fn merged_rows(n: usize, seed: u64) -> Option<Vec<usize>> {
    nested(n).then(|| {
        let mut split = Rng::stream(seed, STAGE_SPLIT, 0);
        split.permutation_prefix(n, n.min(GROUPS * GROUP_ROWS))
    })
}

/// The nested subsampling of large `n` (module documentation, step 2), on the merged set
/// `perm` ([`merged_rows`]).
fn nested_starts(
    design: &Design,
    s: &Search,
    perm: &[usize],
    progress: &Progress,
) -> (Best, usize, usize) {
    let (n, p) = (design.n, design.p);
    let groups = GROUPS.min(n / GROUP_ROWS);
    let merged_len = perm.len();
    let per_group = (s.nsamp / groups).max(1);
    let frac = s.h as f64 / n as f64;
    let sub_h = |len: usize| ((len as f64 * frac).floor() as usize).clamp(p + 1, len);

    let mut starts = 0;
    let mut singular = 0;
    let mut group_best = Vec::with_capacity(groups);
    let stage = progress.stage(FitStage::Starts, (groups * per_group) as u64);
    for g in 0..groups {
        let lo = g * merged_len / groups;
        let hi = (g + 1) * merged_len / groups;
        let sample = design.gather(&perm[lo..hi]);
        let pool = sample.rows();
        let (best, st, si) = random_starts(
            pool,
            sub_h(pool.n),
            per_group,
            (g * per_group) as u64,
            s.seed,
            &stage,
        );
        starts += st;
        singular += si;
        group_best.push(best);
    }

    let merged = design.gather(perm);
    let pool = merged.rows();
    let hm = sub_h(pool.n);
    let candidates: Vec<(Candidate, u64)> = group_best
        .into_iter()
        .flat_map(|b| b.into_candidates())
        .enumerate()
        .map(|(i, c)| (c, i as u64))
        .collect();
    let best = candidates
        .into_par_iter()
        .fold(
            || (Best::new(KEEP), Work::new(p)),
            |(mut best, mut work), (c, i)| {
                if let Some(c) = iterate(pool, hm, c.b, SHORT_STEPS, &mut work) {
                    best.offer(c, i);
                }
                (best, work)
            },
        )
        .map(|(best, _)| best)
        .reduce(|| Best::new(KEEP), Best::merge);
    (best, starts, singular)
}

/// The exact LTS location of `y` with coverage `h`: the mean of the `h` consecutive order
/// statistics with the smallest sum of squares about their mean.
pub(crate) fn location(y: &[f64], h: usize) -> f64 {
    let mut sorted = y.to_vec();
    sorted.sort_unstable_by(f64::total_cmp);
    let n = sorted.len();
    // Running sums of the values shifted by the median, for less cancellation.
    let shift = sorted[n / 2];
    let z: Vec<f64> = sorted.iter().map(|v| v - shift).collect();
    let mut sum: f64 = z[..h].iter().sum();
    let mut sq: f64 = z[..h].iter().map(|v| v * v).sum();
    let hf = h as f64;
    let mut best = sq - sum * sum / hf;
    let mut best_windows = vec![0usize];
    for j in 1..=(n - h) {
        sum += z[j + h - 1] - z[j - 1];
        sq += z[j + h - 1] * z[j + h - 1] - z[j - 1] * z[j - 1];
        let ss = sq - sum * sum / hf;
        if ss < best {
            best = ss;
            best_windows.clear();
            best_windows.push(j);
        } else if ss == best {
            best_windows.push(j);
        }
    }
    let j = best_windows[best_windows.len().div_ceil(2) - 1];
    // The window's mean, summed directly.
    z[j..j + h].iter().sum::<f64>() / hf + shift
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::regression::engine::CpuEngine;

    #[test]
    fn location_picks_the_tightest_window() {
        let y = [10.0, 0.1, -0.2, 0.0, 11.0, 0.2, 12.0, -0.1];
        let m = location(&y, 5);
        assert!(m.abs() < 1e-15, "{m}");
    }

    #[test]
    fn trim_objective_of_the_best_subset_is_minimal() {
        // A small problem checked by brute force over all h-subsets.
        let xs = [0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0];
        let ys = [0.3, 1.1, 1.8, 3.2, 9.0, 5.1, 5.7, -3.0, 8.2];
        let x: Vec<f64> = xs.iter().flat_map(|&v| [1.0, v]).collect();
        let d = Design::new(&xs, 9, 1, &ys, true).unwrap();
        let h = 6;
        let found = search(
            &d,
            &Search {
                h,
                nsamp: 500,
                seed: 1,
                exhaustive_limit: 0,
            },
            None,
            &mut CpuEngine::new(&d).unwrap(),
            &Progress::default(),
        )
        .unwrap();
        let r: Vec<f64> = d.residuals(&found.b);
        let mut r2: Vec<f64> = r.iter().map(|v| v * v).collect();
        r2.sort_by(f64::total_cmp);
        let got: f64 = r2[..h].iter().sum();
        // Brute force: every 6-subset of the 9 rows.
        let mut best = f64::INFINITY;
        let mut comb: Vec<usize> = (0..h).collect();
        loop {
            let (sx, sy) = gather(
                Rows {
                    x: &x,
                    y: &ys,
                    n: 9,
                    p: 2,
                },
                &comb,
            );
            let b = least_squares(&sx, &sy, h, 2).unwrap();
            let mut rr: Vec<f64> = (0..9)
                .map(|i| (ys[i] - b[0] - b[1] * xs[i]).powi(2))
                .collect();
            rr.sort_by(f64::total_cmp);
            best = best.min(rr[..h].iter().sum());
            if !next_combination(&mut comb, 9) {
                break;
            }
        }
        assert!(got <= best * (1.0 + 1e-12), "{got} vs {best}");
    }
}
