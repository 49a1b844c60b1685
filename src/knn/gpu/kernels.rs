//! Launches of `kernels/knn.cu`: tiles of canonical distances, the merge rows of running
//! lists, the gather of chosen entries.

use cudarc::driver::{CudaSlice, DeviceRepr, LaunchConfig};

use crate::device::cuda::blas::blas_handle;
use crate::device::cuda::kernels::knn::{
    knn_cosine_parts, knn_direct, knn_finish, knn_finish_values, knn_gather, knn_gather_positions,
    knn_measure, knn_merge_rows, knn_scatter_rows, knn_screen_rows, MetricArgs, MEASURE_QUERIES,
};
use crate::device::cuda::kernels::NULL;
use crate::device::cuda::launch::{config, stride_blocks};
use crate::device::cuda::CudaDevice;
use crate::device::DeviceBuffer;
use crate::error::{Error, Result};
use crate::knn::{KnnFloat, Metric};

/// Queries and reference points a block measures (`KNN_TILE`).
const TILE: usize = 64;
/// Threads of a distance block (`KNN_THREADS`).
const DIRECT_THREADS: u32 = 256;
/// Threads of the element-wise kernels.
const THREADS: u32 = 256;
/// Threads of a measure block (`KNN_MEASURE_WARPS` warps).
const MEASURE_THREADS: u32 = 128;
/// Bytes of the reference points of a measure block's chunk: small enough that the chunks of
/// the blocks running together stay in L2.
const MEASURE_CHUNK_BYTES: usize = 2 << 20;
/// The fewest pairs a measure block is given, on average.
const MEASURE_PAIRS: usize = 256;
/// The most blocks of a grid.
const MOST_BLOCKS: usize = i32::MAX as usize;

/// Cosine's per-point scales and scaled squared norms on the device (empty for the other
/// metrics, whose kernels do not read them).
pub(super) struct CosineParts {
    pub scale: CudaSlice<f64>,
    pub norm: CudaSlice<f64>,
}

/// A tile of points on the device: `rows` points of `dim` coordinates, row-major.
pub(super) struct PointTile<'a, T> {
    pub data: &'a CudaSlice<T>,
    pub rows: usize,
    pub cosine: &'a CosineParts,
}

/// `metric` with the cosine parts of `queries` and `reference`, as the distance and measure
/// kernels take them.
fn metric_args<'a, T>(
    metric: Metric,
    queries: &PointTile<'a, T>,
    reference: &PointTile<'a, T>,
) -> MetricArgs<'a> {
    MetricArgs {
        metric,
        q_scale: &queries.cosine.scale,
        q_norm: &queries.cosine.norm,
        x_scale: &reference.cosine.scale,
        x_norm: &reference.cosine.norm,
    }
}

/// `out[i * ld + j]` = the rank key of query `i` and reference point `j` under `metric`.
pub(super) fn distances<T: KnnFloat>(
    dev: &CudaDevice,
    metric: Metric,
    queries: &PointTile<'_, T>,
    reference: &PointTile<'_, T>,
    dim: usize,
    out: &mut CudaSlice<f64>,
    ld: usize,
) -> Result<()> {
    let (nq, nx, d, ld) = (
        queries.rows as u64,
        reference.rows as u64,
        dim as u32,
        ld as u64,
    );
    let cfg = LaunchConfig {
        grid_dim: (
            reference.rows.div_ceil(TILE) as u32,
            queries.rows.div_ceil(TILE) as u32,
            1,
        ),
        block_dim: (DIRECT_THREADS, 1, 1),
        shared_mem_bytes: 0,
    };
    // The grid covers ceil(nx / 64) x ceil(nq / 64) tiles, under the 2^16 limit of grid.y for
    // the tiles chosen.
    knn_direct(
        dev,
        cfg,
        queries.data,
        reference.data,
        nq,
        nx,
        d,
        &metric_args(metric, queries, reference),
        out,
        ld,
    )
}

