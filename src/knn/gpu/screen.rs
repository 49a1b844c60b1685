//! Screening: approximate rank keys of every pair by a single-precision cuBLAS product on
//! TF32 tensor cores, each query's best candidates by them, and a proven bound that tells when
//! those candidates hold the exact `k` nearest.
//!
//! The rows multiplied are built on the device (`knn_screen_rows_*`): for the Euclidean
//! metrics, points `[x', |x'|^2]` and queries `[-2 q', 1]` with `x' = (x - c) s` — `c` the
//! mean of a sample of the reference points and `s` a power of two that brings the sample's
//! largest centred coordinate near 1 — so that the product is `|x'|^2 - 2 q'.x'`, the squared
//! distance less the query's own constant `|q'|^2`; for the inner product `-q s . x s`; for
//! cosine `-q/|q| . x/|x|`. Each of these `w` values (zero-padded to a multiple of 8) is split
//! into its TF32 part `hi` (the low 13 mantissa bits cleared, so TF32 holds it exactly however
//! the tensor cores round) and the remainder `lo`, and the product runs in one of two
//! precisions ([`Precision`]): **single**, `hi.hi` over `w` columns; **split**, `hi.hi + lo.hi
//! + hi.lo` over `3w` columns (three times the work, about `2^-20` instead of `2^-9`). Then
//!
//! `|approximate - exact| <= B = eps (|q'| + R)^2 + a`
//!
//! for every pair, in those scaled units, where `R` is the largest `|x'|` (rounded up), `a =
//! 4 d 2^-126 (1 + |q'| + R)` covers coordinates flushed to zero, and `eps` is given by `eps()`
//! with its derivation: the products (`2^-9 + 2^-20` single, `3 2^-20` split), the `f32`
//! accumulation of the terms, the rounding of the points to `f32` and the canonical `f64` sum,
//! all doubled to leave room for the strict separation below. (`|x'|^2 <= (|q'| + |x'|)^2` and
//! `2 |q'| |x'| <= (|q'| + |x'|)^2` bound every term.)
//!
//! Take each query's best `K > k` candidates by approximate key (ties by index), `a_k` the
//! `k`-th of them and `a_K` the largest. If `a_K > a_k + 2B`, every point left out has a true
//! key above `a_k + B`, which bounds the true keys of the `k` best candidates: `k` points are
//! strictly nearer (by more than the canonical arithmetic can blur), so none left out is among
//! the exact `k` nearest. The candidates are then measured exactly (`knn_measure_*`, the
//! canonical arithmetic) and the best `k` of them taken, ties by index. Queries the single
//! product leaves unsettled are screened again by the split product, and those it leaves
//! unsettled too (many points at nearly their `k`-th distance, as on integer grids) are
//! searched by the direct path. Manhattan distance has no product form and always takes the
//! direct path.

use cudarc::driver::CudaSlice;

use crate::device::{CudaDevice, DeviceBuffer};
use crate::error::Result;
use crate::knn::gpu::direct::sorted_lists;
use crate::knn::gpu::kernels::{self, ScreenRows};
use crate::knn::gpu::output::{Lists, Place};
use crate::knn::gpu::plan::Plan;
use crate::knn::gpu::points::DevicePoints;
use crate::knn::{KnnFloat, Metric, Points};
use crate::select::{Matrix, Selector, TopKOptions};

/// Reference points sampled for the centre and the scale.
const SAMPLE: usize = 1024;

/// The reference set's screening rows on the device.
pub(super) struct ScreenedReference {
    /// `n` rows of `3 width` floats: the split screening values `[hi | lo | hi]`.
    rows: CudaSlice<f32>,
    /// The screening values a point: `d + 1` rounded up to a multiple of 8.
    width: usize,
    /// The centre subtracted (Euclidean metrics), on the device.
    center: CudaSlice<f64>,
    /// The scale, as two factors.
    scale: (f64, f64),
    /// The largest norm of a point's screening coordinates, rounded up (`R`).
    largest: f64,
}

/// The screening rows of the points and of the queries of `metric`.
fn modes(metric: Metric) -> Option<(ScreenRows, ScreenRows)> {
    match metric {
        Metric::SquaredEuclidean | Metric::Euclidean => {
            Some((ScreenRows::Points, ScreenRows::Queries))
        }
        Metric::InnerProduct => Some((ScreenRows::Plain, ScreenRows::Negated)),
        Metric::Cosine => Some((ScreenRows::Unit, ScreenRows::NegatedUnit)),
        Metric::Manhattan => None,
    }
}

