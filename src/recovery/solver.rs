//! [`Solver`]: the options of a recovery, validated, and the dispatch to the algorithms;
//! [`Recovery`]: what a solve returns.

use rayon::prelude::*;

use crate::element::first_non_finite;
use crate::error::Result;
use crate::recovery::backend::{Backend, Host};
use crate::recovery::batch::{Lockstep, Settings};
use crate::recovery::cuda::Cuda;
use crate::recovery::operator::check_one_shape;
use crate::recovery::stopping::{Monitor, StopReason};
use crate::recovery::{iterative, pursuit, DeviceOperator, LinearOperator, Real, RecoveryError};

/// The recovery algorithms.
///
/// ```
/// use kselect::recovery::Algorithm;
/// let a: Algorithm = "niht".parse()?;
/// assert_eq!(a, Algorithm::Niht);
/// assert_eq!(Algorithm::SubspacePursuit.name(), "sp");
/// assert!("omp".parse::<Algorithm>().is_err());
/// # Ok::<(), kselect::Error>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Algorithm {
    /// Iterative hard thresholding, `x = H_k(x + mu A^T (y - A x))` with a fixed step `mu`
    /// (by default `1 / |A|^2`, the operator norm estimated by power iteration).
    Iht,
    /// Normalised IHT (Blumensath & Davies): the step that minimises the residual along the
    /// gradient restricted to the current support, halved (by `2 (1 - c)`, `c = 0.01`) while the
    /// support changes and the step exceeds `(1 - c) |x' - x|^2 / |A (x' - x)|^2`.
    Niht,
    /// Hard thresholding pursuit (Foucart): NIHT's step chooses the support, least squares on
    /// it gives the values.
    Htp,
    /// Compressive sampling matching pursuit (Needell & Tropp): the `2k` largest of the
    /// gradient joined to the support, least squares on the union, its `k` largest kept.
    Cosamp,
    /// Subspace pursuit (Dai & Milenkovic): the `k` largest of the gradient joined to the
    /// support, least squares on the union, its `k` largest, least squares on them.
    SubspacePursuit,
    /// Conjugate-gradient IHT (Blanchard, Tanner & Wei), restarted whenever the support
    /// changes: steps along directions conjugate on the current support.
    Cgiht,
}

/// Every algorithm, in the order of [`Algorithm`]'s variants.
///
/// ```
/// assert_eq!(kselect::recovery::ALGORITHMS.len(), 6);
/// ```
pub const ALGORITHMS: [Algorithm; 6] = [
    Algorithm::Iht,
    Algorithm::Niht,
    Algorithm::Htp,
    Algorithm::Cosamp,
    Algorithm::SubspacePursuit,
    Algorithm::Cgiht,
];

impl Algorithm {
    /// The short name the CLI and the JSON use.
    ///
    /// ```
    /// use kselect::recovery::Algorithm;
    /// assert_eq!(Algorithm::Cgiht.name(), "cgiht");
    /// ```
    pub fn name(self) -> &'static str {
        match self {
            Algorithm::Iht => "iht",
            Algorithm::Niht => "niht",
            Algorithm::Htp => "htp",
            Algorithm::Cosamp => "cosamp",
            Algorithm::SubspacePursuit => "sp",
            Algorithm::Cgiht => "cgiht",
        }
    }
}

crate::names::named!(
    Algorithm,
    "recovery algorithm",
    ALGORITHMS,
    "subspace-pursuit" => Algorithm::SubspacePursuit,
);

