//! The estimators' builders, [`Lts`] and [`Lms`]: their settings, checked when a fit starts.

use crate::device::Device;
use crate::error::Result;
use crate::regression::design::Design;
use crate::regression::engine::{CpuEngine, Engine};
use crate::regression::error::RegressionError;
use crate::regression::fit::{Method, RegressionFit};
use crate::regression::progress::{FitProgress, FitStage, Progress, StageProgress};
use crate::regression::subsets::{Search, Starts};
use crate::regression::{gpu, lms, lts, reweight};
use crate::select::{Matrix, Values};

/// The default number of random starting subsets of LTS (robustbase's `nsamp`).
pub const LTS_DEFAULT_NSAMP: usize = 500;

/// The default bound on `C(n, p)` under which every `p`-subset is a start (MASS `lqs`'s
/// `nsamp = "best"` enumerates below 5000).
pub const DEFAULT_EXHAUSTIVE_LIMIT: u64 = 5000;

/// The default seed of the random starts.
pub const DEFAULT_SEED: u64 = 42;

/// robustbase's `h.alpha.n`: the LTS coverage for fraction `alpha` of `n` rows and `p`
/// coefficients (counting the intercept), `floor(2 n2 - n + 2 (n - n2) alpha)` with
/// `n2 = floor((n + p + 1) / 2)`. `alpha = 0.5` gives `n2`, `alpha = 1` gives `n`.
///
/// ```
/// use kselect::regression::h_alpha;
/// assert_eq!(h_alpha(0.5, 21, 4), 13);
/// assert_eq!(h_alpha(0.75, 21, 4), 17);
/// assert_eq!(h_alpha(1.0, 21, 4), 21);
/// ```
pub fn h_alpha(alpha: f64, n: usize, p: usize) -> usize {
    let n2 = (n + p).div_ceil(2);
    let h = (2.0 * n2 as f64 - n as f64 + 2.0 * (n as f64 - n2 as f64) * alpha).floor();
    h.max(0.0) as usize
}

/// The smallest LTS coverage, `floor((n + p + 1) / 2)` (the highest breakdown point).
fn lts_min_h(n: usize, p: usize) -> usize {
    (n + p).div_ceil(2)
}

/// The most random starts a fit takes ([`Lts::nsamp`], [`Lms::nsamp`]): `10^7`, hours of work
/// on the CPU for LTS, far beyond the defaults (500 for LTS, at most 3000 for LMS).
pub const MAX_NSAMP: usize = 10_000_000;

/// The most residuals an LMS search evaluates in its starts, `starts x n`: `10^12`, about an
/// hour of work on the CPU. More is refused, with the number of starts that fits.
pub const MAX_LMS_WORK: u64 = 1_000_000_000_000;

/// The number of starts of a search with `nsamp` random starts on `n` rows and `p`
/// coefficients: every `p`-subset when there are at most `max(nsamp, exhaustive_limit)`, else
/// `nsamp`. An error when `nsamp` is 0 or the starts are more than [`MAX_NSAMP`].
fn planned_starts(nsamp: usize, n: usize, p: usize, exhaustive_limit: u64) -> Result<u64> {
    if nsamp == 0 || nsamp > MAX_NSAMP {
        return Err(RegressionError::Nsamp { nsamp }.into());
    }
    let starts = Starts::of(n, p, nsamp, exhaustive_limit);
    if starts.count > MAX_NSAMP as u64 {
        return Err(RegressionError::TooManyStarts {
            n,
            p,
            count: starts.count,
            limit: exhaustive_limit.max(nsamp as u64),
        }
        .into());
    }
    Ok(starts.count)
}

/// How the coverage was given.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Coverage {
    Alpha(f64),
    H(usize),
}

/// The settings [`Lts`] and [`Lms`] share.
#[derive(Clone, Debug)]
struct Shared {
    intercept: bool,
    seed: u64,
    exhaustive_limit: u64,
    device: Device,
    progress: Progress,
}

impl Shared {
    fn new() -> Shared {
        Shared {
            intercept: true,
            seed: DEFAULT_SEED,
            exhaustive_limit: DEFAULT_EXHAUSTIVE_LIMIT,
            device: Device::Cpu,
            progress: Progress::default(),
        }
    }

