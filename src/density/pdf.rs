//! The PDF implied by the piecewise-linear CDF: constant between distinct order statistics,
//! with point masses at ties and for the tails.

use super::cdf::DensityEstimate;

/// One piece of an estimated distribution.
///
/// ```
/// use kselect::density::Component;
/// let piece = Component::Uniform { lo: 1.0, hi: 3.0, mass: 0.5 };
/// assert_eq!(piece.mass(), 0.5);
/// assert_eq!(piece.density(), Some(0.25));
/// assert_eq!(Component::Point { at: 2.0, mass: 0.1 }.density(), None);
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Component {
    /// Probability `mass` spread evenly over `[lo, hi]` (`lo < hi`).
    Uniform {
        /// The left end.
        lo: f64,
        /// The right end.
        hi: f64,
        /// The probability of the interval.
        mass: f64,
    },
    /// Probability `mass` at the single value `at`.
    Point {
        /// The value.
        at: f64,
        /// Its probability.
        mass: f64,
    },
}

impl Component {
    /// The probability of the piece.
    ///
    /// ```
    /// assert_eq!(kselect::density::Component::Point { at: 0.0, mass: 0.3 }.mass(), 0.3);
    /// ```
    pub fn mass(&self) -> f64 {
        match *self {
            Component::Uniform { mass, .. } | Component::Point { mass, .. } => mass,
        }
    }

    /// The smallest value of the piece.
    ///
    /// ```
    /// assert_eq!(kselect::density::Component::Uniform { lo: 1.0, hi: 2.0, mass: 1.0 }.lo(), 1.0);
    /// ```
    pub fn lo(&self) -> f64 {
        match *self {
            Component::Uniform { lo, .. } => lo,
            Component::Point { at, .. } => at,
        }
    }

    /// The largest value of the piece.
    ///
    /// ```
    /// assert_eq!(kselect::density::Component::Uniform { lo: 1.0, hi: 2.0, mass: 1.0 }.hi(), 2.0);
    /// ```
    pub fn hi(&self) -> f64 {
        match *self {
            Component::Uniform { hi, .. } => hi,
            Component::Point { at, .. } => at,
        }
    }

    /// The density `mass / (hi - lo)` of a uniform piece; `None` for a point mass.
    ///
    /// ```
    /// use kselect::density::Component;
    /// assert_eq!(Component::Uniform { lo: 0.0, hi: 4.0, mass: 1.0 }.density(), Some(0.25));
    /// ```
    pub fn density(&self) -> Option<f64> {
        match *self {
            Component::Uniform { lo, hi, mass } => Some(mass / (hi - lo)),
            Component::Point { .. } => None,
        }
    }
}

/// The pieces of the distribution through `(values[i], probs[i])` (validated), in ascending
/// order: both `lo` and `hi` never decrease along the list.
pub(super) fn components(probs: &[f64], values: &[f64]) -> Vec<Component> {
    let m = values.len();
    let mut out = Vec::with_capacity(m + 1);
    let mut a = 0;
    while a < m {
        // The group a..=b of equal order statistics: a point mass when it spans some
        // probability, or holds the first or last order statistic (the tails).
        let mut b = a;
        while b + 1 < m && values[b + 1] == values[a] {
            b += 1;
        }
        let above = if b == m - 1 { 1.0 } else { probs[b] };
        let below = if a == 0 { 0.0 } else { probs[a] };
        let mass = above - below;
        if mass > 0.0 {
            out.push(Component::Point {
                at: values[a],
                mass,
            });
        }
        if b + 1 < m {
            out.push(Component::Uniform {
                lo: values[b],
                hi: values[b + 1],
                mass: probs[b + 1] - probs[b],
            });
        }
        a = b + 1;
    }
    out
}

