//! A smooth PDF and CDF: the estimate convolved with biweight kernels.
//!
//! The piecewise-constant PDF jumps at every order statistic, and point masses have no density
//! at all. Spreading each piece of the estimated distribution (uniform pieces and point
//! masses) with a smooth kernel gives a continuously differentiable PDF and CDF that keep the
//! estimate's probability. The kernel is the biweight (quartic) `K(t) = 15/16 (1 - t^2)^2` on
//! `[-1, 1]`: its integrals are polynomials, so the result is computed exactly, piece by piece.
//!
//! The kernel's half-width (the bandwidth) is either one for all pieces ([`Bandwidth::Fixed`])
//! or set piece by piece from the spacing of the order statistics ([`Bandwidth::Local`], the
//! default): a sample-point adaptive kernel estimate. Order statistics are close where the
//! data are dense and far apart in the tails, so local bandwidths smooth the tails without
//! flattening a sharp peak.

use crate::error::Result;

use super::cdf::DensityEstimate;
use super::pdf::Component;
use super::DensityError;

/// How wide the smoothing kernels are.
///
/// ```
/// use kselect::density::Bandwidth;
/// assert_eq!(Bandwidth::default(), Bandwidth::Local(1.5));
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Bandwidth {
    /// One half-width `h` for every piece, in units of the data.
    Fixed(f64),
    /// For each piece, `factor` times its local spacing: the width of a uniform piece; for a
    /// point mass, the larger gap to the neighbouring distinct order statistics (for an
    /// estimate with a single value `x`, `0.1 · max(1, |x|)`).
    Local(f64),
}

impl Default for Bandwidth {
    /// `Local(1.5)`: neighbouring kernels overlap enough for a smooth sum.
    ///
    /// ```
    /// assert_eq!(kselect::density::Bandwidth::default(), kselect::density::Bandwidth::Local(1.5));
    /// ```
    fn default() -> Self {
        Bandwidth::Local(1.5)
    }
}

/// The estimate smoothed with biweight kernels: each piece's probability spread by a kernel
/// of its own half-width `h_i`, `pdf(x) = Σ_i ∫ K((x - y) / h_i) / h_i dF_i(y)`.
///
/// ```
/// use kselect::density::{Bandwidth, DensityEstimate};
///
/// let est = DensityEstimate::new(&[0.0, 0.5, 1.0], &[0.0, 0.0, 4.0])?; // half at 0
/// let smooth = est.smoothed(Bandwidth::Fixed(1.0))?;
/// assert!(smooth.pdf(0.0) > 0.5);            // the point mass, spread over [-1, 1]
/// assert_eq!(smooth.cdf(-1.0), 0.0);
/// assert_eq!(smooth.cdf(5.0), 1.0);
/// assert!((smooth.cdf(2.0) - est.cdf(2.0)).abs() < 1e-12); // symmetric kernel, linear CDF
/// # Ok::<(), kselect::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct SmoothedDensity {
    /// The pieces in ascending order, each with its kernel's half-width.
    pieces: Vec<(Component, f64)>,
    /// `mass_before[i]`: the total mass of `pieces[..i]`.
    mass_before: Vec<f64>,
    /// The largest half-width.
    reach: f64,
    bandwidth: Bandwidth,
}

