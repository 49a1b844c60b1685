//! [`RegressionFit`]: what an LTS or LMS fit returns.

/// Which estimator produced a [`RegressionFit`].
///
/// ```
/// use kselect::regression::{Lts, Method};
/// use kselect::Matrix;
/// let x = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0];
/// let y = [2.0, 4.1, 5.9, 8.0, 10.1, 30.0, 14.0];
/// let fit = Lts::new().fit(Matrix::new(&x, 7, 1), &y)?;
/// assert_eq!(fit.method, Method::Lts);
/// assert_eq!(Method::Lms.name(), "LMS");
/// # Ok::<(), kselect::Error>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Method {
    /// Least trimmed squares ([`Lts`](super::Lts)).
    Lts,
    /// Least median of squares, generalized to the `h`-th absolute residual
    /// ([`Lms`](super::Lms)).
    Lms,
}

impl Method {
    /// `"LTS"` or `"LMS"`.
    ///
    /// ```
    /// assert_eq!(kselect::regression::Method::Lts.name(), "LTS");
    /// ```
    pub fn name(self) -> &'static str {
        match self {
            Method::Lts => "LTS",
            Method::Lms => "LMS",
        }
    }
}

/// A robust regression fit: the raw estimate, the reweighted least-squares fit on the rows it
/// does not flag, their scales, weights and outliers.
///
/// Coefficient vectors hold `p` values in the units of the data, the intercept first when the
/// model has one, then one per column of `x`. Row indices are 0-based.
///
/// For LTS the definitions are robustbase's `ltsReg` (version 0.95-0) with its defaults
/// (`wgtFUN = "01.original"`, `use.correction = TRUE`), with cut-off `c = qnorm(0.9875)`
/// (about 2.2414); for LMS they are MASS `lqs`'s scales with cut-off `c = 2.5`. Each field's
/// documentation gives the formula.
///
/// ```
/// use kselect::regression::Lts;
/// use kselect::Matrix;
///
/// // y = 1 + 2 x, with two gross outliers.
/// let x: Vec<f64> = (0..20).map(|i| i as f64).collect();
/// let mut y: Vec<f64> = x.iter().map(|v| 1.0 + 2.0 * v + 0.01 * (v * 1.7).sin()).collect();
/// y[3] = 80.0;
/// y[15] = -40.0;
/// let fit = Lts::new().seed(7).fit(Matrix::new(&x, 20, 1), &y)?;
/// assert!((fit.coefficients[0] - 1.0).abs() < 0.05);
/// assert!((fit.coefficients[1] - 2.0).abs() < 0.01);
/// assert_eq!(fit.outliers, vec![3, 15]);
/// assert_eq!((fit.n, fit.p, fit.h), (20, 2, 11));
/// # Ok::<(), kselect::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct RegressionFit {
    /// The estimator.
    pub method: Method,
    /// The reweighted coefficients: least squares on the rows with raw weight 1
    /// ([`raw_weights`](Self::raw_weights)). The raw coefficients when those rows do not
    /// determine a fit, or when the raw fit is exact (see [`exact_fit`](Self::exact_fit)).
    pub coefficients: Vec<f64>,
    /// The raw robust coefficients. LTS: the least-squares fit of the best `h`-subset found
    /// (robustbase's `raw.coefficients`). LMS: the fit minimizing the `h`-th smallest
    /// absolute residual (MASS `lqs`'s `coefficients`).
    pub raw_coefficients: Vec<f64>,
    /// The criterion at the raw fit. LTS: the sum of the `h` smallest squared residuals. LMS:
    /// the `h`-th smallest absolute residual (the square root of `lqs`'s `crit`).
    pub objective: f64,
    /// `y - x coefficients` for every row (the reweighted fit's residuals).
    pub residuals: Vec<f64>,
    /// `y - x raw_coefficients` for every row.
    pub raw_residuals: Vec<f64>,
    /// The raw scale.
    ///
    /// LTS (`h < n`): `sqrt(objective / h) * c(h/n) * k_raw(p, n, alpha)`, where
    /// `c(a) = 1 / sqrt(1 - 2 q phi(q) / a)` with `q = qnorm((1 + a)/2)` makes it consistent at
    /// the normal, and `k_raw` is robustbase's small-sample factor `LTScnp2`. LTS with `h = n`
    /// (`alpha = 1`): `sqrt(RSS / (n - p))`.
    ///
    /// LMS: `objective / qnorm((n + h) / (2n))` (`lqs`'s first scale).
    pub raw_scale: f64,
    /// The scale of the reweighted fit.
    ///
    /// LTS: `sqrt(sum_i w_i r_i^2 / (sum_i w_i - 1))` over the raw weights `w` and the
    /// reweighted residuals `r`, times `c(W/n) * k_rew(p, n, alpha)` when `W = sum w < n`
    /// (`k_rew` is robustbase's `LTScnp2.rew`). With `h = n` the residuals are the least-squares
    /// ones and there is no small-sample factor, as in robustbase.
    ///
    /// LMS: `sqrt(sum_i w_i r_i^2 / (sum_i w_i - p))` over the raw weights and the raw
    /// residuals (`lqs`'s second scale).
    pub scale: f64,
    /// 1 where `|raw_residual / raw_scale| <= c`, else 0 (robustbase's `raw.weights`).
    pub raw_weights: Vec<f64>,
    /// 1 where `|residual / scale| <= c`, else 0: the final weights (robustbase's `lts.wt`;
    /// for LTS with `h = n`, as there, with the least-squares residuals).
    pub weights: Vec<f64>,
    /// The rows with final weight 0, increasing.
    pub outliers: Vec<usize>,
    /// The rows of the raw fit's `h` smallest absolute residuals (ties by index), increasing:
    /// for LTS the best `h`-subset.
    pub best_subset: Vec<usize>,
    /// The coverage: how many residuals the criterion counts.
    pub h: usize,
    /// The coverage fraction used by the small-sample factors: the `alpha` given, or for a
    /// coverage given as `h` the `alpha` with `h = h_alpha(alpha)` exactly (see
    /// [`Lts::h`](super::Lts::h)); `h / n` for LMS.
    pub alpha: f64,
    /// Rows.
    pub n: usize,
    /// Coefficients, counting the intercept.
    pub p: usize,
    /// Whether the first coefficient is an intercept.
    pub intercept: bool,
    /// Starting subsets evaluated (0 for the exact special cases).
    pub starts: usize,
    /// Starting subsets that were singular.
    pub singular_subsets: usize,
    /// Whether every `p`-subset was a start (or the fit is exact by construction).
    pub exhaustive: bool,
    /// Whether at least `h` rows lie (to rounding) on the raw fit: the raw scale is below
    /// `1e-10` of the spread of `y`. Then the scales are 0, the weights mark the rows on
    /// the fit, and the coefficients are the raw ones.
    pub exact_fit: bool,
}

/// What a search found, in standardized coordinates.
#[derive(Clone, Debug)]
pub(crate) struct Found {
    /// The coefficients.
    pub b: Vec<f64>,
    /// Starting subsets evaluated.
    pub starts: usize,
    /// Starting subsets that were singular.
    pub singular: usize,
    /// Whether every `p`-subset was a start.
    pub exhaustive: bool,
}
