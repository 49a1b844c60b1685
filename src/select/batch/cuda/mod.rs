//! The CUDA parts of batched selection, top-k and hard thresholding (`kernels/batch_select.cu`).
//!
//! The top-k of spans up to [`WARP_SPAN`] values takes one warp a span, its order keys in
//! registers: the k-th key's digits below the span's common leading bits from a histogram a
//! warp, stopping once a digit's keys are all kept, an index-ordered compaction from ballots,
//! a bitonic sort in the warp's shared memory. Other spans up to [`short_limit`] values take
//! one block each with their order keys in shared memory: MSD radix selection by 8-bit digits
//! in the block, an index-ordered compaction and a bitonic sort of the results. Longer spans are cut into tiles of [`TILE`] values: per digit
//! one histogram pass over every tile and one choice per query (a span and a rank); top-k
//! then counts each tile's values before and at the k-th key, scans the counts per span and
//! writes the k values in index order. Sorted results of more than `short_limit` a span are
//! sorted by one block a span when there are spans for every multiprocessor, else together by
//! a stable radix sort of (span, order key).
//!
//! Many ranks (more than [`LONG_QUERIES`]) of long spans are selected span by span by the
//! single-array multiselection (`Algorithm::Auto`) on a copy of the span.
//!
//! Workspace: the results, the spans' offsets and tile starts, for long spans a 256-entry
//! histogram and 4 words a query and a word a tile; the sort of many results needs about six
//! words a result.

use cudarc::driver::{CudaSlice, CudaView, LaunchConfig};

use crate::device::cuda::kernels::batch_select::{
    bt_choose, bt_compact_long, bt_filter, bt_filter_counts, bt_hist, bt_iota, bt_map_results,
    bt_nan_counts, bt_permute, bt_result_keys, bt_select_short, bt_sort_small, bt_span_ids,
    bt_tile_counts, bt_tile_scan, bt_topk_resident, bt_topk_short, bt_topk_warp, warp_blocks,
    QueryState, SpanArgs, RESIDENT_HISTOGRAMS, RESIDENT_THREADS, THREADS, TILE, WARP_SORT,
    WARP_SPAN, WARP_THREADS, WINDOW_VECS,
};
use crate::device::cuda::kernels::reduce::sum;
use crate::device::cuda::kernels::OrNull;
use crate::device::cuda::kernels::{kernel_name, BATCH_SELECT};
use crate::device::cuda::launch::{config, shaped, stride_blocks, try_allow_shared};
use crate::device::cuda::{driver_error, CudaDevice};
use crate::device::DeviceBuffer;
use crate::element::{Element, RadixKey};
use crate::error::{Error, Result};
use crate::select::batch::error::BatchError;
use crate::select::batch::spans::{KeyOrder, SpanRanks, SpanSelection, Spans, TopKSpans};
use crate::select::input::Input;
use crate::select::sort_choose::cuda::sort_pairs_device;
use crate::select::Algorithm;

/// Up to this many queries a long span, its values are matched against each query's prefix in
/// the histogram passes; more ranks go to the single-array multiselection span by span.
const LONG_QUERIES: usize = 8;
/// Blocks a multiprocessor for the tile passes.
const TILE_BLOCKS_PER_SM: usize = 8;

/// The longest span one block handles in shared memory: its keys, or for the sort a power of
/// two of keys and 32-bit places, within 48 KB.
pub(crate) fn short_limit<T: Element>() -> usize {
    if std::mem::size_of::<T::Key>() == 4 {
        4096
    } else {
        2048
    }
}

/// Blocks for a grid-stride pass over `items` items (a thread each per trip).
fn grid_blocks(dev: &CudaDevice, items: usize) -> usize {
    stride_blocks(items, THREADS, dev.multiprocessors(), TILE_BLOCKS_PER_SM)
}

/// The kernel's order mode (`BT_*`).
fn mode_of(order: KeyOrder) -> u32 {
    match order {
        KeyOrder::Smallest => 0,
        KeyOrder::Largest { nan_low: false } => 1,
        KeyOrder::Largest { nan_low: true } => 2,
        KeyOrder::LargestMagnitude { nan_low: false } => 3,
        KeyOrder::LargestMagnitude { nan_low: true } => 4,
    }
}

/// The input on the device: borrowed, or copied from the host.
enum OnDevice<'a, T: Element> {
    Borrowed(&'a DeviceBuffer<T>),
    Copied(DeviceBuffer<T>),
}

impl<T: Element> OnDevice<'_, T> {
    fn as_slice(&self) -> &CudaSlice<T> {
        match self {
            OnDevice::Borrowed(buf) => buf.as_slice(),
            OnDevice::Copied(buf) => buf.as_slice(),
        }
    }
}

fn on_device<'a, T: Element>(dev: &CudaDevice, input: Input<'a, T>) -> Result<OnDevice<'a, T>> {
    match input {
        Input::Device(buf) => Ok(OnDevice::Borrowed(buf)),
        Input::Host(data) => Ok(OnDevice::Copied(DeviceBuffer::from_host_on(dev, data)?)),
    }
}

/// The spans as the kernels read them: offsets on the device (or none for rows), the row
/// shape, and for long spans the first tile of each span.
struct DeviceSpans {
    offsets: Option<CudaSlice<u64>>,
    cols: u64,
    stride: u64,
    count: u64,
}

impl DeviceSpans {
    fn new(dev: &CudaDevice, spans: Spans<'_>) -> Result<DeviceSpans> {
        let (offsets, cols, stride) = match spans {
            Spans::Rows { cols, stride, .. } => (None, cols as u64, stride as u64),
            Spans::Offsets(offsets) => {
                let words: Vec<u64> = offsets.iter().map(|&o| o as u64).collect();
                (Some(upload(dev, &words, "segment offsets")?), 0, 0)
            }
        };
        Ok(DeviceSpans {
            offsets,
            cols,
            stride,
            count: spans.count() as u64,
        })
    }

    /// The offsets as the kernels take them: null for rows.
    fn offsets(&self) -> OrNull<&CudaSlice<u64>> {
        OrNull(self.offsets.as_ref())
    }

