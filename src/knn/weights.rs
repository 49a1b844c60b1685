//! [`Weights`]: how the neighbours of a query count in an estimate.

use crate::knn::KnnFloat;

/// How the `k` neighbours of a query are weighted by
/// [`KnnRegressor`](crate::knn::KnnRegressor) and
/// [`KnnClassifier`](crate::knn::KnnClassifier), as scikit-learn's `weights` parameter.
///
/// - [`Weights::Uniform`] (the default): every neighbour counts the same.
/// - [`Weights::Distance`]: a neighbour counts `1 / distance`, so nearer neighbours count
///   more. When some of a query's `k` neighbours are at distance 0, those neighbours share
///   all the weight equally and the others count nothing. Not available with
///   [`Metric::InnerProduct`](crate::knn::Metric::InnerProduct), a similarity rather than a
///   distance.
///
/// ```
/// use kselect::knn::Weights;
/// assert_eq!("distance".parse::<Weights>()?, Weights::Distance);
/// assert_eq!(Weights::default(), Weights::Uniform);
/// assert_eq!(Weights::Uniform.to_string(), "uniform");
/// assert!("nearest".parse::<Weights>().is_err());
/// # Ok::<(), kselect::Error>(())
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Weights {
    /// Every neighbour counts the same: the mean of the responses, the count of the votes.
    #[default]
    Uniform,
    /// Each neighbour counts `1 / distance`; neighbours at distance 0 take all the weight.
    Distance,
}

impl Weights {
    /// The name, as scikit-learn spells it: `uniform` or `distance`.
    ///
    /// ```
    /// assert_eq!(kselect::knn::Weights::Distance.name(), "distance");
    /// ```
    pub fn name(self) -> &'static str {
        match self {
            Weights::Uniform => "uniform",
            Weights::Distance => "distance",
        }
    }

    /// The weight of each neighbour of one list (nearest first), written to `out`.
    ///
    /// Distance weights are computed relative to the nearest distance, `d_0 / d_i` rather
    /// than `1 / d_i`: the same proportions, but no weight overflows for tiny distances.
    pub(crate) fn of<T: KnnFloat>(self, distances: &[T], out: &mut Vec<f64>) {
        out.clear();
        match self {
            Weights::Uniform => out.resize(distances.len(), 1.0),
            Weights::Distance => {
                let nearest = distances
                    .iter()
                    .map(|d| d.to_f64())
                    .fold(f64::INFINITY, f64::min);
                out.extend(distances.iter().map(|d| {
                    let d = d.to_f64();
                    if nearest == 0.0 {
                        f64::from(u8::from(d == 0.0))
                    } else if nearest.is_infinite() {
                        // Every distance overflowed: all equally far.
                        1.0
                    } else {
                        nearest / d
                    }
                }));
            }
        }
    }
}

crate::names::named!(Weights, "weights", [Weights::Uniform, Weights::Distance]);

#[cfg(test)]
mod tests {
    use super::*;

    fn of(w: Weights, d: &[f64]) -> Vec<f64> {
        let mut out = vec![7.0];
        w.of(d, &mut out);
        out
    }

    #[test]
    fn uniform_weights_are_ones() {
        assert_eq!(of(Weights::Uniform, &[0.0, 2.0, 5.0]), vec![1.0; 3]);
    }

    #[test]
    fn distance_weights_are_proportional_to_reciprocals() {
        assert_eq!(
            of(Weights::Distance, &[0.5, 1.0, 2.0]),
            vec![1.0, 0.5, 0.25]
        );
    }

    #[test]
    fn zero_distances_share_all_the_weight() {
        assert_eq!(of(Weights::Distance, &[0.0, 0.0, 1.0]), vec![1.0, 1.0, 0.0]);
    }

    #[test]
    fn tiny_distances_do_not_overflow() {
        let w = of(Weights::Distance, &[1e-320, 2e-320, 1.0]);
        assert!(w.iter().all(|v| v.is_finite()));
        assert_eq!(w[0], 1.0);
    }

    #[test]
    fn overflowed_distances_count_the_same() {
        assert_eq!(
            of(Weights::Distance, &[f64::INFINITY, f64::INFINITY]),
            vec![1.0, 1.0]
        );
        assert_eq!(of(Weights::Distance, &[1.0, f64::INFINITY]), vec![1.0, 0.0]);
    }

    #[test]
    fn unknown_weights_name_the_choices() {
        let e = "Nearest".parse::<Weights>().unwrap_err().to_string();
        assert!(
            e.contains("Nearest") && e.contains("uniform") && e.contains("distance"),
            "{e}"
        );
        assert_eq!("UNIFORM".parse::<Weights>().unwrap(), Weights::Uniform);
    }
}