/// The running lists and a tile's best of `rows` queries, side by side: row `i` of `keys` and
/// `index` (width `k + t`) holds the `k` running entries, then the tile's `t` with `first`
/// added to their indices.
#[allow(clippy::too_many_arguments)]
pub(super) fn merge_rows(
    dev: &CudaDevice,
    running: (&CudaSlice<f64>, &CudaSlice<u64>),
    tile: (&CudaSlice<f64>, &CudaSlice<u64>),
    rows: usize,
    k: usize,
    t: usize,
    first: usize,
    keys: &mut CudaSlice<f64>,
    index: &mut CudaSlice<u64>,
) -> Result<()> {
    let blocks = stride_blocks(rows * (k + t), THREADS, dev.multiprocessors(), 8);
    knn_merge_rows(
        dev,
        config(blocks, THREADS),
        running.0,
        running.1,
        tile.0,
        tile.1,
        rows as u64,
        k as u32,
        t as u32,
        first as u64,
        keys,
        index,
    )
}

/// `out[i k + c]` = entry `pos[i k + c]` of row `i` (of `width` entries) of `keys` and of
/// `index` (or the position itself where `index` is `None`), `offset` added to the indices.
#[allow(clippy::too_many_arguments)]
fn gather(
    dev: &CudaDevice,
    pos: &CudaSlice<u64>,
    keys: &CudaSlice<f64>,
    index: Option<&CudaSlice<u64>>,
    rows: usize,
    k: usize,
    width: usize,
    offset: usize,
    out_keys: &mut CudaSlice<f64>,
    out_index: &mut CudaSlice<u64>,
) -> Result<()> {
    let (rows64, k32, width64, offset64) = (rows as u64, k as u32, width as u64, offset as u64);
    let blocks = stride_blocks(rows * k, THREADS, dev.multiprocessors(), 8);
    let cfg = config(blocks, THREADS);
    match index {
        Some(index) => knn_gather(
            dev, cfg, pos, keys, index, rows64, k32, width64, offset64, out_keys, out_index,
        ),
        None => knn_gather_positions(
            dev, cfg, pos, keys, NULL, rows64, k32, width64, offset64, out_keys, out_index,
        ),
    }
}

/// The screening rows `knn_screen_rows_*` builds (`KNN_ROWS_*`).
#[derive(Clone, Copy, Debug)]
pub(super) enum ScreenRows {
    /// `[x', |x'|^2, 0...]`, `x' = (x - c) s`.
    Points = 0,
    /// `[-2 q', 1, 0...]`.
    Queries = 1,
    /// `[x s, 0...]`.
    Plain = 2,
    /// `[-q s, 0...]`.
    Negated = 3,
    /// `[x / |x|, 0...]`.
    Unit = 4,
    /// `[-q / |q|, 0...]`.
    NegatedUnit = 5,
}

/// Writes the split screening rows (`3 width` floats a point: `width` values split in TF32
/// parts and remainders) of `points` (`data`, `rows`, `dim`) in `mode` and their norms; the
/// largest norm and whether a coordinate overflowed a float.
#[allow(clippy::too_many_arguments)]
pub(super) fn screen_rows<T: KnnFloat>(
    dev: &CudaDevice,
    points: (&CudaSlice<T>, usize, usize),
    width: usize,
    mode: ScreenRows,
    center: &CudaSlice<f64>,
    scale: (f64, f64),
    out: &mut CudaSlice<f32>,
    norms: &mut CudaSlice<f32>,
) -> Result<(f32, bool)> {
    let (data, rows, dim) = points;
    let mut largest = dev.alloc_zeros::<u32>(1, "the largest screening norm")?;
    let mut overflow = dev.alloc_zeros::<u32>(1, "the screening overflow flag")?;
    let (n, d, w, m) = (rows as u64, dim as u32, width as u32, mode as u32);
    // A warp a point.
    let blocks = stride_blocks(rows * 32, THREADS, dev.multiprocessors(), 8);
    knn_screen_rows(
        dev,
        config(blocks, THREADS),
        data,
        n,
        d,
        w,
        m,
        center,
        scale.0,
        scale.1,
        out,
        norms,
        &mut largest,
        &mut overflow,
    )?;
    let read = |flag: &CudaSlice<u32>| dev.read(flag, "the screening flags");
    Ok((f32::from_bits(read(&largest)?[0]), read(&overflow)?[0] != 0))
}

/// Cosine's canonical scale and scaled squared norm of each of `rows` points of `dim`
/// coordinates.
pub(super) fn cosine_parts<T: KnnFloat>(
    dev: &CudaDevice,
    data: &CudaSlice<T>,
    rows: usize,
    dim: usize,
    parts: &mut CosineParts,
) -> Result<()> {
    let blocks = stride_blocks(rows, THREADS, dev.multiprocessors(), 8);
    knn_cosine_parts(
        dev,
        config(blocks, THREADS),
        data,
        rows as u64,
        dim as u32,
        &mut parts.scale,
        &mut parts.norm,
    )
}