/// What a solve found: the `k`-sparse solution, its support, the iterations run, the
/// residual norm `|y - A x|` before the first iteration and after each one, and why it
/// stopped.
///
/// ```
/// use kselect::recovery::{Algorithm, LinearOperator, Solver};
/// # struct Identity;
/// # impl LinearOperator<f64> for Identity {
/// #     fn shape(&self) -> (usize, usize) { (3, 3) }
/// #     fn apply(&self, x: &[f64], y: &mut [f64]) { y.copy_from_slice(x) }
/// #     fn adjoint(&self, y: &[f64], x: &mut [f64]) { x.copy_from_slice(y) }
/// # }
/// let found = Solver::new(Algorithm::Niht, 1).solve(&Identity, &[0.0, -2.0, 0.0])?;
/// assert_eq!(found.solution, vec![0.0, -2.0, 0.0]);
/// assert_eq!(found.support, vec![1]);
/// assert!(found.stop.is_success());
/// assert_eq!(found.residuals.len(), found.iterations + 1);
/// # Ok::<(), kselect::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct Recovery<T> {
    /// The solution: `n` values, at most `k` of them nonzero.
    pub solution: Vec<T>,
    /// The solution's support (the entries kept by the last hard threshold), ascending.
    pub support: Vec<usize>,
    /// The iterations run.
    pub iterations: usize,
    /// `|y - A x|` at the start and after each iteration.
    pub residuals: Vec<f64>,
    /// Why the solver stopped.
    pub stop: StopReason,
}

/// A recovery solver: an [`Algorithm`] for `k`-sparse signals, with its tolerance and
/// iteration limit.
///
/// ```
/// use kselect::recovery::{Algorithm, Solver};
/// let solver = Solver::new(Algorithm::Htp, 10).tolerance(1e-8).max_iterations(300);
/// assert_eq!((solver.algorithm(), solver.sparsity()), (Algorithm::Htp, 10));
/// ```
#[derive(Clone, Debug)]
pub struct Solver {
    algorithm: Algorithm,
    k: usize,
    tolerance: Option<f64>,
    max_iterations: usize,
    step: Option<f64>,
}

/// The default iteration limit.
const MAX_ITERATIONS: usize = 5000;

impl Solver {
    /// A solver for `k`-sparse signals (at most `k` nonzeros) by `algorithm`.
    ///
    /// ```
    /// use kselect::recovery::{Algorithm, Solver};
    /// assert_eq!(Solver::new(Algorithm::Cosamp, 4).sparsity(), 4);
    /// ```
    pub fn new(algorithm: Algorithm, k: usize) -> Solver {
        Solver {
            algorithm,
            k,
            tolerance: None,
            max_iterations: MAX_ITERATIONS,
            step: None,
        }
    }

    /// Stop when `|y - A x| <= tolerance |y|`. By default `1e-5` for `f32` data and `1e-10`
    /// for `f64`. Must be positive and finite.
    ///
    /// ```
    /// use kselect::recovery::{Algorithm, Solver};
    /// let s = Solver::new(Algorithm::Niht, 3).tolerance(1e-6);
    /// assert_eq!(s.tolerance_for::<f32>(), 1e-6);
    /// assert_eq!(Solver::new(Algorithm::Niht, 3).tolerance_for::<f64>(), 1e-10);
    /// ```
    pub fn tolerance(mut self, tolerance: f64) -> Solver {
        self.tolerance = Some(tolerance);
        self
    }

    /// The most iterations (5000 by default).
    ///
    /// ```
    /// use kselect::recovery::{Algorithm, Solver};
    /// assert_eq!(Solver::new(Algorithm::Niht, 3).max_iterations(7).iteration_limit(), 7);
    /// ```
    pub fn max_iterations(mut self, iterations: usize) -> Solver {
        self.max_iterations = iterations;
        self
    }

    /// IHT's fixed step `mu` (by default `1 / |A|^2`); the other algorithms choose their own
    /// and ignore it. Must be positive and finite.
    ///
    /// ```
    /// use kselect::recovery::{Algorithm, Solver};
    /// let s = Solver::new(Algorithm::Iht, 3).step(0.5);
    /// # let _ = s;
    /// ```
    pub fn step(mut self, step: f64) -> Solver {
        self.step = Some(step);
        self
    }

    /// The algorithm.
    ///
    /// ```
    /// use kselect::recovery::{Algorithm, Solver};
    /// assert_eq!(Solver::new(Algorithm::Cgiht, 1).algorithm(), Algorithm::Cgiht);
    /// ```
    pub fn algorithm(&self) -> Algorithm {
        self.algorithm
    }