impl DensityEstimate {
    /// The estimate smoothed with biweight kernels of the given bandwidth.
    ///
    /// Errors with `Error::Density` ([`DensityError::Bandwidth`](super::DensityError::Bandwidth))
    /// unless the bandwidth's number is finite and positive.
    ///
    /// ```
    /// use kselect::density::{Bandwidth, DensityEstimate};
    /// let est = DensityEstimate::new(&[0.0, 1.0], &[0.0, 10.0]).unwrap();
    /// let smooth = est.smoothed(Bandwidth::Fixed(2.0)).unwrap();
    /// assert!((smooth.pdf(5.0) - 0.1).abs() < 1e-12);
    /// assert!(est.smoothed(Bandwidth::default()).is_ok());
    /// assert!(est.smoothed(Bandwidth::Fixed(0.0)).is_err());
    /// assert!(est.smoothed(Bandwidth::Local(f64::NAN)).is_err());
    /// ```
    pub fn smoothed(&self, bandwidth: Bandwidth) -> Result<SmoothedDensity> {
        let (Bandwidth::Fixed(value) | Bandwidth::Local(value)) = bandwidth;
        if !(value.is_finite() && value > 0.0) {
            return Err(DensityError::Bandwidth { value }.into());
        }
        let widths = match bandwidth {
            Bandwidth::Fixed(h) => vec![h; self.components().len()],
            Bandwidth::Local(factor) => local_spacing(self)
                .into_iter()
                .map(|s| (factor * s).clamp(f64::MIN_POSITIVE, f64::MAX))
                .collect(),
        };
        let pieces: Vec<(Component, f64)> = self
            .components()
            .iter()
            .zip(widths)
            .map(|(&c, h)| match c {
                // Narrow pieces are points to their kernel (their width is below its
                // resolution), which avoids dividing tiny differences by tiny widths.
                Component::Uniform { lo, hi, mass } if hi - lo < 1e-6 * h => (
                    Component::Point {
                        at: lo + (hi - lo) * 0.5,
                        mass,
                    },
                    h,
                ),
                other => (other, h),
            })
            .collect();
        let mut mass_before = Vec::with_capacity(pieces.len() + 1);
        let mut total = 0.0;
        mass_before.push(total);
        for (c, _) in &pieces {
            total += c.mass();
            mass_before.push(total);
        }
        let reach = pieces.iter().map(|p| p.1).fold(0.0, f64::max);
        Ok(SmoothedDensity {
            pieces,
            mass_before,
            reach,
            bandwidth,
        })
    }
}

/// The local spacing of each component of `estimate` (see [`Bandwidth::Local`]).
fn local_spacing(estimate: &DensityEstimate) -> Vec<f64> {
    let mut distinct: Vec<f64> = estimate.values().to_vec();
    distinct.dedup();
    let (lo, _) = estimate.support();
    let single = 0.1 * lo.abs().max(1.0);
    estimate
        .components()
        .iter()
        .map(|c| match *c {
            Component::Uniform { lo, hi, .. } => {
                let w = hi - lo;
                if w.is_finite() {
                    w
                } else {
                    f64::MAX
                }
            }
            Component::Point { at, .. } => {
                let i = distinct.partition_point(|&v| v < at);
                let before = if i > 0 { at - distinct[i - 1] } else { 0.0 };
                let after = distinct.get(i + 1).map_or(0.0, |&v| v - at);
                let gap = before.max(after);
                if gap > 0.0 {
                    gap.min(f64::MAX)
                } else {
                    single
                }
            }
        })
        .collect()
}

impl SmoothedDensity {
    /// The bandwidth the kernels were chosen by.
    ///
    /// ```
    /// use kselect::density::{Bandwidth, DensityEstimate};
    /// let est = DensityEstimate::new(&[0.0, 1.0], &[0.0, 1.0]).unwrap();
    /// assert_eq!(est.smoothed(Bandwidth::Fixed(0.25)).unwrap().bandwidth(), Bandwidth::Fixed(0.25));
    /// ```
    pub fn bandwidth(&self) -> Bandwidth {
        self.bandwidth
    }

    /// The smallest and largest half-widths of the kernels.
    ///
    /// ```
    /// use kselect::density::{Bandwidth, DensityEstimate};
    /// let est = DensityEstimate::new(&[0.0, 0.5, 1.0], &[0.0, 1.0, 4.0]).unwrap();
    /// assert_eq!(est.smoothed(Bandwidth::Local(2.0)).unwrap().half_widths(), (2.0, 6.0));
    /// ```
    pub fn half_widths(&self) -> (f64, f64) {
        let min = self
            .pieces
            .iter()
            .map(|p| p.1)
            .fold(f64::INFINITY, f64::min);
        (min.min(self.reach), self.reach)
    }

    /// The smallest and largest values with positive density: every piece widened by its
    /// kernel's half-width.
    ///
    /// ```
    /// use kselect::density::{Bandwidth, DensityEstimate};
    /// let est = DensityEstimate::new(&[0.0, 1.0], &[0.0, 1.0]).unwrap();
    /// assert_eq!(est.smoothed(Bandwidth::Fixed(0.5)).unwrap().support(), (-0.5, 1.5));
    /// ```
    pub fn support(&self) -> (f64, f64) {
        let lo = self
            .pieces
            .iter()
            .map(|(c, h)| c.lo() - h)
            .fold(f64::INFINITY, f64::min);
        let hi = self
            .pieces
            .iter()
            .map(|(c, h)| c.hi() + h)
            .fold(f64::NEG_INFINITY, f64::max);
        (lo, hi)
    }