    /// These spans of `x`, as the kernels take them.
    fn of<'a, T>(&'a self, x: &'a CudaSlice<T>) -> SpanArgs<'a, T> {
        SpanArgs {
            x,
            offsets: self.offsets.as_ref(),
            cols: self.cols,
            stride: self.stride,
            nspans: self.count,
        }
    }
}

fn upload<W: cudarc::driver::DeviceRepr>(
    dev: &CudaDevice,
    words: &[W],
    what: &str,
) -> Result<CudaSlice<W>> {
    if words.is_empty() {
        return dev.alloc::<W>(1, what);
    }
    dev.stream()
        .clone_htod(words)
        .map_err(|e| driver_error(&format!("copying {what} to the device"), e))
}

fn download<W: cudarc::driver::DeviceRepr + Default + Clone>(
    dev: &CudaDevice,
    slice: &CudaSlice<W>,
    len: usize,
    what: &str,
) -> Result<Vec<W>> {
    if len == 0 {
        return Ok(Vec::new());
    }
    let mut host = vec![W::default(); len];
    dev.stream()
        .memcpy_dtoh(&slice.slice(..len), &mut host)
        .map_err(|e| driver_error(&format!("copying {what} to the host"), e))?;
    Ok(host)
}

/// The first tile of each span (and the total after the last): `TILE` values a tile.
fn tile_starts(spans: Spans<'_>) -> Vec<u64> {
    let mut first = Vec::with_capacity(spans.count() + 1);
    let mut at = 0u64;
    first.push(0);
    for s in 0..spans.count() {
        at += spans.len_of(s).div_ceil(TILE) as u64;
        first.push(at);
    }
    first
}

fn check_span_lengths(spans: Spans<'_>) -> Result<()> {
    if spans.max_len() >= 1 << 32 {
        return Err(BatchError::SpanTooLong {
            len: spans.max_len(),
        }
        .into());
    }
    Ok(())
}

/// The values of `ranks` in every span of `input`, with each span's NaN count.
pub(crate) fn select_spans<T: Element>(
    dev: &CudaDevice,
    input: Input<'_, T>,
    spans: Spans<'_>,
    ranks: SpanRanks<'_>,
) -> Result<SpanSelection<T>> {
    spans.check(input.len())?;
    check_span_lengths(spans)?;
    let count = spans.count();
    if count == 0 || (ranks.per_span() == 0 && !T::DTYPE.is_float()) {
        return Ok(SpanSelection {
            values: Vec::new(),
            nan_counts: vec![0; count],
        });
    }
    let x = on_device(dev, input)?;
    if ranks.per_span() == 0 {
        return Ok(SpanSelection {
            values: Vec::new(),
            nan_counts: nan_counts(dev, x.as_slice(), spans)?,
        });
    }
    select_spans_on(dev, x.as_slice(), spans, ranks)
}

/// Each span's NaNs, alone (a selection of no rank still applies the NaN policy).
fn nan_counts<T: Element>(
    dev: &CudaDevice,
    x: &CudaSlice<T>,
    spans: Spans<'_>,
) -> Result<Vec<usize>> {
    let ds = DeviceSpans::new(dev, spans)?;
    let first = tile_starts(spans);
    let tiles = first[spans.count()] as usize;
    let tile_first = upload(dev, &first, "the tile starts")?;
    let mut nans = dev.alloc_zeros::<u64>(spans.count(), "the NaN counts")?;
    let blocks = grid_blocks(dev, tiles * THREADS as usize);
    bt_nan_counts(
        dev,
        config(blocks, THREADS),
        &ds.of(x),
        &tile_first,
        &mut nans,
    )?;
    host_nan_counts::<T>(dev, &nans, spans.count())
}

/// [`select_spans`] of values already on the device (spans checked, at least one rank).
fn select_spans_on<T: Element>(
    dev: &CudaDevice,
    x: &CudaSlice<T>,
    spans: Spans<'_>,
    ranks: SpanRanks<'_>,
) -> Result<SpanSelection<T>> {
    if spans.max_len() <= short_limit::<T>() {
        select_short(dev, x, spans, ranks)
    } else if let Some(selection) = select_one_span(dev, x, spans, ranks)? {
        Ok(selection)
    } else if ranks.per_span() <= LONG_QUERIES {
        select_long(dev, x, spans, ranks)
    } else {
        select_span_by_span(dev, x, spans, ranks)
    }
}

/// One span (a matrix of one row, a trim of LTS's residuals) whose ranks `Auto` would select
/// by radix from an array of its length: selected there, on the span where it lies (up to
/// 2^21 values in one launch), rather than by the batch's passes, which cost several times as
/// much for one span. `None` for any other batch, and for a span not starting on 16 bytes.
fn select_one_span<T: Element>(
    dev: &CudaDevice,
    x: &CudaSlice<T>,
    spans: Spans<'_>,
    ranks: SpanRanks<'_>,
) -> Result<Option<SpanSelection<T>>> {
    let (SpanRanks::OnePerSpan(list) | SpanRanks::Same(list)) = ranks;
    if spans.count() != 1 {
        return Ok(None);
    }
    let span = spans.span(0);
    // Its digit passes read 16 bytes at a time from the span's first value.
    if !(span.start * std::mem::size_of::<T>()).is_multiple_of(16) {
        return Ok(None);
    }
    let spread = crate::select::cuda::RankSpread::of(span.len(), list);
    if crate::select::cuda::auto_algorithm(span.len(), spread) != Algorithm::Radix {
        return Ok(None);
    }
    let (values, nans) = crate::select::radix::cuda::multiselect_in(dev, &x.slice(span), list)?;
    Ok(Some(SpanSelection {
        values,
        nan_counts: vec![nans],
    }))
}

fn rank_words(ranks: SpanRanks<'_>) -> Vec<u64> {
    match ranks {
        SpanRanks::OnePerSpan(r) | SpanRanks::Same(r) => r.iter().map(|&k| k as u64).collect(),
    }
}

