//! Distributions estimated from order statistics: the piecewise-linear CDF through `m`
//! quantiles, the PDF it implies, a smoothed PDF and CDF, and the Kolmogorov–Smirnov distance
//! to the data's empirical CDF.
//!
//! Blanchard et al. (2016, Sec. 3, Fig. 5) show that a few order statistics of a large data
//! set — its deciles, better its percentiles — describe the whole distribution: the
//! piecewise-linear interpolant of `(value, probability)` points is an estimate of the CDF, and
//! its slope an estimate of the PDF. This module builds that estimate from values at
//! probabilities `p_1 < ... < p_m` (found exactly by [`Selector::quantiles`], on any backend):
//!
//! - [`DensityEstimate::cdf`]: linear between neighbouring order statistics, `0` below the
//!   smallest and `1` from the largest on;
//! - [`DensityEstimate::pdf`]: its slope, constant on each interval, `(p_{i+1} - p_i) /
//!   (x_{i+1} - x_i)`;
//! - [`DensityEstimate::point_masses`]: equal order statistics (ties, common in data with few
//!   distinct values) bound intervals of zero width; their probability is a point mass at
//!   that value. The probability below `p_1` and above `p_m` (the tails the order statistics
//!   do not describe) are point masses at the smallest and largest order statistic;
//! - [`DensityEstimate::quantile`]: the inverse of the CDF, which gives the order statistics
//!   back exactly at the probabilities they were taken at;
//! - [`DensityEstimate::smoothed`]: each piece of the estimate spread by a biweight kernel as
//!   wide as the local spacing of the order statistics (or of a fixed width), a smooth PDF
//!   and CDF (see [`SmoothedDensity`]);
//! - [`DensityEstimate::ks_distance`]: `sup |F_est - F_emp|` against the empirical CDF of the
//!   data, exact (evaluated on both sides of every jump of the empirical CDF).
//!
//! ```
//! use kselect::density::DensityEstimate;
//! use kselect::{QuantileMethod, Selector};
//!
//! let data: Vec<f64> = (0..1000).map(|i| (i as f64 * 0.618).fract()).collect();
//! let probs: Vec<f64> = (0..=10).map(|i| i as f64 / 10.0).collect(); // the deciles
//! let est = DensityEstimate::from_data(&Selector::new(), &data, &probs, QuantileMethod::Linear)?;
//! assert!((est.cdf(0.5) - 0.5).abs() < 0.01);
//! assert!((est.pdf(0.25) - 1.0).abs() < 0.05); // uniform on [0, 1)
//! assert_eq!(est.quantile(0.3)?, est.values()[3]);
//! assert!(est.ks_distance(&data, kselect::NanPolicy::Error)? < 0.01);
//! # Ok::<(), kselect::Error>(())
//! ```
//!
//! The plots of `kselect::plot` (the `plot` feature) draw these estimates over histograms of the data.
//!
//! [`Selector::quantiles`]: crate::Selector::quantiles

mod cdf;
mod error;
mod ks;
mod pdf;
mod smooth;

pub use cdf::DensityEstimate;
pub use error::DensityError;
pub use pdf::Component;
pub use smooth::{Bandwidth, SmoothedDensity};

/// The fraction `(x - a) / (b - a)` of the way from `a` to `b` (`a < b`), clamped to `[0, 1]`,
/// without overflow when `b - a` exceeds `f64::MAX`.
fn fraction(x: f64, a: f64, b: f64) -> f64 {
    let width = b - a;
    let t = if width.is_finite() {
        (x - a) / width
    } else {
        (x * 0.5 - a * 0.5) / (b * 0.5 - a * 0.5)
    };
    t.clamp(0.0, 1.0)
}

/// The point a fraction `t` in `[0, 1]` of the way from `a` to `b`, within `[a, b]`, without
/// overflow.
fn interpolate(a: f64, b: f64, t: f64) -> f64 {
    let width = b - a;
    let x = if width.is_finite() {
        a + width * t
    } else {
        a * (1.0 - t) + b * t
    };
    x.clamp(a, b)
}

#[cfg(test)]
mod tests {
    use super::{fraction, interpolate};

    #[test]
    fn fraction_and_interpolate_survive_huge_ranges() {
        assert_eq!(fraction(0.0, -1e308, 1e308), 0.5);
        assert_eq!(interpolate(-1e308, 1e308, 0.5), 0.0);
        assert_eq!(fraction(5.0, 0.0, 10.0), 0.5);
        assert_eq!(fraction(-5.0, 0.0, 10.0), 0.0);
        assert_eq!(fraction(50.0, 0.0, 10.0), 1.0);
        assert_eq!(interpolate(2.0, 4.0, 1.0), 4.0);
        assert_eq!(interpolate(2.0, 4.0, 0.0), 2.0);
    }
}
