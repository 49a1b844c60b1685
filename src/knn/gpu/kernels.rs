//! Launches of `kernels/knn.cu`: tiles of canonical distances, the merge rows of running
//! lists, the gather of chosen entries.

use cudarc::driver::{CudaSlice, DeviceRepr, LaunchConfig, PushKernelArg};

use crate::device::cuda::blas::blas_handle;
use crate::device::cuda::kernels::{kernel_name, KNN};
use crate::device::cuda::launch::{config, stride_blocks};
use crate::device::cuda::{driver_error, CudaDevice};
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
/// Queries of a measure block (`KNN_MEASURE_QUERIES`).
const MEASURE_QUERIES: usize = 16;
/// Bytes of the reference points of a measure block's chunk: small enough that the chunks of
/// the blocks running together stay in L2.
const MEASURE_CHUNK_BYTES: usize = 2 << 20;
/// The fewest pairs a measure block is given, on average.
const MEASURE_PAIRS: usize = 256;
/// The most blocks of a grid.
const MOST_BLOCKS: usize = i32::MAX as usize;

/// The kernel name stem of a metric (`knn_direct_{stem}_{dtype}`).
fn stem(metric: Metric) -> &'static str {
    match metric {
        Metric::SquaredEuclidean => "sqeuclidean",
        Metric::Euclidean => "euclidean",
        Metric::Manhattan => "manhattan",
        Metric::Cosine => "cosine",
        Metric::InnerProduct => "inner_product",
    }
}

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
    let name = kernel_name(&format!("knn_direct_{}", stem(metric)), T::DTYPE);
    let f = dev.function(&KNN, &name)?;
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
    let mut launch = dev.stream().launch_builder(&f);
    launch
        .arg(queries.data)
        .arg(reference.data)
        .arg(&nq)
        .arg(&nx)
        .arg(&d)
        .arg(&queries.cosine.scale)
        .arg(&queries.cosine.norm)
        .arg(&reference.cosine.scale)
        .arg(&reference.cosine.norm)
        .arg(out)
        .arg(&ld);
    // SAFETY: knn_direct_*(const T* q, const T* x, u64 nq, u64 nx, u32 d, const double*
    // q_scale, q_norm, x_scale, x_norm, double* out, u64 ld): q holds nq * d values, x nx * d,
    // the cosine parts one value a point (read by the cosine kernel only), out at least
    // (nq - 1) * ld + nx values with ld >= nx; out aliases no input. The grid covers
    // ceil(nx / 64) x ceil(nq / 64) tiles, under the 2^16 limit of grid.y for the tiles chosen.
    unsafe { launch.launch(cfg) }.map_err(|e| driver_error(&format!("launching {name}"), e))?;
    Ok(())
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
    let f = dev.function(&KNN, "knn_merge_rows")?;
    let (rows64, k32, t32, first64) = (rows as u64, k as u32, t as u32, first as u64);
    let blocks = stride_blocks(rows * (k + t), THREADS, dev.multiprocessors(), 8);
    let mut launch = dev.stream().launch_builder(&f);
    launch
        .arg(running.0)
        .arg(running.1)
        .arg(tile.0)
        .arg(tile.1)
        .arg(&rows64)
        .arg(&k32)
        .arg(&t32)
        .arg(&first64)
        .arg(keys)
        .arg(index);
    // SAFETY: knn_merge_rows(const double* run_keys, const u64* run_index, const double*
    // tile_keys, const u64* tile_index, u64 rows, u32 k, u32 t, u64 first, double* keys, u64*
    // index): the running buffers hold rows * k entries, the tile's rows * t, the outputs rows
    // * (k + t); outputs alias no input.
    unsafe { launch.launch(config(blocks, THREADS)) }
        .map_err(|e| driver_error("launching knn_merge_rows", e))?;
    Ok(())
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
    let f = dev.function(&KNN, "knn_gather")?;
    let (rows64, k32, width64, offset64) = (rows as u64, k as u32, width as u64, offset as u64);
    let blocks = stride_blocks(rows * k, THREADS, dev.multiprocessors(), 8);
    let null = 0u64;
    let mut launch = dev.stream().launch_builder(&f);
    launch.arg(pos).arg(keys);
    match index {
        Some(index) => launch.arg(index),
        None => launch.arg(&null),
    };
    launch
        .arg(&rows64)
        .arg(&k32)
        .arg(&width64)
        .arg(&offset64)
        .arg(out_keys)
        .arg(out_index);
    // SAFETY: knn_gather(const u64* pos, const double* keys, const u64* index (or null), u64
    // rows, u32 k, u64 width, u64 offset, double* out_keys, u64* out_index): pos and the
    // outputs hold rows * k entries, keys and index (when given) rows rows of `width` (the
    // last row at least as long as its largest position + 1), every position below width;
    // outputs alias no input.
    unsafe { launch.launch(config(blocks, THREADS)) }
        .map_err(|e| driver_error("launching knn_gather", e))?;
    Ok(())
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
    let name = kernel_name("knn_screen_rows", T::DTYPE);
    let f = dev.function(&KNN, &name)?;
    let mut largest = dev.alloc_zeros::<u32>(1, "the largest screening norm")?;
    let mut overflow = dev.alloc_zeros::<u32>(1, "the screening overflow flag")?;
    let (n, d, w, m) = (rows as u64, dim as u32, width as u32, mode as u32);
    // A warp a point.
    let blocks = stride_blocks(rows * 32, THREADS, dev.multiprocessors(), 8);
    let mut launch = dev.stream().launch_builder(&f);
    launch
        .arg(data)
        .arg(&n)
        .arg(&d)
        .arg(&w)
        .arg(&m)
        .arg(center)
        .arg(&scale.0)
        .arg(&scale.1)
        .arg(out)
        .arg(norms)
        .arg(&mut largest)
        .arg(&mut overflow);
    // SAFETY: knn_screen_rows_*(const T* x, u64 n, u32 d, u32 width, u32 mode, const double*
    // center, double scale_a, double scale_b, float* out, float* norms, u32* largest, u32*
    // overflow): x holds n * d values, center d (read by the Euclidean modes only), out n * 3 *
    // width with width >= d + 1, norms n, largest and overflow one word each (zeroed); the
    // outputs alias no input nor each other.
    unsafe { launch.launch(config(blocks, THREADS)) }
        .map_err(|e| driver_error(&format!("launching {name}"), e))?;
    let read = |flag: &CudaSlice<u32>| {
        dev.stream()
            .clone_dtoh(flag)
            .map_err(|e| driver_error("reading the screening flags", e))
    };
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
    let name = kernel_name("knn_cosine_parts", T::DTYPE);
    let f = dev.function(&KNN, &name)?;
    let (n, d) = (rows as u64, dim as u32);
    let blocks = stride_blocks(rows, THREADS, dev.multiprocessors(), 8);
    let mut launch = dev.stream().launch_builder(&f);
    launch
        .arg(data)
        .arg(&n)
        .arg(&d)
        .arg(&mut parts.scale)
        .arg(&mut parts.norm);
    // SAFETY: knn_cosine_parts_*(const T* x, u64 n, u32 d, double* scale, double* norm): x
    // holds n * d values, scale and norm n each, distinct from x and each other.
    unsafe { launch.launch(config(blocks, THREADS)) }
        .map_err(|e| driver_error(&format!("launching {name}"), e))?;
    Ok(())
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
    let name = kernel_name(&format!("knn_measure_{}", stem(metric)), T::DTYPE);
    let f = dev.function(&KNN, &name)?;
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
    let mut launch = dev.stream().launch_builder(&f);
    launch
        .arg(queries.data)
        .arg(reference.data)
        .arg(cand.as_slice())
        .arg(&rows64)
        .arg(&kc)
        .arg(&d)
        .arg(&chunk64)
        .arg(&groups64)
        .arg(&queries.cosine.scale)
        .arg(&queries.cosine.norm)
        .arg(&reference.cosine.scale)
        .arg(&reference.cosine.norm)
        .arg(&mut out);
    // SAFETY: knn_measure_*(const T* q, const T* x, const u64* cand, u64 rows, u32 kc, u32 d,
    // u64 chunk, u64 groups, cosine parts, double* out): q holds rows * d values, cand rows *
    // kc indices each below the reference rows x holds (d values each), every row ascending
    // (top-k's unsorted results are in index order), so that the blocks of the chunks cover
    // every pair; groups = ceil(rows / 16), the grid chunks * groups blocks of 128 threads;
    // the cosine parts one value a point (read by the cosine kernel only), out rows * kc,
    // aliasing no input.
    unsafe { launch.launch(config(blocks, MEASURE_THREADS)) }
        .map_err(|e| driver_error(&format!("launching {name}"), e))?;
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
    let name = kernel_name("knn_finish", T::DTYPE);
    let f = dev.function(&KNN, &name)?;
    let (count64, similarity) = (count as u64, metric.is_similarity() as u32);
    let blocks = stride_blocks(count, THREADS, dev.multiprocessors(), 8);
    let null = 0u64;
    let mut launch = dev.stream().launch_builder(&f);
    launch
        .arg(keys.as_slice())
        .arg(index.as_slice())
        .arg(&count64)
        .arg(&similarity)
        .arg(values);
    match index32 {
        Some(index32) => launch.arg(index32),
        None => launch.arg(&null),
    };
    // SAFETY: knn_finish_*(const double* keys, const u64* index, u64 count, u32 similarity, T*
    // values, u32* index32 (or null)): keys, index, values and index32 (when given) hold at
    // least count entries; the outputs alias no input.
    unsafe { launch.launch(config(blocks, THREADS)) }
        .map_err(|e| driver_error(&format!("launching {name}"), e))?;
    Ok(())
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
    let f = dev.function(&KNN, "knn_scatter_rows")?;
    let (count, width_words) = (rows.len() as u64, (width * words) as u64);
    let blocks = stride_blocks(src.len() * words, THREADS, dev.multiprocessors(), 8);
    let mut launch = dev.stream().launch_builder(&f);
    launch
        .arg(&src_words)
        .arg(&mut dst_words)
        .arg(rows_dev.as_slice())
        .arg(&count)
        .arg(&width_words);
    // SAFETY: knn_scatter_rows(const u32* src, u32* dst, const u64* rows, u64 count, u64
    // width): src holds count * width words, every rows[r] * width + width words fit dst (the
    // callers' rows are rows of dst), dst aliases neither input.
    unsafe { launch.launch(config(blocks, THREADS)) }
        .map_err(|e| driver_error("launching knn_scatter_rows", e))?;
    Ok(())
}
