//! The time of each stage of a regression fit, from its progress reports: a benchmark includes
//! it with `#[path = "common/stages.rs"] mod stages;`.

use std::sync::{Arc, Mutex};
use std::time::Instant;

use kselect::regression::{FitProgress, FitStage};

/// When each stage of one fit last reported, from the fit's start.
#[derive(Clone)]
pub struct StageClock {
    start: Instant,
    ends: Arc<Mutex<[f64; 2]>>,
}

impl StageClock {
    /// A clock started now, for one fit.
    pub fn start() -> StageClock {
        StageClock {
            start: Instant::now(),
            ends: Arc::default(),
        }
    }

    /// The progress callback that records the stages' ends (`Lts::progress`, `Lms::progress`).
    pub fn callback(&self) -> impl Fn(FitProgress) + Send + Sync + 'static {
        let (start, ends) = (self.start, Arc::clone(&self.ends));
        move |r: FitProgress| {
            let slot = usize::from(r.stage != FitStage::Starts);
            ends.lock().expect("stage times")[slot] = start.elapsed().as_secs_f64();
        }
    }

    /// Seconds of the fit so far, and of its stages: the starts, the refinement, and the rest
    /// (the reweighting) up to now.
    pub fn stop(&self) -> (f64, [f64; 3]) {
        let total = self.start.elapsed().as_secs_f64();
        let [starts, refined] = *self.ends.lock().expect("stage times");
        (total, [starts, refined - starts, total - refined])
    }
}

/// The median of each stage's seconds over the runs (`report::median`, which the benchmark
/// including this file includes too).
pub fn medians(stages: &[[f64; 3]]) -> [f64; 3] {
    std::array::from_fn(|j| crate::report::median(stages.iter().map(|s| s[j]).collect()))
}