    /// The indices of the pieces whose kernels may reach `x`: those before lie entirely
    /// below `x - h_i`, those after entirely above `x + h_i`.
    fn near(&self, x: f64) -> (usize, usize) {
        let h = self.reach;
        let first = self.pieces.partition_point(|(c, _)| c.hi() <= x - h);
        let end = self.pieces.partition_point(|(c, _)| c.lo() < x + h);
        (first, end.max(first))
    }

    /// The smoothed density at `x` (NaN for NaN).
    ///
    /// ```
    /// use kselect::density::{Bandwidth, DensityEstimate};
    /// let est = DensityEstimate::new(&[0.0, 1.0], &[0.0, 0.0]).unwrap();
    /// let smooth = est.smoothed(Bandwidth::Fixed(1.0)).unwrap();
    /// assert_eq!(smooth.pdf(0.0), 15.0 / 16.0); // a unit point mass: the kernel itself
    /// assert_eq!(smooth.pdf(1.0), 0.0);
    /// ```
    pub fn pdf(&self, x: f64) -> f64 {
        if x.is_nan() {
            return f64::NAN;
        }
        let (first, end) = self.near(x);
        let density: f64 = self.pieces[first..end]
            .iter()
            .map(|&(c, h)| match c {
                Component::Point { at, mass } => mass * kernel((x - at) / h) / h,
                Component::Uniform { lo, hi, mass } => {
                    mass / (hi - lo) * (kernel_cdf((x - lo) / h) - kernel_cdf((x - hi) / h))
                }
            })
            .sum();
        density.max(0.0)
    }

    /// The smoothed CDF at `x` (NaN for NaN).
    ///
    /// ```
    /// use kselect::density::{Bandwidth, DensityEstimate};
    /// let est = DensityEstimate::new(&[0.0, 1.0], &[0.0, 0.0]).unwrap();
    /// let smooth = est.smoothed(Bandwidth::Fixed(1.0)).unwrap();
    /// assert_eq!(smooth.cdf(0.0), 0.5);
    /// assert_eq!(smooth.cdf(-1.0), 0.0);
    /// assert_eq!(smooth.cdf(1.0), 1.0);
    /// ```
    pub fn cdf(&self, x: f64) -> f64 {
        if x.is_nan() {
            return f64::NAN;
        }
        let (first, end) = self.near(x);
        if first == self.pieces.len() {
            return 1.0;
        }
        let partial: f64 = self.pieces[first..end]
            .iter()
            .map(|&(c, h)| match c {
                Component::Point { at, mass } => mass * kernel_cdf((x - at) / h),
                Component::Uniform { lo, hi, mass } => {
                    mass * h / (hi - lo)
                        * (kernel_cdf_integral((x - lo) / h) - kernel_cdf_integral((x - hi) / h))
                }
            })
            .sum();
        (self.mass_before[first] + partial).clamp(0.0, 1.0)
    }
}

/// The biweight kernel `15/16 (1 - t^2)^2` on `[-1, 1]`.
fn kernel(t: f64) -> f64 {
    if t.abs() >= 1.0 {
        0.0
    } else {
        let s = 1.0 - t * t;
        15.0 / 16.0 * s * s
    }
}

/// `∫_{-1}^{t} kernel`: `1/2 + 15/16 (t - 2t^3/3 + t^5/5)` on `[-1, 1]`.
fn kernel_cdf(t: f64) -> f64 {
    if t <= -1.0 {
        0.0
    } else if t >= 1.0 {
        1.0
    } else {
        let t2 = t * t;
        0.5 + 15.0 / 16.0 * t * (1.0 - t2 * (2.0 / 3.0 - t2 / 5.0))
    }
}