/// The exact rank keys of each query of `queries` with its `candidates` candidates (reference
/// indices, row after row, each row ascending), as `queries.rows x candidates` keys.
pub(super) fn measure<T: KnnFloat>(
    dev: &CudaDevice,
    metric: Metric,
    queries: &PointTile<'_, T>,
    reference: &PointTile<'_, T>,
    cand: &DeviceBuffer<u64>,
    candidates: usize,
    dim: usize,
) -> Result<DeviceBuffer<f64>> {
    let rows = queries.rows;
    let mut out = dev.alloc::<f64>(rows * candidates, "the candidates' exact keys")?;
    let (rows64, kc, d) = (rows as u64, candidates as u32, dim as u32);
    // Blocks of MEASURE_QUERIES queries and one chunk of the reference set each, chunk-major.
    let groups = rows.div_ceil(MEASURE_QUERIES);
    let n = reference.rows.max(1);
    // Chunks of MEASURE_CHUNK_BYTES, or larger where a block would have fewer than
    // MEASURE_PAIRS pairs to measure (few candidates a query: little to share in L2).
    let chunk = (MEASURE_CHUNK_BYTES / (dim * size_of::<T>()).max(1))
        .max((MEASURE_PAIRS * n).div_ceil(MEASURE_QUERIES * candidates.max(1)))
        .max(n.div_ceil((MOST_BLOCKS / groups).max(1)))
        .clamp(1, n);
    let blocks = n.div_ceil(chunk) * groups;
    let (chunk64, groups64) = (chunk as u64, groups as u64);
    // Every candidate row ascending (top-k's unsorted results are in index order), so that
    // the blocks of the chunks cover every pair.
    knn_measure(
        dev,
        config(blocks, MEASURE_THREADS),
        queries.data,
        reference.data,
        cand.as_slice(),
        rows64,
        kc,
        d,
        chunk64,
        groups64,
        &metric_args(metric, queries, reference),
        &mut out,
    )?;
    Ok(DeviceBuffer::from_slice(dev, out))
}

/// `out[i n + j]` = the first `inner` values of query row `i` of `queries` dotted with those
/// of point row `j` of `points` (rows of `ld` floats), for `n` points and `rows` queries
/// (`shape`): one single-precision cuBLAS product on TF32 tensor cores.
pub(super) fn screen_product(
    dev: &CudaDevice,
    points: &CudaSlice<f32>,
    queries: &CudaSlice<f32>,
    shape: (usize, usize),
    inner: usize,
    ld: usize,
    out: &mut CudaSlice<f32>,
) -> Result<()> {
    use cudarc::cublas::sys::{cublasMath_t, cublasOperation_t, cublasSetMathMode};
    use cudarc::cublas::{Gemm, GemmConfig};
    let (n, rows) = shape;
    let handle = blas_handle(dev, "GPU neighbour search")?;
    let cfg = GemmConfig {
        transa: cublasOperation_t::CUBLAS_OP_T,
        transb: cublasOperation_t::CUBLAS_OP_N,
        m: n as i32,
        n: rows as i32,
        k: inner as i32,
        alpha: 1.0f32,
        lda: ld as i32,
        ldb: ld as i32,
        beta: 0.0f32,
        ldc: n as i32,
    };
    let blas = handle.lock().unwrap_or_else(|e| e.into_inner());
    let mode = |m| {
        // SAFETY: the handle is live; the math mode is a plain setting of it.
        let status = unsafe { cublasSetMathMode(*blas.handle(), m) };
        if status == cudarc::cublas::sys::cublasStatus_t::CUBLAS_STATUS_SUCCESS {
            Ok(())
        } else {
            Err(Error::Cuda {
                context: "setting cuBLAS's math mode".into(),
                message: format!("{status:?}"),
            })
        }
    };
    mode(cublasMath_t::CUBLAS_TF32_TENSOR_OP_MATH)?;
    // SAFETY: column-major op(A) = A' is n x inner with A the first `inner` rows of the
    // ld x n matrix of `points` (lda = ld >= inner, n * ld floats), B the first `inner` rows of
    // the ld x rows matrix of `queries` (ldb = ld), C is n x rows (ldc = n, n * rows floats in
    // `out`), which aliases neither input. The handle runs on the device's stream.
    let result = unsafe { blas.gemm(cfg, points, queries, out) };
    mode(cublasMath_t::CUBLAS_DEFAULT_MATH)?;
    result.map_err(|e| Error::Cuda {
        context: "the screening product (cuBLAS sgemm)".into(),
        message: format!("{e:?}"),
    })
}

