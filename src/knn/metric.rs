//! The metrics and their canonical arithmetic.
//!
//! Every backend measures a pair the same way, so that neighbour lists are identical bit for
//! bit: the coordinates are converted to `f64` and combined in coordinate order, each
//! operation rounded on its own (no fused multiply–add), as [`Metric::measure`] does.

use crate::knn::KnnFloat;

/// How the distance between two points is measured.
///
/// Every metric is computed in `f64` from the coordinates in order (see
/// [`Metric::measure`]); neighbours are the points of smallest distance, except for
/// [`Metric::InnerProduct`], a similarity whose neighbours are the points of largest inner
/// product. Names parse as scikit-learn spells them.
///
/// ```
/// use kselect::knn::Metric;
/// assert_eq!("manhattan".parse::<Metric>().unwrap(), Metric::Manhattan);
/// assert_eq!(Metric::default(), Metric::Euclidean);
/// assert_eq!(Metric::Euclidean.measure(&[0.0f64, 0.0], &[3.0, 4.0]), 5.0);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Metric {
    /// `sum_j (q_j - x_j)^2`.
    SquaredEuclidean,
    /// `sqrt(sum_j (q_j - x_j)^2)`, the default.
    #[default]
    Euclidean,
    /// `sum_j |q_j - x_j|` (city block, L1).
    Manhattan,
    /// `1 - q.x / (|q| |x|)`, clipped to `[0, 2]`; `1` when either point is the zero vector
    /// (as scikit-learn's `cosine_distances`). Each point is first scaled by a power of two
    /// that brings its largest coordinate into `[0.5, 1)` (or as close as a power of two of
    /// `f64` reaches), so that huge coordinates do not overflow nor tiny ones underflow.
    Cosine,
    /// `q.x`, a similarity: neighbours are the points of **largest** inner product, and lists
    /// are sorted from the largest down.
    InnerProduct,
}

/// Every metric, in the order of their names in messages.
pub const METRICS: [Metric; 5] = [
    Metric::Euclidean,
    Metric::SquaredEuclidean,
    Metric::Manhattan,
    Metric::Cosine,
    Metric::InnerProduct,
];

impl Metric {
    /// The name, as scikit-learn spells it (`inner_product` has no scikit-learn twin).
    ///
    /// ```
    /// assert_eq!(kselect::knn::Metric::SquaredEuclidean.name(), "sqeuclidean");
    /// ```
    pub fn name(self) -> &'static str {
        match self {
            Metric::SquaredEuclidean => "sqeuclidean",
            Metric::Euclidean => "euclidean",
            Metric::Manhattan => "manhattan",
            Metric::Cosine => "cosine",
            Metric::InnerProduct => "inner_product",
        }
    }

    /// Whether neighbours are the largest values (a similarity) rather than the smallest.
    ///
    /// ```
    /// use kselect::knn::Metric;
    /// assert!(Metric::InnerProduct.is_similarity());
    /// assert!(!Metric::Cosine.is_similarity());
    /// ```
    pub fn is_similarity(self) -> bool {
        self == Metric::InnerProduct
    }

    /// The canonical value of the metric between `q` and `x` (of equal lengths), in `f64`:
    /// what every backend returns for the pair, bit for bit.
    ///
    /// ```
    /// use kselect::knn::Metric;
    /// let (q, x) = ([1.0f32, 2.0], [4.0f32, -2.0]);
    /// assert_eq!(Metric::SquaredEuclidean.measure(&q, &x), 25.0);
    /// assert_eq!(Metric::Manhattan.measure(&q, &x), 7.0);
    /// assert_eq!(Metric::InnerProduct.measure(&q, &x), 0.0);
    /// assert_eq!(Metric::Cosine.measure(&q, &x), 1.0);
    /// ```
    pub fn measure<T: KnnFloat>(self, q: &[T], x: &[T]) -> f64 {
        debug_assert_eq!(q.len(), x.len());
        match self {
            Metric::SquaredEuclidean => squared_euclidean(q, x),
            Metric::Euclidean => squared_euclidean(q, x).sqrt(),
            Metric::Manhattan => q
                .iter()
                .zip(x)
                .fold(0.0, |s, (&a, &b)| s + (a.to_f64() - b.to_f64()).abs()),
            Metric::Cosine => cosine(q, x),
            Metric::InnerProduct => dot(q, 1.0, x, 1.0),
        }
    }

    /// The key neighbours are ranked by (smallest first) from a canonical value: the value,
    /// or its negation for a similarity. NaN (an inner product whose terms overflowed) ranks
    /// after every number.
    pub(crate) fn rank_key(self, value: f64) -> f64 {
        if self.is_similarity() {
            -value
        } else {
            value
        }
    }

    /// The canonical value back from its rank key (canonical sums are never `-0.0`).
    pub(crate) fn value_of_key(self, key: f64) -> f64 {
        self.rank_key(key) + 0.0
    }
}

