//! Batched C-steps of LTS on the GPU, and the least squares of the reweighting.
//!
//! A batch of `c` candidates is evaluated at once: the squared residuals of all of them (one
//! cuBLAS product and one pass), the `h`-th smallest of each by batched selection (`c` values
//! come back), and one pass that sums over each candidate's `h`-subset `X_H'X_H`, `X_H'r_H`,
//! the rows below the threshold, the rows at it and the sum below it (`c` times
//! `p (p + 3) / 2 + 3` values come back). The `h`-subset is the CPU's: the rows below the
//! threshold, then those at it in index order until `h` rows are taken — when more rows tie
//! at the threshold than the subset needs, the blocks' counts of ties locate the block where
//! the ties stop, that block's residuals are read back to find the index, and the candidate's
//! sums are taken again. The objective is the sum below
//! plus the threshold once for each row taken at it.
//!
//! The next fit of a candidate `b` is `b + (X_H'X_H)^-1 X_H'r_H`, solved by Cholesky on the
//! host: the least-squares fit of the subset, computed as a correction from the residuals (as
//! accurate as a QR for any reasonable conditioning). When Cholesky fails, the CPU's C-step
//! (with its QR) takes over for that candidate.

use rayon::prelude::*;

use crate::device::cuda::download::download_vec;
use crate::error::Result;
use crate::regression::csteps::{step_from, Candidate};
use crate::regression::design::CHUNK;
use crate::regression::engine::{fit_subset_on, least_squares_on};
use crate::regression::linalg::cholesky_solve;
use crate::Matrix;

use super::kernels::{self, entries, gram_entries, Keep, Residual};
use super::GpuEngine;

/// Refinements of a least-squares fit on a row mask.
const REFINEMENTS: usize = 2;

/// A candidate's trim on all rows and the sums of its `h`-subset.
#[derive(Clone, Debug)]
pub(super) struct Eval {
    /// The sum of the `h` smallest squared residuals.
    pub objective: f64,
    /// `X_H'X_H`, the upper triangle of the `p x p` row-major matrix.
    pub xtx: Vec<f64>,
    /// `X_H'r_H`.
    pub xtr: Vec<f64>,
}

impl Eval {
    /// The evaluation from a candidate's sums ([`kernels::entries`]), its threshold `t` and `h`;
    /// `None` when `t` is NaN (the residuals were not finite).
    fn of(sums: &[f64], t: f64, h: usize, p: usize) -> Option<Eval> {
        if t.is_nan() {
            return None;
        }
        let gram = gram_entries(p);
        let (below, sum_below) = (sums[gram], sums[gram + 2]);
        let (xtx, xtr) = gram_matrix(&sums[..gram], p);
        Some(Eval {
            objective: sum_below + (h as f64 - below) * t,
            xtx,
            xtr,
        })
    }

    /// The least-squares fit of the subset, from `b` (whose sums these are).
    fn refit(&self, b: &[f64]) -> Option<Vec<f64>> {
        correction(&self.xtx, &self.xtr, b)
    }
}

/// `b + (X'X)^-1 X'r`: the least-squares fit of rows whose sums `xtx` (upper triangle) and
/// `xtr` are, with `r` their residuals from `b`; `None` when Cholesky fails.
fn correction(xtx: &[f64], xtr: &[f64], b: &[f64]) -> Option<Vec<f64>> {
    let p = b.len();
    let mut delta = vec![0.0; p];
    cholesky_solve(xtx, xtr, p, &mut delta)
        .then(|| b.iter().zip(&delta).map(|(a, d)| a + d).collect())
}

/// `X'X` (upper triangle, `p x p` row-major) and `X'r` from the first entries of the sums.
pub(super) fn gram_matrix(sums: &[f64], p: usize) -> (Vec<f64>, Vec<f64>) {
    let mut xtx = vec![0.0; p * p];
    let mut e = 0;
    for a in 0..p {
        for b in a..p {
            xtx[a * p + b] = sums[e];
            e += 1;
        }
    }
    (xtx, sums[e..e + p].to_vec())
}

