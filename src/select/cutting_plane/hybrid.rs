//! The hybrid: a few cutting-plane steps bracket the rank, then exact selection among the
//! values left inside the bracket (the paper's cutting plane followed by a selection of the
//! copied candidates). Generic over the data's place (host or device).

use argmin::core::Executor;

use super::error::CuttingPlaneError;
use super::problem::{from_argmin, CheckLoss, Exact, Prepared};
use super::solver::{Kelley, Outcome};
use super::transform::Transform;
use crate::error::Result;

/// At most this many cutting-plane steps (each one reduction); the bracket left then is
/// finished exactly whatever its size.
pub(crate) const MAX_STEPS: u64 = 200;

/// What one selection did, for benchmarks and tests.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Trace {
    /// Objective evaluations (one fused reduction each), the ends of the range included.
    pub reductions: u64,
    /// Values selected among at the end (`0` when a point was the minimiser and the only
    /// value at it, or no search was needed).
    pub candidates: usize,
    /// The transform the objective was summed under (`None` when no search was needed).
    pub transform: Option<Transform>,
}

/// How the search is configured.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Plan {
    /// Hand over to exact selection once at most `max(finish_at, n / finish_fraction)`
    /// values lie inside the bracket.
    pub finish_at: usize,
    /// See `finish_at`.
    pub finish_fraction: usize,
    /// Force a transform instead of [`Transform::for_range`]'s choice.
    pub transform: Option<Transform>,
}

/// The element of rank `k` (`< data.len()`) and what the search did.
pub(crate) fn select<D: Exact>(data: D, k: usize, plan: Plan) -> Result<(D::Elem, Trace)> {
    let problem = match CheckLoss::prepare(data, k)? {
        Prepared::Answer(x) => return Ok((x, Trace::default())),
        Prepared::Single { data, y, k, n } => {
            let x = data.at(y, 0, k, n)?;
            return Ok((
                x,
                Trace {
                    candidates: n,
                    ..Trace::default()
                },
            ));
        }
        Prepared::Search(p) => *p,
    };
    let problem = match plan.transform {
        Some(t) => problem.with_transform(t),
        None => problem,
    };
    let n = problem.finite_len();
    let finish = plan.finish_at.max(n / plan.finish_fraction.max(1));
    let solver = Kelley::new(problem.lower(), problem.upper()).finish_below(finish);
    let result = Executor::new(problem, solver)
        .configure(|s| s.max_iters(MAX_STEPS))
        .timer(false)
        .run()
        .map_err(from_argmin)?;
    let outcome = result.solver.outcome();
    let Some(problem) = result.problem.problem else {
        return Err(CuttingPlaneError::ProblemLost.into());
    };
    let mut trace = Trace {
        reductions: problem.reductions(),
        candidates: 0,
        transform: Some(problem.transform()),
    };
    let kf = problem.rank();
    let data = problem.into_data();
    let value = match outcome {
        Some(Outcome::Minimiser { y, lt, le }) => {
            trace.candidates = le - lt;
            data.at(y, lt, kf - lt, le - lt)?
        }
        Some(Outcome::Bracket {
            lo,
            hi,
            below,
            inside,
        }) => {
            trace.candidates = inside;
            data.between(lo, hi, below, kf - below, inside)?
        }
        None => return Err(CuttingPlaneError::NotStarted.into()),
    };
    Ok((value, trace))
}