/// The product's inner dimension for `dim` coordinates.
pub(super) fn width(dim: usize) -> usize {
    (dim + 1).div_ceil(8) * 8
}

impl ScreenedReference {
    /// The screening rows of `reference` (on the device as `points`), or `None` when the
    /// metric has no product form or a coordinate does not fit a float once centred and
    /// scaled.
    pub fn build<T: KnnFloat>(
        dev: &CudaDevice,
        reference: &Points<'_, T>,
        points: &DevicePoints<T>,
        metric: Metric,
    ) -> Result<Option<ScreenedReference>> {
        let Some((mode, _)) = modes(metric) else {
            return Ok(None);
        };
        let (n, dim) = (reference.rows(), reference.dim());
        let width = width(dim);
        let (center, scale) = center_and_scale(reference, metric);
        let center_dev = DeviceBuffer::from_host_on(dev, &center)?.into_slice();
        let mut rows = dev.alloc::<f32>(n * 3 * width, "the screening rows")?;
        let mut norms = dev.alloc::<f32>(n, "the screening norms")?;
        let (largest, overflow) = kernels::screen_rows(
            dev,
            (&points.data, n, dim),
            width,
            mode,
            &center_dev,
            scale,
            &mut rows,
            &mut norms,
        )?;
        if overflow {
            return Ok(None);
        }
        Ok(Some(ScreenedReference {
            rows,
            width,
            center: center_dev,
            scale,
            largest: largest as f64,
        }))
    }

    /// The bytes the rows take on the device.
    pub fn bytes(n: usize, dim: usize) -> usize {
        n * 3 * width(dim) * 4
    }
}

/// How precisely the screening product is computed.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) enum Precision {
    /// One TF32 product of the TF32 parts (`width` columns).
    Single,
    /// The split product `hi.hi + lo.hi + hi.lo` (`3 width` columns), three times the work.
    Split,
}

/// `eps` of the bound for `dim` coordinates, `width` screening values a point, in `precision`.
///
/// Single: each value's TF32 part is within `2^-10` of it (relative), so a product of two is
/// within `2^-9 + 2^-20`. Split: `hi.hi` is exact, `lo` is within `2^-10 |v|` of zero and its
/// TF32 rounding within `2^-20 |v|`, so the two cross terms and the dropped `lo.lo` cost `3 2^-20`.
/// Either way the `f32` accumulation of `w` terms costs `(w + 2) 2^-22` (twice a rounding a term,
/// in case the tensor cores truncate), the rounding of the points to `f32` `2^-22`, the canonical
/// `f64` sum `(d + 2) 2^-52`; all of it doubled.
fn eps(dim: usize, width: usize, precision: Precision) -> f64 {
    let p = |e: i32| 2f64.powi(e);
    let (products, terms) = match precision {
        Precision::Single => (p(-9) + p(-20), width),
        Precision::Split => (3.0 * p(-20), 3 * width),
    };
    2.0 * (products + (terms as f64 + 2.0) * p(-22) + p(-22) + (dim as f64 + 2.0) * p(-52))
}

/// The centre (the mean of up to [`SAMPLE`] evenly spaced reference points, for the Euclidean
/// metrics; zeros otherwise) and the power of two, as two factors, that brings the sample's
/// largest centred coordinate into `[0.5, 1)`.
fn center_and_scale<T: KnnFloat>(
    reference: &Points<'_, T>,
    metric: Metric,
) -> (Vec<f64>, (f64, f64)) {
    let (n, dim) = (reference.rows(), reference.dim());
    let step = n.div_ceil(SAMPLE).max(1);
    let sample: Vec<usize> = (0..n).step_by(step).collect();
    let mut center = vec![0.0; dim];
    if matches!(metric, Metric::SquaredEuclidean | Metric::Euclidean) {
        for &i in &sample {
            for (c, v) in center.iter_mut().zip(reference.row(i)) {
                *c += v.to_f64();
            }
        }
        center.iter_mut().for_each(|c| *c /= sample.len() as f64);
    }
    let largest = sample
        .iter()
        .flat_map(|&i| {
            reference
                .row(i)
                .iter()
                .zip(&center)
                .map(|(v, c)| (v.to_f64() - c).abs())
        })
        .fold(0.0f64, f64::max);
    if largest == 0.0 || !largest.is_finite() {
        return (center, (1.0, 1.0));
    }
    // largest = f 2^e, f in [0.5, 1): scale by 2^-e as two halves, each a normal double.
    let e = largest.log2().floor() as i32 + 1;
    let (a, b) = (-e / 2, -e - (-e / 2));
    (center, (2f64.powi(a), 2f64.powi(b)))
}