    /// Runs `fit` on the engine of the device: the GPU's on a CUDA device (unless the model is
    /// beyond its kernels, [`gpu::GpuEngine::supports`]), the CPU's otherwise.
    /// The engine's setup is the second unit of `setup`.
    fn with_engine<R>(
        &self,
        design: &Design,
        setup: &StageProgress<'_>,
        fit: impl FnOnce(&mut dyn Engine) -> Result<R>,
    ) -> Result<R> {
        match &self.device {
            Device::Cuda(dev) if gpu::GpuEngine::supports(design) => {
                let mut engine = gpu::GpuEngine::new(dev, design)?;
                setup.advance(1);
                fit(&mut engine)
            }
            _ => {
                let mut engine = CpuEngine::new(design)?;
                setup.advance(1);
                fit(&mut engine)
            }
        }
    }

    /// Starts the [`FitStage::Setup`] stage and checks the data, finding how its columns are
    /// standardized: its first unit ([`design_of`]).
    fn setup<'d>(
        &self,
        x: Matrix<'d, f64>,
        y: Values<'d, f64>,
    ) -> Result<(StageProgress<'_>, Design<'d>, usize, usize)> {
        let stage = self.progress.stage(FitStage::Setup, 2);
        let (design, n, k) = design_of(x, y, self.intercept)?;
        stage.advance(1);
        Ok((stage, design, n, k))
    }
}

/// The setters of the [`Shared`] settings, for the builder `$ty`.
macro_rules! shared_setters {
    ($ty:ident) => {
        #[doc = concat!(
            "Fits an intercept (default `true`): a column of ones ahead of `x`'s columns, ",
            "whose coefficient comes first. LMS adjusts it optimally for every candidate's ",
            "slopes.\n\n",
            "```\n",
            "use kselect::{regression::", stringify!($ty), ", Matrix};\n",
            "let x = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0];\n",
            "let y = [2.0, 4.0, 6.0, 8.0, 10.0, 99.0, 14.0];\n",
            "let fit = ", stringify!($ty), "::new().intercept(false).fit(Matrix::new(&x, 7, 1), &y)?;\n",
            "assert_eq!(fit.coefficients.len(), 1);\n",
            "assert!((fit.raw_coefficients[0] - 2.0).abs() < 1e-12);\n",
            "# Ok::<(), kselect::Error>(())\n",
            "```"
        )]
        pub fn intercept(mut self, intercept: bool) -> Self {
            self.shared.intercept = intercept;
            self
        }

        #[doc = concat!(
            "The seed of the random starts (default 42): a seed gives the same bits on every ",
            "run and any number of threads, on one device.\n\n",
            "```\n",
            "use kselect::{regression::", stringify!($ty), ", Matrix};\n",
            "let x: Vec<f64> = (0..200).map(|i| ((i * 7) % 13) as f64).collect();\n",
            "let y: Vec<f64> = (0..200).map(|i| ((i * 5) % 11) as f64).collect();\n",
            "let fit = |seed| ", stringify!($ty),
            "::new().seed(seed).exhaustive_limit(0).fit(Matrix::new(&x, 200, 1), &y);\n",
            "assert_eq!(fit(3)?, fit(3)?);\n",
            "# Ok::<(), kselect::Error>(())\n",
            "```"
        )]
        pub fn seed(mut self, seed: u64) -> Self {
            self.shared.seed = seed;
            self
        }

        #[doc = concat!(
            "Every `p`-subset is a start (instead of `nsamp` random ones) when their number ",
            "`C(n, p)` is at most `max(nsamp, limit)` (default 5000). `0` enumerates only when ",
            "`C(n, p) <= nsamp`; `u64::MAX` always enumerates (`nsamp = \"exact\"` in ",
            "robustbase).\n\n",
            "```\n",
            "use kselect::{regression::", stringify!($ty), ", Matrix};\n",
            "let x: Vec<f64> = (0..30).map(|i| (i as f64).ln_1p()).collect();\n",
            "let y: Vec<f64> = x.iter().map(|v| 2.0 * v).collect();\n",
            "let fit = ", stringify!($ty), "::new().fit(Matrix::new(&x, 30, 1), &y)?;\n",
            "assert!(fit.exhaustive); // C(30, 2) = 435 starts\n",
            "assert_eq!(fit.starts, 435);\n",
            "# Ok::<(), kselect::Error>(())\n",
            "```"
        )]
        pub fn exhaustive_limit(mut self, limit: u64) -> Self {
            self.shared.exhaustive_limit = limit;
            self
        }

        #[doc = concat!(
            "The device of the fit (default [`Device::Cpu`]). On a CUDA device the work that ",
            "grows with `n` runs on the GPU (see the [module documentation](super)); the ",
            "results equal the CPU's up to rounding. Models of more than 40 coefficients fit ",
            "on the CPU.\n\n",
            "```\n",
            "use kselect::{regression::", stringify!($ty), ", Device, Matrix};\n",
            "let x = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0];\n",
            "let y = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 30.0];\n",
            "let device = Device::auto(); // CUDA device 0 when there is one\n",
            "let fit = ", stringify!($ty), "::new().device(device).fit(Matrix::new(&x, 8, 1), &y)?;\n",
            "assert_eq!(fit.outliers, vec![7]);\n",
            "# Ok::<(), kselect::Error>(())\n",
            "```"
        )]
        pub fn device(mut self, device: Device) -> Self {
            self.shared.device = device;
            self
        }

        #[doc = concat!(
            "Reports the fit's progress to `callback` as it runs: each stage (the setup, ",
            "the starts, the refinement of the best, the reweighting; [`FitStage`]) with the ",
            "work done out of its total, at most ",
            "about a thousand times a stage, from the fit's threads. The results do not ",
            "depend on it.\n\n",
            "```\n",
            "use kselect::regression::{", stringify!($ty), ", FitProgress};\n",
            "use kselect::Matrix;\n",
            "use std::sync::atomic::{AtomicU64, Ordering};\n",
            "use std::sync::Arc;\n",
            "let reports = Arc::new(AtomicU64::new(0));\n",
            "let count = Arc::clone(&reports);\n",
            "let x: Vec<f64> = (0..50).map(|i| (i as f64).sqrt()).collect();\n",
            "let y: Vec<f64> = x.iter().map(|v| 1.0 + v).collect();\n",
            "let fit = ", stringify!($ty), "::new()\n",
            "    .progress(move |_: FitProgress| { count.fetch_add(1, Ordering::Relaxed); })\n",
            "    .fit(Matrix::new(&x, 50, 1), &y)?;\n",
            "assert!(reports.load(Ordering::Relaxed) >= 2);\n",
            "# Ok::<(), kselect::Error>(())\n",
            "```"
        )]
        pub fn progress(mut self, callback: impl Fn(FitProgress) + Send + Sync + 'static) -> Self {
            self.shared.progress = Progress::to(callback);
            self
        }
    };
}