fn select_short<T: Element>(
    dev: &CudaDevice,
    x: &CudaSlice<T>,
    spans: Spans<'_>,
    ranks: SpanRanks<'_>,
) -> Result<SpanSelection<T>> {
    let count = spans.count();
    let per_span = ranks.per_span();
    let ds = DeviceSpans::new(dev, spans)?;
    let rank_buf = upload(dev, &rank_words(ranks), "the ranks")?;
    let mut out = dev.alloc::<T>(count * per_span, "the selected values")?;
    let mut nans = dev.alloc_zeros::<u64>(count, "the NaN counts")?;
    let (m, one) = (
        per_span as u32,
        u32::from(matches!(ranks, SpanRanks::OnePerSpan(_))),
    );
    bt_select_short(
        dev,
        short_config::<T>(count, spans.max_len()),
        &ds.of(x),
        &rank_buf,
        m,
        one,
        &mut out,
        &mut nans,
    )?;
    Ok(SpanSelection {
        values: download(dev, &out, count * per_span, "the selected values")?,
        nan_counts: host_nan_counts::<T>(dev, &nans, count)?,
    })
}

/// One block a span, with shared memory for `max_len` keys or a sort of that many.
fn short_config<T: Element>(count: usize, max_len: usize) -> LaunchConfig {
    let p = max_len.max(1).next_power_of_two();
    let key = std::mem::size_of::<T::Key>();
    let shared = (p * (key + 4)).max(max_len * key);
    LaunchConfig {
        grid_dim: (count.clamp(1, i32::MAX as usize) as u32, 1, 1),
        block_dim: (THREADS, 1, 1),
        shared_mem_bytes: shared as u32,
    }
}

fn to_counts(words: Vec<u64>) -> Vec<usize> {
    words.into_iter().map(|w| w as usize).collect()
}

/// From this many spans on, their NaN counts are summed on the device first, so that one word
/// is copied to the host rather than all of them when there is no NaN.
const NAN_SUM_SPANS: usize = 4096;

/// The NaN counts of `count` spans on the host: zeros for types without NaN, else the counts,
/// copied only when their sum is not zero for many spans.
fn host_nan_counts<T: Element>(
    dev: &CudaDevice,
    nans: &CudaSlice<u64>,
    count: usize,
) -> Result<Vec<usize>> {
    if !T::DTYPE.is_float() {
        return Ok(vec![0; count]);
    }
    if count >= NAN_SUM_SPANS {
        let mut total = dev.alloc_zeros::<f64>(1, "the NaN total")?;
        let blocks = stride_blocks(count.div_ceil(2), THREADS, dev.multiprocessors(), 8);
        sum(dev, config(blocks, THREADS), nans, count as u64, &mut total)?;
        if dev.read(&total, "the NaN total")?[0] == 0.0 {
            return Ok(vec![0; count]);
        }
    }
    Ok(to_counts(download(dev, nans, count, "the NaN counts")?))
}

/// The state of long-span queries: for each, the prefix (0), its rank and its span.
fn long_states(spans: Spans<'_>, ranks: SpanRanks<'_>) -> (Vec<QueryState>, Option<Vec<u64>>) {
    let count = spans.count();
    let mut state = Vec::new();
    let mut q_first = None;
    match ranks {
        SpanRanks::OnePerSpan(r) => {
            for (s, &k) in r.iter().enumerate() {
                state.push(QueryState::new(k as u64, s as u64));
            }
        }
        SpanRanks::Same(r) => {
            for s in 0..count {
                for &k in r {
                    state.push(QueryState::new(k as u64, s as u64));
                }
            }
            if r.len() != 1 {
                q_first = Some((0..=count).map(|s| (s * r.len()) as u64).collect());
            }
        }
    }
    (state, q_first)
}

/// The most parts a histogram pass cuts a tile into (a power of two; a part is then one
/// round of `BT_ROUND` values a thread).
const HIST_PARTS: usize = 8;

/// Up to this many queries, the histogram pass's last block makes their choices.
const FUSED_CHOICES: usize = 8;

/// The digit passes of long-span queries. After them the states hold, per query, the
/// selected order key and the rank left among the keys equal to it; the first pass also counts
/// each span's NaNs.
struct LongPasses {
    ds: DeviceSpans,
    tile_first: CudaSlice<u64>,
    first: Vec<u64>,
    tiles: usize,
    q_first: Option<CudaSlice<u64>>,
    queries: usize,
    state: CudaSlice<QueryState>,
    hist: CudaSlice<u32>,
    /// The histogram pass's count of finished blocks (zero between passes), through which its
    /// last block makes the choice of few queries.
    done: CudaSlice<u32>,
    nans: CudaSlice<u64>,
    mode: u32,
    /// The values of all spans.
    values: usize,
}

impl LongPasses {
    fn new(
        dev: &CudaDevice,
        spans: Spans<'_>,
        states: &[QueryState],
        q_first: Option<&[u64]>,
        mode: u32,
    ) -> Result<LongPasses> {
        let queries = states.len();
        let first = tile_starts(spans);
        Ok(LongPasses {
            ds: DeviceSpans::new(dev, spans)?,
            tile_first: upload(dev, &first, "the tile starts")?,
            tiles: first[spans.count()] as usize,
            first,
            q_first: q_first
                .map(|q| upload(dev, q, "the query starts"))
                .transpose()?,
            queries,
            state: upload(dev, states, "the selection states")?,
            hist: dev.alloc_zeros::<u32>(queries * 256, "the digit histograms")?,
            done: dev.alloc_zeros::<u32>(1, "the finished blocks")?,
            nans: dev.alloc_zeros::<u64>(spans.count(), "the NaN counts")?,
            mode,
            values: spans.total_len(),
        })
    }

    /// Blocks for a pass over every tile.
    fn tile_blocks(&self, dev: &CudaDevice) -> usize {
        grid_blocks(dev, self.tiles * THREADS as usize)
    }

    /// The parts (a block each) a pass cuts each tile into, at most `most` (a power of two
    /// dividing the tile): enough for two blocks a multiprocessor when the tiles are few.
    fn parts(&self, dev: &CudaDevice, most: usize) -> usize {
        (2 * dev.multiprocessors())
            .div_ceil(self.tiles.max(1))
            .next_power_of_two()
            .min(most)
    }