/// The evaluations of `bs` at coverage `h`, in batches; those of coefficients the last
/// [`step_all`] ended with are taken from [`GpuEngine::evaluated`] (the same bits).
pub(super) fn evaluate(
    gpu: &mut GpuEngine<'_>,
    h: usize,
    bs: &[Vec<f64>],
) -> Result<Vec<Option<Eval>>> {
    let known: Vec<Option<Eval>> = bs
        .iter()
        .map(|b| {
            gpu.evaluated
                .iter()
                .find(|(kh, kb, _)| *kh == h && same_bits(kb, b))
                .map(|(_, _, eval)| eval.clone())
        })
        .collect();
    let missing: Vec<Vec<f64>> = (bs.iter().zip(&known))
        .filter(|(_, eval)| eval.is_none())
        .map(|(b, _)| b.clone())
        .collect();
    let mut fresh = Vec::with_capacity(missing.len());
    for batch in missing.chunks(gpu.batch(false)) {
        fresh.extend(evaluate_batch(gpu, h, batch)?.0);
    }
    let mut fresh = fresh.into_iter();
    Ok(known
        .into_iter()
        .map(|eval| eval.or_else(|| fresh.next().flatten()))
        .collect())
}

/// Whether two coefficient vectors are the same bits.
fn same_bits(a: &[f64], b: &[f64]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x.to_bits() == y.to_bits())
}

/// Each candidate's `h`-subset of a batch: its threshold, and the index of the first tie at
/// the threshold left out (`n` when none is).
struct Trims {
    thresholds: Vec<f64>,
    cuts: Vec<u64>,
}

/// The evaluations of one batch (module documentation), and their trims; the residual rows
/// hold the batch's squared residuals after it.
fn evaluate_batch(
    gpu: &mut GpuEngine<'_>,
    h: usize,
    bs: &[Vec<f64>],
) -> Result<(Vec<Option<Eval>>, Trims)> {
    let (n, p, c) = (gpu.design.n, gpu.design.p, bs.len());
    gpu.residual_rows(bs, Residual::Square)?;
    let thresholds = gpu
        .selector
        .select_rows(Matrix::new(&gpu.rows, c, n), h - 1)?;
    let mut cuts = vec![n as u64; c];
    let (e, gram) = (entries(p), gram_entries(p));
    let mut sums = {
        let keep = Keep::Trim {
            squares: gpu.rows.as_slice(),
            thresholds: &thresholds,
            cuts: &cuts,
        };
        kernels::sums(&gpu.dev, &gpu.on_device(), &gpu.coef, &keep, 0, c)?
    };
    for j in 0..c {
        let below = sums.values[j * e + gram] as usize;
        let at = sums.values[j * e + gram + 1] as usize;
        if below < h && below + at > h {
            // More rows tie at the threshold than the subset takes: cut them by index.
            cuts[j] = tie_cut(gpu, &sums, j, thresholds[j], h - below)?;
            let keep = Keep::Trim {
                squares: gpu.rows.as_slice(),
                thresholds: &thresholds,
                cuts: &cuts,
            };
            let again = kernels::sums(&gpu.dev, &gpu.on_device(), &gpu.coef, &keep, j, 1)?;
            sums.values[j * e..j * e + gram].copy_from_slice(&again.values[..gram]);
        }
    }
    let evals = (0..c)
        .map(|j| Eval::of(&sums.values[j * e..(j + 1) * e], thresholds[j], h, p))
        .collect();
    Ok((evals, Trims { thresholds, cuts }))
}