/// The design of the predictors `x` and the responses `y` (with `x`'s rows `n` and columns `k`).
/// Contiguous rows give all their values, so the design checks that they are `n * k`; rows a
/// stride leaves gaps between are packed together.
fn design_of<'d>(
    x: Matrix<'d, f64>,
    y: Values<'d, f64>,
    intercept: bool,
) -> Result<(Design<'d>, usize, usize)> {
    let (n, k) = (x.rows(), x.cols());
    let predictors = if x.stride() == k {
        x.into_values().into_host()?
    } else {
        x.into_host_rows()?
    };
    let design = Design::new(predictors, n, k, y.into_host()?, intercept)?;
    Ok((design, n, k))
}

/// Least trimmed squares regression by FAST-LTS, with robustbase `ltsReg`'s conventions: the
/// coefficients minimizing the sum of the `h` smallest squared residuals, then reweighted least
/// squares (see [`RegressionFit`] for every output and its formula, and the
/// [module documentation](super) for the algorithm).
///
/// Settings, checked when [`fit`](Lts::fit) runs (a bad one is an
/// [`Error::Regression`](crate::Error::Regression): [`RegressionError::Alpha`],
/// [`RegressionError::Coverage`], [`RegressionError::Nsamp`] or, when the starts are too many,
/// [`RegressionError::TooManyStarts`]):
///
/// | setting | default | range |
/// | --- | --- | --- |
/// | [`intercept`](Lts::intercept) | `true` | |
/// | [`alpha`](Lts::alpha) or [`h`](Lts::h) | `alpha = 0.5`: `h = floor((n + p + 1) / 2)` | `alpha` in `[0.5, 1]`; `h` in `[floor((n + p + 1) / 2), n]` |
/// | [`nsamp`](Lts::nsamp) | 500 | 1 to [`MAX_NSAMP`] |
/// | [`seed`](Lts::seed) | 42 | any |
/// | [`exhaustive_limit`](Lts::exhaustive_limit) | 5000 | any |
/// | [`device`](Lts::device) | `Device::Cpu` | the CPU or a CUDA GPU |
///
/// ```
/// use kselect::regression::Lts;
/// use kselect::Matrix;
///
/// // Hertzsprung–Russell-like data: most points on a line, a few far off it.
/// let x = [4.37, 4.56, 4.26, 4.56, 4.30, 4.46, 3.84, 4.57, 4.26, 4.37, 3.49, 4.43, 4.48, 4.01];
/// let y = [5.23, 5.74, 4.93, 5.74, 5.19, 5.46, 4.65, 5.27, 5.57, 5.12, 5.73, 5.45, 5.42, 4.05];
/// let fit = Lts::new().alpha(0.75).seed(1).fit(Matrix::new(&x, 14, 1), &y)?;
/// assert_eq!(fit.h, 11);
/// assert!(fit.coefficients[1] > 1.0); // the bulk's positive slope, despite row 10
/// assert!(fit.outliers.contains(&10));
/// # Ok::<(), kselect::Error>(())
/// ```
#[derive(Clone, Debug)]
pub struct Lts {
    shared: Shared,
    coverage: Coverage,
    nsamp: usize,
}

