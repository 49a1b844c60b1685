//! Launchers of `kernels/knn.cu` (exact k-nearest neighbours): tiles of canonical distances,
//! the merge of running lists, the gather of chosen entries, the screening rows, the exact
//! keys of candidates, the final values.
//!
//! The distance and measure kernels exist once a metric (`knn_direct_{metric}_{dtype}`,
//! `knn_measure_{metric}_{dtype}`): one launcher each for all metrics, the metric given with
//! the points' cosine parts ([`MetricArgs`]). The cosine kernels read the points' scales and
//! norms, the others take them unread.

use cudarc::driver::{CudaSlice, CudaView, CudaViewMut, LaunchArgs, PushKernelArg};

use super::NullPtr;
use super::{kernel_name, KNN};
use crate::element::DType;
use crate::knn::{KnnFloat, Metric};

/// Queries a block of the measure kernels takes (`KNN_MEASURE_QUERIES`).
pub(crate) const MEASURE_QUERIES: usize = 16;
/// The last screening mode (`KNN_ROWS_NEG_UNIT`); modes up to `KNN_ROWS_QUERIES` (1) read the
/// center.
const LAST_SCREEN_MODE: u32 = 5;

/// A metric, which names the distance and measure kernels, and the cosine parts they take,
/// pushed as four parameters in this order: the queries' canonical scales and scaled squared
/// norms (one a query), then the points' (one a point). Only the cosine kernels read them.
pub(crate) struct MetricArgs<'a> {
    /// The metric whose kernel runs.
    pub metric: Metric,
    /// The queries' canonical scales.
    pub q_scale: &'a CudaSlice<f64>,
    /// The queries' scaled squared norms.
    pub q_norm: &'a CudaSlice<f64>,
    /// The points' canonical scales.
    pub x_scale: &'a CudaSlice<f64>,
    /// The points' scaled squared norms.
    pub x_norm: &'a CudaSlice<f64>,
}

impl MetricArgs<'_> {
    /// The kernel `{op}_{metric}_{dtype}`.
    fn kernel(&self, op: &str, dtype: DType) -> String {
        let metric = match self.metric {
            Metric::SquaredEuclidean => "sqeuclidean",
            Metric::Euclidean => "euclidean",
            Metric::Manhattan => "manhattan",
            Metric::Cosine => "cosine",
            Metric::InnerProduct => "inner_product",
        };
        kernel_name(&format!("{op}_{metric}"), dtype)
    }

    /// Whether the parts a cosine kernel reads cover `nq` queries and `nx` points (the other
    /// metrics' kernels read none).
    fn cover(&self, nq: u64, nx: u64) -> bool {
        self.metric != Metric::Cosine
            || (self.q_scale.len() as u64 >= nq
                && self.q_norm.len() as u64 >= nq
                && self.x_scale.len() as u64 >= nx
                && self.x_norm.len() as u64 >= nx)
    }
}

// SAFETY: pushes the four slices through their own implementation (device pointers, with the
// synchronisation of their reads), in the order of the kernels' four parameters of cosine
// parts; the metric is not a parameter (it names the kernel).
unsafe impl<'a, 'b: 'a, 'c: 'b> PushKernelArg<&'b MetricArgs<'c>> for LaunchArgs<'a> {
    fn arg(&mut self, parts: &'b MetricArgs<'c>) -> &mut Self {
        self.arg(parts.q_scale)
            .arg(parts.q_norm)
            .arg(parts.x_scale)
            .arg(parts.x_norm)
    }
}

