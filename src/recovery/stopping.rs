//! When a solver stops, and why ([`StopReason`]).
//!
//! After each iteration `t` the residual `r_t = |y - A x_t|` is checked, in this order:
//!
//! 1. **converged**: `r_t <= tol |y|`;
//! 2. **diverged**: `r_t` is not finite, or above `100 |y|`;
//! 3. **cycling**: the iterate's support and residual are exactly those of one of the 16
//!    iterations before (the iteration has come back to a state it had: a fixed point or a
//!    cycle, as the support-based methods reach when they settle on a wrong support);
//! 4. **no progress**: `t >= 16` and `r_t >= r_{t-16}` (the residual has not fallen over 16
//!    iterations);
//! 5. **slow convergence**: `t >= 1000` and the mean rate over the last 16 iterations,
//!    `(r_t / r_{t-16})^(1/16)`, is above `0.999` (the tolerance is still more than ten
//!    thousand iterations away);
//! 6. **iteration limit**: `t` reached the solver's maximum.

/// Why a solver stopped.
///
/// ```
/// use kselect::recovery::StopReason;
/// assert_eq!(StopReason::Converged.to_string(), "converged");
/// assert!(StopReason::Converged.is_success());
/// assert!(!StopReason::Cycling.is_success());
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum StopReason {
    /// The residual fell below the tolerance (relative to `|y|`).
    Converged,
    /// The residual is not finite or grew above `100 |y|`.
    Diverged,
    /// The iterate came back to the support and residual of one of the last 16 iterations.
    Cycling,
    /// The residual did not fall over the last 16 iterations.
    NoProgress,
    /// After 1000 iterations, the residual falls by less than 0.1% an iteration.
    SlowConvergence,
    /// The iteration limit was reached.
    MaxIterations,
    /// `k = 0`: the only 0-sparse signal is zero; no iteration ran.
    ZeroSparsity,
}

impl StopReason {
    /// Whether the solver reached its tolerance.
    ///
    /// ```
    /// use kselect::recovery::StopReason;
    /// assert!(!StopReason::MaxIterations.is_success());
    /// ```
    pub fn is_success(self) -> bool {
        self == StopReason::Converged
    }

    /// The reason's name, as in the JSON and the CLI.
    ///
    /// ```
    /// use kselect::recovery::StopReason;
    /// assert_eq!(StopReason::SlowConvergence.name(), "slow convergence");
    /// ```
    pub fn name(self) -> &'static str {
        match self {
            StopReason::Converged => "converged",
            StopReason::Diverged => "diverged",
            StopReason::Cycling => "cycling",
            StopReason::NoProgress => "no progress",
            StopReason::SlowConvergence => "slow convergence",
            StopReason::MaxIterations => "iteration limit",
            StopReason::ZeroSparsity => "k = 0",
        }
    }
}

impl std::fmt::Display for StopReason {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// Iterations looked back over.
const WINDOW: usize = 16;
/// The iteration from which slow convergence is checked.
const SLOW_AFTER: usize = 1000;
/// The mean rate over the window above which convergence is slow.
const SLOW_RATE: f64 = 0.999;
/// The residual, relative to `|y|`, above which an iteration has diverged.
const DIVERGED: f64 = 100.0;

/// The residual history and the recent states of one solve, and the stopping rules.
#[derive(Debug)]
pub(crate) struct Monitor {
    norm_y: f64,
    tol: f64,
    max_iterations: usize,
    residuals: Vec<f64>,
    /// (support fingerprint, residual bits) of recent iterations.
    states: Vec<(u64, u64)>,
}

impl Monitor {
    /// A monitor for measurements of norm `norm_y`, tolerance `tol` relative to it.
    pub fn new(norm_y: f64, tol: f64, max_iterations: usize) -> Monitor {
        Monitor {
            norm_y,
            tol,
            max_iterations,
            residuals: Vec::new(),
            states: Vec::new(),
        }
    }

    /// Records iteration `t`'s residual norm and its support's fingerprint (`t` = the
    /// residuals recorded before the call; the initial residual is iteration 0) and says
    /// whether to stop.
    pub fn record(&mut self, residual: f64, support: u64) -> Option<StopReason> {
        self.residuals.push(residual);
        let t = self.residuals.len() - 1;
        if residual <= self.tol * self.norm_y {
            return Some(StopReason::Converged);
        }
        if !residual.is_finite() || residual > DIVERGED * self.norm_y {
            return Some(StopReason::Diverged);
        }
        let state = (support, residual.to_bits());
        if t > 0 && self.states.contains(&state) {
            return Some(StopReason::Cycling);
        }
        self.states.push(state);
        if self.states.len() > WINDOW {
            self.states.remove(0);
        }
        if t >= WINDOW {
            let before = self.residuals[t - WINDOW];
            if residual >= before {
                return Some(StopReason::NoProgress);
            }
            if t >= SLOW_AFTER && (residual / before).powf(1.0 / WINDOW as f64) > SLOW_RATE {
                return Some(StopReason::SlowConvergence);
            }
        }
        if t >= self.max_iterations {
            return Some(StopReason::MaxIterations);
        }
        None
    }

    /// The residual norms recorded, iteration 0 (the start) first.
    pub fn into_residuals(self) -> Vec<f64> {
        self.residuals
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_rule_fires() {
        let mut m = Monitor::new(1.0, 1e-6, 100);
        assert_eq!(m.record(0.5, 1), None);
        assert_eq!(m.record(1e-7, 1), Some(StopReason::Converged));

        let mut m = Monitor::new(1.0, 1e-6, 100);
        assert_eq!(m.record(f64::NAN, 0), Some(StopReason::Diverged));
        let mut m = Monitor::new(1.0, 1e-6, 100);
        assert_eq!(m.record(101.0, 0), Some(StopReason::Diverged));

        let mut m = Monitor::new(1.0, 1e-6, 100);
        assert_eq!(m.record(0.5, 12), None);
        assert_eq!(m.record(0.4, 13), None);
        assert_eq!(m.record(0.5, 12), Some(StopReason::Cycling));

        let mut m = Monitor::new(1.0, 1e-6, 100);
        for t in 0..16 {
            assert_eq!(m.record(0.5 - t as f64 * 1e-3, t), None);
        }
        assert_eq!(m.record(0.6, 99), Some(StopReason::NoProgress));

        let mut m = Monitor::new(1.0, 1e-9, 5000);
        let mut stop = None;
        for t in 0..2000 {
            stop = m.record(0.5 * 0.9999f64.powi(t), t as u64);
            if stop.is_some() {
                break;
            }
        }
        assert_eq!(stop, Some(StopReason::SlowConvergence));
        assert_eq!(m.into_residuals().len(), 1001);

        let mut m = Monitor::new(1.0, 1e-9, 3);
        let stops: Vec<_> = (0..4).map(|t| m.record(0.5 / (t + 1) as f64, t)).collect();
        assert_eq!(
            stops,
            vec![None, None, None, Some(StopReason::MaxIterations)]
        );
    }
}