/// `∫_{-1}^{t} kernel_cdf`: `t/2 + 15/16 (t^2/2 - t^4/6 + t^6/30) + 5/32` on `[-1, 1]`, `t`
/// above.
fn kernel_cdf_integral(t: f64) -> f64 {
    if t <= -1.0 {
        0.0
    } else if t >= 1.0 {
        t
    } else {
        let t2 = t * t;
        0.5 * t + 15.0 / 16.0 * t2 * (0.5 - t2 * (1.0 / 6.0 - t2 / 30.0)) + 5.0 / 32.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kernel_integrals_are_consistent() {
        assert_eq!(kernel_cdf(0.0), 0.5);
        assert!((kernel_cdf_integral(1.0 - 1e-12) - 1.0).abs() < 1e-9);
        assert!(kernel_cdf_integral(-1.0 + 1e-12).abs() < 1e-9);
        // Numerical derivatives.
        for i in -19..20 {
            let t = i as f64 / 20.0;
            let e = 1e-6;
            let d1 = (kernel_cdf(t + e) - kernel_cdf(t - e)) / (2.0 * e);
            let d2 = (kernel_cdf_integral(t + e) - kernel_cdf_integral(t - e)) / (2.0 * e);
            assert!((d1 - kernel(t)).abs() < 1e-7, "{t}");
            assert!((d2 - kernel_cdf(t)).abs() < 1e-7, "{t}");
        }
    }

    #[test]
    fn smoothed_density_integrates_to_one_and_matches_its_cdf() {
        let e = DensityEstimate::new(
            &[0.0, 0.1, 0.2, 0.4, 0.45, 0.9, 0.95],
            &[-3.0, -1.0, -1.0, 0.0, 0.2, 0.2, 5.0],
        )
        .unwrap();
        for bandwidth in [
            Bandwidth::Fixed(0.7),
            Bandwidth::Local(1.5),
            Bandwidth::Local(0.3),
        ] {
            let s = e.smoothed(bandwidth).unwrap();
            let (lo, hi) = s.support();
            assert_eq!(s.cdf(lo), 0.0);
            assert_eq!(s.cdf(hi), 1.0);
            // Midpoint rule for the integral of the PDF, compared with the CDF along the way.
            let steps = 200_000;
            let dx = (hi - lo) / steps as f64;
            let mut integral = 0.0;
            for i in 0..steps {
                integral += s.pdf(lo + (i as f64 + 0.5) * dx) * dx;
                if i % 10_000 == 9_999 {
                    let x = lo + (i + 1) as f64 * dx;
                    assert!(
                        (integral - s.cdf(x)).abs() < 1e-6,
                        "{bandwidth:?} {x}: {integral}"
                    );
                }
            }
            assert!((integral - 1.0).abs() < 1e-6, "{bandwidth:?}");
        }
        let s = e.smoothed(Bandwidth::Fixed(0.7)).unwrap();
        assert_eq!(s.support(), (-3.7, 5.7));
        // Far from point masses and ends, a linear CDF is left as it is.
        assert!((s.cdf(2.5) - e.cdf(2.5)).abs() < 1e-12);
    }

    #[test]
    fn local_bandwidths_follow_the_spacing() {
        // Point masses at 0 (tail) and 1 (tie), pieces [0, 1] and [1, 11].
        let e = DensityEstimate::new(&[0.1, 0.5, 0.6, 1.0], &[0.0, 1.0, 1.0, 11.0]).unwrap();
        assert_eq!(local_spacing(&e), vec![1.0, 1.0, 10.0, 10.0]);
        let s = e.smoothed(Bandwidth::Local(2.0)).unwrap();
        assert_eq!(s.half_widths(), (2.0, 20.0));
        let single = DensityEstimate::new(&[0.0, 1.0], &[-30.0, -30.0]).unwrap();
        assert_eq!(local_spacing(&single), vec![3.0]);
    }

    #[test]
    fn extreme_ranges_stay_finite() {
        let e = DensityEstimate::new(&[0.0, 1.0], &[-f64::MAX, f64::MAX]).unwrap();
        for bandwidth in [Bandwidth::default(), Bandwidth::Fixed(1e300)] {
            let s = e.smoothed(bandwidth).unwrap();
            assert!(s.cdf(0.0).is_finite() && s.pdf(0.0).is_finite());
        }
        let e = DensityEstimate::new(&[0.0, 0.9, 1.0], &[1.0, 1.0, 1.0 + 1e-15]).unwrap();
        for h in [f64::NAN, -1.0, f64::INFINITY] {
            assert!(e.smoothed(Bandwidth::Fixed(h)).is_err());
            assert!(e.smoothed(Bandwidth::Local(h)).is_err());
        }
        let s = e.smoothed(Bandwidth::default()).unwrap();
        assert!(s.pdf(1.0) > 0.0);
    }
}
