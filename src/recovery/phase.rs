//! Phase transitions (Donoho & Tanner; Blanchard & Tanner): how often an algorithm recovers
//! a `k`-sparse signal from `m` measurements of length `n`, over a grid of the undersampling
//! ratio `delta = m / n` and the sparsity ratio `rho = k / m`, and the curve `rho*(delta)`
//! where it succeeds half the time.
//!
//! Each cell `(delta, rho)` runs `trials` problems: `m = round(delta n)` (at least 1), `k =
//! round(rho m)` (at least 1), an operator drawn from the ensemble and a `k`-sparse signal
//! drawn from the signal kind, each from its own seed (a hash of the experiment's seed, the
//! cell and the trial), so that a cell's problems are the same for every algorithm and every
//! run. A trial succeeds when the solution's largest error is below `success` (by default
//! `1e-3`) times the signal's largest entry. The 50% point of each `delta` comes from a
//! logistic fit of the successes against `rho` by maximum likelihood (`logit p = a + b rho`,
//! `rho* = -a / b`), and is absent where the column is all successes or all failures.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

use rayon::prelude::*;
use serde::Serialize;

use crate::device::Device;
use crate::error::Result;
use crate::recovery::solver::positive;
use crate::recovery::{
    sparse_signal, Algorithm, DeviceOperator, Ensemble, LinearOperator, Operator, Real, Recovery,
    RecoveryError, SignalKind, Solver,
};

/// The settings of a phase-transition experiment.
///
/// ```
/// use kselect::recovery::{Algorithm, Ensemble, PhaseTransition};
/// let experiment = PhaseTransition::new(Ensemble::Gaussian, 64)
///     .deltas(vec![0.5])
///     .rhos(vec![0.1, 0.9])
///     .trials(3)
///     .algorithms(vec![Algorithm::Niht]);
/// let diagram = experiment.run::<f64>(&|_, _| {})?;
/// let cells = &diagram.algorithms[0].cells;
/// assert_eq!((cells[0].successes, cells[1].successes), (3, 0));
/// # Ok::<(), kselect::Error>(())
/// ```
#[derive(Clone, Debug)]
pub struct PhaseTransition {
    ensemble: Ensemble,
    n: usize,
    deltas: Vec<f64>,
    rhos: Vec<f64>,
    trials: usize,
    algorithms: Vec<Algorithm>,
    signal: SignalKind,
    seed: u64,
    success: f64,
    max_iterations: Option<usize>,
}

/// One cell of a phase diagram: its grid point, its problem size, and the outcome of its
/// trials.
///
/// ```
/// use kselect::recovery::Cell;
/// let cell = Cell { delta: 0.5, rho: 0.2, m: 50, k: 10, trials: 4, successes: 3, mean_iterations: 40.0, seconds: 0.01 };
/// assert_eq!(cell.fraction(), 0.75);
/// ```
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Cell {
    /// `m / n` asked for.
    pub delta: f64,
    /// `k / m` asked for.
    pub rho: f64,
    /// The measurements.
    pub m: usize,
    /// The nonzeros.
    pub k: usize,
    /// The problems solved.
    pub trials: usize,
    /// The problems recovered.
    pub successes: usize,
    /// The mean iterations of the trials.
    pub mean_iterations: f64,
    /// The time of all the cell's solves, in seconds (summed over the threads that ran them;
    /// on a GPU, the time of the solves of the trials together).
    pub seconds: f64,
}

impl Cell {
    /// The fraction of the trials that succeeded.
    ///
    /// ```
    /// # use kselect::recovery::Cell;
    /// let cell = Cell { delta: 0.5, rho: 0.2, m: 50, k: 10, trials: 0, successes: 0, mean_iterations: 0.0, seconds: 0.0 };
    /// assert_eq!(cell.fraction(), 0.0);
    /// ```
    pub fn fraction(&self) -> f64 {
        if self.trials == 0 {
            0.0
        } else {
            self.successes as f64 / self.trials as f64
        }
    }
}

/// A point of a 50% curve: at `delta`, success half the time at `rho`.
///
/// ```
/// let p = kselect::recovery::CurvePoint { delta: 0.5, rho: 0.25 };
/// assert!(p.rho < 1.0);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct CurvePoint {
    /// `m / n`.
    pub delta: f64,
    /// `k / m` of the 50% point.
    pub rho: f64,
}

