//! The time of each stage of a regression fit, from its progress reports: a benchmark includes
//! it with `#[path = "common/stages.rs"] mod stages;`.

use std::sync::{Arc, Mutex};
use std::time::Instant;

use kselect::regression::{FitProgress, FitStage};

/// Stages of at most this many units are broken down unit by unit.
const UNITS_SHOWN: u64 = 20;

/// One progress report: its stage, units done and in all, and seconds from the fit's start.
type Report = (FitStage, u64, u64, f64);

/// Every progress report of one fit, timed from the fit's start.
#[derive(Clone)]
pub struct StageClock {
    start: Instant,
    reports: Arc<Mutex<Vec<Report>>>,
}

impl StageClock {
    /// A clock started now, for one fit.
    pub fn start() -> StageClock {
        StageClock {
            start: Instant::now(),
            reports: Arc::default(),
        }
    }

    /// The progress callback that records the reports (`Lts::progress`, `Lms::progress`).
    pub fn callback(&self) -> impl Fn(FitProgress) + Send + Sync + 'static {
        let (start, reports) = (self.start, Arc::clone(&self.reports));
        move |r: FitProgress| {
            let t = start.elapsed().as_secs_f64();
            reports
                .lock()
                .expect("stage times")
                .push((r.stage, r.done, r.total, t));
        }
    }

    /// Seconds of the fit so far, and of its stages: to the end of the starts (the setup
    /// included), the refinement, and the rest (the reweighting) up to now.
    pub fn stop(&self) -> (f64, [f64; 3]) {
        let total = self.start.elapsed().as_secs_f64();
        let reports = self.reports.lock().expect("stage times");
        let end_of = |stage: FitStage| {
            reports
                .iter()
                .rev()
                .find(|r| r.0 == stage)
                .map_or(0.0, |r| r.3)
        };
        let (starts, refined) = (end_of(FitStage::Starts), end_of(FitStage::Refinement));
        (total, [starts, refined - starts, total - refined])
    }

    /// The fit's time broken down at its reports, up to now: for each report, the seconds
    /// since the report before it, named `"<stage> <done>/<total>"` (a stage's first report,
    /// 0 done, names the time before the stage began), the reports of a stage of more than
    /// [`UNITS_SHOWN`] units taken together as `"<stage>"`; then `"after the reports"`.
    pub fn breakdown(&self) -> Vec<(String, f64)> {
        let total = self.start.elapsed().as_secs_f64();
        let reports = self.reports.lock().expect("stage times");
        let mut out: Vec<(String, f64)> = Vec::new();
        let mut before = 0.0;
        for (i, &(stage, done, units, t)) in reports.iter().enumerate() {
            let next_same = reports.get(i + 1).is_some_and(|r| r.0 == stage);
            let label = if done == 0 {
                format!("before {}", stage.name())
            } else if units <= UNITS_SHOWN {
                format!("{} {done}/{units}", stage.name())
            } else if next_same {
                continue;
            } else {
                stage.name().to_string()
            };
            out.push((label, t - before));
            before = t;
        }
        out.push(("after the reports".to_string(), total - before));
        out
    }
}

/// The median of each stage's seconds over the runs (`report::median`, which the benchmark
/// including this file includes too).
pub fn medians(stages: &[[f64; 3]]) -> [f64; 3] {
    std::array::from_fn(|j| crate::report::median(stages.iter().map(|s| s[j]).collect()))
}

/// The median of each part of the runs' [`StageClock::breakdown`]s, by name in the first run's
/// order (a part a run lacks counts as 0 there).
pub fn breakdown_medians(runs: &[Vec<(String, f64)>]) -> Vec<(String, f64)> {
    let Some(first) = runs.first() else {
        return Vec::new();
    };
    first
        .iter()
        .map(|(name, _)| {
            let times = runs
                .iter()
                .map(|run| run.iter().filter(|(n, _)| n == name).map(|(_, s)| s).sum())
                .collect();
            (name.clone(), crate::report::median(times))
        })
        .collect()
}
