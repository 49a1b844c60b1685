//! Bisection on the sign of the subgradient, as an argmin [`Solver`] (argmin has none).
//!
//! The plain method of the paper's comparison: the midpoint `(a + b) / 2` of the bracket, one
//! reduction for the sign of `f'` there. It needs `log2((b − a) / tol)` steps, so a single huge
//! outlier makes it arbitrarily slow; it returns an approximate minimiser, not an element.

use argmin::core::{
    Gradient, IterState, Problem, Solver, State, TerminationReason, TerminationStatus, KV,
};

/// The state argmin keeps for bisection: the midpoint.
pub type BisectionState = IterState<f64, (), (), (), (), f64>;

/// Bisection of `[lo, hi]` on the sign of a subgradient until the bracket is shorter than
/// `tolerance` or a subgradient is `0`.
///
/// ```
/// use argmin::core::{Executor, State};
/// use kselect::select::cutting_plane::{Bisection, CheckLoss, HostData};
/// let data: Vec<f64> = (0..1001).map(|i| i as f64 / 1000.0).collect();
/// let p = CheckLoss::new(HostData::new(&data), 500).unwrap();
/// let solver = Bisection::new(p.lower(), p.upper(), 1e-12);
/// let r = Executor::new(p, solver).configure(|s| s.max_iters(200)).run().unwrap();
/// assert_eq!(*r.state.get_param().unwrap(), 0.5);
/// ```
#[derive(Clone, Debug)]
pub struct Bisection {
    /// The lower end (slope below zero).
    a: f64,
    /// The upper end (slope above zero).
    b: f64,
    /// The bracket length at which the search stops.
    tolerance: f64,
}

impl Bisection {
    /// Bisection of `[lo, hi]` down to brackets of length `tolerance`.
    pub fn new(lo: f64, hi: f64, tolerance: f64) -> Bisection {
        Bisection {
            a: lo,
            b: hi,
            tolerance,
        }
    }
}

impl<O> Solver<O, BisectionState> for Bisection
where
    O: Gradient<Param = f64, Gradient = f64>,
{
    /// The solver's name.
    fn name(&self) -> &str {
        "Bisection"
    }

    /// One step: the sign of the subgradient at the midpoint.
    fn next_iter(
        &mut self,
        problem: &mut Problem<O>,
        state: BisectionState,
    ) -> Result<(BisectionState, Option<KV>), argmin::core::Error> {
        let m = self.a / 2.0 + self.b / 2.0;
        let g = problem.gradient(&m)?;
        let state = state.param(m).cost(g.abs());
        if g == 0.0 {
            return Ok((
                state.terminate_with(TerminationReason::SolverConverged),
                None,
            ));
        }
        if g < 0.0 {
            self.a = m;
        } else {
            self.b = m;
        }
        Ok((state, None))
    }

    /// Stops once the bracket is shorter than the tolerance or holds no `f64` inside.
    fn terminate(&mut self, _state: &BisectionState) -> TerminationStatus {
        let m = self.a / 2.0 + self.b / 2.0;
        if self.b - self.a <= self.tolerance || !(self.a < m && m < self.b) {
            return TerminationStatus::Terminated(TerminationReason::SolverConverged);
        }
        TerminationStatus::NotTerminated
    }
}
