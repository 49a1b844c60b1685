//! Kelley's cutting-plane method for selection (Beliakov 2011), on the CPU and on CUDA, and
//! the optimisation view of selection it rests on.
//!
//! With `n` finite values and `τ = (k + ½) / n`, the element of rank `k` is the unique
//! minimiser of the convex, piecewise-linear check loss `f(y) = Σ ρ_τ(x_i − y)`; one fused
//! reduction gives `f` and its one-sided slopes (`#(x < y) − (k + ½)`, `#(x ≤ y) − (k + ½)`).
//! The pieces:
//!
//! - [`CheckLoss`] (`problem.rs`): the problem for argmin's solvers over a [`Data`] set
//!   ([`HostData`] in host memory, `DeviceData` on a CUDA device), with the reductions counted;
//! - [`Kelley`] (`solver.rs`): the cutting-plane solver, which keeps a bracket and steps to the
//!   intersection of the tangents at its ends;
//! - [`Bisection`] (`bisection.rs`): bisection on the subgradient's sign, for comparison with
//!   argmin's `BrentOpt` and `GoldenSectionSearch` (those three return approximate minimisers);
//! - [`Transform`] (`transform.rs`): the monotone transform that keeps huge values (`1e300`)
//!   from swamping the sums;
//! - the hybrid (`hybrid.rs`): a few cutting-plane steps, then exact selection among the values
//!   still inside the bracket, copied (`cpu.rs`, `cuda.rs`).
//!
//! The result is exact: counts compare the values themselves as `f64` (monotone), so the bracket
//! always holds the answer; the answer is an element chosen by key among the copies (values
//! sharing one `f64` — `-0.0` and `+0.0`, 64-bit integers above 2^53 — are told apart there).
//! `±inf` and NaN are counted apart by the first pass and left out of the objective (their
//! ranks are answered by their keys). The step count is bounded (bit-pattern bisection when a
//! tangent step makes too little progress, at most 200 steps), and whatever bracket is left is
//! finished exactly.
//!
//! ```
//! use kselect::select::cutting_plane::{select_host, HostData};
//! let data: Vec<i64> = (0..50_000).map(|i| (i * 7919) % 50_000 - 25_000).collect();
//! let (x, trace) = select_host(HostData::new(&data), 100, None).unwrap();
//! assert_eq!(x, -24_900);
//! assert!(trace.reductions >= 2);
//! ```

mod bisection;
mod cpu;
mod cuda;
mod error;
mod hybrid;
mod problem;
mod solver;
mod transform;

#[cfg(test)]
mod tests;

pub use bisection::{Bisection, BisectionState};
pub use cpu::{select_host, HostData};
pub use cuda::{select_device, DeviceData};
pub use error::CuttingPlaneError;
pub use hybrid::Trace;
pub use problem::{from_argmin, Census, CheckLoss, Data, Evaluation, Reduction};
pub use solver::{Kelley, KelleyState, Outcome};
pub use transform::{Frame, Transform};

pub(crate) use cpu::select;
pub(crate) use cuda::{multiselect, workspace};

selection! {
    /// The cutting-plane method.
    CuttingPlane: CpuAndCuda,
    cpu: each_rank(select),
    cuda: counting_nans(multiselect), workspace(workspace)
}
