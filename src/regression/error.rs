//! [`RegressionError`]: why an LTS or LMS fit cannot run on its data or with its settings.

use crate::regression::fit::Method;

/// Why a robust regression ([`Lts`](super::Lts), [`Lms`](super::Lms)) cannot fit what it was
/// given (`kselect::Error::Regression`): the data (their lengths, values and columns), a setting
/// out of its range, or a design no starting subset determines. The messages name the numbers
/// involved; columns are counted from 0 among the predictors, without the intercept.
///
/// ```
/// use kselect::{Error, Lts, Matrix, RegressionError};
/// let x = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0];
/// let err = Lts::new().fit(Matrix::new(&x, 6, 1), &x[..5]).unwrap_err();
/// assert!(matches!(err, Error::Regression(RegressionError::YLength { len: 5, n: 6 })));
/// assert_eq!(err.to_string(), "invalid argument: y holds 5 values, but x has n = 6 rows");
/// ```
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum RegressionError {
    /// No rows (`n = 0`).
    #[error("no observations: a regression needs rows (n = 0)")]
    NoRows,
    /// No coefficient to fit: no predictor (`k = 0`) and no intercept.
    #[error("no coefficient to fit: give predictors or an intercept")]
    NoCoefficients,
    /// `x` does not hold `n x k` values.
    #[error("x holds {len} values, but n x p = {n} x {k} needs {}", .n.saturating_mul(*.k))]
    XLength {
        /// The values `x` holds.
        len: usize,
        /// The rows.
        n: usize,
        /// The predictors (without the intercept).
        k: usize,
    },
    /// `y` does not hold `n` values.
    #[error("y holds {len} values, but x has n = {n} rows")]
    YLength {
        /// The values `y` holds.
        len: usize,
        /// The rows of `x`.
        n: usize,
    },
    /// No more rows than coefficients (`n <= p`).
    #[error(
        "n = {n} rows are too few for p = {p} coefficients{}: a robust fit needs n > p (and at \
         least about 2p rows to resist outliers)",
        if *.intercept { " (counting the intercept)" } else { "" }
    )]
    TooFewRows {
        /// The rows.
        n: usize,
        /// The coefficients, counting the intercept.
        p: usize,
        /// Whether `p` counts an intercept.
        intercept: bool,
    },
    /// A NaN or infinite value in `x` (at `row`, `column`) or in `y` (at `row`; `column` is
    /// `None`).
    #[error(
        "{} is {value}: every value must be a finite number (remove or impute missing values \
         before the fit)",
        match .column {
            Some(column) => format!("x[row {row}, column {column}]"),
            None => format!("y[{row}]"),
        }
    )]
    NonFinite {
        /// The row.
        row: usize,
        /// The column of `x`, or `None` for `y`.
        column: Option<usize>,
        /// The value.
        value: f64,
    },
    /// A predictor whose values are all equal.
    #[error(
        "x column {column} is constant ({value}): {}",
        if *.intercept {
            "it duplicates the intercept; remove it"
        } else {
            "remove it and fit with an intercept instead"
        }
    )]
    ConstantColumn {
        /// The column.
        column: usize,
        /// Its value.
        value: f64,
        /// Whether the fit has an intercept.
        intercept: bool,
    },
    /// A predictor whose spread (standard deviation, or root mean square without an intercept)
    /// is not a positive finite number, so that it cannot be standardized.
    #[error("x column {column} cannot be standardized (its spread is {spread}): rescale it")]
    Unscalable {
        /// The column.
        column: usize,
        /// Its spread.
        spread: f64,
    },
    /// A column that is (numerically) a linear combination of the columns before it.
    #[error(
        "the design is singular: {} is (numerically) a linear combination of the columns \
         before it{}; remove collinear columns",
        match .column {
            Some(column) => format!("x column {column}"),
            None => "the intercept".to_string(),
        },
        if *.intercept { " and the intercept" } else { "" }
    )]
    Collinear {
        /// The predictor, or `None` for the intercept.
        column: Option<usize>,
        /// Whether the fit has an intercept.
        intercept: bool,
    },
    /// An LTS `alpha` outside `[0.5, 1]` (or NaN).
    #[error("alpha = {alpha} is not in [0.5, 1] (the fraction of rows the LTS criterion covers)")]
    Alpha {
        /// The `alpha` given.
        alpha: f64,
    },
    /// A coverage `h` outside `[low, n]`: `floor((n + p + 1) / 2)` to `n` for LTS, `p + 1` to
    /// `n` for LMS.
    #[error(
        "h = {h} is not in [{low}, {n}]: {} with n = {n} rows and p = {p} coefficients covers \
         between {} and n rows",
        .method.name(),
        match .method {
            Method::Lts => "floor((n + p + 1) / 2)",
            Method::Lms => "p + 1",
        }
    )]
    Coverage {
        /// The estimator.
        method: Method,
        /// The coverage.
        h: usize,
        /// The smallest coverage.
        low: usize,
        /// The rows (the largest coverage).
        n: usize,
        /// The coefficients, counting the intercept.
        p: usize,
    },
    /// A number of random starts outside `1..=`[`MAX_NSAMP`](super::MAX_NSAMP).
    #[error(
        "nsamp = {nsamp}{}",
        if *.nsamp == 0 {
            ": at least one starting subset is needed".to_string()
        } else {
            format!(
                " is more than the {max} random starts a fit takes (hours of work; the defaults \
                 are 500 for LTS and at most 3000 for LMS)",
                max = super::MAX_NSAMP
            )
        }
    )]
    Nsamp {
        /// The `nsamp` given.
        nsamp: usize,
    },
    /// Every `p`-subset would be a start (there are at most `max(nsamp, exhaustive_limit)`),
    /// and they are more than [`MAX_NSAMP`](super::MAX_NSAMP).
    #[error(
        "every {p}-subset of the {n} rows would be a start (C({n}, {p}) = {count} is at most the \
         exhaustive limit {limit}), more than the {max} starts a fit takes: lower the exhaustive \
         limit",
        max = super::MAX_NSAMP
    )]
    TooManyStarts {
        /// The rows.
        n: usize,
        /// The coefficients, counting the intercept.
        p: usize,
        /// `C(n, p)`.
        count: u64,
        /// `max(nsamp, exhaustive_limit)`.
        limit: u64,
    },
    /// LMS starts that evaluate more than [`MAX_LMS_WORK`](super::MAX_LMS_WORK) residuals.
    #[error(
        "{starts} starts on n = {n} rows evaluate {} residuals, more than the 10^12 (about an \
         hour of work on the CPU) an LMS search takes: at most {} starts fit (nsamp)",
        *.starts as u128 * *.n as u128,
        super::MAX_LMS_WORK / *.n as u64
    )]
    LmsWork {
        /// The starts.
        starts: u64,
        /// The rows.
        n: usize,
    },
    /// No starting `p`-subset of rows determines a fit: the design is degenerate.
    #[error(
        "no starting subset of {p} rows determines a fit ({singular} of {starts} were \
         singular): the design is degenerate (e.g. mostly repeated rows)"
    )]
    NoStartFits {
        /// The rows of a starting subset (the coefficients, counting the intercept).
        p: usize,
        /// The singular starts.
        singular: usize,
        /// The starts tried.
        starts: usize,
    },
    /// The rows of the search left no fit (no candidate, or a singular least-squares system).
    #[error("the rows do not determine a least-squares fit")]
    NoFit,
}
