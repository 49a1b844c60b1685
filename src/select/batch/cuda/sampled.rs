//! Long spans by sampling: one pass over the data instead of a pass a digit.
//!
//! A sample of each span's order keys (evenly spaced chunks of 8 consecutive values) brackets
//! the wanted rank between two of the sample's order statistics, far enough apart that the
//! rank falls between them but for a vanishing chance (five standard deviations of the
//! sample's rank, plus a chunk's worth of keys, which covers sorted spans too); the regions
//! also leave room for the values between two chunks on either side. One pass over the data then counts each span's keys below
//! the bracket and copies those inside it to the span's region of the workspace; the selection
//! finishes on those few:
//! - the element of a rank: selected among the copied keys;
//! - top-k of at most [`WINDOW_TOP_K`] with 32-bit keys: the bracket is open below, the copied
//!   (key, index) pairs are distinct words, and one block a span selects and sorts its k first
//!   in shared memory;
//! - larger top-k: the k-th key is selected as above, then the index-ordered compaction of
//!   the digit-pass path writes the results.
//!
//! Nothing is guessed: when a rank fell outside its bracket or a region overflowed (heavy
//! repeats, or a sample that misrepresents its span), the caller runs the exact digit passes.

use cudarc::driver::{CudaSlice, LaunchConfig, PushKernelArg};

use super::{
    compact_long, config, download, driver_error, finish_top_k, grid_blocks, kernel_name,
    select_spans_on, tile_starts, upload, DeviceSpans, DeviceTopK, LongPasses, BATCH_SELECT,
    THREADS,
};
use crate::device::cuda::launch::try_allow_shared;
use crate::device::cuda::CudaDevice;
use crate::element::{Element, RadixKey};
use crate::error::Result;
use crate::select::batch::spans::{SpanRanks, SpanSelection, Spans};

/// Sample keys a span for 32-bit keys (64 KB of shared memory for their selection).
const SAMPLE_32: usize = 16384;
/// Sample keys a span for 64-bit keys.
const SAMPLE_64: usize = 8192;
/// The fewest sample keys worth a pass: shorter spans take the digit passes.
const SAMPLE_MIN: usize = 1024;
/// Consecutive values a sample chunk takes (`BT_CHUNK`).
const CHUNK: usize = 8;
/// The bracket's half-width in standard deviations of the sample rank.
const SIGMAS: f64 = 5.0;
/// Sample keys added to each side of the bracket and to the regions: a chunk and one more.
const SLACK: f64 = CHUNK as f64 + 1.0;
/// An open side of a bracket (`BT_NO_BOUND`).
const NO_BOUND: u32 = u32::MAX;
/// The largest k the one-block top-k of the copied pairs takes.
pub(super) const WINDOW_TOP_K: usize = 2048;
/// The largest region (copied pairs of a span) the one-block top-k holds in shared memory.
const WINDOW_TOP_K_REGION: usize = 8192;

/// Where each span's bracket lies in its sample, and its region in the workspace.
struct Plan {
    /// Sample keys a span.
    m: usize,
    /// Per span, the sample ranks of the bracket's bounds (`NO_BOUND`: open).
    brackets: Vec<u32>,
    /// Span s's region is `region[s]..region[s + 1]`.
    region: Vec<u64>,
    /// The wanted rank of each span.
    ranks: Vec<u64>,
}

impl Plan {
    /// The plan for rank `ranks[s]` of span s (the bracket open below when `open_below`), or
    /// `None` when sampling would not pay: short spans, or regions above a quarter of a span.
    fn new(spans: Spans<'_>, ranks: &[u64], open_below: bool, key_bytes: usize) -> Option<Plan> {
        let most = if key_bytes == 4 { SAMPLE_32 } else { SAMPLE_64 };
        let m = most.min(spans.min_len() / 8 / CHUNK * CHUNK);
        if m < SAMPLE_MIN {
            return None;
        }
        let mut brackets = Vec::with_capacity(2 * ranks.len());
        let mut region = Vec::with_capacity(ranks.len() + 1);
        region.push(0u64);
        for (s, &r) in ranks.iter().enumerate() {
            if r as usize >= spans.len_of(s) {
                return None;
            }
            let len = spans.len_of(s) as f64;
            let rho = m as f64 / len;
            let centre = r as f64 * rho;
            let p = (r as f64 + 0.5) / len;
            let margin = SIGMAS * (m as f64 * p * (1.0 - p)).sqrt() + SLACK;
            let low = (centre - margin).floor();
            let high = (centre + margin).ceil();
            let j_lo = (!open_below && low >= 0.0).then_some(low as u32);
            let j_hi = (high < m as f64).then_some(high as u32);
            let width = (j_hi.unwrap_or(m as u32) - j_lo.unwrap_or(0)) as f64 + 1.0;
            // The values between two chunks, unsampled, may lie on either side.
            let gap = len / (m / CHUNK) as f64;
            let cap = ((width + SIGMAS * width.sqrt() + 2.0 * SLACK) / rho + 2.0 * gap).ceil();
            if cap * 4.0 > len {
                return None;
            }
            brackets.push(j_lo.unwrap_or(NO_BOUND));
            brackets.push(j_hi.unwrap_or(NO_BOUND));
            region.push(region[s] + cap as u64);
        }
        Some(Plan {
            m,
            brackets,
            region,
            ranks: ranks.to_vec(),
        })
    }