impl Default for Lts {
    fn default() -> Self {
        Lts::new()
    }
}

impl Lts {
    /// The defaults of the table above.
    ///
    /// ```
    /// let lts = kselect::regression::Lts::new();
    /// assert_eq!(lts.coverage_for(21, 3)?, (13, 0.5)); // 3 columns + intercept
    /// # Ok::<(), kselect::Error>(())
    /// ```
    pub fn new() -> Self {
        Lts {
            shared: Shared::new(),
            coverage: Coverage::Alpha(0.5),
            nsamp: LTS_DEFAULT_NSAMP,
        }
    }

    shared_setters!(Lts);

    /// The coverage as a fraction: `h = h_alpha(alpha, n, p)` ([`h_alpha`]), robustbase's rule.
    /// `alpha` must be in `[0.5, 1]`; `alpha = 1` is ordinary least squares (then reweighted).
    /// Replaces an earlier [`h`](Lts::h).
    ///
    /// ```
    /// let lts = kselect::regression::Lts::new().alpha(0.75);
    /// assert_eq!(lts.coverage_for(21, 3)?.0, 17);
    /// assert!(kselect::regression::Lts::new().alpha(0.4).coverage_for(21, 3).is_err());
    /// # Ok::<(), kselect::Error>(())
    /// ```
    pub fn alpha(mut self, alpha: f64) -> Self {
        self.coverage = Coverage::Alpha(alpha);
        self
    }

    /// The coverage as a number of rows, in `[floor((n + p + 1) / 2), n]`. The small-sample
    /// factors then use the `alpha` that gives `h` exactly:
    /// `alpha = (h - 2 n2 + n) / (2 (n - n2))`, `n2 = floor((n + p + 1) / 2)` (1 when `h = n`).
    /// Replaces an earlier [`alpha`](Lts::alpha).
    ///
    /// ```
    /// let lts = kselect::regression::Lts::new().h(15);
    /// let (h, alpha) = lts.coverage_for(21, 3)?;
    /// assert_eq!((h, alpha), (15, 0.625));
    /// assert!(kselect::regression::Lts::new().h(12).coverage_for(21, 3).is_err());
    /// # Ok::<(), kselect::Error>(())
    /// ```
    pub fn h(mut self, h: usize) -> Self {
        self.coverage = Coverage::H(h);
        self
    }

    /// The number of random starting `p`-subsets (at least 1). For `n >= 600` they are spread
    /// over the subsamples of the nested search.
    ///
    /// ```
    /// use kselect::Matrix;
    /// let x: Vec<f64> = (0..30).map(|i| (i as f64).sqrt()).collect();
    /// let y: Vec<f64> = x.iter().map(|v| 3.0 * v - 1.0).collect();
    /// let lts = kselect::regression::Lts::new().nsamp(20).exhaustive_limit(0);
    /// let fit = lts.fit(Matrix::new(&x, 30, 1), &y)?;
    /// assert_eq!(fit.starts, 20);
    /// assert!(kselect::regression::Lts::new().nsamp(0).fit(Matrix::new(&x, 30, 1), &y).is_err());
    /// # Ok::<(), kselect::Error>(())
    /// ```
    pub fn nsamp(mut self, nsamp: usize) -> Self {
        self.nsamp = nsamp;
        self
    }