    /// The shift of digit `digit` (0 = the most significant) of keys of type `K`.
    fn shift<K: RadixKey>(digit: u32) -> u32 {
        K::BITS - 8 * (digit + 1)
    }

    /// One digit: the histogram pass (keeping each tile's histogram in `tile_hist` when
    /// given) and the choice.
    fn run_digit<T: Element>(
        &mut self,
        dev: &CudaDevice,
        x: &CudaSlice<T>,
        digit: u32,
        tile_hist: Option<&mut CudaSlice<u32>>,
    ) -> Result<()> {
        let shift = Self::shift::<T::Key>(digit);
        // Few tiles are cut into parts, a block each, unless each tile's histogram is kept.
        let parts = if tile_hist.is_some() {
            1
        } else {
            self.parts(dev, HIST_PARTS)
        };
        let blocks = grid_blocks(dev, self.tiles * parts * THREADS as usize);
        let nq = self.queries as u64;
        // Few queries are chosen by the pass's last block; many by a block each.
        let fused = self.queries <= FUSED_CHOICES;
        bt_hist(
            dev,
            config(blocks, THREADS),
            &self.ds.of(x),
            &self.tile_first,
            OrNull(self.q_first.as_ref()),
            self.mode,
            &mut self.state,
            &mut self.hist,
            shift,
            &mut self.nans,
            OrNull(tile_hist),
            parts as u32,
            OrNull(fused.then_some(&mut self.done)),
            nq,
        )?;
        if fused {
            return Ok(());
        }
        bt_choose::<T::Key>(
            dev,
            config(self.queries.min(1 << 16), THREADS),
            &mut self.state,
            &mut self.hist,
            nq,
            shift,
        )
    }

    /// The digits from `from` on.
    fn run_digits<T: Element>(
        &mut self,
        dev: &CudaDevice,
        x: &CudaSlice<T>,
        from: u32,
    ) -> Result<()> {
        for digit in from..T::Key::BITS / 8 {
            self.run_digit(dev, x, digit, None)?;
        }
        Ok(())
    }
}

/// Candidates of long spans after the first digit: (order key, index in span) pairs in index
/// order, and where each span's start.
struct Candidates<K: cudarc::driver::DeviceRepr> {
    keys: CudaSlice<K>,
    indices: CudaSlice<u32>,
    /// Span s's candidates are `starts[s]..starts[s + 1]`.
    starts: Vec<usize>,
}

/// Candidates are copied once at most this share of the values remain (each copy shrinks the
/// problem by this factor at least, so copies of copies end); before that, and for heavy
/// repeats around the wanted ranks, the digit passes go on over the whole input.
const CANDIDATE_SHARE: usize = 4;

/// Runs the digits, each keeping its tiles' histograms, until the values a filter would keep
/// are few (at most 1/[`CANDIDATE_SHARE`] of `values`), then copies them: the values whose
/// digits so far are at most (`equal_only` false: top-k) or equal to (selection) their query's
/// chosen ones. `None` when they never were: every digit has then been run and the states
/// hold the selected keys.
fn filter_when_few<T: Element, K: RadixKey>(
    dev: &CudaDevice,
    x: &CudaSlice<T>,
    passes: &mut LongPasses,
    equal_only: bool,
    values: usize,
) -> Result<Option<Candidates<K>>> {
    debug_assert_eq!(std::mem::size_of::<K>(), std::mem::size_of::<T::Key>());
    let tiles = passes.tiles;
    let mut tile_hist = dev.alloc::<u32>(tiles * 256, "the tiles' histograms")?;
    let mut below = dev.alloc_zeros::<u64>(tiles, "the tiles' counts below")?;
    let mut tile_counts = dev.alloc::<u64>(tiles, "the tiles' candidate counts")?;
    let equal = u32::from(equal_only);
    for digit in 0..T::Key::BITS / 8 {
        passes.run_digit(dev, x, digit, Some(&mut tile_hist))?;
        let shift = LongPasses::shift::<T::Key>(digit);
        bt_filter_counts(
            dev,
            config(tiles.div_ceil(8), THREADS),
            &passes.tile_first,
            passes.ds.count,
            &tile_hist,
            &passes.state,
            shift,
            equal,
            &mut below,
            &mut tile_counts,
        )?;
        let counts = download(dev, &tile_counts, tiles, "the tiles' candidate counts")?;
        let total: u64 = counts.iter().sum();
        if total as usize * CANDIDATE_SHARE <= values {
            return copy_candidates(dev, x, passes, counts, shift, equal).map(Some);
        }
    }
    Ok(None)
}

/// The filter itself: each tile's candidates at the prefix of the tiles' counts.
fn copy_candidates<T: Element, K: RadixKey>(
    dev: &CudaDevice,
    x: &CudaSlice<T>,
    passes: &LongPasses,
    counts: Vec<u64>,
    shift: u32,
    equal: u32,
) -> Result<Candidates<K>> {
    let mut prefix = Vec::with_capacity(counts.len());
    let mut total = 0u64;
    for c in counts {
        prefix.push(total);
        total += c;
    }
    let spans = passes.first.len() - 1;
    let mut starts: Vec<usize> = passes.first[..spans]
        .iter()
        .map(|&t| prefix.get(t as usize).copied().unwrap_or(total) as usize)
        .collect();
    starts.push(total as usize);
    let tile_offsets = upload(dev, &prefix, "the tiles' candidate places")?;
    let mut keys = dev.alloc::<K>(total as usize, "the candidates' keys")?;
    let mut indices = dev.alloc::<u32>(total as usize, "the candidates' indices")?;
    bt_filter(
        dev,
        config(passes.tile_blocks(dev), THREADS),
        &passes.ds.of(x),
        &passes.tile_first,
        passes.mode,
        &passes.state,
        shift,
        equal,
        &tile_offsets,
        &mut keys,
        &mut indices,
    )?;
    Ok(Candidates {
        keys,
        indices,
        starts,
    })
}

