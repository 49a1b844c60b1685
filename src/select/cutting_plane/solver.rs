//! Kelley's cutting-plane method in one dimension as an argmin [`Solver`].
//!
//! The solver keeps a bracket `[a, b]` with `f'(a+) < 0 < f'(b−)`, so the minimiser lies
//! strictly inside, and steps to the intersection of the tangent lines at `a` and `b` (the
//! minimiser of the piecewise-linear lower model; in one dimension only the two innermost cuts
//! matter). Each step is one fused reduction ([`CheckLoss::evaluate`]): the signs of the new
//! point's slopes replace one end, or show that the point is the minimiser. When a tangent step
//! leaves the bracket or removes less than a quarter of the values inside it, the step is the
//! midpoint of the bracket in the order-preserving bit pattern of `f64` instead, which halves
//! the number of `f64`s inside, so the search ends after a bounded number of steps whatever the
//! data (together with the executor's `max_iters`).
//!
//! The solver stops with [`Outcome::Minimiser`] when a point's counts straddle `k`, and with
//! [`Outcome::Bracket`] once at most `finish_below` finite values lie strictly inside the
//! bracket (the hybrid's hand-over to exact selection among them) or no `f64` is left inside.

use argmin::core::{IterState, Problem, Solver, State, TerminationReason, KV};

use super::problem::{to_argmin, CheckLoss, Data, Evaluation};
use crate::element::Element;

/// The state argmin keeps for this solver: the point and its objective.
pub type KelleyState = IterState<f64, (), (), (), (), f64>;

/// Where the search ended.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Outcome {
    /// `y` is the answer's `f64`: `lt <= k < le` (finite values below / at most `y`).
    Minimiser {
        /// The point.
        y: f64,
        /// Finite values `< y`.
        lt: usize,
        /// Finite values `<= y`.
        le: usize,
    },
    /// The answer lies strictly between `lo` and `hi`, among `inside` finite values, of which
    /// it has rank `k − below`.
    Bracket {
        /// The lower end (excluded).
        lo: f64,
        /// The upper end (excluded).
        hi: f64,
        /// Finite values `<= lo`.
        below: usize,
        /// Finite values strictly between `lo` and `hi`.
        inside: usize,
    },
}

/// Kelley's cutting-plane solver on `[lo, hi]`, the range of the finite values.
///
/// ```
/// use argmin::core::{Executor, State};
/// use kselect::select::cutting_plane::{CheckLoss, HostData, Kelley, Outcome};
/// let data: Vec<f64> = (0..1000).map(|i| ((i * 7919) % 1000) as f64).collect();
/// let p = CheckLoss::new(HostData::new(&data), 500).unwrap();
/// let solver = Kelley::new(p.lower(), p.upper());
/// let r = Executor::new(p, solver).configure(|s| s.max_iters(100)).run().unwrap();
/// assert_eq!(r.solver.outcome(), Some(Outcome::Minimiser { y: 500.0, lt: 500, le: 501 }));
/// ```
#[derive(Clone, Debug)]
pub struct Kelley {
    /// The lower end of the search range.
    lo: f64,
    /// The upper end of the search range.
    hi: f64,
    /// Stop once at most this many values lie inside the bracket.
    finish_below: usize,
    /// The lower end of the bracket.
    a: Option<Evaluation>,
    /// The upper end of the bracket.
    b: Option<Evaluation>,
    /// The values inside the bracket one step before.
    previous: usize,
    /// The minimiser, once a point was one.
    found: Option<Outcome>,
}

impl Kelley {
    /// A solver on `[lo, hi]` that runs until it finds the minimiser.
    pub fn new(lo: f64, hi: f64) -> Kelley {
        Kelley {
            lo,
            hi,
            finish_below: 0,
            a: None,
            b: None,
            previous: usize::MAX,
            found: None,
        }
    }

    /// Stops once at most `count` values lie strictly inside the bracket (the hybrid).
    ///
    /// ```
    /// use argmin::core::{Executor, State};
    /// use kselect::select::cutting_plane::{CheckLoss, HostData, Kelley, Outcome};
    /// let data: Vec<u32> = (0..100_000).rev().collect();
    /// let p = CheckLoss::new(HostData::new(&data), 777).unwrap();
    /// let solver = Kelley::new(p.lower(), p.upper()).finish_below(5000);
    /// let r = Executor::new(p, solver).run().unwrap();
    /// match r.solver.outcome().unwrap() {
    ///     Outcome::Bracket { inside, below, .. } => assert!(inside <= 5000 && below <= 777),
    ///     Outcome::Minimiser { y, .. } => assert_eq!(y, 777.0),
    /// }
    /// ```
    pub fn finish_below(mut self, count: usize) -> Kelley {
        self.finish_below = count;
        self
    }

    /// Where the search stands: the minimiser once found, else the current bracket (`None`
    /// before the ends were evaluated).
    pub fn outcome(&self) -> Option<Outcome> {
        if self.found.is_some() {
            return self.found;
        }
        let (a, b) = (self.a?, self.b?);
        Some(Outcome::Bracket {
            lo: a.y,
            hi: b.y,
            below: a.le,
            inside: b.lt - a.le,
        })
    }

