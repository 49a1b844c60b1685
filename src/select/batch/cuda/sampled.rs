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
//! - top-k of one span with 32-bit keys whose bracket holds at most [`PAIRS_LIMIT`] pairs (one
//!   array of 2^28 values up to k = 2^16 or so): the bracket is open below, the pass copies the
//!   pairs in index order (each tile's placed by a running count of the tiles before it) and
//!   their k first are taken as a top-k of their own;
//! - larger top-k: the k-th key is selected as above, then the index-ordered compaction of
//!   the digit-pass path writes the results.
//!
//! Nothing is guessed: when a rank fell outside its bracket or a region overflowed (heavy
//! repeats, or a sample that misrepresents its span), the caller runs the exact digit passes.

use cudarc::driver::{CudaSlice, LaunchConfig};

use super::{
    compact_long, config, download, finish_top_k, grid_blocks, select_spans_on, tile_starts,
    top_k_of_candidates, upload, Candidates, DeviceSpans, DeviceTopK, LongPasses,
};
use crate::device::cuda::kernels::batch_select::{
    bt_count_below, bt_gather_window, bt_sample, bt_sample_bounds, bt_topk_window, bt_window,
    bt_window_ordered, QueryState, BOUNDS_THREADS, CHUNK, NO_BOUND, ORDER_TILE_BYTES, THREADS,
};
use crate::device::cuda::kernels::OrNull;
use crate::device::cuda::kernels::{kernel_name, key_suffix, BATCH_SELECT};
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
/// The bracket's half-width in standard deviations of the sample rank.
const SIGMAS: f64 = 5.0;
/// Sample keys added to each side of the bracket and to the regions: a chunk and one more.
const SLACK: f64 = CHUNK as f64 + 1.0;
/// The largest k the one-block top-k of the copied pairs takes.
pub(super) const WINDOW_TOP_K: usize = 2048;
/// The largest region (copied pairs of a span) the one-block top-k holds in shared memory.
const WINDOW_TOP_K_REGION: usize = 8192;
/// The largest region whose pairs one span's top-k is finished from (16 MiB of pairs).
const PAIRS_LIMIT: usize = 1 << 21;

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
struct Window<K: RadixKey> {
    keys: CudaSlice<K>,
    indices: Option<CudaSlice<u32>>,
    region: CudaSlice<u64>,
    /// Per span: the keys below the bracket, the keys inside it (all of them, also past the
    /// region's end).
    counts: CudaSlice<u64>,
    counts_host: Vec<u64>,
    nans: CudaSlice<u64>,
}

/// The dynamic shared memory of the sample selection: the largest sample, 64 KB.
const BOUNDS_SHARED: usize = SAMPLE_32 * 4;
/// The dynamic shared memory of the one-block top-k: the largest region and the largest k.
const TOP_K_SHARED: usize = (WINDOW_TOP_K_REGION + WINDOW_TOP_K) * 8;

/// The spans on the device and each span's bracket keys, from its sample; `None` when the
/// sample's selection cannot have its shared memory.
fn brackets<T: Element, K: RadixKey>(
    dev: &CudaDevice,
    x: &CudaSlice<T>,
    spans: Spans<'_>,
    plan: &Plan,
    mode: u32,
) -> Result<Option<(DeviceSpans, CudaSlice<K>)>> {
    debug_assert_eq!(std::mem::size_of::<K>(), std::mem::size_of::<T::Key>());
    let count = spans.count();
    let ds = DeviceSpans::new(dev, spans)?;
    let m = plan.m as u32;

    let bounds_fn = dev.function(
        &BATCH_SELECT,
        &format!("bt_sample_bounds_{}", key_suffix::<K>()),
    )?;
    let shared = plan.m * std::mem::size_of::<K>();
    if !try_allow_shared(dev, &bounds_fn, BOUNDS_SHARED)? {
        return Ok(None);
    }
    let mut samples = dev.alloc::<K>(count * plan.m, "the samples")?;
    let blocks = grid_blocks(dev, count * plan.m);
    bt_sample::<T, K>(
        dev,
        config(blocks, THREADS),
        &ds.of(x),
        m,
        mode,
        &mut samples,
    )?;

    let brackets = upload(dev, &plan.brackets, "the sample brackets")?;
    let mut bounds = dev.alloc::<K>(2 * count, "the brackets' keys")?;
    // A block alone on its multiprocessor waits on shared memory between its steps; four
    // times the threads hide four times the latency (one span's selection took 55 us with 256).
    let cfg = LaunchConfig {
        block_dim: (BOUNDS_THREADS, 1, 1),
        ..block_per_span(count, shared)
    };
    bt_sample_bounds(dev, cfg, &samples, count as u64, m, &brackets, &mut bounds)?;
    Ok(Some((ds, bounds)))
}