fn select_long<T: Element>(
    dev: &CudaDevice,
    x: &CudaSlice<T>,
    spans: Spans<'_>,
    ranks: SpanRanks<'_>,
) -> Result<SpanSelection<T>> {
    let one_each = match ranks {
        SpanRanks::OnePerSpan(list) => Some(list.to_vec()),
        SpanRanks::Same(&[r]) => Some(vec![r; spans.count()]),
        SpanRanks::Same(_) => None,
    };
    if let Some(list) = one_each {
        if let Some(selection) = sampled::select(dev, x, spans, &list)? {
            return Ok(selection);
        }
    }
    let (states, q_first) = long_states(spans, ranks);
    let mut passes = LongPasses::new(dev, spans, &states, q_first.as_deref(), 0)?;
    let keys = if q_first.is_none() {
        let filtered = if std::mem::size_of::<T::Key>() == 4 {
            select_candidates::<T, u32>(dev, x, &mut passes)?
        } else {
            select_candidates::<T, u64>(dev, x, &mut passes)?
        };
        match filtered {
            Some(keys) => keys,
            None => selected_keys(dev, &passes)?,
        }
    } else {
        passes.run_digits(dev, x, 0)?;
        selected_keys(dev, &passes)?
    };
    Ok(SpanSelection {
        values: keys
            .into_iter()
            .map(|k| T::from_key(T::Key::from_u64(k)))
            .collect(),
        nan_counts: host_nan_counts::<T>(dev, &passes.nans, spans.count())?,
    })
}

/// The selected keys of the queries whose digits have all been chosen.
fn selected_keys(dev: &CudaDevice, passes: &LongPasses) -> Result<Vec<u64>> {
    let states = download(dev, &passes.state, passes.queries, "the selections")?;
    Ok(states.iter().map(|q| q.prefix).collect())
}

/// One rank a long span: once few values share the digits chosen so far, they are copied and
/// the rank left among them is selected there. `None` when they never were few (every digit
/// has then been run).
fn select_candidates<T: Element, K: Element + RadixKey>(
    dev: &CudaDevice,
    x: &CudaSlice<T>,
    passes: &mut LongPasses,
) -> Result<Option<Vec<u64>>> {
    let values = passes.values;
    let Some(cand) = filter_when_few::<T, K>(dev, x, passes, true, values)? else {
        return Ok(None);
    };
    let left: Vec<usize> = download(dev, &passes.state, passes.queries, "the ranks left")?
        .iter()
        .map(|q| q.rank as usize)
        .collect();
    let spans = Spans::Offsets(&cand.starts);
    let inner = select_spans_on(dev, &cand.keys, spans, SpanRanks::OnePerSpan(&left))?;
    Ok(Some(
        inner.values.iter().map(|k| k.to_key().to_u64()).collect(),
    ))
}

/// Many ranks of long spans: each span copied and given to the single-array multiselection.
fn select_span_by_span<T: Element>(
    dev: &CudaDevice,
    x: &CudaSlice<T>,
    spans: Spans<'_>,
    ranks: SpanRanks<'_>,
) -> Result<SpanSelection<T>> {
    let SpanRanks::Same(list) = ranks else {
        return select_long(dev, x, spans, ranks);
    };
    let mut values = Vec::with_capacity(spans.count() * list.len());
    let mut nan_counts = Vec::with_capacity(spans.count());
    for s in 0..spans.count() {
        let range = spans.span(s);
        let buf = span_copy(dev, &x.slice(range.clone()))?;
        if buf.is_empty() {
            return Err(Error::RankOutOfRange { k: list[0], n: 0 });
        }
        nan_counts.push(crate::select::cuda::nan_scan(&buf)?.count);
        let (got, _) = crate::select::algorithm::run_cuda(Algorithm::Auto, &buf, list)?;
        values.extend(got);
    }
    Ok(SpanSelection { values, nan_counts })
}

fn span_copy<T: Element>(dev: &CudaDevice, view: &CudaView<'_, T>) -> Result<DeviceBuffer<T>> {
    let mut copy = dev.alloc::<T>(view.len(), "a span's copy")?;
    if !view.is_empty() {
        dev.stream()
            .memcpy_dtod(view, &mut copy)
            .map_err(|e| driver_error("copying a span", e))?;
    }
    Ok(DeviceBuffer::from_slice(dev, copy))
}

/// Top-k results on the device.
struct DeviceTopK<T: Element> {
    values: CudaSlice<T>,
    indices: CudaSlice<u64>,
    nans: CudaSlice<u64>,
}

impl<T: Element> DeviceTopK<T> {
    /// Room for `k` results of each of `count` spans, their NaN counts zeroed.
    fn with_room(dev: &CudaDevice, count: usize, k: usize) -> Result<Self> {
        Ok(DeviceTopK {
            values: dev.alloc::<T>(count * k, "the top-k values")?,
            indices: dev.alloc::<u64>(count * k, "the top-k indices")?,
            nans: dev.alloc_zeros::<u64>(count, "the NaN counts")?,
        })
    }

    /// These results written anew by `gather` (which reads them) into `total` values and
    /// indices, the NaN counts kept.
    fn regathered(
        self,
        dev: &CudaDevice,
        total: usize,
        gather: impl FnOnce(&Self, &mut CudaSlice<T>, &mut CudaSlice<u64>) -> Result<()>,
    ) -> Result<Self> {
        let mut values = dev.alloc::<T>(total, "the sorted top-k values")?;
        let mut indices = dev.alloc::<u64>(total, "the sorted top-k indices")?;
        gather(&self, &mut values, &mut indices)?;
        Ok(DeviceTopK {
            values,
            indices,
            nans: self.nans,
        })
    }
}

/// The first `k` values of every span in `order` (ties by index), with their indices, sorted
/// or by index, and each span's NaN count.
pub(crate) fn top_k_spans<T: Element>(
    dev: &CudaDevice,
    input: Input<'_, T>,
    spans: Spans<'_>,
    k: usize,
    order: KeyOrder,
    sorted: bool,
) -> Result<TopKSpans<T>> {
    let top = top_k_spans_on_device(dev, input, spans, k, order, sorted)?;
    Ok(TopKSpans {
        values: top.values.to_host()?,
        indices: top
            .indices
            .to_host()?
            .into_iter()
            .map(|i| i as usize)
            .collect(),
        nan_counts: top.nan_counts,
    })
}