    /// The sparsity `k`.
    ///
    /// ```
    /// use kselect::recovery::{Algorithm, Solver};
    /// assert_eq!(Solver::new(Algorithm::Iht, 2).sparsity(), 2);
    /// ```
    pub fn sparsity(&self) -> usize {
        self.k
    }

    /// The iteration limit.
    ///
    /// ```
    /// use kselect::recovery::{Algorithm, Solver};
    /// assert_eq!(Solver::new(Algorithm::Iht, 2).iteration_limit(), 5000);
    /// ```
    pub fn iteration_limit(&self) -> usize {
        self.max_iterations
    }

    /// The tolerance used for data of type `T`.
    ///
    /// ```
    /// use kselect::recovery::{Algorithm, Solver};
    /// assert_eq!(Solver::new(Algorithm::Iht, 2).tolerance_for::<f32>(), 1e-5);
    /// ```
    pub fn tolerance_for<T: Real>(&self) -> f64 {
        self.tolerance
            .unwrap_or(if size_of::<T>() == 4 { 1e-5 } else { 1e-10 })
    }

    /// Recovers `x` from `y = A x`: `y` holds the `m` measurements of the `m x n` operator.
    /// Errors: `y`'s length is not `m`, `y` holds NaN or infinity, `k > n`, a tolerance or step
    /// that is not positive and finite.
    ///
    /// ```
    /// use kselect::recovery::{Algorithm, LinearOperator, Solver};
    /// # struct Identity;
    /// # impl LinearOperator<f32> for Identity {
    /// #     fn shape(&self) -> (usize, usize) { (2, 2) }
    /// #     fn apply(&self, x: &[f32], y: &mut [f32]) { y.copy_from_slice(x) }
    /// #     fn adjoint(&self, y: &[f32], x: &mut [f32]) { x.copy_from_slice(y) }
    /// # }
    /// let s = Solver::new(Algorithm::Htp, 1);
    /// assert_eq!(s.solve(&Identity, &[3.0, 0.0])?.solution, vec![3.0, 0.0]);
    /// assert!(s.solve(&Identity, &[1.0]).is_err());
    /// assert!(s.solve(&Identity, &[f32::NAN, 0.0]).is_err());
    /// # Ok::<(), kselect::Error>(())
    /// ```
    pub fn solve<T: Real>(&self, op: &dyn LinearOperator<T>, y: &[T]) -> Result<Recovery<T>> {
        self.check(op.shape(), y.len())?;
        check_finite(y, None)?;
        self.run(op.shape(), y, || Ok(Host::new(op, y)))
    }

    /// [`solve`](Solver::solve) on a CUDA device, with the operator uploaded there
    /// ([`DeviceOperator`]): the vectors stay on the device, the hard thresholds are the
    /// device's exact top-k, and only scalars cross to the host between steps.
    ///
    /// ```no_run
    /// use kselect::recovery::{sparse_signal, Algorithm, DeviceOperator, Ensemble, LinearOperator, SignalKind, Solver};
    /// use kselect::Device;
    /// let a = Ensemble::Gaussian.generate::<f32>(128, 256, 1)?;
    /// let x = sparse_signal::<f32>(256, 8, SignalKind::Gaussian, 2)?;
    /// let mut y = vec![0.0; 128];
    /// a.apply(&x, &mut y);
    /// let on_gpu = DeviceOperator::upload(&a, &Device::cuda(0)?)?;
    /// let found = Solver::new(Algorithm::Niht, 8).solve_on(&on_gpu, &y)?;
    /// assert!(found.stop.is_success());
    /// # Ok::<(), kselect::Error>(())
    /// ```
    pub fn solve_on<T: Real>(&self, op: &DeviceOperator<T>, y: &[T]) -> Result<Recovery<T>> {
        if op.stacked() {
            return Err(RecoveryError::Stacked {
                operators: op.operators(),
                instead: "solve_many_on",
            }
            .into());
        }
        self.check(op.shape(), y.len())?;
        check_finite(y, None)?;
        if let Some(found) = self.lockstep(op, y, 1)? {
            return Ok(found.into_iter().next().expect("one problem"));
        }
        self.run(op.shape(), y, || Cuda::new(op, 0, y))
    }

