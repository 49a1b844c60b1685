//! The Kolmogorov–Smirnov distance between an estimate and the empirical CDF of the data.

use rayon::slice::ParallelSliceMut;

use crate::element::Element;
use crate::error::{Error, Result};
use crate::select::NanPolicy;

use super::cdf::DensityEstimate;

impl DensityEstimate {
    /// The Kolmogorov–Smirnov distance `sup_x |F_est(x) - F_emp(x)|` between the estimated
    /// CDF and the empirical CDF of `data`, computed exactly.
    ///
    /// The empirical CDF is a step function that jumps at each distinct value of the data, and
    /// the estimate never decreases, so the supremum is reached on one side of a jump: the
    /// distance is the largest of `|F_est(y-) - F_emp(y-)|` and `|F_est(y) - F_emp(y)|` over the
    /// distinct values `y` (and `1 - F_emp(+inf)` where NaNs are counted). The values are
    /// converted to `f64` (integers above `2^53` round, as the order statistics did) and
    /// sorted on the CPU.
    ///
    /// NaN follows `nan_policy`: `Error` refuses it (`Error::NanInInput`), `Omit` leaves it
    /// out, `Last` counts it as a value above every number (so `F_emp` stays below 1).
    /// Infinite values are values like any other. Errors with `Error::EmptyInput` when no
    /// value is left.
    ///
    /// ```
    /// use kselect::density::DensityEstimate;
    /// use kselect::NanPolicy;
    ///
    /// // Uniform on [0, 4] against the data 1, 2, 3, 4: the largest gap is 1/4.
    /// let est = DensityEstimate::new(&[0.0, 1.0], &[0.0, 4.0])?;
    /// assert_eq!(est.ks_distance(&[1, 2, 3, 4], NanPolicy::Error)?, 0.25);
    /// // Against the data it was built from, the estimate is exact at every order statistic.
    /// let est = DensityEstimate::new(&[0.0, 0.5, 1.0], &[1.0, 2.0, 3.0])?;
    /// let d = est.ks_distance(&[3.0, 1.0, 2.0], NanPolicy::Error)?;
    /// assert!((d - 1.0 / 3.0).abs() < 1e-15); // F_est(1) = 0, F_emp(1) = 1/3
    /// assert!(est.ks_distance(&[1.0, f64::NAN], NanPolicy::Error).is_err());
    /// assert_eq!(est.ks_distance(&[2.0, f64::NAN], NanPolicy::Omit)?, 0.5);
    /// # Ok::<(), kselect::Error>(())
    /// ```
    pub fn ks_distance<T: Element>(&self, data: &[T], nan_policy: NanPolicy) -> Result<f64> {
        let mut numbers: Vec<f64> = Vec::with_capacity(data.len());
        let mut nan_count = 0usize;
        let mut first_nan = None;
        for (i, x) in data.iter().enumerate() {
            if x.is_nan() {
                nan_count += 1;
                first_nan.get_or_insert(i);
            } else {
                numbers.push(x.to_f64());
            }
        }
        if let (NanPolicy::Error, Some(first_index)) = (nan_policy, first_nan) {
            return Err(Error::NanInInput {
                count: nan_count,
                first_index,
            });
        }
        if numbers.is_empty() {
            return Err(Error::EmptyInput);
        }
        let n = match nan_policy {
            NanPolicy::Last => data.len(),
            _ => numbers.len(),
        } as f64;
        numbers.par_sort_unstable_by(f64::total_cmp);

        let mut distance: f64 = 0.0;
        let mut below = 0usize; // values < y
        let mut i = 0;
        while i < numbers.len() {
            let y = numbers[i];
            // -0.0 and +0.0 are one value.
            let mut j = i + 1;
            while j < numbers.len() && numbers[j] == y {
                j += 1;
            }
            let (left, right) = (below as f64 / n, j as f64 / n);
            distance = distance
                .max((self.cdf_left(y) - left).abs())
                .max((self.cdf(y) - right).abs());
            below = j;
            i = j;
        }
        // Above the largest value the estimate rises to 1; F_emp stays below it by the NaNs.
        Ok(distance.max(1.0 - below as f64 / n))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The distance by brute force: both sides of every data value and of every order
    /// statistic, and midpoints in between.
    fn brute_force(est: &DensityEstimate, data: &[f64]) -> f64 {
        let n = data.len() as f64;
        let emp = |x: f64| data.iter().filter(|&&v| v <= x).count() as f64 / n;
        let emp_left = |x: f64| data.iter().filter(|&&v| v < x).count() as f64 / n;
        let mut points: Vec<f64> = data.iter().chain(est.values()).copied().collect();
        points.sort_by(f64::total_cmp);
        let mids: Vec<f64> = points.windows(2).map(|w| w[0] * 0.5 + w[1] * 0.5).collect();
        let mut d: f64 = 0.0;
        for &x in points.iter().chain(&mids) {
            d = d.max((est.cdf(x) - emp(x)).abs());
            d = d.max((est.cdf_left(x) - emp_left(x)).abs());
        }
        d
    }

    #[test]
    fn matches_brute_force_on_ties_and_tails() {
        let data = [
            3.0, 1.0, 1.0, 1.0, 2.5, 7.0, 7.0, -2.0, 0.0, -0.0, 4.0, 4.0, 4.0, 4.0, 9.0,
        ];
        let estimates = [
            DensityEstimate::new(&[0.0, 0.5, 1.0], &[-2.0, 3.0, 9.0]).unwrap(),
            DensityEstimate::new(&[0.1, 0.3, 0.35, 0.8], &[0.0, 1.0, 1.0, 4.0]).unwrap(),
            DensityEstimate::new(&[0.2, 0.6], &[4.0, 4.0]).unwrap(),
            DensityEstimate::new(&[0.0, 1.0], &[-10.0, 20.0]).unwrap(),
        ];
        for est in &estimates {
            let got = est.ks_distance(&data, NanPolicy::Error).unwrap();
            let want = brute_force(est, &data);
            assert!((got - want).abs() < 1e-15, "{est:?}: {got} vs {want}");
        }
    }

    #[test]
    fn the_estimate_from_every_order_statistic_is_within_one_over_n() {
        // With all n order statistics the estimate interpolates the empirical CDF's corners.
        let data: Vec<i64> = (0..200).map(|i| (i * 37) % 101 - 50).collect();
        let mut sorted: Vec<f64> = data.iter().map(|&x| x as f64).collect();
        sorted.sort_by(f64::total_cmp);
        let probs: Vec<f64> = (0..200).map(|i| i as f64 / 199.0).collect();
        let est = DensityEstimate::new(&probs, &sorted).unwrap();
        let d = est.ks_distance(&data, NanPolicy::Error).unwrap();
        assert!(d <= 1.0 / 200.0 + 1e-12, "{d}");
        assert!((d - brute_force(&est, &sorted)).abs() < 1e-15);
    }

    #[test]
    fn nan_policies_and_empty_input() {
        let est = DensityEstimate::new(&[0.0, 1.0], &[0.0, 1.0]).unwrap();
        let data = [0.5f32, f32::NAN, 0.25, f32::NAN];
        assert!(matches!(
            est.ks_distance(&data, NanPolicy::Error),
            Err(Error::NanInInput {
                count: 2,
                first_index: 1
            })
        ));
        let omit = est.ks_distance(&data, NanPolicy::Omit).unwrap();
        assert_eq!(omit, 0.5);
        // Counted last, the two NaNs keep F_emp at 1/2 above every number.
        let last = est.ks_distance(&data, NanPolicy::Last).unwrap();
        assert_eq!(last, 0.5);
        let last = est
            .ks_distance(&[0.0, 1.0, f64::NAN, f64::NAN, f64::NAN], NanPolicy::Last)
            .unwrap();
        assert!((last - 0.8).abs() < 1e-15, "{last}"); // F_est(1-) = 1, F_emp(1-) = 1/5
        assert!(matches!(
            est.ks_distance(&[f64::NAN], NanPolicy::Omit),
            Err(Error::EmptyInput)
        ));
        assert!(matches!(
            est.ks_distance::<u32>(&[], NanPolicy::Error),
            Err(Error::EmptyInput)
        ));
        // Infinities are values.
        let d = est
            .ks_distance(&[f64::NEG_INFINITY, f64::INFINITY], NanPolicy::Error)
            .unwrap();
        assert_eq!(d, 0.5);
    }
}