    /// Records a minimiser.
    fn found(&mut self, e: &Evaluation) {
        self.found = Some(Outcome::Minimiser {
            y: e.y,
            lt: e.lt,
            le: e.le,
        });
    }

    /// The next point strictly inside `(a, b)`, or `None` when no `f64` lies between.
    fn next_point(
        &self,
        a: &Evaluation,
        b: &Evaluation,
        frame_point: impl Fn(f64) -> f64,
    ) -> Option<f64> {
        let inside = b.lt - a.le;
        // Tangent lines f_a + s_a (u − u_a) and f_b + s_b (u − u_b) meet at u.
        let u = (b.f - a.f + a.slope * a.u - b.slope * b.u) / (a.slope - b.slope);
        let mut y = frame_point(u);
        let slow = inside.saturating_mul(4) > self.previous.saturating_mul(3);
        if !(a.y < y && y < b.y) || slow {
            y = bit_midpoint(a.y, b.y);
        }
        (a.y < y && y < b.y).then_some(y)
    }
}

/// Evaluates through argmin's problem wrapper (counted there as `reduction_count`).
fn evaluate<D: Data>(
    problem: &mut Problem<CheckLoss<D>>,
    y: f64,
) -> Result<Evaluation, argmin::core::Error> {
    problem.problem("reduction_count", |p| p.evaluate(y).map_err(to_argmin))
}

impl<D: Data> Solver<CheckLoss<D>, KelleyState> for Kelley {
    /// The solver's name.
    fn name(&self) -> &str {
        "Kelley cutting plane"
    }

    /// Evaluates both ends of the range.
    fn init(
        &mut self,
        problem: &mut Problem<CheckLoss<D>>,
        state: KelleyState,
    ) -> Result<(KelleyState, Option<KV>), argmin::core::Error> {
        for y in [self.lo, self.hi] {
            let e = evaluate(problem, y)?;
            if e.minimiser {
                self.found(&e);
                return Ok((
                    state
                        .param(e.y)
                        .cost(e.f)
                        .terminate_with(TerminationReason::SolverConverged),
                    None,
                ));
            }
            if e.slope < 0.0 {
                self.a = Some(e);
            } else {
                self.b = Some(e);
            }
        }
        let (a, b) = match (self.a, self.b) {
            (Some(a), Some(b)) => (a, b),
            _ => {
                return Err(argmin::core::Error::msg(
                    "the ends of the range do not bracket the minimiser",
                ))
            }
        };
        let best = if a.f <= b.f { a } else { b };
        Ok((state.param(best.y).cost(best.f), None))
    }

    /// One cutting-plane step: one reduction at the tangent intersection.
    fn next_iter(
        &mut self,
        problem: &mut Problem<CheckLoss<D>>,
        state: KelleyState,
    ) -> Result<(KelleyState, Option<KV>), argmin::core::Error> {
        let (Some(a), Some(b)) = (self.a, self.b) else {
            return Err(argmin::core::Error::msg("the solver was not initialised"));
        };
        let inside = b.lt - a.le;
        if inside <= self.finish_below {
            return Ok((
                state.terminate_with(TerminationReason::SolverExit(
                    "few values inside the bracket".into(),
                )),
                None,
            ));
        }
        let frame = match problem.problem.as_ref() {
            Some(p) => p.frame(),
            None => return Err(argmin::core::Error::msg("the problem is missing")),
        };
        let Some(y) = self.next_point(&a, &b, |u| frame.point(u)) else {
            return Ok((
                state.terminate_with(TerminationReason::SolverExit(
                    "no f64 inside the bracket".into(),
                )),
                None,
            ));
        };
        self.previous = inside;
        let e = evaluate(problem, y)?;
        let state = state.param(e.y).cost(e.f);
        if e.minimiser {
            self.found(&e);
            return Ok((
                state.terminate_with(TerminationReason::SolverConverged),
                None,
            ));
        }
        if e.slope < 0.0 {
            self.a = Some(e);
        } else {
            self.b = Some(e);
        }
        Ok((state, None))
    }
}

/// The midpoint of `a < b` in the order-preserving bit pattern of `f64` (halves the number of
/// `f64`s between them, so it also splits ranges spanning many magnitudes).
pub(crate) fn bit_midpoint(a: f64, b: f64) -> f64 {
    let (ka, kb) = (a.to_key(), b.to_key());
    f64::from_key(ka + (kb - ka) / 2)
}

/// Unit tests of the solver's steps.
#[cfg(test)]
mod tests {
    use super::*;

    /// The bisection point lies strictly inside its interval.
    #[test]
    fn bit_midpoint_is_inside() {
        assert!(bit_midpoint(-1.0, 1e300) > -1.0);
        let m = bit_midpoint(1.0, 1e300);
        assert!(1.0 < m && m < 1e300);
    }
}
