//! The scores of LMS's elemental fits on the GPU, a batch at a time: with an intercept, the
//! residuals of every fit sorted on the device (batched top-k of all `n`, sorted) and the
//! intercept moved to the middle of the first shortest window of `h` sorted residuals; then the
//! `h`-th smallest absolute residual of each by batched selection. The same score as the CPU's
//! (`lms::score`), up to rounding.

use crate::error::Result;
use crate::regression::csteps::Candidate;
use crate::{Matrix, TopKOptions};

use super::kernels::{self, Residual};
use super::GpuEngine;

/// [`Engine::score_lms`](crate::regression::engine::Engine::score_lms) on the GPU.
pub(super) fn score(
    gpu: &mut GpuEngine<'_>,
    h: usize,
    fits: Vec<Vec<f64>>,
) -> Result<Vec<Option<Candidate>>> {
    let mut out = Vec::with_capacity(fits.len());
    let batch = gpu.batch(true);
    let mut fits = fits.into_iter().peekable();
    while fits.peek().is_some() {
        let bs: Vec<Vec<f64>> = fits.by_ref().take(batch).collect();
        out.extend(score_batch(gpu, h, bs)?);
    }
    Ok(out)
}

/// The scores of one batch (module documentation).
fn score_batch(
    gpu: &mut GpuEngine<'_>,
    h: usize,
    mut bs: Vec<Vec<f64>>,
) -> Result<Vec<Option<Candidate>>> {
    let (n, c) = (gpu.design.n, bs.len());
    let mut scored = vec![true; c];
    if gpu.design.intercept {
        gpu.residual_rows(&bs, Residual::Signed)?;
        let sorted = gpu.selector.top_k_rows_device(
            Matrix::new(&gpu.rows, c, n),
            n,
            TopKOptions::smallest().sorted(true),
        )?;
        let windows = kernels::shortest_windows(&gpu.dev, sorted.values().as_slice(), n, h, c)?;
        for ((b, ok), w) in bs.iter_mut().zip(&mut scored).zip(windows.chunks(2)) {
            if w[0].is_nan() || w[1].is_nan() {
                *ok = false;
            } else {
                b[0] += 0.5 * (w[0] + w[1]);
            }
        }
    }
    gpu.residual_rows(&bs, Residual::Absolute)?;
    let objectives = gpu
        .selector
        .select_rows(Matrix::new(&gpu.rows, c, n), h - 1)?;
    Ok(bs
        .into_iter()
        .zip(objectives)
        .zip(scored)
        .map(|((b, objective), ok)| {
            (ok && !objective.is_nan()).then_some(Candidate { b, objective })
        })
        .collect())
}