    fn largest_region(&self) -> usize {
        self.region
            .windows(2)
            .map(|w| (w[1] - w[0]) as usize)
            .max()
            .unwrap_or(0)
    }
}

/// The pass's outcome: each span's copied keys (and indices) in its region, with the counts.
struct Window<K: cudarc::driver::DeviceRepr> {
    keys: CudaSlice<K>,
    indices: Option<CudaSlice<u32>>,
    region: CudaSlice<u64>,
    /// Per span: the keys below the bracket, the keys inside it (all of them, also past the
    /// region's end).
    counts: CudaSlice<u64>,
    counts_host: Vec<u64>,
    nans: CudaSlice<u64>,
}

/// Threads a block of the sample selection (each block selects in shared memory alone).
const BOUNDS_THREADS: u32 = 1024;
/// The dynamic shared memory of the sample selection: the largest sample, 64 KB.
const BOUNDS_SHARED: usize = SAMPLE_32 * 4;
/// The dynamic shared memory of the one-block top-k: the largest region and the largest k.
const TOP_K_SHARED: usize = (WINDOW_TOP_K_REGION + WINDOW_TOP_K) * 8;

/// Samples, brackets and the pass over the data. `None` when a rank fell outside its bracket
/// or a region overflowed.
fn window_pass<T: Element, K: cudarc::driver::DeviceRepr + cudarc::driver::ValidAsZeroBits>(
    dev: &CudaDevice,
    x: &CudaSlice<T>,
    spans: Spans<'_>,
    plan: &Plan,
    mode: u32,
    with_indices: bool,
) -> Result<Option<Window<K>>> {
    debug_assert_eq!(std::mem::size_of::<K>(), std::mem::size_of::<T::Key>());
    let stream = dev.stream();
    let count = spans.count();
    let ds = DeviceSpans::new(dev, spans)?;
    let null = 0u64;
    let m = plan.m as u32;

    let bounds_fn = dev.function(
        &BATCH_SELECT,
        &format!("bt_sample_bounds_{}", super::key_suffix::<T::Key>()),
    )?;
    let shared = plan.m * std::mem::size_of::<K>();
    if !try_allow_shared(dev, &bounds_fn, BOUNDS_SHARED)? {
        return Ok(None);
    }
    let mut samples = dev.alloc::<K>(count * plan.m, "the samples")?;
    let sample_fn = dev.function(&BATCH_SELECT, &kernel_name("bt_sample", T::DTYPE))?;
    let mut launch = stream.launch_builder(&sample_fn);
    launch.arg(x);
    ds.push(&mut launch, &null);
    launch.arg(&m).arg(&mode).arg(&mut samples);
    let blocks = grid_blocks(dev, count * plan.m);
    // SAFETY: bt_sample_T(const T* x, const u64* offsets, u64 cols, u64 stride, u64 nspans,
    // u32 m, u32 mode, K* samples): every span holds at least 8 m values (Plan::new), m is a
    // multiple of 8, samples holds nspans * m keys.
    unsafe { launch.launch(config(blocks, THREADS)) }
        .map_err(|e| driver_error("launching bt_sample", e))?;

    let brackets = upload(dev, &plan.brackets, "the sample brackets")?;
    let mut bounds = dev.alloc::<K>(2 * count, "the brackets' keys")?;
    let count64 = count as u64;
    let mut launch = stream.launch_builder(&bounds_fn);
    launch
        .arg(&samples)
        .arg(&count64)
        .arg(&m)
        .arg(&brackets)
        .arg(&mut bounds);
    // A block alone on its multiprocessor waits on shared memory between its steps; four
    // times the threads hide four times the latency (one span's selection took 55 us with 256).
    let cfg = LaunchConfig {
        block_dim: (BOUNDS_THREADS, 1, 1),
        ..block_per_span(count, shared)
    };
    // SAFETY: bt_sample_bounds_K(const K* samples, u64 nspans, u32 m, const u32* brackets,
    // K* bounds): m keys a span, two sample ranks below m (or open) and two bounds a span; the
    // shared memory holds m keys.
    unsafe { launch.launch(cfg) }.map_err(|e| driver_error("launching bt_sample_bounds", e))?;

    let total = plan.region[count] as usize;
    let region = upload(dev, &plan.region, "the spans' regions")?;
    let mut keys = dev.alloc::<K>(total.max(1), "the bracketed keys")?;
    let mut indices = if with_indices {
        Some(dev.alloc::<u32>(total.max(1), "the bracketed indices")?)
    } else {
        None
    };
    let mut counts = dev.alloc_zeros::<u64>(2 * count, "the bracket counts")?;
    let mut nans = dev.alloc_zeros::<u64>(count, "the NaN counts")?;
    let first = tile_starts(spans);
    let tiles = first[count] as usize;
    let tile_first = upload(dev, &first, "the tile starts")?;
    let window_fn = dev.function(&BATCH_SELECT, &kernel_name("bt_window", T::DTYPE))?;
    let mut launch = stream.launch_builder(&window_fn);
    launch.arg(x);
    ds.push(&mut launch, &null);
    launch
        .arg(&tile_first)
        .arg(&mode)
        .arg(&bounds)
        .arg(&region)
        .arg(&mut counts)
        .arg(&mut nans)
        .arg(&mut keys);
    match indices.as_mut() {
        Some(idx) => launch.arg(idx),
        None => launch.arg(&null),
    };
    let blocks = grid_blocks(dev, tiles * THREADS as usize);
    // SAFETY: bt_window_T(const T* x, ..., const u64* tile_first, u32 mode, const K* bounds,
    // const u64* region, u64* counts, u64* nan_counts, K* ckeys, u32* cidx): tile_first has
    // nspans + 1 entries, bounds and counts two a span, region nspans + 1 offsets into ckeys
    // and cidx (or null), which hold region[nspans] entries; copies stop at a region's end.
    unsafe { launch.launch(config(blocks, THREADS)) }
        .map_err(|e| driver_error("launching bt_window", e))?;

    let counts_host = download(dev, &counts, 2 * count, "the bracket counts")?;
    for s in 0..count {
        let (below, inside) = (counts_host[2 * s], counts_host[2 * s + 1]);
        let cap = plan.region[s + 1] - plan.region[s];
        let r = plan.ranks[s];
        if below > r || r >= below + inside || inside > cap {
            return Ok(None);
        }
    }
    Ok(Some(Window {
        keys,
        indices,
        region,
        counts,
        counts_host,
        nans,
    }))
}