/// One algorithm's phase diagram: its cells (all `rho` of the first `delta`, then the next)
/// and its 50% curve.
///
/// ```
/// use kselect::recovery::{Algorithm, Ensemble, PhaseTransition};
/// let d = PhaseTransition::new(Ensemble::Sign, 32).deltas(vec![0.5]).rhos(vec![0.1]).trials(1)
///     .algorithms(vec![Algorithm::Htp]).run::<f64>(&|_, _| {})?;
/// assert_eq!(d.algorithms[0].algorithm, "htp");
/// # Ok::<(), kselect::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct AlgorithmDiagram {
    /// The algorithm's name.
    pub algorithm: String,
    /// The cells, `delta`-major.
    pub cells: Vec<Cell>,
    /// The 50% points, one for each `delta` whose column has a transition.
    pub curve: Vec<CurvePoint>,
}

/// The result of a phase-transition experiment, ready for JSON.
///
/// ```
/// use kselect::recovery::{Ensemble, PhaseTransition};
/// let d = PhaseTransition::new(Ensemble::Dct, 32).deltas(vec![0.5]).rhos(vec![0.1]).trials(1)
///     .run::<f32>(&|_, _| {})?;
/// assert_eq!((d.ensemble.as_str(), d.n, d.dtype.as_str()), ("dct", 32, "f32"));
/// # Ok::<(), kselect::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PhaseDiagram {
    /// The ensemble (as `Ensemble`'s `Display` writes it).
    pub ensemble: String,
    /// The signal length.
    pub n: usize,
    /// The signals' nonzeros.
    pub signal: String,
    /// The element type.
    pub dtype: String,
    /// Problems a cell.
    pub trials: usize,
    /// The success threshold on the relative largest error.
    pub success: f64,
    /// The experiment's seed.
    pub seed: u64,
    /// The grid's `delta` values.
    pub deltas: Vec<f64>,
    /// The grid's `rho` values.
    pub rhos: Vec<f64>,
    /// One diagram an algorithm, in the order asked.
    pub algorithms: Vec<AlgorithmDiagram>,
}