/// Top-k results left on the device: `k` a span, row-major, as [`top_k_spans`] orders them.
pub(crate) struct TopKOnDevice<T: Element> {
    /// The values.
    pub values: DeviceBuffer<T>,
    /// Their indices inside their spans.
    pub indices: DeviceBuffer<u64>,
    /// The NaNs of each span.
    pub nan_counts: Vec<usize>,
}

/// [`top_k_spans`] with the results left on the device.
pub(crate) fn top_k_spans_on_device<T: Element>(
    dev: &CudaDevice,
    input: Input<'_, T>,
    spans: Spans<'_>,
    k: usize,
    order: KeyOrder,
    sorted: bool,
) -> Result<TopKOnDevice<T>> {
    spans.check(input.len())?;
    check_span_lengths(spans)?;
    let count = spans.count();
    if count == 0 {
        return Ok(TopKOnDevice {
            values: DeviceBuffer::from_slice(dev, dev.alloc::<T>(0, "the top-k values")?),
            indices: DeviceBuffer::from_slice(dev, dev.alloc::<u64>(0, "the top-k indices")?),
            nan_counts: Vec::new(),
        });
    }
    let x = on_device(dev, input)?;
    let top = top_k_on_device(dev, x.as_slice(), spans, k, order, sorted)?;
    Ok(TopKOnDevice {
        nan_counts: host_nan_counts::<T>(dev, &top.nans, count)?,
        values: DeviceBuffer::from_slice(dev, top.values),
        indices: DeviceBuffer::from_slice(dev, top.indices),
    })
}

fn top_k_on_device<T: Element>(
    dev: &CudaDevice,
    x: &CudaSlice<T>,
    spans: Spans<'_>,
    k: usize,
    order: KeyOrder,
    sorted: bool,
) -> Result<DeviceTopK<T>> {
    let count = spans.count();
    if k == 0 || spans.min_len() < k {
        return Err(BatchError::KBeyondShortestSpan {
            k,
            shortest: spans.min_len(),
        }
        .into());
    }
    count
        .checked_mul(k)
        .filter(|&t| t < u32::MAX as usize)
        .ok_or(BatchError::TooManyResults { spans: count, k })?;
    let mode = mode_of(order);
    if spans.max_len() <= WARP_SPAN {
        return top_k_by_warps(dev, x, spans, k, mode, sorted);
    }
    if spans.max_len() <= short_limit::<T>() {
        return top_k_short(dev, x, spans, k, mode, sorted);
    }
    if let Some(top) = sampled::top_k(dev, x, spans, k, mode, sorted)? {
        return Ok(top);
    }
    let states = top_k_states(count, k);
    let mut passes = LongPasses::new(dev, spans, &states, None, mode)?;
    let filtered = if std::mem::size_of::<T::Key>() == 4 {
        top_k_candidates::<T, u32>(dev, x, &mut passes, k, sorted)?
    } else {
        top_k_candidates::<T, u64>(dev, x, &mut passes, k, sorted)?
    };
    match filtered {
        Some(top) => Ok(top),
        None => top_k_after_digits(dev, x, passes, k, sorted),
    }
}

/// The digit passes' starting states of a top-k of `count` spans: rank k - 1, no digit fixed.
fn top_k_states(count: usize, k: usize) -> Vec<QueryState> {
    (0..count)
        .map(|s| QueryState::new(k as u64 - 1, s as u64))
        .collect()
}

/// The k first of each long span once every digit has been chosen: the index-ordered
/// compaction, sorted when asked.
fn top_k_after_digits<T: Element>(
    dev: &CudaDevice,
    x: &CudaSlice<T>,
    passes: LongPasses,
    k: usize,
    sorted: bool,
) -> Result<DeviceTopK<T>> {
    let count = passes.first.len() - 1;
    let mode = passes.mode;
    let mut values = dev.alloc::<T>(count * k, "the top-k values")?;
    let mut indices = dev.alloc::<u64>(count * k, "the top-k indices")?;
    compact_long(dev, x, &passes, k, mode, &mut values, &mut indices)?;
    let top = DeviceTopK {
        values,
        indices,
        nans: passes.nans,
    };
    finish_top_k(dev, top, count, k, mode, sorted)
}

/// Spans whose values take at most this share of the L2 cache take the digit passes alone:
/// their reads after the first hit L2 and nothing waits on the host, where sampling reads
/// once but copies its counts back two or three times.
const RESIDENT_SHARE: usize = 2;

/// The most key bytes a span that one block selects in shared memory holds (the solvers' one
/// vector of up to 32768 `f32` or 16384 `f64` values).
const RESIDENT_SPAN_BYTES: usize = 128 * 1024;
/// Its dynamic shared memory at most: the keys, then 256 counts a warp.
const RESIDENT_SHARED: usize = RESIDENT_SPAN_BYTES + RESIDENT_HISTOGRAMS;

/// The top-k of at most one span a multiprocessor, each of at most [`RESIDENT_SPAN_BYTES`] of
/// keys, by one block a span in shared memory: one launch. `None` when the device refuses the
/// shared memory.
fn top_k_one_block<T: Element>(
    dev: &CudaDevice,
    x: &CudaSlice<T>,
    spans: Spans<'_>,
    k: usize,
    mode: u32,
) -> Result<Option<DeviceTopK<T>>> {
    let name = kernel_name("bt_topk_resident", T::DTYPE);
    let function = dev.function(&BATCH_SELECT, &name)?;
    if !try_allow_shared(dev, &function, RESIDENT_SHARED)? {
        return Ok(None);
    }
    let shared = spans.max_len() * std::mem::size_of::<T::Key>() + RESIDENT_HISTOGRAMS;
    let cfg = shaped(spans.count(), 1, RESIDENT_THREADS, shared);
    top_k_by_blocks(dev, x, spans, k, mode, false, true, cfg).map(Some)
}

