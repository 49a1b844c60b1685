//! [`CuttingPlaneError`]: why a cutting-plane search cannot go on.

/// Why the cutting-plane method cannot set up, run or finish its search
/// (`kselect::Error::CuttingPlane`): a problem with nothing to minimise, a point outside the
/// objective's domain, a failure of the solver, or a bracket that does not hold the rank asked
/// for. These are checks of the search itself, not of a regression design. The messages name the
/// numbers involved.
///
/// ```
/// use kselect::select::cutting_plane::{CheckLoss, HostData};
/// use kselect::{CuttingPlaneError, Error};
/// let data = [2.0f64; 4];
/// let err = CheckLoss::new(HostData::new(&data), 1).unwrap_err();
/// assert!(matches!(err, Error::CuttingPlane(CuttingPlaneError::NoSearch { k: 1 })));
/// ```
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum CuttingPlaneError {
    /// The element of rank `k` is not finite, or every finite value is one point: there is
    /// nothing to minimise.
    #[error("rank k = {k} falls on a non-finite value or on a single point: no search needed")]
    NoSearch {
        /// The rank.
        k: usize,
    },
    /// The objective asked at a point that is not finite.
    #[error("the objective is evaluated at finite points, not {y}")]
    NonFinitePoint {
        /// The point.
        y: f64,
    },
    /// The solver (argmin) failed with an error of its own.
    #[error("the solver failed: {message}")]
    Solver {
        /// The solver's message.
        message: String,
    },
    /// The solver returned without its problem.
    #[error("the cutting-plane problem was lost")]
    ProblemLost,
    /// The solver returned without a minimiser or a bracket.
    #[error("the cutting-plane search did not start")]
    NotStarted,
    /// The rank to finish is not among the candidates inside the final bracket.
    #[error("rank {rank} is not among the {count} candidates inside the cutting-plane bracket")]
    RankOutsideBracket {
        /// The rank among the candidates.
        rank: usize,
        /// The candidates inside the bracket.
        count: usize,
    },
    /// No value equals the minimiser found.
    #[error("no value at the minimiser {y}")]
    NoValueAtMinimiser {
        /// The minimiser.
        y: f64,
    },
}