/// Builder methods that each set the field of their name to their argument and return the
/// builder: each `field(Type),` (after its documentation) in `setters!(Builder { ... })`
/// writes `pub fn field(mut self, field: Type) -> Builder`.
macro_rules! setters {
    ($builder:ident { $($(#[$doc:meta])* $field:ident($t:ty),)+ }) => {
        $(
            $(#[$doc])*
            pub fn $field(mut self, $field: $t) -> $builder {
                self.$field = $field;
                self
            }
        )+
    };
}

impl PhaseTransition {
    /// An experiment over `ensemble` operators for signals of length `n`, with the defaults:
    /// `delta` and `rho` from 0.05 to 0.95 by 0.05, 10 trials a cell, NIHT, Gaussian nonzeros,
    /// seed 1, success below `1e-3`, each algorithm's default iteration limit.
    ///
    /// ```
    /// use kselect::recovery::{Ensemble, PhaseTransition};
    /// assert_eq!(PhaseTransition::new(Ensemble::Gaussian, 1024).problems(), 19 * 19 * 10);
    /// ```
    pub fn new(ensemble: Ensemble, n: usize) -> PhaseTransition {
        let grid: Vec<f64> = (1..20).map(|i| i as f64 * 0.05).collect();
        PhaseTransition {
            ensemble,
            n,
            deltas: grid.clone(),
            rhos: grid,
            trials: 10,
            algorithms: vec![Algorithm::Niht],
            signal: SignalKind::Gaussian,
            seed: 1,
            success: 1e-3,
            max_iterations: None,
        }
    }

    setters!(PhaseTransition {
        /// The `delta = m / n` values, each in `(0, 1]`.
        ///
        /// ```
        /// # use kselect::recovery::{Ensemble, PhaseTransition};
        /// assert_eq!(PhaseTransition::new(Ensemble::Gaussian, 64).deltas(vec![0.25, 0.5]).problems(), 2 * 19 * 10);
        /// ```
        deltas(Vec<f64>),

        /// The `rho = k / m` values, each in `(0, 1]`.
        ///
        /// ```
        /// # use kselect::recovery::{Ensemble, PhaseTransition};
        /// assert_eq!(PhaseTransition::new(Ensemble::Gaussian, 64).rhos(vec![0.1]).problems(), 19 * 10);
        /// ```
        rhos(Vec<f64>),

        /// The problems a cell (at least 1).
        ///
        /// ```
        /// # use kselect::recovery::{Ensemble, PhaseTransition};
        /// assert_eq!(PhaseTransition::new(Ensemble::Gaussian, 64).trials(2).problems(), 19 * 19 * 2);
        /// ```
        trials(usize),

        /// The algorithms, each run on the same problems.
        ///
        /// ```
        /// # use kselect::recovery::{Algorithm, Ensemble, PhaseTransition};
        /// let e = PhaseTransition::new(Ensemble::Gaussian, 64).algorithms(vec![Algorithm::Htp, Algorithm::Cosamp]);
        /// assert_eq!(e.problems(), 19 * 19 * 10);
        /// ```
        algorithms(Vec<Algorithm>),

        /// The signals' nonzeros.
        ///
        /// ```
        /// # use kselect::recovery::{Ensemble, PhaseTransition, SignalKind};
        /// let e = PhaseTransition::new(Ensemble::Gaussian, 64).signal(SignalKind::Sign);
        /// # let _ = e;
        /// ```
        signal(SignalKind),

        /// The seed every problem's seed is drawn from.
        ///
        /// ```
        /// # use kselect::recovery::{Ensemble, PhaseTransition};
        /// let e = PhaseTransition::new(Ensemble::Gaussian, 64).seed(42);
        /// # let _ = e;
        /// ```
        seed(u64),

        /// The success threshold: the largest error below `success` times the signal's largest
        /// entry (`1e-3` by default; positive).
        ///
        /// ```
        /// # use kselect::recovery::{Ensemble, PhaseTransition};
        /// let e = PhaseTransition::new(Ensemble::Gaussian, 64).success(1e-4);
        /// # let _ = e;
        /// ```
        success(f64),
    });

    /// The solvers' iteration limit (their default when not given).
    ///
    /// ```
    /// # use kselect::recovery::{Ensemble, PhaseTransition};
    /// let e = PhaseTransition::new(Ensemble::Gaussian, 64).max_iterations(500);
    /// # let _ = e;
    /// ```
    pub fn max_iterations(mut self, iterations: usize) -> PhaseTransition {
        self.max_iterations = Some(iterations);
        self
    }

    /// The problems the experiment solves for each algorithm: cells times trials.
    ///
    /// ```
    /// # use kselect::recovery::{Ensemble, PhaseTransition};
    /// assert_eq!(PhaseTransition::new(Ensemble::Gaussian, 64).trials(1).problems(), 361);
    /// ```
    pub fn problems(&self) -> usize {
        self.deltas.len() * self.rhos.len() * self.trials
    }

    /// Runs the experiment in `T` arithmetic, the trials in parallel, calling `progress(done,
    /// total)` as problems finish (`total` counts every algorithm's solves). Errors: an empty
    /// grid or list of algorithms, `n = 0`, no trials, a `delta` or `rho` outside `(0, 1]`, a
    /// success threshold that is not positive.
    pub fn run<T: Real>(&self, progress: &(dyn Fn(usize, usize) + Sync)) -> Result<PhaseDiagram> {
        self.check()?;
        let total = self.problems() * self.algorithms.len();
        let done = AtomicUsize::new(0);
        let cells = self.cells();
        // outcomes[cell][algorithm] = (successes, iterations, seconds).
        let outcomes: Vec<Vec<(usize, usize, f64)>> = cells
            .par_iter()
            .map(|&(i, j)| {
                let (m, k) = self.size(i, j);
                let trials: Vec<Vec<(bool, usize, f64)>> = (0..self.trials)
                    .into_par_iter()
                    .map(|t| {
                        let r = self.trial::<T>(i, j, t, m, k);
                        done.fetch_add(self.algorithms.len(), Ordering::Relaxed);
                        progress(done.load(Ordering::Relaxed), total);
                        r
                    })
                    .collect::<Result<_>>()?;
                Ok((0..self.algorithms.len())
                    .map(|a| {
                        trials.iter().fold((0, 0, 0.0), |(s, it, sec), t| {
                            (s + t[a].0 as usize, it + t[a].1, sec + t[a].2)
                        })
                    })
                    .collect())
            })
            .collect::<Result<_>>()?;
        Ok(self.diagram::<T>(&cells, &outcomes))
    }

    /// [`run`](PhaseTransition::run) on a CUDA device: each cell's trials (the same problems as
    /// on the CPU) are solved together for each algorithm, their operators a stack
    /// ([`DeviceOperator::upload_each`]) solved by [`Solver::solve_many_on`], in groups of at
    /// most about 1 GiB of operators, the next group drawn on the host while the device solves
    /// the last one. Each trial's result is that of its solve alone on the
    /// device, whose rounding may tip a trial at the edge of success either way. Errors: as
    /// `run`'s, a device that is not CUDA, and the device's.
    ///
    /// ```no_run
    /// use kselect::recovery::{Algorithm, Ensemble, PhaseTransition};
    /// use kselect::Device;
    /// let diagram = PhaseTransition::new(Ensemble::Gaussian, 1024)
    ///     .deltas(vec![0.5])
    ///     .rhos(vec![0.05, 0.5])
    ///     .trials(20)
    ///     .algorithms(vec![Algorithm::Niht])
    ///     .run_on::<f32>(&Device::cuda(0)?, &|_, _| {})?;
    /// assert_eq!(diagram.algorithms[0].cells[0].successes, 20);
    /// # Ok::<(), kselect::Error>(())
    /// ```
    pub fn run_on<T: Real>(
        &self,
        device: &Device,
        progress: &(dyn Fn(usize, usize) + Sync),
    ) -> Result<PhaseDiagram> {
        if !matches!(device, Device::Cuda(_)) {
            return Err(RecoveryError::NotCuda {
                what: "PhaseTransition::run_on",
                on_cpu: "PhaseTransition::run solves the trials on the CPU",
            }
            .into());
        }
        self.check()?;
        let total = self.problems() * self.algorithms.len();
        let cells = self.cells();
        // Every cell's groups of trials, in order: the cell's index and the group's trials.
        let groups: Vec<(usize, Vec<usize>)> = cells
            .iter()
            .enumerate()
            .flat_map(|(c, &(i, j))| {
                let trials: Vec<usize> = (0..self.trials).collect();
                let at_once = self.trials_at_once::<T>(self.size(i, j).0);
                trials
                    .chunks(at_once)
                    .map(|group| (c, group.to_vec()))
                    .collect::<Vec<_>>()
            })
            .collect();
        let mut outcomes = vec![vec![(0, 0, 0.0); self.algorithms.len()]; cells.len()];
        let mut done = 0;
        let draw = |(c, trials): &(usize, Vec<usize>)| self.draw::<T>(cells[*c], trials);
        // The next group is drawn on the host while the device solves this one.
        std::thread::scope(|scope| -> Result<()> {
            let mut next = groups.first().map(|g| scope.spawn(move || draw(g)));
            for (index, (c, trials)) in groups.iter().enumerate() {
                let drawn = next
                    .take()
                    .expect("each group is drawn ahead of its solves");
                let (ops, xs, ys) = drawn
                    .join()
                    .unwrap_or_else(|panic| std::panic::resume_unwind(panic))?;
                next = groups.get(index + 1).map(|g| scope.spawn(move || draw(g)));
                let k = self.size(cells[*c].0, cells[*c].1).1;
                let stack = DeviceOperator::upload_each(&ops, device)?;
                drop(ops);
                for (a, &algorithm) in self.algorithms.iter().enumerate() {
                    let start = Instant::now();
                    let found = self.solver(algorithm, k).solve_many_on(&stack, &ys)?;
                    let outcome = &mut outcomes[*c][a];
                    outcome.2 += start.elapsed().as_secs_f64();
                    for (f, x) in found.iter().zip(&xs) {
                        outcome.0 += usize::from(self.succeeded(f, x));
                        outcome.1 += f.iterations;
                    }
                    done += trials.len();
                    progress(done, total);
                }
            }
            Ok(())
        })?;
        Ok(self.diagram::<T>(&cells, &outcomes))
    }

    /// The `trials` of cell `(i, j)` drawn: their operators, their signals, and their
    /// measurements one after another.
    fn draw<T: Real>(&self, (i, j): (usize, usize), trials: &[usize]) -> Result<Drawn<T>> {
        let (m, k) = self.size(i, j);
        let problems: Vec<_> = trials
            .par_iter()
            .map(|&t| self.problem::<T>(i, j, t, m, k))
            .collect::<Result<_>>()?;
        let mut drawn: Drawn<T> = (Vec::new(), Vec::new(), Vec::new());
        for (op, x, y) in problems {
            drawn.0.push(op);
            drawn.1.push(x);
            drawn.2.extend(y);
        }
        Ok(drawn)
    }

    /// The grid's cells `(delta index, rho index)`, `delta`-major.
    fn cells(&self) -> Vec<(usize, usize)> {
        (0..self.deltas.len())
            .flat_map(|i| (0..self.rhos.len()).map(move |j| (i, j)))
            .collect()
    }

    /// How many of a cell's trials (of `m` measurements) a GPU solves at once: their operators
    /// about 1 GiB together, at least one.
    fn trials_at_once<T: Real>(&self, m: usize) -> usize {
        let n = self.n;
        let bytes = match self.ensemble {
            Ensemble::Gaussian | Ensemble::Sign => m * n * size_of::<T>(),
            Ensemble::Dct => 8 * m,
            Ensemble::Sparse { d } => 16 * n * d + 8 * (m + 1),
        };
        ((1usize << 30) / bytes.max(1)).clamp(1, self.trials)
    }

    /// The diagram of the cells' `outcomes` (for each cell, each algorithm's successes,
    /// iterations and seconds).
    fn diagram<T: Real>(
        &self,
        cells: &[(usize, usize)],
        outcomes: &[Vec<(usize, usize, f64)>],
    ) -> PhaseDiagram {
        let algorithms = self
            .algorithms
            .iter()
            .enumerate()
            .map(|(a, algorithm)| {
                let cells: Vec<Cell> = cells
                    .iter()
                    .zip(outcomes)
                    .map(|(&(i, j), o)| {
                        let (m, k) = self.size(i, j);
                        let (successes, iterations, seconds) = o[a];
                        Cell {
                            delta: self.deltas[i],
                            rho: self.rhos[j],
                            m,
                            k,
                            trials: self.trials,
                            successes,
                            mean_iterations: iterations as f64 / self.trials as f64,
                            seconds,
                        }
                    })
                    .collect();
                let curve = (0..self.deltas.len())
                    .filter_map(|i| {
                        let column = &cells[i * self.rhos.len()..(i + 1) * self.rhos.len()];
                        fifty_percent(column).map(|rho| CurvePoint {
                            delta: self.deltas[i],
                            rho,
                        })
                    })
                    .collect();
                AlgorithmDiagram {
                    algorithm: algorithm.name().to_string(),
                    cells,
                    curve,
                }
            })
            .collect();
        PhaseDiagram {
            ensemble: self.ensemble.to_string(),
            n: self.n,
            signal: self.signal.name().to_string(),
            dtype: T::DTYPE.to_string(),
            trials: self.trials,
            success: self.success,
            seed: self.seed,
            deltas: self.deltas.clone(),
            rhos: self.rhos.clone(),
            algorithms,
        }
    }

    /// `(m, k)` of cell `(i, j)`.
    fn size(&self, i: usize, j: usize) -> (usize, usize) {
        let m = ((self.deltas[i] * self.n as f64).round() as usize).clamp(1, self.n);
        let k = ((self.rhos[j] * m as f64).round() as usize).clamp(1, m);
        (m, k)
    }

    /// Trial `t` of cell `(i, j)`: for each algorithm, success, iterations and seconds.
    fn trial<T: Real>(
        &self,
        i: usize,
        j: usize,
        t: usize,
        m: usize,
        k: usize,
    ) -> Result<Vec<(bool, usize, f64)>> {
        let (op, x, y) = self.problem::<T>(i, j, t, m, k)?;
        self.algorithms
            .iter()
            .map(|&algorithm| {
                let start = Instant::now();
                let found = self.solver(algorithm, k).solve(&op, &y)?;
                let seconds = start.elapsed().as_secs_f64();
                Ok((self.succeeded(&found, &x), found.iterations, seconds))
            })
            .collect()
    }

    /// Trial `t` of cell `(i, j)`: its operator, its signal `x` and its measurements `A x`.
    fn problem<T: Real>(
        &self,
        i: usize,
        j: usize,
        t: usize,
        m: usize,
        k: usize,
    ) -> Result<(Operator<T>, Vec<T>, Vec<T>)> {
        let cell = (i * self.rhos.len() + j) as u64;
        let op = self
            .ensemble
            .generate::<T>(m, self.n, mix(self.seed, cell, t as u64, 0))?;
        let x = sparse_signal::<T>(self.n, k, self.signal, mix(self.seed, cell, t as u64, 1))?;
        let mut y = vec![T::zero(); m];
        op.apply(&x, &mut y);
        Ok((op, x, y))
    }

    /// The solver of `algorithm` for `k` nonzeros, with the experiment's iteration limit.
    fn solver(&self, algorithm: Algorithm, k: usize) -> Solver {
        let solver = Solver::new(algorithm, k);
        match self.max_iterations {
            Some(limit) => solver.max_iterations(limit),
            None => solver,
        }
    }

    /// Whether `found` recovered `x`: its largest error below `success` times `x`'s largest
    /// entry.
    fn succeeded<T: Real>(&self, found: &Recovery<T>, x: &[T]) -> bool {
        let largest = x.iter().map(|v| v.as_f64().abs()).fold(0.0, f64::max);
        let error = found
            .solution
            .iter()
            .zip(x)
            .map(|(a, b)| (a.as_f64() - b.as_f64()).abs())
            .fold(0.0, f64::max);
        error < self.success * largest
    }

    fn check(&self) -> Result<()> {
        let what = "a phase transition";
        let empty = [
            (self.n == 0, "signal entry"),
            (self.trials == 0, "trial a cell"),
            (self.algorithms.is_empty(), "algorithm"),
            (self.deltas.is_empty(), "delta"),
            (self.rhos.is_empty(), "rho"),
        ];
        if let Some(&(_, item)) = empty.iter().find(|(empty, _)| *empty) {
            return Err(RecoveryError::Empty { what, item }.into());
        }
        for (setting, values) in [("delta", &self.deltas), ("rho", &self.rhos)] {
            if let Some(&value) = values.iter().find(|v| !(**v > 0.0 && **v <= 1.0)) {
                let range = "in (0, 1]";
                return Err(RecoveryError::OutOfRange {
                    setting,
                    value,
                    range,
                }
                .into());
            }
        }
        positive("the success threshold", self.success)
    }
}

/// Trials drawn for the GPU: their operators, their signals, and their measurements one after
/// another.
type Drawn<T> = (Vec<Operator<T>>, Vec<Vec<T>>, Vec<T>);

/// A problem's seed from the experiment's seed, the cell, the trial and the stream (operator
/// or signal): SplitMix64's finaliser over their combination.
fn mix(seed: u64, cell: u64, trial: u64, stream: u64) -> u64 {
    crate::random::mix(
        seed ^ cell.wrapping_mul(0x9E37_79B9_7F4A_7C15)
            ^ trial.wrapping_mul(0xC2B2_AE3D_27D4_EB4F)
            ^ stream.wrapping_mul(0x1656_67B1_9E37_79F9),
    )
}

/// The `rho` at which a column of cells (ascending `rho`) succeeds half the time: the logistic
/// fit `logit p = a + b rho` by Newton's method on the binomial likelihood, `-a / b`; `None`
/// when every trial succeeded or every one failed, when success does not fall with `rho`, or
/// when no cell succeeded at most (or at least) half the time or the point lies outside the
/// column's `rho`s (the fit would then extrapolate).
fn fifty_percent(column: &[Cell]) -> Option<f64> {
    let trials: usize = column.iter().map(|c| c.trials).sum();
    let successes: usize = column.iter().map(|c| c.successes).sum();
    if successes == 0 || successes == trials {
        return None;
    }
    // The actual k / m of each cell, which rounding moves off the grid.
    let points: Vec<(f64, f64, f64)> = column
        .iter()
        .map(|c| (c.k as f64 / c.m as f64, c.successes as f64, c.trials as f64))
        .collect();
    let (mut a, mut b) = (0.0f64, 0.0f64);
    for _ in 0..100 {
        // Gradient and Hessian of the log-likelihood, with a tiny ridge against separation.
        let ridge = 1e-6;
        let (mut ga, mut gb, mut haa, mut hab, mut hbb) =
            (-ridge * a, -ridge * b, ridge, 0.0, ridge);
        for &(rho, s, t) in &points {
            let p = 1.0 / (1.0 + (-(a + b * rho)).exp());
            let w = t * p * (1.0 - p);
            ga += s - t * p;
            gb += (s - t * p) * rho;
            haa += w;
            hab += w * rho;
            hbb += w * rho * rho;
        }
        let det = haa * hbb - hab * hab;
        if det <= 0.0 || !det.is_finite() {
            break;
        }
        let (da, db) = ((hbb * ga - hab * gb) / det, (haa * gb - hab * ga) / det);
        a += da;
        b += db;
        if da.abs() + db.abs() < 1e-10 * (1.0 + a.abs() + b.abs()) {
            break;
        }
    }
    if b >= 0.0 || b.is_nan() || !a.is_finite() {
        return None;
    }
    let rho = -a / b;
    // Only a 50% point the column observed: some cell at or above half, some at or below, and
    // the point inside the column's range (never a fit extrapolated past the grid).
    let rate = |&(_, s, t): &(f64, f64, f64)| s / t;
    let above = points.iter().any(|p| rate(p) >= 0.5);
    let below = points.iter().any(|p| rate(p) <= 0.5);
    let (low, high) = (points[0].0, points[points.len() - 1].0);
    (rho.is_finite() && above && below && (low..=high).contains(&rho)).then_some(rho)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn settings_out_of_range_are_errors_naming_them() {
        let base = || PhaseTransition::new(Ensemble::Gaussian, 16).trials(1);
        let err = |experiment: PhaseTransition| match experiment.run::<f64>(&|_, _| {}) {
            Err(crate::Error::Recovery(e)) => e,
            other => panic!("unexpected {other:?}"),
        };
        let empty = |item| RecoveryError::Empty {
            what: "a phase transition",
            item,
        };
        let e = err(PhaseTransition::new(Ensemble::Gaussian, 0));
        assert_eq!(e, empty("signal entry"));
        assert_eq!(err(base().trials(0)), empty("trial a cell"));
        assert_eq!(err(base().algorithms(vec![])), empty("algorithm"));
        assert_eq!(err(base().deltas(vec![])), empty("delta"));
        assert_eq!(err(base().rhos(vec![])), empty("rho"));
        let out_of_range = |setting, value, range| RecoveryError::OutOfRange {
            setting,
            value,
            range,
        };
        let e = err(base().deltas(vec![0.5, 1.5]));
        assert_eq!(e, out_of_range("delta", 1.5, "in (0, 1]"));
        assert!(e.to_string().contains("delta = 1.5 is out of range"), "{e}");
        let e = err(base().rhos(vec![0.0]));
        assert_eq!(e, out_of_range("rho", 0.0, "in (0, 1]"));
        let e = err(base().success(-1.0));
        let want = out_of_range("the success threshold", -1.0, "positive and finite");
        assert_eq!(e, want);
    }

    fn cell(rho: f64, successes: usize) -> Cell {
        Cell {
            delta: 0.5,
            rho,
            m: 100,
            k: (rho * 100.0) as usize,
            trials: 10,
            successes,
            mean_iterations: 0.0,
            seconds: 0.0,
        }
    }

    #[test]
    fn the_fifty_percent_point_sits_in_the_transition() {
        let column = [
            cell(0.1, 10),
            cell(0.2, 9),
            cell(0.3, 5),
            cell(0.4, 1),
            cell(0.5, 0),
        ];
        let rho = fifty_percent(&column).unwrap();
        assert!((rho - 0.3).abs() < 0.02, "{rho}");
        // A sharp step: the point between the last success and the first failure.
        let sharp = [cell(0.1, 10), cell(0.2, 10), cell(0.3, 0), cell(0.4, 0)];
        let rho = fifty_percent(&sharp).unwrap();
        assert!(rho > 0.2 && rho < 0.3, "{rho}");
        assert_eq!(fifty_percent(&[cell(0.1, 10), cell(0.2, 10)]), None);
        assert_eq!(fifty_percent(&[cell(0.1, 0), cell(0.2, 0)]), None);
        assert_eq!(fifty_percent(&[cell(0.1, 0), cell(0.2, 10)]), None);
        // Never at half or below: the 50% point lies past the grid, and is not guessed.
        let unseen = [cell(0.3, 10), cell(0.4, 8), cell(0.5, 9), cell(0.6, 8)];
        assert_eq!(fifty_percent(&unseen), None);
    }

    #[test]
    fn seeds_differ_by_cell_trial_and_stream() {
        let seeds = [
            mix(1, 0, 0, 0),
            mix(1, 1, 0, 0),
            mix(1, 0, 1, 0),
            mix(1, 0, 0, 1),
            mix(2, 0, 0, 0),
        ];
        for (i, a) in seeds.iter().enumerate() {
            for b in &seeds[i + 1..] {
                assert_ne!(a, b);
            }
        }
    }
}