    /// Solves `count` problems with the same operator at once: `ys` holds their measurement
    /// vectors one after the other (`count * m` values); the results are those of solving each
    /// alone, in order.
    ///
    /// ```
    /// use kselect::recovery::{Algorithm, LinearOperator, Solver};
    /// # struct Identity;
    /// # impl LinearOperator<f64> for Identity {
    /// #     fn shape(&self) -> (usize, usize) { (2, 2) }
    /// #     fn apply(&self, x: &[f64], y: &mut [f64]) { y.copy_from_slice(x) }
    /// #     fn adjoint(&self, y: &[f64], x: &mut [f64]) { x.copy_from_slice(y) }
    /// # }
    /// let found = Solver::new(Algorithm::Niht, 1).solve_many(&Identity, &[1.0, 0.0, 0.0, 5.0])?;
    /// assert_eq!(found[1].support, vec![1]);
    /// # Ok::<(), kselect::Error>(())
    /// ```
    pub fn solve_many<T: Real>(
        &self,
        op: &dyn LinearOperator<T>,
        ys: &[T],
    ) -> Result<Vec<Recovery<T>>> {
        let (m, _) = op.shape();
        self.check_many(op.shape(), ys)?;
        ys.par_chunks(m)
            .map(|y| self.run(op.shape(), y, || Ok(Host::new(op, y))))
            .collect()
    }

    /// Solves one problem with each operator of `ops` (of one shape; B operators of one
    /// ensemble, say), in parallel: `ys` holds the measurement vectors one after the other, the
    /// `c`-th for `ops[c]`; the results are those of solving each alone, in order.
    /// [`solve_many_on`](Solver::solve_many_on) with a stack of operators
    /// ([`DeviceOperator::upload_each`]) does the same on a CUDA device.
    ///
    /// ```
    /// use kselect::recovery::{Algorithm, Ensemble, LinearOperator, Solver};
    /// let ops: Vec<_> = (0..3)
    ///     .map(|seed| Ensemble::Gaussian.generate::<f64>(20, 40, seed))
    ///     .collect::<Result<_, _>>()?;
    /// let mut x = vec![0.0; 40];
    /// x[7] = 1.5;
    /// let mut ys = vec![0.0; 3 * 20];
    /// for (op, y) in ops.iter().zip(ys.chunks_mut(20)) {
    ///     op.apply(&x, y);
    /// }
    /// let found = Solver::new(Algorithm::Niht, 1).solve_each(&ops, &ys)?;
    /// assert!(found.iter().all(|f| f.support == vec![7]));
    /// assert!(Solver::new(Algorithm::Niht, 1).solve_each(&ops, &ys[..40]).is_err());
    /// # Ok::<(), kselect::Error>(())
    /// ```
    pub fn solve_each<T: Real, O: LinearOperator<T>>(
        &self,
        ops: &[O],
        ys: &[T],
    ) -> Result<Vec<Recovery<T>>> {
        let Some(first) = ops.first() else {
            return match ys.len() {
                0 => Ok(Vec::new()),
                measurements => Err(RecoveryError::NoOperators { measurements }.into()),
            };
        };
        let shape = first.shape();
        check_one_shape(ops)?;
        let count = self.check_many(shape, ys)?;
        check_one_each(count, ops.len())?;
        ys.par_chunks(shape.0)
            .zip(ops)
            .map(|(y, op)| self.run(shape, y, || Ok(Host::new(op, y))))
            .collect()
    }