/// The top-k of long spans small enough to stay in L2, with no copy back to the host: one
/// block a span in shared memory for a few spans of at most [`RESIDENT_SPAN_BYTES`] of keys,
/// else the digit passes; `None` for short spans or larger inputs.
fn top_k_resident<T: Element>(
    dev: &CudaDevice,
    x: &CudaSlice<T>,
    spans: Spans<'_>,
    k: usize,
    order: KeyOrder,
) -> Result<Option<DeviceTopK<T>>> {
    let count = spans.count();
    let bytes = spans.total_len() * std::mem::size_of::<T>();
    if spans.max_len() <= short_limit::<T>() || bytes > dev.l2_bytes() / RESIDENT_SHARE {
        return Ok(None);
    }
    let key_bytes = spans.max_len() * std::mem::size_of::<T::Key>();
    if key_bytes <= RESIDENT_SPAN_BYTES && count <= dev.multiprocessors() {
        if let Some(top) = top_k_one_block(dev, x, spans, k, mode_of(order))? {
            return Ok(Some(top));
        }
    }
    let states = top_k_states(count, k);
    let mut passes = LongPasses::new(dev, spans, &states, None, mode_of(order))?;
    passes.run_digits(dev, x, 0)?;
    top_k_after_digits(dev, x, passes, k, false).map(Some)
}

/// The indices (inside each row, ascending) of the `k` entries of largest magnitude of each of
/// `rows` rows of `cols` values (`1 <= k <= cols`), equal magnitudes by the lower index, left on
/// the device without a copy to the host (NaN counts as the largest magnitude and is not
/// reported).
pub(crate) fn largest_magnitudes<T: Element>(
    dev: &CudaDevice,
    x: &CudaSlice<T>,
    rows: usize,
    cols: usize,
    k: usize,
) -> Result<CudaSlice<u64>> {
    let spans = Spans::Rows {
        rows,
        cols,
        stride: cols,
    };
    spans.check(x.len())?;
    check_span_lengths(spans)?;
    let order = KeyOrder::LargestMagnitude { nan_low: false };
    if k == 0 || k > cols {
        return Err(BatchError::KBeyondRow { k, cols }.into());
    }
    if let Some(top) = top_k_resident(dev, x, spans, k, order)? {
        return Ok(top.indices);
    }
    Ok(top_k_on_device(dev, x, spans, k, order, false)?.indices)
}

/// Index-ordered results sorted when asked.
fn finish_top_k<T: Element>(
    dev: &CudaDevice,
    mut top: DeviceTopK<T>,
    count: usize,
    k: usize,
    mode: u32,
    sorted: bool,
) -> Result<DeviceTopK<T>> {
    if !sorted {
        return Ok(top);
    }
    if k <= short_limit::<T>() {
        sort_small(dev, &mut top, count, k, mode)?;
        Ok(top)
    } else if span_sort::suits(dev, count) {
        span_sort::sort_spans(dev, top, count, k, mode)
    } else {
        sort_many(dev, top, count * k, k, mode)
    }
}

/// Top-k of long spans: once few values have digits at most the chosen ones, they are copied
/// with their indices (in index order), their top-k taken (as keys, ascending) and its places
/// mapped back to the spans' indices and values. `None` when they never were few (every digit
/// has then been run).
fn top_k_candidates<T: Element, K: Element + RadixKey>(
    dev: &CudaDevice,
    x: &CudaSlice<T>,
    passes: &mut LongPasses,
    k: usize,
    sorted: bool,
) -> Result<Option<DeviceTopK<T>>> {
    let values = passes.values;
    let Some(cand) = filter_when_few::<T, K>(dev, x, passes, false, values)? else {
        return Ok(None);
    };
    let (values, indices) = top_k_of_candidates(dev, x, &passes.ds, &cand, k, sorted)?;
    let nans = std::mem::replace(&mut passes.nans, dev.alloc::<u64>(1, "a placeholder")?);
    Ok(Some(DeviceTopK {
        values,
        indices,
        nans,
    }))
}

/// The k first of each span of `cand` (its keys ascending in the wanted order, its indices
/// those of the spans `ds` of `x`, in index order: ties go to the lower index), as a top-k of
/// their own mapped back to the spans' values and indices.
fn top_k_of_candidates<T: Element, K: Element + RadixKey>(
    dev: &CudaDevice,
    x: &CudaSlice<T>,
    ds: &DeviceSpans,
    cand: &Candidates<K>,
    k: usize,
    sorted: bool,
) -> Result<(CudaSlice<T>, CudaSlice<u64>)> {
    let spans = Spans::Offsets(&cand.starts);
    let inner = top_k_on_device::<K>(dev, &cand.keys, spans, k, KeyOrder::Smallest, sorted)?;
    let count = cand.starts.len() - 1;
    let total = count * k;
    let firsts: Vec<u64> = cand.starts.iter().map(|&c| c as u64).collect();
    let cand_first = upload(dev, &firsts, "the candidates' starts")?;
    let mut values = dev.alloc::<T>(total, "the top-k values")?;
    let mut indices = dev.alloc::<u64>(total, "the top-k indices")?;
    bt_map_results(
        dev,
        config(grid_blocks(dev, total), THREADS),
        x,
        ds.offsets(),
        ds.cols,
        ds.stride,
        k as u64,
        total as u64,
        &cand_first,
        &cand.indices,
        &inner.indices,
        &mut values,
        &mut indices,
    )?;
    Ok((values, indices))
}

fn top_k_short<T: Element>(
    dev: &CudaDevice,
    x: &CudaSlice<T>,
    spans: Spans<'_>,
    k: usize,
    mode: u32,
    sorted: bool,
) -> Result<DeviceTopK<T>> {
    let cfg = short_config::<T>(spans.count(), spans.max_len());
    top_k_by_blocks(dev, x, spans, k, mode, sorted, false, cfg)
}