/// The entries `pos` picks (`k` positions a row, each below `width`) of the rows of `keys`
/// and of `index` (or the positions themselves), `offset` added to the indices; `shape` is
/// `(rows, k, width)`.
pub(super) fn gather_rows(
    dev: &CudaDevice,
    pos: &DeviceBuffer<u64>,
    keys: &DeviceBuffer<f64>,
    index: Option<&DeviceBuffer<u64>>,
    shape: (usize, usize, usize),
    offset: usize,
) -> Result<(DeviceBuffer<f64>, DeviceBuffer<u64>)> {
    let (rows, k, width) = shape;
    let mut out_keys = dev.alloc::<f64>(rows * k, "the chosen keys")?;
    let mut out_index = dev.alloc::<u64>(rows * k, "the chosen indices")?;
    gather(
        dev,
        pos.as_slice(),
        keys.as_slice(),
        index.map(|i| i.as_slice()),
        rows,
        k,
        width,
        offset,
        &mut out_keys,
        &mut out_index,
    )?;
    Ok((
        DeviceBuffer::from_slice(dev, out_keys),
        DeviceBuffer::from_slice(dev, out_index),
    ))
}

/// The first `count` rank keys as canonical values of `metric` in `T` (`values`), and their
/// indices as `u32` when `index32` is given.
pub(super) fn finish<T: KnnFloat>(
    dev: &CudaDevice,
    metric: Metric,
    keys: &DeviceBuffer<f64>,
    index: &DeviceBuffer<u64>,
    count: usize,
    values: &mut CudaSlice<T>,
    index32: Option<&mut CudaSlice<u32>>,
) -> Result<()> {
    let (count64, similarity) = (count as u64, metric.is_similarity() as u32);
    let blocks = stride_blocks(count, THREADS, dev.multiprocessors(), 8);
    let cfg = config(blocks, THREADS);
    let (keys, index) = (keys.as_slice(), index.as_slice());
    match index32 {
        Some(index32) => knn_finish(dev, cfg, keys, index, count64, similarity, values, index32),
        None => knn_finish_values(dev, cfg, keys, index, count64, similarity, values, NULL),
    }
}

/// Row `r` of `src` (`width` values) into row `rows[r]` of `dst`, for every row of `src`.
pub(super) fn scatter_rows<E: DeviceRepr>(
    dev: &CudaDevice,
    src: &CudaSlice<E>,
    dst: &mut CudaSlice<E>,
    rows: &[usize],
    width: usize,
) -> Result<()> {
    if rows.is_empty() || width == 0 {
        return Ok(());
    }
    assert_eq!(
        src.len(),
        rows.len() * width,
        "a row of the source for each row named"
    );
    assert_eq!(size_of::<E>() % 4, 0, "values of whole 32-bit words");
    let words = size_of::<E>() / 4;
    let rows64: Vec<u64> = rows.iter().map(|&r| r as u64).collect();
    let rows_dev = DeviceBuffer::from_host_on(dev, &rows64)?;
    // SAFETY: E is plain data of whole words (asserted); the views cover the same bytes.
    let src_words = unsafe { src.transmute::<u32>(src.len() * words) }.expect("the same bytes");
    let dst_len = dst.len() * words;
    // SAFETY: as above.
    let mut dst_words = unsafe { dst.transmute_mut::<u32>(dst_len) }.expect("the same bytes");
    let (count, width_words) = (rows.len() as u64, (width * words) as u64);
    let blocks = stride_blocks(src.len() * words, THREADS, dev.multiprocessors(), 8);
    // Every rows[r] * width + width words fit dst: the callers' rows are rows of dst.
    knn_scatter_rows(
        dev,
        config(blocks, THREADS),
        &src_words,
        &mut dst_words,
        rows_dev.as_slice(),
        count,
        width_words,
    )
}