    /// [`solve_many`](Solver::solve_many) on a CUDA device: the problems' vectors are the
    /// columns of matrices on the device, so each product with the operator is one cuBLAS
    /// `gemm` for every problem (dense operators; the sparse kernels take every problem in one
    /// launch, the DCT one batch of FFTs), and each hard threshold one
    /// batched top-k. IHT and NIHT run the problems together, each problem by the steps of
    /// its own solve ([`solve_on`](Solver::solve_on)); the other algorithms solve them one
    /// after another on the device.
    ///
    /// With a stack of operators ([`DeviceOperator::upload_each`]), problem `c` is solved with
    /// operator `c` (as [`solve_each`](Solver::solve_each) on the CPU): one problem for each.
    ///
    /// ```no_run
    /// use kselect::recovery::{sparse_signal, Algorithm, DeviceOperator, Ensemble, LinearOperator, SignalKind, Solver};
    /// use kselect::Device;
    /// let a = Ensemble::Gaussian.generate::<f32>(128, 256, 1)?;
    /// let mut ys = vec![0.0; 3 * 128];
    /// for (p, y) in ys.chunks_mut(128).enumerate() {
    ///     a.apply(&sparse_signal::<f32>(256, 8, SignalKind::Gaussian, p as u64)?, y);
    /// }
    /// let on_gpu = DeviceOperator::upload(&a, &Device::cuda(0)?)?;
    /// let found = Solver::new(Algorithm::Niht, 8).solve_many_on(&on_gpu, &ys)?;
    /// assert!(found.iter().all(|f| f.stop.is_success()));
    /// # Ok::<(), kselect::Error>(())
    /// ```
    pub fn solve_many_on<T: Real>(
        &self,
        op: &DeviceOperator<T>,
        ys: &[T],
    ) -> Result<Vec<Recovery<T>>> {
        let (m, _) = op.shape();
        let count = self.check_many(op.shape(), ys)?;
        if op.stacked() {
            check_one_each(count, op.operators())?;
        }
        if count == 0 {
            return Ok(Vec::new());
        }
        if i32::try_from(count).is_err() {
            return Err(RecoveryError::TooManyProblems { count }.into());
        }
        match self.lockstep(op, ys, count)? {
            Some(found) => Ok(found),
            None => ys
                .chunks(m)
                .enumerate()
                .map(|(c, y)| {
                    let member = if op.stacked() { c } else { 0 };
                    self.run(op.shape(), y, || Cuda::new(op, member, y))
                })
                .collect(),
        }
    }

    /// The `count` problems of `ys` (checked) solved together on the device by IHT or NIHT;
    /// `None` for the other algorithms, and for `k = 0`.
    fn lockstep<T: Real>(
        &self,
        op: &DeviceOperator<T>,
        ys: &[T],
        count: usize,
    ) -> Result<Option<Vec<Recovery<T>>>> {
        let settings = Settings {
            k: self.k,
            tol: self.tolerance_for::<T>(),
            max_iterations: self.max_iterations,
        };
        let m = op.shape().0;
        Ok(match self.algorithm {
            _ if self.k == 0 => None,
            Algorithm::Niht => Some(Lockstep::new(op, ys, count, &settings)?.niht()?),
            Algorithm::Iht => {
                Some(Lockstep::new(op, ys, count, &settings)?.iht(self.step, &ys[..m])?)
            }
            _ => None,
        })
    }

    /// The checks of [`solve_many`](Solver::solve_many)'s problems: the options, whole
    /// problems, finite measurements. Returns the number of problems.
    fn check_many<T: Real>(&self, (m, n): (usize, usize), ys: &[T]) -> Result<usize> {
        if m == 0 || !ys.len().is_multiple_of(m) {
            return Err(RecoveryError::WholeProblems { len: ys.len(), m }.into());
        }
        let count = ys.len() / m;
        self.check((m, n), m)?;
        for p in 0..count {
            check_finite(&ys[p * m..(p + 1) * m], Some(p))?;
        }
        Ok(count)
    }