/// Whether every span's rank falls inside its bracket and every region holds its keys, by
/// the counts of the keys below and inside each bracket.
fn bracketed(plan: &Plan, counts: &[u64]) -> bool {
    (0..plan.ranks.len()).all(|s| {
        let (below, inside) = (counts[2 * s], counts[2 * s + 1]);
        let cap = plan.region[s + 1] - plan.region[s];
        let r = plan.ranks[s];
        below <= r && r < below + inside && inside <= cap
    })
}

/// Samples, brackets and the pass over the data. `None` when a rank fell outside its bracket
/// or a region overflowed.
fn window_pass<T: Element, K: RadixKey>(
    dev: &CudaDevice,
    x: &CudaSlice<T>,
    spans: Spans<'_>,
    plan: &Plan,
    mode: u32,
    with_indices: bool,
) -> Result<Option<Window<K>>> {
    let count = spans.count();
    let Some((ds, bounds)) = brackets::<T, K>(dev, x, spans, plan, mode)? else {
        return Ok(None);
    };
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
    let blocks = grid_blocks(dev, tiles * THREADS as usize);
    bt_window(
        dev,
        config(blocks, THREADS),
        &ds.of(x),
        &tile_first,
        mode,
        &bounds,
        &region,
        &mut counts,
        &mut nans,
        &mut keys,
        OrNull(indices.as_mut()),
    )?;

    let counts_host = download(dev, &counts, 2 * count, "the bracket counts")?;
    if !bracketed(plan, &counts_host) {
        return Ok(None);
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
struct Packed<K: RadixKey> {
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

/// The window's copied keys packed span after span.
fn gather<K: RadixKey>(dev: &CudaDevice, window: &Window<K>, count: usize) -> Result<Packed<K>> {
    let mut starts = Vec::with_capacity(count + 1);
    starts.push(0usize);
    for s in 0..count {
        starts.push(starts[s] + window.counts_host[2 * s + 1] as usize);
    }
    let total = starts[count];
    let offsets: Vec<u64> = starts.iter().map(|&v| v as u64).collect();
    let first = upload(dev, &offsets, "the packed starts")?;
    let mut keys = dev.alloc::<K>(total.max(1), "the packed keys")?;
    bt_gather_window(
        dev,
        config(grid_blocks(dev, total), THREADS),
        &window.keys,
        &window.region,
        &first,
        count as u64,
        &mut keys,
    )?;
    Ok(Packed {
        keys,
        starts,
        first,
    })
}

/// The bracketed keys packed and the selected key (as a `u64`) of each span among them.
fn select_in_window<K: Element + RadixKey>(
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

fn select_with<T: Element, K: Element + RadixKey>(
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
        nan_counts: super::host_nan_counts::<T>(dev, &window.nans, count)?,
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
        if let Some(top) = top_k_from_pairs::<T>(dev, x, spans, k, mode, sorted)? {
            return Ok(Some(top));
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
    bt_topk_window(
        dev,
        block_per_span(count, shared),
        &ds.of(x),
        &window.region,
        &window.counts,
        largest as u64,
        &window.keys,
        indices,
        k as u64,
        u32::from(sorted),
        &mut values,
        &mut out_idx,
    )?;
    Ok(Some(DeviceTopK {
        values,
        indices: out_idx,
        nans: window.nans,
    }))
}

/// Top-k of one span from its bracket's pairs, the bracket open below: the copied (key, index)
/// pairs (at most [`PAIRS_LIMIT`]) hold the span's k first, in index order
/// ([`ordered_pairs`]); their k first are taken as a top-k of their own (ties to the lower
/// index, as everywhere) and mapped back to the span's indices and values. One pass over the
/// data; `None` for several spans, a bracket too wide, or a failed check.
pub(super) fn top_k_from_pairs<T: Element>(
    dev: &CudaDevice,
    x: &CudaSlice<T>,
    spans: Spans<'_>,
    k: usize,
    mode: u32,
    sorted: bool,
) -> Result<Option<DeviceTopK<T>>> {
    if spans.count() != 1 {
        return Ok(None);
    }
    let ranks = [k as u64 - 1];
    let Some(plan) = Plan::new(spans, &ranks, true, 4) else {
        return Ok(None);
    };
    if plan.largest_region() > PAIRS_LIMIT {
        return Ok(None);
    }
    let Some((ds, pairs)) = ordered_pairs::<T>(dev, x, spans, &plan, mode)? else {
        return Ok(None);
    };
    let (values, indices) = top_k_of_candidates(dev, x, &ds, &pairs.candidates, k, sorted)?;
    Ok(Some(DeviceTopK {
        values,
        indices,
        nans: pairs.nans,
    }))
}

/// One span's bracketed (key, offset) pairs in index order, and its NaN count.
struct OrderedPairs {
    candidates: Candidates<u32>,
    nans: CudaSlice<u64>,
}

/// The sample, the bracket and one pass over one span with 32-bit keys that copies the
/// bracketed pairs in index order (`bt_window_ordered`: each tile's pairs placed by a running
/// count of the tiles before it, so that no sort follows). `None` when the rank fell outside
/// the bracket or the region overflowed.
fn ordered_pairs<T: Element>(
    dev: &CudaDevice,
    x: &CudaSlice<T>,
    spans: Spans<'_>,
    plan: &Plan,
    mode: u32,
) -> Result<Option<(DeviceSpans, OrderedPairs)>> {
    let Some((ds, bounds)) = brackets::<T, u32>(dev, x, spans, plan, mode)? else {
        return Ok(None);
    };
    let cap = plan.region[1] as usize;
    let tile_len = ORDER_TILE_BYTES / std::mem::size_of::<T>();
    let tiles = spans.len_of(0).div_ceil(tile_len);
    let mut keys = dev.alloc::<u32>(cap.max(1), "the bracketed keys")?;
    let mut offsets = dev.alloc::<u32>(cap.max(1), "the bracketed indices")?;
    let mut counts = dev.alloc_zeros::<u64>(2, "the bracket counts")?;
    let mut nans = dev.alloc_zeros::<u64>(1, "the NaN count")?;
    let mut status = dev.alloc_zeros::<u64>(tiles.max(1), "the tiles' status words")?;
    let mut ticket = dev.alloc_zeros::<u32>(1, "the tiles' ticket")?;
    bt_window_ordered::<T, u32>(
        dev,
        config(grid_blocks(dev, tiles * THREADS as usize), THREADS),
        &ds.of(x),
        mode,
        &bounds,
        cap as u64,
        &mut counts,
        &mut nans,
        &mut keys,
        &mut offsets,
        &mut status,
        &mut ticket,
        tiles as u64,
    )?;
    let counts_host = download(dev, &counts, 2, "the bracket counts")?;
    if !bracketed(plan, &counts_host) {
        return Ok(None);
    }
    let inside = counts_host[1] as usize;
    Ok(Some((
        ds,
        OrderedPairs {
            candidates: Candidates {
                keys,
                indices: offsets,
                starts: vec![0, inside],
            },
            nans,
        },
    )))
}

/// Top-k through the k-th key: selected among the bracketed keys, then each span's keys below
/// it counted to know how many equal to it to take, and the index-ordered compaction.
fn top_k_by_kth<T: Element, K: Element + RadixKey>(
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
    let states: Vec<QueryState> = (0..count)
        .map(|s| {
            let less = window.counts_host[2 * s] + below[s];
            QueryState {
                prefix: kth[s],
                ..QueryState::new(plan.ranks[s] - less, s as u64)
            }
        })
        .collect();
    let passes = LongPasses::new(dev, spans, &states, None, mode)?;
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
fn count_below<K: RadixKey>(dev: &CudaDevice, packed: &Packed<K>, kth: &[u64]) -> Result<Vec<u64>> {
    let count = packed.starts.len() - 1;
    let kth_buf = upload(dev, kth, "the k-th keys")?;
    let mut below = dev.alloc_zeros::<u64>(count, "the counts below")?;
    bt_count_below(
        dev,
        config(grid_blocks(dev, packed.starts[count]), THREADS),
        &packed.keys,
        &packed.first,
        count as u64,
        &kth_buf,
        &mut below,
    )?;
    download(dev, &below, count, "the counts below")
}
