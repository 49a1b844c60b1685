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
//! let fit = Lts::new().fit(&x, 21, 3, &y)?;
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
//! and, up to 1000 rows, by dropping in turn the rows that hold the minimax fit. The objective
//! can therefore be below `lqs`'s, which only visits elemental fits. Details: [`Lms`].
//!
//! # Devices
//!
//! The fits run on the CPU; [`Lts::device`] and [`Lms::device`] refuse other devices with an
//! error.

mod chebyshev;
mod csteps;
mod design;
mod exchange;
mod fit;
mod linalg;
mod lms;
mod lts;
pub mod normal;
mod options;
mod reweight;
mod scale;
mod subsets;

pub use fit::{Method, RegressionFit};
pub use options::{h_alpha, Lms, Lts, DEFAULT_EXHAUSTIVE_LIMIT, DEFAULT_SEED, LTS_DEFAULT_NSAMP};