/// The bracketed keys packed span after span: span s's at `starts[s]..starts[s + 1]`, the
/// starts also on the device (`first`).
struct Packed<K: cudarc::driver::DeviceRepr> {
    keys: CudaSlice<K>,
    starts: Vec<usize>,
    first: CudaSlice<u64>,
}

/// One block a span with `shared` bytes of dynamic shared memory.
fn block_per_span(count: usize, shared: usize) -> LaunchConfig {
    LaunchConfig {
        grid_dim: (count.clamp(1, 1 << 16) as u32, 1, 1),
        block_dim: (THREADS, 1, 1),
        shared_mem_bytes: shared as u32,
    }
}

fn gather<K: Element>(dev: &CudaDevice, window: &Window<K>, count: usize) -> Result<Packed<K>> {
    let mut starts = Vec::with_capacity(count + 1);
    starts.push(0usize);
    for s in 0..count {
        starts.push(starts[s] + window.counts_host[2 * s + 1] as usize);
    }
    let total = starts[count];
    let words: Vec<u64> = starts.iter().map(|&v| v as u64).collect();
    let first = upload(dev, &words, "the packed starts")?;
    let mut keys = dev.alloc::<K>(total.max(1), "the packed keys")?;
    let gather_fn = dev.function(
        &BATCH_SELECT,
        &format!("bt_gather_window_{}", super::key_suffix::<K::Key>()),
    )?;
    let count64 = count as u64;
    let mut launch = dev.stream().launch_builder(&gather_fn);
    launch
        .arg(&window.keys)
        .arg(&window.region)
        .arg(&first)
        .arg(&count64)
        .arg(&mut keys);
    // SAFETY: bt_gather_window_K(const K* ckeys, const u64* region, const u64* first,
    // u64 nspans, K* out): first[s + 1] - first[s] <= region[s + 1] - region[s] (checked), out
    // holds first[nspans] keys.
    unsafe { launch.launch(config(grid_blocks(dev, total), THREADS)) }
        .map_err(|e| driver_error("launching bt_gather_window", e))?;
    Ok(Packed {
        keys,
        starts,
        first,
    })
}

