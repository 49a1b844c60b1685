//! Where the work on all `n` rows of a fit runs: the CPU ([`CpuEngine`]) or a CUDA GPU
//! ([`GpuEngine`](super::gpu::GpuEngine)).
//!
//! The searches (FAST-LTS in [`lts`](super::lts), LMS in [`lms`](super::lms)) and the
//! reweighting draw their starts, race their candidates and refine small problems on the host;
//! what grows with `n` — C-steps of the kept candidates on all rows, the scores of many
//! elemental fits, least squares on large row subsets — goes through this trait. Both engines
//! compute the same things with the same semantics (the `h`-subset of a fit: the rows of the `h`
//! smallest squared residuals, ties in index order); they differ by rounding.

use rayon::prelude::*;

use crate::error::Result;
use crate::regression::csteps::{
    gather, h_smallest, hth_smallest, iterate, squared_residuals, squares, subset_rows, trim,
    Candidate, Work,
};
use crate::regression::design::{Design, Rows};
use crate::regression::linalg::least_squares;
use crate::regression::lms;
use crate::Selector;

/// The most C-steps of [`Engine::polish`] and of the final iterations.
pub(crate) const MAX_STEPS: usize = 100;

/// The `n`-row work of a fit (see the module documentation).
pub(crate) trait Engine {
    /// Up to `steps` C-steps at coverage `h` from each candidate on all rows, each stopping when
    /// its objective no longer decreases ([`iterate`]); a candidate whose residuals are not
    /// finite is dropped. The objectives returned are those on all rows.
    fn step_all(
        &mut self,
        h: usize,
        candidates: Vec<Candidate>,
        steps: usize,
    ) -> Result<Vec<Candidate>>;

    /// The final coefficients from the best candidate: C-steps with accurate least-squares fits
    /// while the objective decreases.
    fn polish(&mut self, h: usize, best: Candidate) -> Result<Vec<f64>>;

    /// The least-squares fit on the rows `idx` (increasing), or `None` when they do not
    /// determine one; `start` is a fit close to it (the GPU refines from it).
    fn fit_rows(&mut self, idx: &[usize], start: &[f64]) -> Result<Option<Vec<f64>>>;

    /// The least-squares fit on the `h`-subset of `b` (the rows of its `h` smallest squared
    /// residuals, ties in index order), or `None` when they do not determine one.
    fn fit_subset(&mut self, h: usize, b: &[f64]) -> Result<Option<Vec<f64>>>;

    /// The residuals `y - x b` of every row.
    fn residuals(&mut self, b: &[f64]) -> Result<Vec<f64>>;

    /// The residuals of `b` ([`residuals`](Engine::residuals)) and the `h`-th smallest of their
    /// squares, `None` when a residual is NaN.
    fn trimmed_residuals(&mut self, b: &[f64], h: usize) -> Result<(Vec<f64>, Option<f64>)>;

    /// The median of the response (its lower middle value), where the engine holds it.
    fn median_of_y(&self) -> Result<f64>;

    /// A selector of host values on the engine's device (a NaN is an error there, as on the
    /// CPU): the order statistics of the residuals the fit returns.
    fn selector(&self) -> Selector;

    /// LMS: each exact fit scored at coverage `h` (with the intercept adjusted when the model
    /// has one), or `None` when its objective is not a number.
    fn score_lms(&mut self, h: usize, fits: Vec<Vec<f64>>) -> Result<Vec<Option<Candidate>>>;
}

/// The engine of the CPU: every pass over the rows with rayon, in fixed chunks (the same bits
/// on any number of threads).
pub(crate) struct CpuEngine<'a> {
    design: &'a Design<'a>,
}

impl<'a> CpuEngine<'a> {
    /// The engine of `design`'s rows: writes their standardized copy and checks their rank
    /// ([`Design::check_rank_on_host`]).
    pub fn new(design: &'a Design<'a>) -> Result<Self> {
        design.check_rank_on_host()?;
        Ok(CpuEngine { design })
    }
}

impl Engine for CpuEngine<'_> {
    fn step_all(
        &mut self,
        h: usize,
        candidates: Vec<Candidate>,
        steps: usize,
    ) -> Result<Vec<Candidate>> {
        let rows = self.design.rows();
        Ok(candidates
            .into_par_iter()
            .map_init(
                || Work::new(rows.p),
                |work, c| iterate(rows, h, c.b, steps, work),
            )
            .collect::<Vec<Option<Candidate>>>()
            .into_iter()
            .flatten()
            .collect())
    }

    /// The least-squares fits by Householder QR of the gathered `h`-subset (more accurate than
    /// the normal equations of the C-steps).
    fn polish(&mut self, h: usize, best: Candidate) -> Result<Vec<f64>> {
        Ok(polish(self.design.rows(), h, best))
    }

    /// Householder QR of the gathered rows (`start` is not needed).
    fn fit_rows(&mut self, idx: &[usize], _start: &[f64]) -> Result<Option<Vec<f64>>> {
        Ok(least_squares_on(self.design, idx))
    }

    fn fit_subset(&mut self, h: usize, b: &[f64]) -> Result<Option<Vec<f64>>> {
        Ok(fit_subset_on(self.design, h, b))
    }

    fn residuals(&mut self, b: &[f64]) -> Result<Vec<f64>> {
        Ok(self.design.residuals(b))
    }

    fn median_of_y(&self) -> Result<f64> {
        Selector::new().median(&self.design.y[..])
    }

    fn trimmed_residuals(&mut self, b: &[f64], h: usize) -> Result<(Vec<f64>, Option<f64>)> {
        let r = self.design.residuals(b);
        let t = hth_smallest(&Selector::new(), &squares(&r), h);
        Ok((r, t))
    }

    fn selector(&self) -> Selector {
        Selector::new()
    }

    fn score_lms(&mut self, h: usize, fits: Vec<Vec<f64>>) -> Result<Vec<Option<Candidate>>> {
        Ok(lms::score_all(self.design, h, fits))
    }
}

/// [`Engine::fit_subset`] on the host: the subset gathered, least squares by QR.
pub(crate) fn fit_subset_on(design: &Design, h: usize, b: &[f64]) -> Option<Vec<f64>> {
    let (subset, _) = h_smallest(&Selector::new(), &squares(&design.residuals(b)), h);
    least_squares_on(design, &subset)
}

/// The least-squares fit (standardized coordinates) on rows `idx`, by QR.
pub(crate) fn least_squares_on(design: &Design, idx: &[usize]) -> Option<Vec<f64>> {
    let (x, y) = gather(design.rows(), idx);
    least_squares(&x, &y, idx.len(), design.p)
}

/// C-steps from `best` whose least-squares fits are computed by QR of the gathered `h`-subset,
/// while the objective decreases.
fn polish(rows: Rows<'_>, h: usize, best: Candidate) -> Vec<f64> {
    let mut work = Work::new(rows.p);
    let mut idx = Vec::with_capacity(h);
    let mut b = best.b;
    squared_residuals(rows, &b, &mut work.r2);
    let Some(mut current) = trim(&work, h) else {
        return b;
    };
    for _ in 0..MAX_STEPS {
        subset_rows(&work.r2, &current, h, &mut idx);
        let (x, y) = gather(rows, &idx);
        let Some(next) = least_squares(&x, &y, h, rows.p) else {
            break;
        };
        squared_residuals(rows, &next, &mut work.r2);
        match trim(&work, h) {
            Some(t) if t.objective < current.objective => {
                b = next;
                current = t;
            }
            _ => break,
        }
    }
    b
}
