//! From the coefficients a search found to a [`RegressionFit`]: the raw fit, its scale, the
//! weights, the reweighted least-squares fit and its scale (formulas in [`RegressionFit`]'s
//! field documentation and in [`scale`](super::scale)).

use rayon::prelude::*;

use crate::error::Result;
use crate::regression::csteps::{hth_smallest, smallest_rows};
use crate::regression::design::{sum_in_order, Design, CHUNK};
use crate::regression::engine::Engine;
use crate::regression::fit::{Found, Method, RegressionFit};
use crate::regression::normal::normal_quantile;
use crate::regression::progress::{FitStage, Progress, StageProgress};
use crate::regression::scale::{
    consistency, lts_cutoff, small_sample_raw, small_sample_reweighted, LMS_CUTOFF,
};

/// The scale below which a fit counts as exact: `1e-10` of the largest distance of `y` from
/// its median `med` (at least `1e-14 * max |y|`, for rounding).
fn exact_tolerance(med: f64, y: &[f64]) -> f64 {
    // Maxima: the same in any order.
    let spread = y
        .par_iter()
        .map(|v| (v - med).abs())
        .reduce(|| 0.0f64, f64::max);
    let size = y.par_iter().map(|v| v.abs()).reduce(|| 0.0f64, f64::max);
    (1e-10 * spread).max(1e-14 * size)
}

/// The sum of `r[i]^2` over the rows `rows`: in their order within runs of [`CHUNK`] of them,
/// the runs' sums added in order (the same bits on any number of threads).
fn sum_of_squares_at(r: &[f64], rows: &[usize]) -> f64 {
    sum_in_order(
        rows.par_chunks(CHUNK)
            .map(|run| run.iter().map(|&i| r[i] * r[i]).sum::<f64>()),
    )
}

/// 0/1 weights: 1 where `|r| <= limit`.
fn weights_within(r: &[f64], limit: f64) -> Vec<f64> {
    r.par_iter()
        .map(|v| if v.abs() <= limit { 1.0 } else { 0.0 })
        .collect()
}

/// The rows with weight `weight`, increasing.
fn rows_of_weight(w: &[f64], weight: f64) -> Vec<usize> {
    w.par_iter()
        .enumerate()
        .filter(|(_, &v)| v == weight)
        .map(|(i, _)| i)
        .collect()
}

/// The rows with weight 1.
fn kept(w: &[f64]) -> Vec<usize> {
    rows_of_weight(w, 1.0)
}

/// The rows with weight 0.
fn dropped(w: &[f64]) -> Vec<usize> {
    rows_of_weight(w, 0.0)
}

/// The parts of a fit that both estimators assemble.
struct Parts {
    raw_b: Vec<f64>,
    raw_residuals: Vec<f64>,
    objective: f64,
    best_subset: Vec<usize>,
    raw_scale: f64,
    raw_weights: Vec<f64>,
    b: Vec<f64>,
    residuals: Vec<f64>,
    scale: f64,
    weights: Vec<f64>,
    exact_fit: bool,
}

impl Parts {
    fn into_fit(
        self,
        design: &Design,
        method: Method,
        found: &Found,
        h: usize,
        alpha: f64,
    ) -> RegressionFit {
        RegressionFit {
            method,
            coefficients: design.to_original(&self.b),
            raw_coefficients: design.to_original(&self.raw_b),
            objective: self.objective,
            outliers: dropped(&self.weights),
            residuals: self.residuals,
            raw_residuals: self.raw_residuals,
            raw_scale: self.raw_scale,
            scale: self.scale,
            raw_weights: self.raw_weights,
            weights: self.weights,
            best_subset: self.best_subset,
            h,
            alpha,
            n: design.n,
            p: design.p,
            intercept: design.intercept,
            starts: found.starts,
            singular_subsets: found.singular,
            exhaustive: found.exhaustive,
            exact_fit: self.exact_fit,
        }
    }
}

/// The LTS fit from the coefficients of the best `h`-subset found; its least-squares fits run
/// on `engine`.
pub(crate) fn lts(
    design: &Design,
    found: Found,
    h: usize,
    alpha: f64,
    engine: &mut dyn Engine,
    progress: &Progress,
) -> Result<RegressionFit> {
    let stage = progress.stage(FitStage::Reweighting, 3);
    let (n, p) = (design.n, design.p);
    // The raw fit: least squares on the h-subset of the found coefficients.
    let raw_b = engine
        .fit_subset(h, &found.b)?
        .unwrap_or_else(|| found.b.clone());
    let (raw_residuals, t) = engine.trimmed_residuals(&raw_b, h)?;
    let (best_subset, objective) = smallest_rows(&raw_residuals, |r| r * r, t, h);
    let cutoff = lts_cutoff();

    let raw_scale = if h == n {
        (objective / (n - p) as f64).sqrt()
    } else {
        (objective / h as f64).sqrt()
            * consistency(h as f64 / n as f64)
            * small_sample_raw(p, design.intercept, n, alpha)
    };
    let raw = (raw_b, raw_residuals, objective, best_subset, raw_scale);
    let parts = assemble(design, engine, &stage, raw, cutoff, |keep, raw_r, r| {
        let sw = keep.len() as f64;
        // robustbase: with h = n the sum runs over the least-squares residuals, and only
        // the consistency factor applies.
        let scale_from = if h == n { raw_r } else { r };
        let ss = sum_of_squares_at(scale_from, keep);
        let mut scale = if sw > 1.0 {
            (ss / (sw - 1.0)).sqrt()
        } else {
            raw_scale
        };
        if keep.len() < n {
            scale *= consistency(sw / n as f64);
            if h < n {
                scale *= small_sample_reweighted(p, design.intercept, n, alpha);
            }
        }
        (scale, weights_within(scale_from, cutoff * scale))
    })?;
    Ok(parts.into_fit(design, Method::Lts, &found, h, alpha))
}