/// The bracketed keys packed and the selected key (as a `u64`) of each span among them.
fn select_in_window<K: Element>(
    dev: &CudaDevice,
    window: &Window<K>,
    plan: &Plan,
    count: usize,
) -> Result<(Vec<u64>, Packed<K>)> {
    let packed = gather(dev, window, count)?;
    let left: Vec<usize> = (0..count)
        .map(|s| (plan.ranks[s] - window.counts_host[2 * s]) as usize)
        .collect();
    let inner = select_spans_on(
        dev,
        &packed.keys,
        Spans::Offsets(&packed.starts),
        SpanRanks::OnePerSpan(&left),
    )?;
    let keys = inner.values.iter().map(|k| k.to_key().to_u64()).collect();
    Ok((keys, packed))
}

/// One rank a long span by sampling; `None` when sampling does not pay or the pass's checks
/// failed (the caller then runs the digit passes).
pub(super) fn select<T: Element>(
    dev: &CudaDevice,
    x: &CudaSlice<T>,
    spans: Spans<'_>,
    ranks: &[usize],
) -> Result<Option<SpanSelection<T>>> {
    if std::mem::size_of::<T::Key>() == 4 {
        select_with::<T, u32>(dev, x, spans, ranks)
    } else {
        select_with::<T, u64>(dev, x, spans, ranks)
    }
}

fn select_with<T: Element, K: Element + cudarc::driver::ValidAsZeroBits>(
    dev: &CudaDevice,
    x: &CudaSlice<T>,
    spans: Spans<'_>,
    ranks: &[usize],
) -> Result<Option<SpanSelection<T>>> {
    let count = spans.count();
    let ranks: Vec<u64> = ranks.iter().map(|&r| r as u64).collect();
    let Some(plan) = Plan::new(spans, &ranks, false, std::mem::size_of::<K>()) else {
        return Ok(None);
    };
    let Some(window) = window_pass::<T, K>(dev, x, spans, &plan, 0, false)? else {
        return Ok(None);
    };
    let (keys, _) = select_in_window(dev, &window, &plan, count)?;
    Ok(Some(SpanSelection {
        values: keys
            .into_iter()
            .map(|k| T::from_key(T::Key::from_u64(k)))
            .collect(),
        nan_counts: super::to_counts(download(dev, &window.nans, count, "the NaN counts")?),
    }))
}

/// The first `k` of every long span in the order of `mode` by sampling; `None` when sampling
/// does not pay or the pass's checks failed.
pub(super) fn top_k<T: Element>(
    dev: &CudaDevice,
    x: &CudaSlice<T>,
    spans: Spans<'_>,
    k: usize,
    mode: u32,
    sorted: bool,
) -> Result<Option<DeviceTopK<T>>> {
    if std::mem::size_of::<T::Key>() == 4 {
        if k <= WINDOW_TOP_K {
            if let Some(top) = top_k_in_window::<T>(dev, x, spans, k, mode, sorted)? {
                return Ok(Some(top));
            }
        }
        top_k_by_kth::<T, u32>(dev, x, spans, k, mode, sorted)
    } else {
        top_k_by_kth::<T, u64>(dev, x, spans, k, mode, sorted)
    }
}