impl DensityEstimate {
    /// The estimated density at `x`, the slope of the CDF: `(p_{i+1} - p_i) / (x_{i+1} - x_i)`
    /// for `x_i <= x < x_{i+1}`, `0` outside `[x_1, x_m)`. Point masses are not densities:
    /// they are listed by [`point_masses`] and not included here. NaN for NaN.
    ///
    /// ```
    /// let est = kselect::density::DensityEstimate::new(&[0.0, 0.5, 1.0], &[0.0, 1.0, 5.0]).unwrap();
    /// assert_eq!(est.pdf(0.5), 0.5);
    /// assert_eq!(est.pdf(1.0), 0.125);
    /// assert_eq!(est.pdf(5.0), 0.0);
    /// assert_eq!(est.pdf(-1.0), 0.0);
    /// ```
    ///
    /// [`point_masses`]: DensityEstimate::point_masses
    pub fn pdf(&self, x: f64) -> f64 {
        let values = self.values();
        let (lo, hi) = self.support();
        if x.is_nan() {
            return f64::NAN;
        }
        if x < lo || x >= hi {
            return 0.0;
        }
        let i = values.partition_point(|&v| v <= x) - 1;
        let probs = self.probs();
        let mass = probs[i + 1] - probs[i];
        let width = values[i + 1] - values[i];
        if width.is_finite() {
            mass / width
        } else {
            (mass * 0.5) / (values[i + 1] * 0.5 - values[i] * 0.5)
        }
    }

    /// The point masses `(value, probability)` in ascending order: ties among the order
    /// statistics, and the probability outside `[p_1, p_m]` at `x_1` and `x_m`.
    ///
    /// ```
    /// let est = kselect::density::DensityEstimate::new(&[0.1, 0.4, 0.6, 1.0], &[0.0, 2.0, 2.0, 3.0]).unwrap();
    /// let masses = est.point_masses();
    /// assert_eq!(masses.len(), 2);
    /// assert_eq!(masses[0], (0.0, 0.1));
    /// assert_eq!(masses[1].0, 2.0);
    /// assert!((masses[1].1 - 0.2).abs() < 1e-15);
    /// ```
    pub fn point_masses(&self) -> Vec<(f64, f64)> {
        self.components()
            .iter()
            .filter_map(|c| match *c {
                Component::Point { at, mass } => Some((at, mass)),
                Component::Uniform { .. } => None,
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn masses_add_up_to_one_and_pieces_are_ordered() {
        let cases: [(&[f64], &[f64]); 5] = [
            (&[0.0, 1.0], &[0.0, 1.0]),
            (&[0.2, 0.7], &[3.0, 3.0]),
            (&[0.0, 0.1, 0.2, 0.3, 1.0], &[1.0, 1.0, 2.0, 2.0, 2.0]),
            (&[0.05, 0.1, 0.5, 0.9, 0.95], &[-4.0, -1.0, 0.0, 0.0, 8.0]),
            (&[0.0, 0.5, 1.0], &[7.0, 7.0, 7.0]),
        ];
        for (probs, values) in cases {
            let e = DensityEstimate::new(probs, values).unwrap();
            let c = e.components();
            let total: f64 = c.iter().map(Component::mass).sum();
            assert!((total - 1.0).abs() < 1e-12, "{probs:?}: {c:?}");
            assert!(c.iter().all(|p| p.mass() > 0.0), "{c:?}");
            for w in c.windows(2) {
                assert!(w[0].lo() <= w[1].lo() && w[0].hi() <= w[1].hi(), "{c:?}");
            }
            // The continuous part integrates to one minus the point masses.
            let points: f64 = e.point_masses().iter().map(|p| p.1).sum();
            let uniform: f64 = c
                .iter()
                .filter_map(|p| p.density().map(|d| d * (p.hi() - p.lo())))
                .sum();
            assert!((points + uniform - 1.0).abs() < 1e-12);
        }
    }

    #[test]
    fn point_masses_of_ties_and_tails() {
        let e =
            DensityEstimate::new(&[0.0, 0.1, 0.2, 0.3, 1.0], &[1.0, 1.0, 2.0, 2.0, 2.0]).unwrap();
        // 0.1 at 1 (a tie from the minimum); from 2 on: 0.3 - 0.2 plus the upper 0.7.
        let m = e.point_masses();
        assert_eq!(m.len(), 2);
        assert_eq!(m[0], (1.0, 0.1));
        assert_eq!(m[1].0, 2.0);
        assert!((m[1].1 - 0.8).abs() < 1e-15);
        assert_eq!(e.pdf(1.5), 0.1);
        assert_eq!(e.pdf(2.0), 0.0);
        assert!(e.pdf(f64::NAN).is_nan());
    }
}