launchers! {
    /// `out[i ld + j]` = the rank key of `parts.metric` of query `i` of `q` and point `j` of
    /// `x` (`d` coordinates each), a 64 x 64 tile a block (grid `ceil(nx / 64) x ceil(nq /
    /// 64)`).
    fn knn_direct[T: KnnFloat](q: dev &CudaSlice<T>, x: dev &CudaSlice<T>, nq: val u64, nx: val u64,
                               d: val u32, parts: dev &MetricArgs<'_>,
                               out: dev &mut CudaSlice<f64>, ld: val u64)
        from KNN as parts.kernel("knn_direct", T::DTYPE);
        requires q.len() as u64 >= nq * d as u64, x.len() as u64 >= nx * d as u64, ld >= nx,
            nq == 0 || out.len() as u64 >= (nq - 1) * ld + nx, parts.cover(nq, nx);

    /// Row `i` of `keys` and `index` (width `k + t`) = the `k` running entries of row `i`, then
    /// the tile's `t` with `first` added to their indices.
    fn knn_merge_rows(run_keys: dev &CudaSlice<f64>, run_index: dev &CudaSlice<u64>,
                      tile_keys: dev &CudaSlice<f64>, tile_index: dev &CudaSlice<u64>, rows: val u64,
                      k: val u32, t: val u32, first: val u64, keys: dev &mut CudaSlice<f64>,
                      index: dev &mut CudaSlice<u64>)
        from KNN as "knn_merge_rows";
        requires run_keys.len() as u64 >= rows * k as u64, run_index.len() as u64 >= rows * k as u64,
            tile_keys.len() as u64 >= rows * t as u64, tile_index.len() as u64 >= rows * t as u64,
            keys.len() as u64 >= rows * (k as u64 + t as u64),
            index.len() as u64 >= rows * (k as u64 + t as u64);

    /// `out_keys[i k + c]` and `out_index[i k + c]` = entry `pos[i k + c]` (below `width`) of
    /// row `i` (of `width` entries) of `keys` and of `index`, `offset` added to the index.
    fn knn_gather(pos: dev &CudaSlice<u64>, keys: dev &CudaSlice<f64>, index: dev &CudaSlice<u64>,
                  rows: val u64, k: val u32, width: val u64, offset: val u64,
                  out_keys: dev &mut CudaSlice<f64>, out_index: dev &mut CudaSlice<u64>)
        from KNN as "knn_gather";
        requires pos.len() as u64 >= rows * k as u64, out_keys.len() as u64 >= rows * k as u64,
            out_index.len() as u64 >= rows * k as u64,
            rows == 0 || k == 0 || keys.len() as u64 > (rows - 1) * width,
            rows == 0 || k == 0 || index.len() as u64 > (rows - 1) * width;

    /// [`knn_gather`] of the positions themselves as indices (no index rows: `index` null).
    fn knn_gather_positions(pos: dev &CudaSlice<u64>, keys: dev &CudaSlice<f64>,
                            index: val NullPtr, rows: val u64, k: val u32, width: val u64,
                            offset: val u64, out_keys: dev &mut CudaSlice<f64>,
                            out_index: dev &mut CudaSlice<u64>)
        from KNN as "knn_gather";
        requires pos.len() as u64 >= rows * k as u64, out_keys.len() as u64 >= rows * k as u64,
            out_index.len() as u64 >= rows * k as u64,
            rows == 0 || k == 0 || keys.len() as u64 > (rows - 1) * width;

    /// The split screening rows (`3 width` floats a point: TF32 parts and remainders) of the
    /// `n` points of `x` (`d` coordinates each) in `mode` (`center` read by modes 0 and 1),
    /// their norms, the largest norm (as bits) and whether a coordinate overflowed a float, a
    /// warp a point.
    fn knn_screen_rows[T: KnnFloat](x: dev &CudaSlice<T>, n: val u64, d: val u32, width: val u32,
                                    mode: val u32, center: dev &CudaSlice<f64>, scale_a: val f64,
                                    scale_b: val f64, out: dev &mut CudaSlice<f32>,
                                    norms: dev &mut CudaSlice<f32>,
                                    largest: dev &mut CudaSlice<u32>,
                                    overflow: dev &mut CudaSlice<u32>)
        from KNN as kernel_name("knn_screen_rows", T::DTYPE);
        requires x.len() as u64 >= n * d as u64, width > d, mode <= LAST_SCREEN_MODE,
            mode > 1 || center.len() >= d as usize, out.len() as u64 >= n * 3 * width as u64,
            norms.len() as u64 >= n, !largest.is_empty(), !overflow.is_empty();

    /// Cosine's canonical scale and scaled squared norm of each of the `n` points of `x` (`d`
    /// coordinates each).
    fn knn_cosine_parts[T: KnnFloat](x: dev &CudaSlice<T>, n: val u64, d: val u32,
                                     scale: dev &mut CudaSlice<f64>, norm: dev &mut CudaSlice<f64>)
        from KNN as kernel_name("knn_cosine_parts", T::DTYPE);
        requires x.len() as u64 >= n * d as u64, scale.len() as u64 >= n, norm.len() as u64 >= n;

    /// The exact rank keys of `parts.metric` of each of the `rows` queries of `q` with its
    /// `kc` candidates (`cand`: reference indices, each row ascending), into `out`
    /// (`rows x kc`); blocks of `MEASURE_QUERIES` queries (`groups` of them) and one `chunk` of
    /// the reference points each.
    fn knn_measure[T: KnnFloat](q: dev &CudaSlice<T>, x: dev &CudaSlice<T>,
                                cand: dev &CudaSlice<u64>, rows: val u64, kc: val u32, d: val u32,
                                chunk: val u64, groups: val u64, parts: dev &MetricArgs<'_>,
                                out: dev &mut CudaSlice<f64>)
        from KNN as parts.kernel("knn_measure", T::DTYPE);
        requires q.len() as u64 >= rows * d as u64, cand.len() as u64 >= rows * kc as u64,
            out.len() as u64 >= rows * kc as u64, chunk > 0,
            groups == rows.div_ceil(MEASURE_QUERIES as u64), parts.cover(rows, 0);

    /// The first `count` rank keys as canonical values of the metric (`similarity`: a
    /// similarity's) in `T`, and their indices as `u32` into `index32`.
    fn knn_finish[T: KnnFloat](keys: dev &CudaSlice<f64>, index: dev &CudaSlice<u64>, count: val u64,
                               similarity: val u32, values: dev &mut CudaSlice<T>,
                               index32: dev &mut CudaSlice<u32>)
        from KNN as kernel_name("knn_finish", T::DTYPE);
        requires keys.len() as u64 >= count, index.len() as u64 >= count,
            values.len() as u64 >= count, index32.len() as u64 >= count;

    /// [`knn_finish`] of the values alone (`index32` null).
    fn knn_finish_values[T: KnnFloat](keys: dev &CudaSlice<f64>, index: dev &CudaSlice<u64>,
                                      count: val u64, similarity: val u32,
                                      values: dev &mut CudaSlice<T>, index32: val NullPtr)
        from KNN as kernel_name("knn_finish", T::DTYPE);
        requires keys.len() as u64 >= count, index.len() as u64 >= count,
            values.len() as u64 >= count;

    /// Row `r` of `src` (`width` words) into row `rows[r]` of `dst`, for `count` rows.
    fn knn_scatter_rows(src: dev &CudaView<'_, u32>, dst: dev &mut CudaViewMut<'_, u32>,
                        rows: dev &CudaSlice<u64>, count: val u64, width: val u64)
        from KNN as "knn_scatter_rows";
        requires src.len() as u64 >= count * width, rows.len() as u64 >= count,
            count == 0 || dst.len() as u64 >= width;
}