/// Top-k with the bracket open below: the copied (key, index) pairs of each span hold its k
/// first, taken and sorted by one block a span.
fn top_k_in_window<T: Element>(
    dev: &CudaDevice,
    x: &CudaSlice<T>,
    spans: Spans<'_>,
    k: usize,
    mode: u32,
    sorted: bool,
) -> Result<Option<DeviceTopK<T>>> {
    let count = spans.count();
    let ranks = vec![k as u64 - 1; count];
    let Some(plan) = Plan::new(spans, &ranks, true, 4) else {
        return Ok(None);
    };
    let largest = plan.largest_region();
    if largest > WINDOW_TOP_K_REGION {
        return Ok(None);
    }
    let topk_fn = dev.function(&BATCH_SELECT, &kernel_name("bt_topk_window", T::DTYPE))?;
    let shared = (largest + k.next_power_of_two()) * 8;
    if !try_allow_shared(dev, &topk_fn, TOP_K_SHARED)? {
        return Ok(None);
    }
    let Some(window) = window_pass::<T, u32>(dev, x, spans, &plan, mode, true)? else {
        return Ok(None);
    };
    let Some(indices) = window.indices.as_ref() else {
        return Ok(None);
    };
    let ds = DeviceSpans::new(dev, spans)?;
    let total = count * k;
    let mut values = dev.alloc::<T>(total, "the top-k values")?;
    let mut out_idx = dev.alloc::<u64>(total, "the top-k indices")?;
    let (largest64, k64, sorted32) = (largest as u64, k as u64, u32::from(sorted));
    let null = 0u64;
    let mut launch = dev.stream().launch_builder(&topk_fn);
    launch.arg(x);
    ds.push(&mut launch, &null);
    launch
        .arg(&window.region)
        .arg(&window.counts)
        .arg(&largest64)
        .arg(&window.keys)
        .arg(indices)
        .arg(&k64)
        .arg(&sorted32)
        .arg(&mut values)
        .arg(&mut out_idx);
    let cfg = block_per_span(count, shared);
    // SAFETY: bt_topk_window_T(const T* x, ..., const u64* region, const u64* counts,
    // u64 max_region, const u32* ckeys, const u32* cidx, u64 k, u32 sorted, T* out_values,
    // u64* out_idx): every span copied between k and its region's size of pairs (checked), the
    // largest region is max_region, the shared memory holds it and pow2(k) words; the outputs
    // hold nspans * k entries; the copied indices lie inside their spans.
    unsafe { launch.launch(cfg) }.map_err(|e| driver_error("launching bt_topk_window", e))?;
    Ok(Some(DeviceTopK {
        values,
        indices: out_idx,
        nans: window.nans,
    }))
}

/// Top-k through the k-th key: selected among the bracketed keys, then each span's keys below
/// it counted to know how many equal to it to take, and the index-ordered compaction.
fn top_k_by_kth<T: Element, K: Element + cudarc::driver::ValidAsZeroBits>(
    dev: &CudaDevice,
    x: &CudaSlice<T>,
    spans: Spans<'_>,
    k: usize,
    mode: u32,
    sorted: bool,
) -> Result<Option<DeviceTopK<T>>> {
    let count = spans.count();
    let ranks = vec![k as u64 - 1; count];
    let Some(plan) = Plan::new(spans, &ranks, false, std::mem::size_of::<K>()) else {
        return Ok(None);
    };
    let Some(window) = window_pass::<T, K>(dev, x, spans, &plan, mode, false)? else {
        return Ok(None);
    };
    let (kth, packed) = select_in_window(dev, &window, &plan, count)?;
    let below = count_below(dev, &packed, &kth)?;
    let state_words: Vec<u64> = (0..count)
        .flat_map(|s| {
            let less = window.counts_host[2 * s] + below[s];
            [kth[s], plan.ranks[s] - less, s as u64, 0]
        })
        .collect();
    let passes = LongPasses::new(dev, spans, &state_words, None, mode)?;
    let total = count * k;
    let mut values = dev.alloc::<T>(total, "the top-k values")?;
    let mut indices = dev.alloc::<u64>(total, "the top-k indices")?;
    compact_long(dev, x, &passes, k, mode, &mut values, &mut indices)?;
    let top = DeviceTopK {
        values,
        indices,
        nans: window.nans,
    };
    finish_top_k(dev, top, count, k, mode, sorted).map(Some)
}

/// Per span, how many packed keys lie below its k-th key.
fn count_below<K: Element>(dev: &CudaDevice, packed: &Packed<K>, kth: &[u64]) -> Result<Vec<u64>> {
    let count = packed.starts.len() - 1;
    let kth_buf = upload(dev, kth, "the k-th keys")?;
    let mut below = dev.alloc_zeros::<u64>(count, "the counts below")?;
    let function = dev.function(
        &BATCH_SELECT,
        &format!("bt_count_below_{}", super::key_suffix::<K::Key>()),
    )?;
    let count64 = count as u64;
    let mut launch = dev.stream().launch_builder(&function);
    launch
        .arg(&packed.keys)
        .arg(&packed.first)
        .arg(&count64)
        .arg(&kth_buf)
        .arg(&mut below);
    // SAFETY: bt_count_below_K(const K* keys, const u64* first, u64 nspans, const u64* kth,
    // u64* below): first[nspans] keys, one k-th key and one count a span.
    unsafe { launch.launch(config(grid_blocks(dev, packed.starts[count]), THREADS)) }
        .map_err(|e| driver_error("launching bt_count_below", e))?;
    download(dev, &below, count, "the counts below")
}