/// What a screened search leaves unsettled: the queries whose candidates failed the bound in
/// the single product (to try again split) and in the split one (to search directly).
#[derive(Debug, Default)]
pub(super) struct Unsettled {
    pub single: Vec<usize>,
    pub split: Vec<usize>,
}

/// The screened search of the queries against the resident reference set, starting in
/// `precision`: canonical values and indices of each query's `k` best in `place`, and the
/// queries whose candidates failed the bound (their lists are left unwritten in the output). A tile whose single
/// product leaves more than a quarter of its queries unsettled turns the later tiles to the
/// split product.
#[allow(clippy::too_many_arguments)]
pub(super) fn search<T: KnnFloat>(
    dev: &CudaDevice,
    selector: &Selector,
    screened: &ScreenedReference,
    resident: &DevicePoints<T>,
    queries: &Points<'_, T>,
    k: usize,
    candidates: usize,
    metric: Metric,
    plan: &Plan,
    precision: Precision,
    place: Place,
) -> Result<(Lists<T>, Unsettled)> {
    let (_, query_mode) = modes(metric).expect("a metric with a product form");
    let (n, dim, width) = (resident.rows, queries.dim(), screened.width);
    let mut out = Lists::new(dev, place, queries.rows(), k)?;
    let mut unsettled = Unsettled::default();
    let mut precision = precision;
    for q0 in (0..queries.rows()).step_by(plan.query_tile) {
        let q_rows = plan.query_tile.min(queries.rows() - q0);
        let q_points = DevicePoints::upload(dev, &queries.slice_rows(q0..q0 + q_rows), metric)?;
        let mut q_screen = dev.alloc::<f32>(q_rows * 3 * width, "the queries' screening rows")?;
        let mut q_norms = dev.alloc::<f32>(q_rows, "the queries' screening norms")?;
        let (_, overflow) = kernels::screen_rows(
            dev,
            (&q_points.data, q_rows, dim),
            width,
            query_mode,
            &screened.center,
            screened.scale,
            &mut q_screen,
            &mut q_norms,
        )?;
        if overflow {
            unsettled.split.extend(q0..q0 + q_rows);
            continue;
        }
        let inner = match precision {
            Precision::Single => width,
            Precision::Split => 3 * width,
        };
        let eps = eps(dim, width, precision);
        let mut approximate = dev.alloc::<f32>(q_rows * n, "a tile of approximate keys")?;
        kernels::screen_product(
            dev,
            &screened.rows,
            &q_screen,
            (n, q_rows),
            inner,
            3 * width,
            &mut approximate,
        )?;
        let approximate = DeviceBuffer::from_slice(dev, approximate);
        let best = selector.top_k_rows_device(
            Matrix::new(&approximate, q_rows, n),
            candidates,
            TopKOptions::smallest(),
        )?;
        let q_norms = DeviceBuffer::from_slice(dev, q_norms).to_host()?;
        let verified = if candidates == n {
            vec![true; q_rows]
        } else {
            // The k-th and the last candidate of every query, in one batched selection.
            let lists = Matrix::new(best.values(), q_rows, candidates);
            let ranks = [k - 1, candidates - 1];
            let picked = selector.multiselect_rows(lists, &ranks)?;
            (0..q_rows)
                .map(|i| {
                    let (kth, last) = (picked[2 * i], picked[2 * i + 1]);
                    let reach = q_norms[i] as f64 + screened.largest;
                    let bound =
                        eps * reach * reach + 4.0 * dim as f64 * 2f64.powi(-126) * (1.0 + reach);
                    last as f64 > kth as f64 + 2.0 * bound
                })
                .collect()
        };
        // The candidates of each query in ascending index order (top-k's unsorted order), as
        // the measure asks.
        let exact = kernels::measure(
            dev,
            metric,
            &q_points.tile(q_rows),
            &resident.tile(n),
            best.indices(),
            candidates,
            dim,
        )?;
        // Straight into the output: the rows of unsettled queries are written again later.
        sorted_lists(
            dev,
            selector,
            metric,
            n,
            (&exact, best.indices()),
            (q_rows, candidates, k),
            &mut out,
            q0 * k,
        )?;
        let failed = match precision {
            Precision::Single => &mut unsettled.single,
            Precision::Split => &mut unsettled.split,
        };
        let before = failed.len();
        failed.extend((0..q_rows).filter(|&i| !verified[i]).map(|i| q0 + i));
        if precision == Precision::Single && 4 * (failed.len() - before) > q_rows {
            precision = Precision::Split;
        }
    }
    Ok((out, unsettled))
}