/// `sum_j (q_j - x_j)^2` in coordinate order.
fn squared_euclidean<T: KnnFloat>(q: &[T], x: &[T]) -> f64 {
    q.iter().zip(x).fold(0.0, |s, (&a, &b)| {
        let t = a.to_f64() - b.to_f64();
        s + t * t
    })
}

/// `sum_j (sq q_j)(sx x_j)` in coordinate order.
fn dot<T: KnnFloat>(q: &[T], sq: f64, x: &[T], sx: f64) -> f64 {
    q.iter()
        .zip(x)
        .fold(0.0, |s, (&a, &b)| s + (a.to_f64() * sq) * (b.to_f64() * sx))
}

/// The power of two that brings the largest magnitude of `v` into `[0.5, 1)` (1 for the zero
/// vector), the scale of [`Metric::Cosine`].
pub(crate) fn cosine_scale<T: KnnFloat>(v: &[T]) -> f64 {
    let largest = v.iter().fold(0.0f64, |m, &a| m.max(a.to_f64().abs()));
    if largest == 0.0 {
        return 1.0;
    }
    // largest = f 2^e with f in [0.5, 1): scale by 2^-e, as far as a normal f64 reaches
    // (below 2^-1023 the largest stays under 0.5, well clear of underflow in the sums).
    let e = exponent(largest).max(-1023);
    if e > 1022 {
        // 2^-1023 or 2^-1024: subnormal, so built as an exact product.
        return pow2(-1022) * pow2(1022 - e);
    }
    pow2(-e)
}

/// `e` with `v = f 2^e`, `f` in `[0.5, 1)`, for a finite positive `v`.
fn exponent(v: f64) -> i32 {
    let bits = v.to_bits();
    let biased = ((bits >> 52) & 0x7ff) as i32;
    if biased == 0 {
        // Subnormal: normalise by 2^54 first.
        return exponent(v * pow2(54)) - 54;
    }
    biased - 1022
}

/// `2^e` for `e` in the normal range of `f64`.
fn pow2(e: i32) -> f64 {
    debug_assert!((-1022..=1023).contains(&e));
    f64::from_bits(((e + 1023) as u64) << 52)
}

/// The squared norm of `v` scaled by `s`, in coordinate order.
pub(crate) fn scaled_norm2<T: KnnFloat>(v: &[T], s: f64) -> f64 {
    dot(v, s, v, s)
}

/// Cosine distance from a scaled dot product and the scaled squared norms: `1 - dot /
/// (sqrt(nq) sqrt(nx))` clipped to `[0, 2]`, `1` when a norm is zero.
pub(crate) fn cosine_from_parts(dot: f64, nq: f64, nx: f64) -> f64 {
    if nq == 0.0 || nx == 0.0 {
        return 1.0;
    }
    (1.0 - dot / (nq.sqrt() * nx.sqrt())).clamp(0.0, 2.0)
}

/// [`Metric::Cosine`] of a pair.
fn cosine<T: KnnFloat>(q: &[T], x: &[T]) -> f64 {
    let (sq, sx) = (cosine_scale(q), cosine_scale(x));
    cosine_from_parts(dot(q, sq, x, sx), scaled_norm2(q, sq), scaled_norm2(x, sx))
}

// Also `l2`, `squared_euclidean`, `cityblock`, `l1`, `ip` and `dot`.
crate::names::named!(
    Metric,
    "metric",
    METRICS,
    "l2" => Metric::Euclidean,
    "squared_euclidean" => Metric::SquaredEuclidean,
    "cityblock" => Metric::Manhattan,
    "l1" => Metric::Manhattan,
    "ip" => Metric::InnerProduct,
    "dot" => Metric::InnerProduct,
);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cosine_of_huge_coordinates_is_finite() {
        let q = [1e300f64, 1e300];
        let x = [2e300f64, 2e300];
        assert!(Metric::Cosine.measure(&q, &x).abs() < 1e-15);
    }

    #[test]
    fn cosine_of_the_zero_vector_is_one() {
        assert_eq!(Metric::Cosine.measure(&[0.0f32, 0.0], &[1.0, 2.0]), 1.0);
    }

    #[test]
    fn cosine_scale_brings_the_largest_into_half_to_one() {
        for v in [3e-200f64, 0.75, 1.0, 5.0, 1.7e308] {
            let s = cosine_scale(&[v, -v / 3.0]);
            assert!((0.5..1.0).contains(&(v * s)), "{v} scaled by {s}");
        }
        let s = cosine_scale(&[1e-310f64]);
        assert!(1e-310 * s > 1e-20 && 1e-310 * s < 1.0);
    }

    #[test]
    fn unknown_metric_names_the_choices() {
        let e = "hamming".parse::<Metric>().unwrap_err().to_string();
        assert!(e.contains("hamming") && e.contains("manhattan"), "{e}");
    }
}