    /// The coverage `h` and the `alpha` of the small-sample factors for `n` rows and `k`
    /// columns of `x` (the intercept is added when set), or the error a fit would report.
    ///
    /// ```
    /// let (h, alpha) = kselect::regression::Lts::new().coverage_for(75, 3)?;
    /// assert_eq!((h, alpha), (40, 0.5));
    /// # Ok::<(), kselect::Error>(())
    /// ```
    pub fn coverage_for(&self, n: usize, k: usize) -> Result<(usize, f64)> {
        let p = k + usize::from(self.shared.intercept);
        let lo = lts_min_h(n, p);
        let n2 = lo;
        match self.coverage {
            Coverage::Alpha(alpha) => {
                if !(0.5..=1.0).contains(&alpha) {
                    return Err(RegressionError::Alpha { alpha }.into());
                }
                Ok((h_alpha(alpha, n, p).clamp(lo.min(n), n), alpha))
            }
            Coverage::H(h) => {
                if h < lo || h > n {
                    return Err(RegressionError::Coverage {
                        method: Method::Lts,
                        h,
                        low: lo,
                        n,
                        p,
                    }
                    .into());
                }
                let alpha = if n > n2 {
                    (h as f64 - 2.0 * n2 as f64 + n as f64) / (2.0 * (n - n2) as f64)
                } else {
                    1.0
                };
                Ok((h, alpha.clamp(0.5, 1.0)))
            }
        }
    }

    /// Fits `y` on `x`, a [`Matrix`] of `n` rows of `k` predictors (a slice with its shape,
    /// `Matrix::new(&x, n, k)`, where `x[i * k + j]` is row `i`, column `j`; or a 2-D
    /// ndarray), plus the intercept when set. `k = 0` with an intercept is the LTS location of
    /// `y`. `y` is a slice, a vector or a 1-D ndarray of the `n` responses.
    ///
    /// Errors ([`Error::Regression`](crate::Error::Regression) unless said, the
    /// [`RegressionError`] naming its numbers): lengths that do not match `n` and `k`
    /// ([`XLength`](RegressionError::XLength), [`YLength`](RegressionError::YLength));
    /// `n <= p` ([`TooFewRows`](RegressionError::TooFewRows)); a NaN or infinite value, named
    /// by row and column ([`NonFinite`](RegressionError::NonFinite)); a constant column
    /// ([`ConstantColumn`](RegressionError::ConstantColumn)); columns that are (numerically)
    /// collinear ([`Collinear`](RegressionError::Collinear)); a setting out of its range (see
    /// the table above); no starting subset that determines a fit
    /// ([`NoStartFits`](RegressionError::NoStartFits)). On a GPU also the device's errors
    /// ([`Error::CudaUnavailable`](crate::Error::CudaUnavailable) when cuBLAS or NVRTC is
    /// missing, [`Error::OutOfDeviceMemory`](crate::Error::OutOfDeviceMemory),
    /// [`Error::Cuda`](crate::Error::Cuda)).
    ///
    /// ```
    /// use kselect::regression::Lts;
    /// use kselect::Matrix;
    /// // Two predictors, y = 1 + x0 - x1 exactly except row 0.
    /// let x = [0.0, 0.0, 1.0, 0.0, 0.0, 1.0, 1.0, 1.0, 2.0, 1.0, 1.0, 2.0, 2.0, 2.0, 3.0, 1.0];
    /// let mut y: Vec<f64> = x.chunks(2).map(|r| 1.0 + r[0] - r[1]).collect();
    /// y[0] = 50.0;
    /// let fit = Lts::new().fit(Matrix::new(&x, 8, 2), &y)?;
    /// assert!(fit.exact_fit);
    /// assert!((fit.coefficients[1] - 1.0).abs() < 1e-12);
    /// assert_eq!(fit.outliers, vec![0]);
    ///
    /// // The same from ndarray.
    /// let a = ndarray::Array2::from_shape_vec((8, 2), x.to_vec()).unwrap();
    /// let b = ndarray::Array1::from(y);
    /// let same = Lts::new().fit(&a, &b)?;
    /// assert_eq!(same.coefficients, fit.coefficients);
    /// # Ok::<(), kselect::Error>(())
    /// ```
    pub fn fit<'x, 'y>(
        &self,
        x: impl Into<Matrix<'x, f64>>,
        y: impl Into<Values<'y, f64>>,
    ) -> Result<RegressionFit> {
        let (x, y) = (x.into(), y.into());
        // The merged set of the nested subsampling is drawn (a thread of its own, a draw a row)
        // while the data are checked and copied to the engine.
        let (rows, seed) = (x.rows(), self.shared.seed);
        std::thread::scope(|scope| {
            let merged =
                lts::nested(rows).then(|| scope.spawn(move || lts::merged_rows(rows, seed)));
            let (setup, design, n, k) = self.shared.setup(x, y)?;
            let (h, alpha) = self.coverage_for(n, k)?;
            planned_starts(self.nsamp, n, design.p, self.shared.exhaustive_limit)?;
            let search = Search {
                h,
                nsamp: self.nsamp,
                seed,
                exhaustive_limit: self.shared.exhaustive_limit,
            };
            let progress = &self.shared.progress;
            self.shared.with_engine(&design, &setup, |engine| {
                // A panic of the drawing thread is the caller's, as it would be on this one.
                let merged = merged.and_then(|drawing| {
                    drawing
                        .join()
                        .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
                });
                let found = lts::search(&design, &search, merged, engine, progress)?;
                reweight::lts(&design, found, h, alpha, engine, progress)
            })
        })
    }
}