/// The index of the tie at `t` in candidate `j`'s squared residuals after the first `take`
/// ones: the rows at `t` before it complete the `h`-subset. The blocks' tie counts of `sums`
/// give the block that holds it; only that block's residuals come back (not the `n` of the
/// candidate: on data with many repeated rows ties are common).
fn tie_cut(
    gpu: &GpuEngine<'_>,
    sums: &kernels::Sums,
    j: usize,
    t: f64,
    take: usize,
) -> Result<u64> {
    let n = gpu.design.n;
    let Some((block, before)) = sums.tie_block(&gpu.dev, j, gpu.design.p, take)? else {
        return Ok(n as u64);
    };
    let (lo, hi) = (block.start, block.end.min(n));
    let part = gpu
        .dev
        .stream()
        .clone_dtoh(&gpu.rows.as_slice().slice(j * n + lo..j * n + hi))
        .map_err(|e| crate::device::cuda::driver_error("reading a candidate's residuals", e))?;
    let cut = part
        .iter()
        .enumerate()
        .filter(|(_, &v)| v == t)
        .nth(take - before)
        .map_or(n, |(i, _)| lo + i);
    Ok(cut as u64)
}

/// A candidate being stepped: its best coefficients, their evaluation, whether it goes on.
struct Slot {
    b: Vec<f64>,
    eval: Eval,
    active: bool,
}

/// [`Engine::step_all`](crate::regression::engine::Engine::step_all) on the GPU: every
/// candidate still improving is stepped in the same batch.
pub(super) fn step_all(
    gpu: &mut GpuEngine<'_>,
    h: usize,
    candidates: Vec<Candidate>,
    steps: usize,
) -> Result<Vec<Candidate>> {
    let bs: Vec<Vec<f64>> = candidates.into_iter().map(|c| c.b).collect();
    let evals = evaluate(gpu, h, &bs)?;
    let mut slots: Vec<Slot> = bs
        .into_iter()
        .zip(evals)
        .filter_map(|(b, eval)| {
            eval.map(|eval| Slot {
                b,
                eval,
                active: true,
            })
        })
        .collect();
    let design = gpu.design;
    for _ in 0..steps {
        let mut moved = Vec::new();
        let mut next = Vec::new();
        for (k, slot) in slots.iter_mut().enumerate().filter(|(_, s)| s.active) {
            // Cholesky failed: the CPU's C-step, with its QR.
            match slot
                .eval
                .refit(&slot.b)
                .or_else(|| step_from(design.rows(), h, &slot.b))
            {
                Some(b) => {
                    moved.push(k);
                    next.push(b);
                }
                None => slot.active = false,
            }
        }
        if next.is_empty() {
            break;
        }
        let evals = evaluate(gpu, h, &next)?;
        for ((k, b), eval) in moved.into_iter().zip(next).zip(evals) {
            let slot = &mut slots[k];
            match eval {
                Some(eval) if eval.objective < slot.eval.objective => {
                    slot.b = b;
                    slot.eval = eval;
                }
                _ => slot.active = false,
            }
        }
    }
    gpu.evaluated = slots
        .iter()
        .map(|s| (h, s.b.clone(), s.eval.clone()))
        .collect();
    Ok(slots
        .into_iter()
        .map(|s| Candidate {
            b: s.b,
            objective: s.eval.objective,
        })
        .collect())
}

/// [`Engine::fit_subset`](crate::regression::engine::Engine::fit_subset) on the GPU: the sums
/// of `b`'s `h`-subset, solved as corrections of `b` ([`REFINEMENTS`] times, the subset kept);
/// the CPU's QR when Cholesky fails or a residual is not finite.
pub(super) fn fit_subset(gpu: &mut GpuEngine<'_>, h: usize, b: &[f64]) -> Result<Option<Vec<f64>>> {
    let p = gpu.design.p;
    let (evals, trims) = evaluate_batch(gpu, h, &[b.to_vec()])?;
    let host = |gpu: &GpuEngine<'_>| Ok(fit_subset_on(gpu.design, h, b));
    let Some(eval) = evals.into_iter().next().flatten() else {
        return host(gpu);
    };
    let Some(mut fit) = eval.refit(b) else {
        return host(gpu);
    };
    for _ in 1..REFINEMENTS {
        gpu.upload_coefficients(std::slice::from_ref(&fit))?;
        let keep = Keep::Trim {
            squares: gpu.rows.as_slice(),
            thresholds: &trims.thresholds,
            cuts: &trims.cuts,
        };
        let sums = kernels::sums(&gpu.dev, &gpu.on_device(), &gpu.coef, &keep, 0, 1)?;
        let (xtx, xtr) = gram_matrix(&sums.values, p);
        match correction(&xtx, &xtr, &fit) {
            Some(next) => fit = next,
            None => return host(gpu),
        }
    }
    Ok(Some(fit))
}

