//! Robust linear regression: least trimmed squares ([`Lts`], by FAST-LTS) and least median of
//! squares ([`Lms`]), with the conventions of R's robustbase `ltsReg` and MASS `lqs`.
//!
//! Both fit `y ~ x` (with an intercept by default) so that a minority of rows, however far off,
//! cannot pull the fit: LTS minimizes the sum of the `h` smallest squared residuals, LMS the
//! `h`-th smallest absolute residual. The rows the raw fit flags get weight 0, and a least
//! squares fit on the others gives the final coefficients and scale ([`RegressionFit`]).
//!
//! ```
//! use kselect::regression::Lts;
//! use kselect::Matrix;
//!
//! // The stackloss data (Brownlee 1965): air flow, water temperature, acid concentration.
//! let x = [
//!     80., 27., 89., 80., 27., 88., 75., 25., 90., 62., 24., 87., 62., 22., 87., 62., 23., 87.,
//!     62., 24., 93., 62., 24., 93., 58., 23., 87., 58., 18., 80., 58., 18., 89., 58., 17., 88.,
//!     58., 18., 82., 58., 19., 93., 50., 18., 89., 50., 18., 86., 50., 19., 72., 50., 19., 79.,
//!     50., 20., 80., 56., 20., 82., 70., 20., 91.,
//! ];
//! let y = [
//!     42., 37., 37., 28., 18., 18., 19., 20., 15., 14., 14., 13., 11., 12., 8., 7., 8., 8., 9.,
//!     15., 15.,
//! ];
//! let fit = Lts::new().fit(Matrix::new(&x, 21, 3), &y)?;
//! assert_eq!(fit.h, 13);
//! assert!((fit.objective - 2.932_391_246_119_97).abs() < 1e-9); // the exact LTS optimum
//! assert_eq!(fit.outliers, vec![0, 2, 3, 20]); // as robustbase's ltsReg
//! assert!((fit.scale - 1.921_876_924_996_994).abs() < 1e-9);
//! # Ok::<(), kselect::Error>(())
//! ```
//!
//! # LTS
//!
//! FAST-LTS (Rousseeuw and Van Driessen 2006): exact fits of random (or all) `p`-subsets, each
//! followed by two C-steps (least squares on the `h` rows with the smallest squared residuals,
//! which never raises the objective), the 10 best iterated to convergence and, for `n < 600`,
//! refined by pairwise exchanges of rows in and out of the `h`-subset (Hawkins' feasible
//! solution algorithm); for `n >= 600` the starts run on disjoint subsamples of 300 rows and
//! their merged set first. The `h` smallest
//! squared residuals are found by selection, never by sorting. Starts run in parallel, each
//! with its own seeded generator: a seed gives the same bits whatever the number of threads.
//! A model with the intercept alone is solved exactly (the LTS location), and `h = n` is
//! ordinary least squares. Details: [`Lts`], the field documentation of [`RegressionFit`].
//!
//! Where this differs from robustbase 0.95-0: FAST-LTS is randomized in both and can end in
//! different local optima (robustbase's default `nsamp = 500` starts also here; the data sets of
//! `datasets/robust` reach robustbase's exhaustive optimum); robustbase's intercept adjustment
//! (`adjust = TRUE`, off by default) is not offered. For the intercept-only model robustbase
//! 0.95-0 takes the square root of a standard deviation as its raw scale and multiplies the
//! reweighted one by an extra `sqrt(W / (W - 1))`; here the location model uses the same
//! formulas as every other model.
//!
//! # LMS
//!
//! Elemental fits of random (or all) `p`-subsets with MASS `lqs`'s intercept adjustment, then
//! the 20 best refined by minimax fits of their `h` best rows (an LMS analogue of the C-step)
//! and, up to 1000 rows, the 2 best of those by dropping in turn the rows that hold the minimax
//! fit. The objective
//! can therefore be below `lqs`'s, which only visits elemental fits. Above 8192 rows the random
//! starts are scored on a subsample of 8192 rows, and the best of them on all rows. The
//! coverage `h` can be any number of rows from `p + 1` to `n` ([`LmsCoverage`], with MASS
//! `lqs`'s rules). Details: [`Lms`].
//!
//! # Devices
//!
//! With [`Lts::device`] or [`Lms::device`] set to a CUDA device, the work that grows with `n`
//! runs on the GPU; the starts on small subsamples, the exchanges of small problems and the
//! minimax refinements stay on the CPU, as do the passes that produce the per-row outputs.
//! The design is copied to the device once, `x` standardized on its way there (the host keeps
//! no standardized copy of its rows), and its rank is checked there.
//!
//! - **LTS C-steps.** The candidates of a stage are stepped together: their squared residuals
//!   `y - X B` for all of them at once (for up to 16 candidates of up to 13 coefficients one
//!   pass over the design computes them; for more, a cuBLAS product of the `n x p` design and
//!   the `p x c` coefficients, then one pass that squares them), the `h`-th smallest squared
//!   residual of each by batched selection
//!   ([`Selector::select_rows_device`](crate::Selector::select_rows_device)), and one pass that sums, for each candidate, `X_H'X_H` and `X_H'r_H` over its `h`-subset
//!   (the rows below its threshold and, in index order, exactly as many of the rows at it as
//!   `h` needs), with the count and sum that give its objective. The `p x p` systems are solved
//!   on the host; the refit is the correction `b + (X_H'X_H)^-1 X_H'r_H`, which makes the
//!   normal equations as accurate as the QR of the CPU's polish. Per C-step `p c` coefficients
//!   go to the device and `c (p (p + 3) / 2 + 4)` numbers come back.
//! - **Least squares of the reweighting.** The same sums over a row mask, refined twice.
//! - **LMS starts.** The residuals of many elemental fits at once (the same product), each
//!   row of them sorted on the device to adjust the intercept (the shortest window of `h`
//!   sorted residuals), and the `h`-th smallest absolute residual by batched selection. On
//!   large data (scored on a subsample on the CPU), the best starts and each step of their
//!   refinement are scored on all rows this way.
//!
//! On one device a seed gives the same bits on every run; the GPU's results differ from the
//! CPU's by rounding (sums in another order), so that a race of candidates with nearly equal
//! objectives can in rare cases go another way. Models of more than 40 coefficients fit on
//! the CPU.

mod chebyshev;
mod csteps;
mod design;
mod engine;
mod error;
mod exchange;
mod fit;
mod gpu;
mod linalg;
mod lms;
mod lts;
pub mod normal;
mod options;
mod progress;
mod reweight;
mod scale;
mod subsets;

pub use error::RegressionError;
pub use fit::{Method, RegressionFit};
pub use options::{
    h_alpha, lms_breakdown, Lms, LmsCoverage, Lts, DEFAULT_EXHAUSTIVE_LIMIT, DEFAULT_SEED,
    LTS_DEFAULT_NSAMP, MAX_LMS_WORK, MAX_NSAMP,
};
pub use progress::{FitProgress, FitStage};
