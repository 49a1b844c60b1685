//! How far a fit has come: the callback of [`Lts::progress`](super::Lts::progress) and
//! [`Lms::progress`](super::Lms::progress), and the counters the searches advance.
//!
//! A fit reports each stage as it runs — the setup of the data, the starts, the refinement of
//! the best of them, the reweighting — with the work done out of the stage's total. Reports come from the search's threads,
//! at most about a thousand a stage, and never change what the fit computes.

use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use rayon::prelude::*;

/// The stages of a fit that [`FitProgress`] reports.
///
/// ```
/// use kselect::regression::FitStage;
/// assert_eq!(FitStage::Starts.name(), "starts");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum FitStage {
    /// The data checked and standardized (the first of 2 units), then placed where the fit
    /// runs: copied to the GPU on a CUDA device (the second).
    Setup,
    /// The starting subsets, each fitted exactly and scored (LTS: with two C-steps).
    Starts,
    /// The best starts refined (LTS: C-steps to convergence and exchanges, a unit for each
    /// candidate as it is dropped or converges, then one for the polish of the best; LMS:
    /// minimax fits and drop moves).
    Refinement,
    /// From the raw coefficients to the fit: the raw fit, its scale and weights (the first of
    /// 3 units), the reweighted least squares (the second), its residuals, scale and weights
    /// (the third).
    Reweighting,
}

impl FitStage {
    /// `"setup"`, `"starts"`, `"refinement"` or `"reweighting"`.
    ///
    /// ```
    /// assert_eq!(kselect::regression::FitStage::Refinement.name(), "refinement");
    /// ```
    pub fn name(self) -> &'static str {
        match self {
            FitStage::Setup => "setup",
            FitStage::Starts => "starts",
            FitStage::Refinement => "refinement",
            FitStage::Reweighting => "reweighting",
        }
    }
}

/// One report of a fit's progress: `done` of the `total` units of work of `stage` (starts,
/// or candidates refined).
///
/// ```
/// use kselect::regression::{FitProgress, FitStage, Lms};
/// use std::sync::{Arc, Mutex};
/// use kselect::Matrix;
///
/// let seen = Arc::new(Mutex::new(Vec::new()));
/// let log = Arc::clone(&seen);
/// let x: Vec<f64> = (0..40).map(|i| i as f64).collect();
/// let y: Vec<f64> = x.iter().map(|v| 3.0 - v).collect();
/// Lms::new()
///     .progress(move |report: FitProgress| log.lock().unwrap().push(report))
///     .fit(Matrix::new(&x, 40, 1), &y)?;
/// let seen = seen.lock().unwrap();
/// let last = seen.iter().rev().find(|r| r.stage == FitStage::Starts).unwrap();
/// assert_eq!(last.done, last.total); // every start was reported
/// # Ok::<(), kselect::Error>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FitProgress {
    /// The stage running.
    pub stage: FitStage,
    /// Units of the stage done.
    pub done: u64,
    /// Units of the stage in all.
    pub total: u64,
}

/// The callback of a fit's progress, or none.
#[derive(Clone, Default)]
pub(crate) struct Progress {
    callback: Option<Arc<dyn Fn(FitProgress) + Send + Sync>>,
}

impl fmt::Debug for Progress {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(if self.callback.is_some() {
            "Progress(callback)"
        } else {
            "Progress(none)"
        })
    }
}

/// Reports of a stage at most this many times (besides its start and its end).
const REPORTS_PER_STAGE: u64 = 1000;

impl Progress {
    /// Progress reported to `callback`.
    pub fn to(callback: impl Fn(FitProgress) + Send + Sync + 'static) -> Progress {
        Progress {
            callback: Some(Arc::new(callback)),
        }
    }

    /// Starts `stage` of `total` units: reports 0 done.
    pub fn stage(&self, stage: FitStage, total: u64) -> StageProgress<'_> {
        let counter = StageProgress {
            progress: self,
            stage,
            total,
            done: AtomicU64::new(0),
            every: (total / REPORTS_PER_STAGE).max(1),
        };
        counter.report(0);
        counter
    }
}

/// The counter of a running stage; [`advance`](StageProgress::advance) may be called from
/// any thread.
pub(crate) struct StageProgress<'a> {
    progress: &'a Progress,
    stage: FitStage,
    total: u64,
    done: AtomicU64,
    every: u64,
}

impl StageProgress<'_> {
    /// `units` more done: reported when the count crosses a multiple of a thousandth of the
    /// total, or reaches it.
    pub fn advance(&self, units: u64) {
        if self.progress.callback.is_none() || units == 0 {
            return;
        }
        let before = self.done.fetch_add(units, Ordering::Relaxed);
        let after = before + units;
        if after / self.every != before / self.every || after >= self.total {
            self.report(after.min(self.total));
        }
    }

    /// `f` of every item, in parallel (each task with its own scratch space from `init`), in
    /// the items' order; each item one unit done.
    pub fn map_each<T: Send, U: Send, W>(
        &self,
        items: Vec<T>,
        init: impl Fn() -> W + Sync + Send,
        f: impl Fn(&mut W, T) -> U + Sync + Send,
    ) -> Vec<U> {
        items
            .into_par_iter()
            .map_init(init, |work, item| {
                let out = f(work, item);
                self.advance(1);
                out
            })
            .collect()
    }

    fn report(&self, done: u64) {
        if let Some(callback) = &self.progress.callback {
            callback(FitProgress {
                stage: self.stage,
                done,
                total: self.total,
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex;

    #[test]
    fn a_stage_reports_its_start_a_bounded_number_of_steps_and_its_end() {
        let seen = Arc::new(Mutex::new(Vec::new()));
        let log = Arc::clone(&seen);
        let progress = Progress::to(move |r| log.lock().unwrap().push(r.done));
        let stage = progress.stage(FitStage::Starts, 1_000_000);
        for _ in 0..10_000 {
            stage.advance(100);
        }
        let seen = seen.lock().unwrap();
        assert_eq!(seen.first(), Some(&0));
        assert_eq!(seen.last(), Some(&1_000_000));
        assert!(
            seen.len() <= REPORTS_PER_STAGE as usize + 2,
            "{}",
            seen.len()
        );
        assert!(seen.windows(2).all(|w| w[0] < w[1]));
    }

    #[test]
    fn no_callback_counts_nothing() {
        let progress = Progress::default();
        let stage = progress.stage(FitStage::Refinement, 5);
        stage.advance(3);
        assert_eq!(stage.done.load(Ordering::Relaxed), 0);
    }
}