/// [`Engine::trimmed_residuals`](crate::regression::engine::Engine::trimmed_residuals) on the
/// GPU: the residuals read back, then their squares left on the device (the same product, so
/// the same bits as the host's squares of the residuals) and the `h`-th smallest selected there.
pub(super) fn trimmed_residuals(
    gpu: &mut GpuEngine<'_>,
    b: &[f64],
    h: usize,
) -> Result<(Vec<f64>, Option<f64>)> {
    let n = gpu.design.n;
    let r = read_residuals(gpu, b)?;
    if r.par_iter().any(|v| v.is_nan()) {
        return Ok((r, None));
    }
    gpu.residual_rows(&[b.to_vec()], Residual::Square)?;
    let t = gpu
        .selector
        .select_rows(Matrix::new(&gpu.rows, 1, n), h - 1)?;
    Ok((r, t.first().copied()))
}

/// [`Engine::residuals`](crate::regression::engine::Engine::residuals) on the GPU: one
/// product and one pass, read back through the staging buffer.
pub(super) fn read_residuals(gpu: &mut GpuEngine<'_>, b: &[f64]) -> Result<Vec<f64>> {
    let n = gpu.design.n;
    gpu.residual_rows(&[b.to_vec()], Residual::Signed)?;
    download_vec(&gpu.dev, &gpu.rows.as_slice().slice(..n), "the residuals")
}

/// [`Engine::fit_rows`](crate::regression::engine::Engine::fit_rows) on the GPU: the sums over
/// a mask of the rows, solved as corrections of `start` ([`REFINEMENTS`] times); the CPU's QR
/// when Cholesky fails.
pub(super) fn fit_rows(
    gpu: &mut GpuEngine<'_>,
    idx: &[usize],
    start: &[f64],
) -> Result<Option<Vec<f64>>> {
    let (n, p) = (gpu.design.n, gpu.design.p);
    if idx.len() < p {
        return Ok(None);
    }
    // The flags chunk by chunk in parallel: each chunk's rows are a run of `idx` (increasing).
    let mut flags = vec![0u8; n];
    flags
        .par_chunks_mut(CHUNK)
        .enumerate()
        .for_each(|(c, chunk)| {
            let start = c * CHUNK;
            let lo = idx.partition_point(|&i| i < start);
            let hi = idx.partition_point(|&i| i < start + chunk.len());
            idx[lo..hi].iter().for_each(|&i| chunk[i - start] = 1);
        });
    let mask = kernels::upload(&gpu.dev, &flags, "the rows of a least-squares fit")?;
    let mut b = start.to_vec();
    for _ in 0..REFINEMENTS {
        gpu.upload_coefficients(std::slice::from_ref(&b))?;
        let sums = kernels::sums(
            &gpu.dev,
            &gpu.on_device(),
            &gpu.coef,
            &Keep::Mask(&mask),
            0,
            1,
        )?;
        let (xtx, xtr) = gram_matrix(&sums.values, p);
        match correction(&xtx, &xtr, &b) {
            Some(next) => b = next,
            None => return Ok(least_squares_on(gpu.design, idx)),
        }
    }
    Ok(Some(b))
}