/// How the coverage `h` of [`Lms`] is chosen: the rank (1-based) of the absolute residual that
/// LMS minimizes, for `n` rows and `p` coefficients (counting the intercept). Every `h` from
/// `p + 1` to `n` can be asked for; its breakdown point (the smallest fraction of rows that,
/// moved anywhere, can carry the fit away) is [`lms_breakdown`]`(h, n, p)`,
/// `min(n - h + 1, h - p + 1) / n` for data in general position.
///
/// | rule | `h` | breakdown point |
/// | --- | --- | --- |
/// | [`HighestBreakdown`](LmsCoverage::HighestBreakdown) (default) | `floor(n / 2) + floor((p + 1) / 2)` | `(floor((n - p) / 2) + 1) / n`, the highest |
/// | [`Median`](LmsCoverage::Median) (MASS `lqs(method = "lms")`) | `floor((n + 1) / 2)` | `(floor((n + 1) / 2) - p + 1) / n` |
/// | [`Lqs`](LmsCoverage::Lqs) (MASS `lqs(method = "lqs")`'s default) | `floor((n + p + 1) / 2)` | `(n - floor((n + p + 1) / 2) + 1) / n` |
/// | [`Rows(h)`](LmsCoverage::Rows) | `h` | `min(n - h + 1, h - p + 1) / n` |
///
/// `h = n` minimizes the largest absolute residual of every row (the minimax, or Chebyshev,
/// fit): one row can carry it away.
///
/// ```
/// use kselect::regression::{lms_breakdown, Lms, LmsCoverage};
///
/// // 21 rows, 3 predictors and the intercept: p = 4.
/// assert_eq!(LmsCoverage::HighestBreakdown.rows(21, 4), 12);
/// assert_eq!(LmsCoverage::Median.rows(21, 4), 11);
/// assert_eq!(LmsCoverage::Lqs.rows(21, 4), 13);
/// assert_eq!(lms_breakdown(12, 21, 4), 9.0 / 21.0);
/// let fit = Lms::new().coverage(LmsCoverage::Median);
/// assert_eq!(fit.coverage_for(21, 3)?, 11);
/// # Ok::<(), kselect::Error>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum LmsCoverage {
    /// `floor(n / 2) + floor((p + 1) / 2)`: Rousseeuw's least median of squares, with the
    /// highest breakdown point (the default).
    HighestBreakdown,
    /// `floor((n + 1) / 2)`: the median absolute residual, MASS `lqs(method = "lms")`.
    Median,
    /// `floor((n + p + 1) / 2)`: MASS `lqs(method = "lqs")`'s default quantile.
    Lqs,
    /// `h` rows, from `p + 1` to `n`.
    Rows(usize),
}

impl LmsCoverage {
    /// The `h` of the rule for `n` rows and `p` coefficients (counting the intercept); not
    /// checked against the range `[p + 1, n]` (a fit checks it).
    ///
    /// ```
    /// use kselect::regression::LmsCoverage;
    /// assert_eq!(LmsCoverage::Median.rows(38, 11), 19);
    /// assert_eq!(LmsCoverage::Rows(30).rows(38, 11), 30);
    /// ```
    pub fn rows(self, n: usize, p: usize) -> usize {
        match self {
            LmsCoverage::HighestBreakdown => n / 2 + p.div_ceil(2),
            LmsCoverage::Median => n.div_ceil(2),
            LmsCoverage::Lqs => lts_min_h(n, p),
            LmsCoverage::Rows(h) => h,
        }
    }
}