    /// The checks of the options against the operator.
    fn check(&self, (m, n): (usize, usize), len: usize) -> Result<()> {
        if m == 0 || n == 0 {
            return Err(RecoveryError::EmptyOperator {
                what: "the operator",
                m,
                n,
            }
            .into());
        }
        if len != m {
            return Err(RecoveryError::Measurements { given: len, m }.into());
        }
        if self.k > n {
            return Err(RecoveryError::Sparsity { k: self.k, n }.into());
        }
        positive("the tolerance", self.tolerance.unwrap_or(1.0))?;
        if let Some(step) = self.step {
            positive("the step", step)?;
        }
        Ok(())
    }

    /// One solve of `y` by an operator of `shape`, the input checked, on the backend `backend`
    /// makes.
    fn run<T: Real, B: Backend<T>>(
        &self,
        (_, n): (usize, usize),
        y: &[T],
        backend: impl FnOnce() -> Result<B>,
    ) -> Result<Recovery<T>> {
        let norm_y = crate::recovery::vector::norm2(y).sqrt();
        let mut monitor = Monitor::new(norm_y, self.tolerance_for::<T>(), self.max_iterations);
        if self.k == 0 || norm_y == 0.0 {
            monitor.record(norm_y, 0);
            let stop = if self.k == 0 && norm_y > 0.0 {
                StopReason::ZeroSparsity
            } else {
                StopReason::Converged
            };
            return Ok(Recovery {
                solution: vec![T::zero(); n],
                support: Vec::new(),
                iterations: 0,
                residuals: monitor.into_residuals(),
                stop,
            });
        }
        let problem = Problem {
            k: self.k,
            tol: self.tolerance_for::<T>(),
            norm_y,
        };
        let (solution, support, stop) = self.algorithm_on(&backend()?, &problem, &mut monitor)?;
        let residuals = monitor.into_residuals();
        Ok(Recovery {
            solution,
            support,
            iterations: residuals.len() - 1,
            residuals,
            stop,
        })
    }
}

impl Solver {
    /// Runs the algorithm on backend `b`.
    fn algorithm_on<T: Real, B: Backend<T>>(
        &self,
        b: &B,
        problem: &Problem,
        monitor: &mut Monitor,
    ) -> Result<Outcome<T>> {
        match self.algorithm {
            Algorithm::Iht => iterative::iht(b, problem, self.step, monitor),
            Algorithm::Niht => iterative::niht(b, problem, monitor),
            Algorithm::Cgiht => iterative::cgiht(b, problem, monitor),
            Algorithm::Htp => pursuit::htp(b, problem, monitor),
            Algorithm::Cosamp => pursuit::cosamp(b, problem, monitor),
            Algorithm::SubspacePursuit => pursuit::subspace(b, problem, monitor),
        }
    }
}

/// An error unless there are as many problems as operators.
fn check_one_each(problems: usize, operators: usize) -> Result<()> {
    if problems != operators {
        return Err(RecoveryError::OneEach {
            what: "problems",
            given: problems,
            operators,
        }
        .into());
    }
    Ok(())
}

/// An error naming the first entry of the measurements that is not finite (and their
/// `problem`, where several were given).
fn check_finite<T: Real>(y: &[T], problem: Option<usize>) -> Result<()> {
    match first_non_finite(y) {
        None => Ok(()),
        Some(index) => Err(RecoveryError::NonFiniteMeasurement {
            index,
            problem,
            value: y[index].as_f64(),
        }
        .into()),
    }
}

/// An error unless the `setting` is positive and finite.
pub(crate) fn positive(setting: &'static str, value: f64) -> Result<()> {
    if value > 0.0 && value.is_finite() {
        return Ok(());
    }
    Err(RecoveryError::OutOfRange {
        setting,
        value,
        range: "positive and finite",
    }
    .into())
}

/// What the algorithms need to know of a problem besides its backend: the sparsity, the
/// tolerance, and `|y|`.
pub(crate) struct Problem {
    pub k: usize,
    pub tol: f64,
    pub norm_y: f64,
}

/// What an algorithm returns: the solution, its support, why it stopped.
pub(crate) type Outcome<T> = (Vec<T>, Vec<usize>, StopReason);