/// The probability whose standard normal quantile makes LMS's raw scale consistent: MASS
/// `lqs`'s `(n + h) / (2 n)`, the `h / n` quantile of `|N(0, 1)|`. For `h = n` (which `lqs`
/// refuses) that quantile is infinite; the `(n - 1/2) / n` quantile, `(4 n - 1) / (4 n)`, is
/// taken there.
fn lms_consistency_prob(n: usize, h: usize) -> f64 {
    let (n, h) = (n as f64, h as f64);
    if h < n {
        (n + h) / (2.0 * n)
    } else {
        (4.0 * n - 1.0) / (4.0 * n)
    }
}

/// The LMS fit from the coefficients found; its least-squares fit runs on `engine`.
pub(crate) fn lms(
    design: &Design,
    found: Found,
    h: usize,
    engine: &mut dyn Engine,
    progress: &Progress,
) -> Result<RegressionFit> {
    let stage = progress.stage(FitStage::Reweighting, 3);
    let (n, p) = (design.n, design.p);
    let raw_b = found.b.clone();
    let raw_residuals = engine.residuals(&raw_b)?;
    let abs: Vec<f64> = raw_residuals.par_iter().map(|v| v.abs()).collect();
    let selector = engine.selector();
    let t = hth_smallest(&selector, &abs, h);
    let (best_subset, _) = smallest_rows(&abs, |v| v, t, h);
    let objective = t.unwrap_or(f64::NAN);
    let raw_scale = objective / normal_quantile(lms_consistency_prob(n, h));
    let raw = (raw_b, raw_residuals, objective, best_subset, raw_scale);
    let parts = assemble(design, engine, &stage, raw, LMS_CUTOFF, |keep, raw_r, r| {
        let sw = keep.len();
        let scale = if sw > p {
            let ss = sum_of_squares_at(raw_r, keep);
            (ss / (sw - p) as f64).sqrt()
        } else {
            raw_scale
        };
        (scale, weights_within(r, LMS_CUTOFF * scale))
    })?;
    Ok(parts.into_fit(design, Method::Lms, &found, h, h as f64 / n as f64))
}

/// The parts of an exact fit: scales 0, weight 1 on the rows within `tau` of the fit.
fn exact(
    raw_b: Vec<f64>,
    raw_residuals: Vec<f64>,
    objective: f64,
    best_subset: Vec<usize>,
    tau: f64,
) -> Parts {
    let weights = weights_within(&raw_residuals, tau);
    Parts {
        b: raw_b.clone(),
        residuals: raw_residuals.clone(),
        raw_b,
        raw_residuals,
        objective,
        best_subset,
        raw_scale: 0.0,
        raw_weights: weights.clone(),
        scale: 0.0,
        weights,
        exact_fit: true,
    }
}

/// The parts of the fit of `raw` (the raw coefficients, residuals, objective, subset and
/// scale): an exact fit where the raw scale is at most [`exact_tolerance`] of `y`; otherwise
/// the raw weights (1 within `cutoff` raw scales), the least-squares fit on the rows they keep
/// (the raw coefficients where those rows are singular), and its scale and weights,
/// `scale_and_weights(kept rows, raw residuals, residuals)`; each of the three a unit of
/// `stage`.
fn assemble(
    design: &Design,
    engine: &mut dyn Engine,
    stage: &StageProgress<'_>,
    raw: (Vec<f64>, Vec<f64>, f64, Vec<usize>, f64),
    cutoff: f64,
    scale_and_weights: impl FnOnce(&[usize], &[f64], &[f64]) -> (f64, Vec<f64>),
) -> Result<Parts> {
    let (raw_b, raw_residuals, objective, best_subset, raw_scale) = raw;
    let tau = exact_tolerance(engine.median_of_y()?, &design.y);
    if raw_scale <= tau {
        let parts = exact(raw_b, raw_residuals, objective, best_subset, tau);
        stage.advance(3);
        return Ok(parts);
    }
    let raw_weights = weights_within(&raw_residuals, cutoff * raw_scale);
    let keep = kept(&raw_weights);
    stage.advance(1);
    let b = engine
        .fit_rows(&keep, &raw_b)?
        .unwrap_or_else(|| raw_b.clone());
    stage.advance(1);
    let residuals = engine.residuals(&b)?;
    let (scale, weights) = scale_and_weights(&keep, &raw_residuals, &residuals);
    stage.advance(1);
    Ok(Parts {
        raw_b,
        raw_residuals,
        objective,
        best_subset,
        raw_scale,
        raw_weights,
        b,
        residuals,
        scale,
        weights,
        exact_fit: false,
    })
}