/// The breakdown point of LMS with coverage `h` on `n` rows and `p` coefficients (counting the
/// intercept), for data in general position: `min(n - h + 1, h - p + 1) / n` (Rousseeuw and
/// Leroy 1987); 0 when `h` is outside `[p + 1, n]`.
///
/// ```
/// use kselect::regression::lms_breakdown;
/// assert_eq!(lms_breakdown(11, 21, 4), 8.0 / 21.0);  // floor((n + 1) / 2), lqs "lms"
/// assert_eq!(lms_breakdown(21, 21, 4), 1.0 / 21.0);  // h = n: one row breaks it
/// assert_eq!(lms_breakdown(4, 21, 4), 0.0);          // below p + 1: not a fit
/// ```
pub fn lms_breakdown(h: usize, n: usize, p: usize) -> f64 {
    if h <= p || h > n {
        return 0.0;
    }
    (n - h + 1).min(h - p + 1) as f64 / n as f64
}

/// Least median of squares regression, generalized to the `h`-th smallest absolute residual
/// (MASS `lqs`'s "lqs" criterion), with reweighted least squares on the rows it does not flag
/// (see [`RegressionFit`] for the outputs and the [module documentation](super) for the
/// algorithm).
///
/// | setting | default | range |
/// | --- | --- | --- |
/// | [`intercept`](Lms::intercept) | `true` | |
/// | [`coverage`](Lms::coverage) or [`h`](Lms::h) | [`LmsCoverage::HighestBreakdown`]: `h = floor(n / 2) + floor((p + 1) / 2)` | `h` in `[p + 1, n]` |
/// | [`nsamp`](Lms::nsamp) | `min(500 p, 3000)` (`lqs`) | 1 to [`MAX_NSAMP`], at most [`MAX_LMS_WORK`]` / n` |
/// | [`seed`](Lms::seed) | 42 | any |
/// | [`exhaustive_limit`](Lms::exhaustive_limit) | 5000 | any |
/// | [`device`](Lms::device) | `Device::Cpu` | the CPU or a CUDA GPU |
///
/// ```
/// use kselect::regression::Lms;
/// use kselect::Matrix;
/// let x: Vec<f64> = (0..15).map(|i| i as f64).collect();
/// let mut y: Vec<f64> = x.iter().map(|v| 0.5 * v + 2.0).collect();
/// y[4] = 30.0;
/// y[11] = -8.0;
/// let fit = Lms::new().fit(Matrix::new(&x, 15, 1), &y)?;
/// assert!(fit.objective < 1e-12); // more than h points on the line
/// assert!((fit.coefficients[1] - 0.5).abs() < 1e-12);
/// assert_eq!(fit.outliers, vec![4, 11]);
/// # Ok::<(), kselect::Error>(())
/// ```
#[derive(Clone, Debug)]
pub struct Lms {
    shared: Shared,
    coverage: LmsCoverage,
    nsamp: Option<usize>,
}

impl Default for Lms {
    fn default() -> Self {
        Lms::new()
    }
}

impl Lms {
    /// The defaults of the table above.
    ///
    /// ```
    /// assert_eq!(kselect::regression::Lms::new().coverage_for(21, 3)?, 12);
    /// # Ok::<(), kselect::Error>(())
    /// ```
    pub fn new() -> Self {
        Lms {
            shared: Shared::new(),
            coverage: LmsCoverage::HighestBreakdown,
            nsamp: None,
        }
    }

    shared_setters!(Lms);

    /// The coverage as a number of rows: the rank (1-based) of the absolute residual
    /// minimized, from `p + 1` to `n` (`p` counting the intercept); the same as
    /// [`coverage`](Lms::coverage)`(LmsCoverage::Rows(h))`. The breakdown point of each `h` is
    /// [`lms_breakdown`].
    ///
    /// ```
    /// use kselect::regression::Lms;
    /// assert_eq!(Lms::new().h(15).coverage_for(21, 3)?, 15);
    /// assert_eq!(Lms::new().h(21).coverage_for(21, 3)?, 21); // the minimax fit of every row
    /// assert!(Lms::new().h(4).coverage_for(21, 3).is_err()); // at least p + 1 = 5
    /// # Ok::<(), kselect::Error>(())
    /// ```
    pub fn h(self, h: usize) -> Self {
        self.coverage(LmsCoverage::Rows(h))
    }