/// The top-k of spans of at most [`WARP_SPAN`] values by one warp a span, its keys in
/// registers: one launch, and a sort after it only for more than [`WARP_SORT`] sorted results
/// a span.
fn top_k_by_warps<T: Element>(
    dev: &CudaDevice,
    x: &CudaSlice<T>,
    spans: Spans<'_>,
    k: usize,
    mode: u32,
    sorted: bool,
) -> Result<DeviceTopK<T>> {
    let count = spans.count();
    let ds = DeviceSpans::new(dev, spans)?;
    let mut top = DeviceTopK::with_room(dev, count, k)?;
    let sorts_in_warp = sorted && k <= WARP_SORT;
    // As many blocks as stay resident, each warp taking span after span.
    let blocks = stride_blocks(
        count * 32,
        WARP_THREADS,
        dev.multiprocessors(),
        warp_blocks::<T>(),
    );
    bt_topk_warp(
        dev,
        config(blocks, WARP_THREADS),
        &ds.of(x),
        k as u64,
        mode,
        u32::from(sorts_in_warp),
        &mut top.values,
        &mut top.indices,
        &mut top.nans,
    )?;
    finish_top_k(dev, top, count, k, mode, sorted && !sorts_in_warp)
}

/// The top-k of each span by one block a span, its keys in shared memory: `bt_topk_short`, or
/// `bt_topk_resident` when `resident`, launched with `cfg`.
#[allow(clippy::too_many_arguments)]
fn top_k_by_blocks<T: Element>(
    dev: &CudaDevice,
    x: &CudaSlice<T>,
    spans: Spans<'_>,
    k: usize,
    mode: u32,
    sorted: bool,
    resident: bool,
    cfg: LaunchConfig,
) -> Result<DeviceTopK<T>> {
    let ds = DeviceSpans::new(dev, spans)?;
    let mut top = DeviceTopK::with_room(dev, spans.count(), k)?;
    let launch = if resident {
        bt_topk_resident
    } else {
        bt_topk_short
    };
    launch(
        dev,
        cfg,
        &ds.of(x),
        spans.max_len() as u64,
        k as u64,
        mode,
        u32::from(sorted),
        &mut top.values,
        &mut top.indices,
        &mut top.nans,
    )?;
    Ok(top)
}

/// The k first values of each long span, by index: the tiles' counts, their scan per span,
/// the compaction.
fn compact_long<T: Element>(
    dev: &CudaDevice,
    x: &CudaSlice<T>,
    passes: &LongPasses,
    k: usize,
    mode: u32,
    values: &mut CudaSlice<T>,
    indices: &mut CudaSlice<u64>,
) -> Result<()> {
    // A part at least one round of the compaction (`BT_WINDOW_VECS` 16-byte loads a thread).
    let parts = passes.parts(
        dev,
        TILE * std::mem::size_of::<T>() / (WINDOW_VECS * 16 * THREADS as usize),
    );
    let mut tile_counts = dev.alloc::<u64>((passes.tiles * parts).max(1), "the tiles' counts")?;
    let blocks = grid_blocks(dev, passes.tiles * parts * THREADS as usize);
    let parts = parts as u32;
    let ds = &passes.ds;
    bt_tile_counts(
        dev,
        config(blocks, THREADS),
        &ds.of(x),
        &passes.tile_first,
        mode,
        &passes.state,
        &mut tile_counts,
        parts,
    )?;
    bt_tile_scan(
        dev,
        config((ds.count as usize).min(1 << 16), THREADS),
        &passes.tile_first,
        ds.count,
        &mut tile_counts,
        parts,
    )?;
    bt_compact_long(
        dev,
        config(blocks, THREADS),
        &ds.of(x),
        &passes.tile_first,
        mode,
        &passes.state,
        &tile_counts,
        k as u64,
        values,
        indices,
        parts,
    )
}

/// Sorts each span's k results (k at most short_limit) in one block.
fn sort_small<T: Element>(
    dev: &CudaDevice,
    top: &mut DeviceTopK<T>,
    count: usize,
    k: usize,
    mode: u32,
) -> Result<()> {
    bt_sort_small(
        dev,
        short_config::<T>(count, k),
        count as u64,
        k as u64,
        mode,
        &mut top.values,
        &mut top.indices,
    )
}

/// Sorts all results by (span, order key), stably (equal keys stay in index order): one sort
/// of (span, key) words for 32-bit keys, a sort by key then a stable sort by span for 64-bit.
fn sort_many<T: Element>(
    dev: &CudaDevice,
    top: DeviceTopK<T>,
    total: usize,
    k: usize,
    mode: u32,
) -> Result<DeviceTopK<T>> {
    let blocks = grid_blocks(dev, total);
    let narrow = std::mem::size_of::<T::Key>() == 4;
    let mut key64 = dev.alloc::<u64>(total, "the results' keys")?;
    let (total64, k64) = (total as u64, k as u64);
    bt_result_keys(
        dev,
        config(blocks, THREADS),
        &top.values,
        total64,
        k64,
        mode,
        u32::from(narrow),
        &mut key64,
    )?;
    let mut iota = dev.alloc::<u32>(total, "the result places")?;
    bt_iota(dev, config(blocks, THREADS), total64, &mut iota)?;
    let places = DeviceBuffer::from_slice(dev, iota);
    let key_buf = DeviceBuffer::from_slice(dev, key64);
    let by_key = sort_pairs_device(&key_buf, &places)?.1;
    let perm = if narrow {
        by_key
    } else {
        let mut span_ids = dev.alloc::<u32>(total, "the results' spans")?;
        bt_span_ids(
            dev,
            config(blocks, THREADS),
            by_key.as_slice(),
            total64,
            k64,
            &mut span_ids,
        )?;
        let span_buf = DeviceBuffer::from_slice(dev, span_ids);
        sort_pairs_device(&span_buf, &by_key)?.1
    };
    top.regathered(dev, total, |top, values, indices| {
        bt_permute(
            dev,
            config(blocks, THREADS),
            &top.values,
            &top.indices,
            perm.as_slice(),
            total64,
            values,
            indices,
        )
    })
}

mod sampled;

mod span_sort;

mod threshold_device;
pub(crate) use threshold_device::{hard_threshold_in_place, support_to_host, threshold};

#[cfg(test)]
mod tests;