    /// The coverage by rule (default [`LmsCoverage::HighestBreakdown`]); e.g.
    /// [`LmsCoverage::Median`] for MASS `lqs(method = "lms")`.
    ///
    /// ```
    /// use kselect::regression::{Lms, LmsCoverage};
    /// let lqs_lms = Lms::new().coverage(LmsCoverage::Median);
    /// assert_eq!(lqs_lms.coverage_for(21, 3)?, 11); // floor((n + 1) / 2)
    /// # Ok::<(), kselect::Error>(())
    /// ```
    pub fn coverage(mut self, coverage: LmsCoverage) -> Self {
        self.coverage = coverage;
        self
    }

    /// The number of random elemental starts (at least 1); by default `min(500 p, 3000)`.
    ///
    /// ```
    /// use kselect::Matrix;
    /// let x: Vec<f64> = (0..120).map(|i| (i as f64 * 0.37).sin()).collect();
    /// let y: Vec<f64> = x.iter().map(|v| 1.0 - v).collect();
    /// let lms = kselect::regression::Lms::new().nsamp(50).exhaustive_limit(0);
    /// let fit = lms.fit(Matrix::new(&x, 120, 1), &y)?;
    /// assert_eq!(fit.starts, 50);
    /// # Ok::<(), kselect::Error>(())
    /// ```
    pub fn nsamp(mut self, nsamp: usize) -> Self {
        self.nsamp = Some(nsamp);
        self
    }

    /// The coverage `h` for `n` rows and `k` columns of `x`, or the error a fit would report.
    ///
    /// ```
    /// assert_eq!(kselect::regression::Lms::new().coverage_for(75, 3)?, 39);
    /// # Ok::<(), kselect::Error>(())
    /// ```
    pub fn coverage_for(&self, n: usize, k: usize) -> Result<usize> {
        let p = k + usize::from(self.shared.intercept);
        // p + 1 > n, said first: no coverage is possible then.
        if n <= p {
            return Err(RegressionError::TooFewRows {
                n,
                p,
                intercept: self.shared.intercept,
            }
            .into());
        }
        let h = self.coverage.rows(n, p);
        if h <= p || h > n {
            return Err(RegressionError::Coverage {
                method: Method::Lms,
                h,
                low: p + 1,
                n,
                p,
            }
            .into());
        }
        Ok(h)
    }

    /// Fits `y` on `x` (`n` rows of `k` predictors, row-major), as [`Lts::fit`], with the same
    /// errors, and [`RegressionError::LmsWork`] when the starts times the rows are more than
    /// [`MAX_LMS_WORK`].
    ///
    /// ```
    /// use kselect::regression::Lms;
    /// use kselect::Matrix;
    /// let x = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0];
    /// let y = [1.1, 1.9, 3.0, 4.2, 4.9, 6.1, 30.0, 8.0];
    /// let fit = Lms::new().fit(Matrix::new(&x, 8, 1), &y)?;
    /// assert!((fit.raw_coefficients[1] - 1.0).abs() < 0.15);
    /// assert!(fit.outliers.contains(&6));
    /// assert!(Lms::new().fit(Matrix::new(&x, 8, 1), &y[..7]).is_err());
    /// # Ok::<(), kselect::Error>(())
    /// ```
    pub fn fit<'x, 'y>(
        &self,
        x: impl Into<Matrix<'x, f64>>,
        y: impl Into<Values<'y, f64>>,
    ) -> Result<RegressionFit> {
        let (setup, design, n, k) = self.shared.setup(x.into(), y.into())?;
        let h = self.coverage_for(n, k)?;
        let nsamp = self.nsamp.unwrap_or((500 * design.p).min(3000));
        let starts = planned_starts(nsamp, n, design.p, self.shared.exhaustive_limit)?;
        if starts.saturating_mul(n as u64) > MAX_LMS_WORK {
            return Err(RegressionError::LmsWork { starts, n }.into());
        }
        let search = Search {
            h,
            nsamp,
            seed: self.shared.seed,
            exhaustive_limit: self.shared.exhaustive_limit,
        };
        let progress = &self.shared.progress;
        self.shared.with_engine(&design, &setup, |engine| {
            let found = lms::search(&design, &search, engine, progress)?;
            reweight::lms(&design, found, h, engine, progress)
        })
    }
}
