//! Launchers of `kernels/batch_select.cu` (batched selection, top-k and hard thresholding over
//! spans) and a long-span query's state, `QueryState`.
//!
//! Most kernels take the spans as `x, offsets, cols, stride, nspans`: the segments
//! `offsets[s]..offsets[s + 1]` of `x`, or with `offsets` null the rows of `cols` values
//! `stride` apart. Their launchers take those five as one [`SpanArgs`].

use cudarc::driver::{CudaSlice, LaunchArgs, PushKernelArg};

use super::{kernel_name, key_suffix, OrNull, BATCH_SELECT};
use crate::element::{Element, RadixKey};

/// Threads of a block of most kernels (`BT_THREADS`).
pub(crate) const THREADS: u32 = 256;
/// The longest span the short-span kernels and `bt_sort_small` take (`BT_SHORT`).
pub(crate) const SHORT: usize = 4096;
/// The longest span `bt_topk_warp` takes (`BT_WARP_SPAN`).
pub(crate) const WARP_SPAN: usize = 1024;
/// The most results a span `bt_topk_warp` sorts (`BT_WARP_SORT`).
pub(crate) const WARP_SORT: usize = 256;
/// Threads of `bt_topk_warp`'s block (`BT_WARP_THREADS`).
pub(crate) const WARP_THREADS: u32 = 256;

/// Blocks of `bt_topk_warp` resident on a multiprocessor for elements of `T`
/// (`BT_WARP_BLOCKS`: its launch bounds, set by the registers of 32 keys a thread).
pub(crate) fn warp_blocks<T: Element>() -> usize {
    if std::mem::size_of::<T::Key>() == 4 {
        4
    } else {
        2
    }
}
/// Values of a tile of a long span (`BT_TILE`).
pub(crate) const TILE: usize = 16384;
/// 16-byte loads a thread makes at once in the counting and copying passes (`BT_WINDOW_VECS`).
pub(crate) const WINDOW_VECS: usize = 4;
/// Bytes of a tile of `bt_window_ordered` (`BT_ORDER_TILE_BYTES`).
pub(crate) const ORDER_TILE_BYTES: usize = 32768;
/// Threads of `bt_topk_resident`'s block (`BT_RESIDENT_THREADS`).
pub(crate) const RESIDENT_THREADS: u32 = 1024;
/// Bytes of `bt_topk_resident`'s histograms, after the keys in its shared memory: 256 counts a
/// warp.
pub(crate) const RESIDENT_HISTOGRAMS: usize = 256 * 4 * (RESIDENT_THREADS as usize / 32);
/// Consecutive values a sample chunk takes (`BT_CHUNK`).
pub(crate) const CHUNK: usize = 8;
/// An open side of a sample bracket (`BT_NO_BOUND`).
pub(crate) const NO_BOUND: u32 = u32::MAX;
/// Threads of `bt_sample_bounds`'s block (`BT_BOUNDS_THREADS`).
pub(crate) const BOUNDS_THREADS: u32 = 1024;
/// Threads of `bt_sort_spans`'s block (`BT_SEG_THREADS`).
pub(crate) const SEG_THREADS: u32 = 512;
/// Bins of a digit histogram.
const BINS: u64 = 256;

device_state! {
    /// One long-span query (a span and a rank) between the digit passes: `BT_STATE` words of the
    /// kernels' `state`, in their order.
    #[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
    pub(crate) struct QueryState[32] {
        /// The order-key bits fixed so far (in place, higher bits); after the last digit, the
        /// selected order key.
        pub prefix: u64,
        /// The rank still sought among the keys with that prefix.
        pub rank: u64,
        /// The query's span.
        pub span: u64,
        /// Unused: pads the state to `BT_STATE` words.
        pub pad: u64,
    }
}

impl QueryState {
    /// The query of rank `rank` of span `span`, no digit fixed.
    pub(crate) fn new(rank: u64, span: u64) -> QueryState {
        QueryState {
            prefix: 0,
            rank,
            span,
            pad: 0,
        }
    }
}

/// The spans as most kernels take them, pushed as five parameters in this order: the values
/// `x`, the segment bounds `offsets` (`None`: the null pointer, rows), the rows' `cols` and
/// `stride`, and the number of spans `nspans`.
pub(crate) struct SpanArgs<'a, T> {
    /// The values the spans lie in.
    pub x: &'a CudaSlice<T>,
    /// The spans' `nspans + 1` bounds, or `None` for rows.
    pub offsets: Option<&'a CudaSlice<u64>>,
    /// Values a row (rows only).
    pub cols: u64,
    /// The distance between rows' starts (rows only).
    pub stride: u64,
    /// The number of spans.
    pub nspans: u64,
}

impl<T> SpanArgs<'_, T> {
    /// Whether the spans fit `x` (see [`spans_fit`]).
    fn fit(&self) -> bool {
        spans_fit(
            self.x.len(),
            self.offsets.map(|o| o.len()),
            self.cols,
            self.stride,
            self.nspans,
        )
    }
}

// SAFETY: pushes `x` and `offsets` as the device memory (or the null pointer) they are, through
// their own implementations, then `cols`, `stride` and `nspans` by value, borrowed from the
// `SpanArgs` for as long as the launch arguments live: the kernels' five span parameters, in
// their order and of their types.
unsafe impl<'a, 'b: 'a, 'c: 'b, T> PushKernelArg<&'b SpanArgs<'c, T>> for LaunchArgs<'a> {
    fn arg(&mut self, spans: &'b SpanArgs<'c, T>) -> &mut Self {
        self.arg(spans.x)
            .arg(OrNull(spans.offsets))
            .arg(&spans.cols)
            .arg(&spans.stride)
            .arg(&spans.nspans)
    }
}

/// Whether `nspans` spans fit `x_len` values: `offsets` (its length when given) holds their
/// `nspans + 1` bounds, or the rows of `cols` values `stride` apart lie inside.
fn spans_fit(x_len: usize, offsets: Option<usize>, cols: u64, stride: u64, nspans: u64) -> bool {
    match offsets {
        Some(len) => len as u64 > nspans,
        None => {
            nspans == 0
                || (nspans - 1)
                    .checked_mul(stride)
                    .and_then(|start| start.checked_add(cols))
                    .is_some_and(|end| end <= x_len as u64)
        }
    }
}

/// Whether `parts` is a power of two dividing a tile.
fn tile_parts(parts: u32) -> bool {
    parts.is_power_of_two() && (TILE as u64).is_multiple_of(parts as u64)
}

launchers! {
    /// One block a short span: the values of the ranks (`ranks[s]` with `one_per_span`, else
    /// the `m` ranks of `ranks`) by radix selection of its order keys in shared memory, or a
    /// bitonic sort for more than 8 ranks; each span's NaNs. The shared memory holds the
    /// longest span's keys, or for the sort a power of two of keys and 32-bit places.
    fn bt_select_short[T: Element](spans: dev &SpanArgs<'_, T>,
                                   ranks: dev &CudaSlice<u64>, m: val u32, one_per_span: val u32,
                                   out: dev &mut CudaSlice<T>, nan_counts: dev &mut CudaSlice<u64>)
        from BATCH_SELECT as kernel_name("bt_select_short", T::DTYPE);
        requires spans.fit(),
            ranks.len() as u64 >= (if one_per_span != 0 { spans.nspans } else { m as u64 }),
            out.len() as u64 >= spans.nspans * m as u64, nan_counts.len() as u64 >= spans.nspans;

    /// One block a short span: its `k` first in the order of `mode` (ties by index) from its
    /// order keys in shared memory (spans of at most `room` values), written by index and
    /// sorted when asked; each span's NaNs. The shared memory holds `room` keys, and for the
    /// sort a power of two of at least `k` keys and 32-bit places.
    fn bt_topk_short[T: Element](spans: dev &SpanArgs<'_, T>, room: val u64,
                                 k: val u64, mode: val u32, sorted: val u32,
                                 out_values: dev &mut CudaSlice<T>, out_idx: dev &mut CudaSlice<u64>,
                                 nan_counts: dev &mut CudaSlice<u64>)
        from BATCH_SELECT as kernel_name("bt_topk_short", T::DTYPE);
        requires spans.fit(),
            out_values.len() as u64 >= spans.nspans * k, out_idx.len() as u64 >= spans.nspans * k,
            nan_counts.len() as u64 >= spans.nspans, k <= room;

    /// One warp a span of at most `WARP_SPAN` values: its `k` first in the order of `mode`
    /// (ties by index) from its order keys in registers, written by index, or sorted when
    /// asked and `k` is at most `WARP_SORT`; each span's NaNs. Blocks of `WARP_THREADS`.
    fn bt_topk_warp[T: Element](spans: dev &SpanArgs<'_, T>, k: val u64, mode: val u32,
                                sorted: val u32, out_values: dev &mut CudaSlice<T>,
                                out_idx: dev &mut CudaSlice<u64>,
                                nan_counts: dev &mut CudaSlice<u64>)
        from BATCH_SELECT as kernel_name("bt_topk_warp", T::DTYPE);
        requires spans.fit(),
            out_values.len() as u64 >= spans.nspans * k, out_idx.len() as u64 >= spans.nspans * k,
            nan_counts.len() as u64 >= spans.nspans, k as usize <= WARP_SPAN,
            sorted == 0 || k as usize <= WARP_SORT;

    /// [`bt_topk_short`] by one block of `RESIDENT_THREADS` a span with a histogram a warp,
    /// never sorting: the shared memory holds `room` keys, then the histograms.
    fn bt_topk_resident[T: Element](spans: dev &SpanArgs<'_, T>, room: val u64,
                                    k: val u64, mode: val u32, sorted: val u32,
                                    out_values: dev &mut CudaSlice<T>,
                                    out_idx: dev &mut CudaSlice<u64>,
                                    nan_counts: dev &mut CudaSlice<u64>)
        from BATCH_SELECT as kernel_name("bt_topk_resident", T::DTYPE);
        requires spans.fit(),
            out_values.len() as u64 >= spans.nspans * k, out_idx.len() as u64 >= spans.nspans * k,
            nan_counts.len() as u64 >= spans.nspans, k <= room, sorted == 0;

    /// One digit's histogram pass of long-span queries over every tile (few tiles cut into
    /// `parts` parts, a block each): each query's histogram of the digit at `shift` among the
    /// keys with its prefix (span s's queries are `q_first[s]..q_first[s + 1]`, or null: one a
    /// span), each tile's histogram into `tile_hist` (or null; then one part a tile), each
    /// span's NaNs in the first pass. With `done` (a zeroed counter, or null) the last block
    /// also makes the `nq` queries' choices.
    fn bt_hist[T: Element](spans: dev &SpanArgs<'_, T>, tile_first: dev &CudaSlice<u64>,
                           q_first: dev OrNull<&CudaSlice<u64>>, mode: val u32,
                           state: dev &mut CudaSlice<QueryState>, hist: dev &mut CudaSlice<u32>,
                           shift: val u32, nan_counts: dev &mut CudaSlice<u64>,
                           tile_hist: dev OrNull<&mut CudaSlice<u32>>, parts: val u32,
                           done: dev OrNull<&mut CudaSlice<u32>>, nq: val u64)
        from BATCH_SELECT as kernel_name("bt_hist", T::DTYPE);
        requires spans.fit(),
            tile_first.len() as u64 > spans.nspans,
            q_first.given_len().map_or(nq >= spans.nspans, |len| len as u64 > spans.nspans),
            state.len() as u64 >= nq, hist.len() as u64 >= nq * BINS, shift < T::Key::BITS,
            nan_counts.len() as u64 >= spans.nspans, tile_parts(parts),
            tile_hist.given_len().is_none() || parts == 1,
            done.given_len().is_none_or(|len| len >= 1);

    /// Each span's NaNs (for selections of no rank), a tile a block.
    fn bt_nan_counts[T: Element](spans: dev &SpanArgs<'_, T>,
                                 tile_first: dev &CudaSlice<u64>,
                                 nan_counts: dev &mut CudaSlice<u64>)
        from BATCH_SELECT as kernel_name("bt_nan_counts", T::DTYPE);
        requires spans.fit(),
            tile_first.len() as u64 > spans.nspans, nan_counts.len() as u64 >= spans.nspans;

    /// The filter of long spans (one query a span): the (order key, index in span) pairs of
    /// the values whose digits above `shift` are at most (or with `equal_only` equal to) the
    /// query's chosen ones, in index order, each tile's at its place in `tile_counts` (the
    /// exclusive prefixes of what `bt_filter_counts` counted). `K` is `T`'s key type.
    fn bt_filter[T: Element, K: RadixKey](spans: dev &SpanArgs<'_, T>,
                                          tile_first: dev &CudaSlice<u64>, mode: val u32,
                                          state: dev &CudaSlice<QueryState>, shift: val u32,
                                          equal_only: val u32, tile_counts: dev &CudaSlice<u64>,
                                          ckeys: dev &mut CudaSlice<K>, cidx: dev &mut CudaSlice<u32>)
        from BATCH_SELECT as kernel_name("bt_filter", T::DTYPE);
        requires K::BITS == T::Key::BITS,
            spans.fit(),
            tile_first.len() as u64 > spans.nspans, state.len() as u64 >= spans.nspans, shift < K::BITS,
            ckeys.len() == cidx.len();

    /// Results on candidates mapped back (`total`, `k` a span): the candidate places
    /// `positions` (inside each span's candidates, `cand_first[s]..`) become the spans'
    /// indices through `cidx`, and the values are read from `x`.
    fn bt_map_results[T: Element](x: dev &CudaSlice<T>, offsets: dev OrNull<&CudaSlice<u64>>,
                                  cols: val u64, stride: val u64, k: val u64, total: val u64,
                                  cand_first: dev &CudaSlice<u64>, cidx: dev &CudaSlice<u32>,
                                  positions: dev &CudaSlice<u64>, out_values: dev &mut CudaSlice<T>,
                                  out_idx: dev &mut CudaSlice<u64>)
        from BATCH_SELECT as kernel_name("bt_map_results", T::DTYPE);
        requires k > 0, total.is_multiple_of(k),
            spans_fit(x.len(), offsets.given_len(), cols, stride, total / k),
            cand_first.len() as u64 > total / k, positions.len() as u64 >= total,
            out_values.len() as u64 >= total, out_idx.len() as u64 >= total;

    /// Per part of a tile (`parts` a tile): the keys below the span's selected key and those
    /// equal to it, packed (high, low) into `tile_counts`.
    fn bt_tile_counts[T: Element](spans: dev &SpanArgs<'_, T>,
                                  tile_first: dev &CudaSlice<u64>, mode: val u32,
                                  state: dev &CudaSlice<QueryState>,
                                  tile_counts: dev &mut CudaSlice<u64>, parts: val u32)
        from BATCH_SELECT as kernel_name("bt_tile_counts", T::DTYPE);
        requires spans.fit(),
            tile_first.len() as u64 > spans.nspans, state.len() as u64 >= spans.nspans, tile_parts(parts);

    /// One block a span: its parts' counts (`parts` a tile, those of span s at
    /// `parts * tile_first[s]..parts * tile_first[s + 1]`) turned into exclusive prefixes
    /// within it.
    fn bt_tile_scan(tile_first: dev &CudaSlice<u64>, nspans: val u64,
                    tile_counts: dev &mut CudaSlice<u64>, parts: val u32)
        from BATCH_SELECT as "bt_tile_scan";
        requires tile_first.len() as u64 > nspans, parts >= 1;

    /// The index-ordered compaction of long spans: each span's keys below its selected key
    /// and the first of those equal to it (as many as its state's rank says), `k` at `s * k`,
    /// in rounds of `BT_WINDOW_VECS` 16-byte loads a thread, at the places the scanned
    /// `tile_counts` give.
    fn bt_compact_long[T: Element](spans: dev &SpanArgs<'_, T>,
                                   tile_first: dev &CudaSlice<u64>, mode: val u32,
                                   state: dev &CudaSlice<QueryState>,
                                   tile_counts: dev &CudaSlice<u64>, k: val u64,
                                   out_values: dev &mut CudaSlice<T>,
                                   out_idx: dev &mut CudaSlice<u64>, parts: val u32)
        from BATCH_SELECT as kernel_name("bt_compact_long", T::DTYPE);
        requires spans.fit(),
            tile_first.len() as u64 > spans.nspans, state.len() as u64 >= spans.nspans,
            out_values.len() as u64 >= spans.nspans * k, out_idx.len() as u64 >= spans.nspans * k,
            tile_parts(parts);

    /// The order keys of `total` results (`k` a span) for their sort, with the span above a
    /// 32-bit key when `with_span`.
    fn bt_result_keys[T: Element](values: dev &CudaSlice<T>, total: val u64, k: val u64,
                                  mode: val u32, with_span: val u32,
                                  key64: dev &mut CudaSlice<u64>)
        from BATCH_SELECT as kernel_name("bt_result_keys", T::DTYPE);
        requires values.len() as u64 >= total, key64.len() as u64 >= total, k > 0;

    /// The sorted results' gather: `out[i] = in[perm[i]]` for the values and the indices.
    fn bt_permute[T: Element](values: dev &CudaSlice<T>, idx: dev &CudaSlice<u64>,
                              perm: dev &CudaSlice<u32>, total: val u64,
                              out_values: dev &mut CudaSlice<T>, out_idx: dev &mut CudaSlice<u64>)
        from BATCH_SELECT as kernel_name("bt_permute", T::DTYPE);
        requires values.len() as u64 >= total, idx.len() as u64 >= total,
            perm.len() as u64 >= total, out_values.len() as u64 >= total,
            out_idx.len() as u64 >= total;

    /// One block a span: its `k` results (by index) sorted by (order key, index) in shared
    /// memory, which holds a power of two of at least `k` keys and 32-bit places.
    fn bt_sort_small[T: Element](nspans: val u64, k: val u64, mode: val u32,
                                 out_values: dev &mut CudaSlice<T>, out_idx: dev &mut CudaSlice<u64>)
        from BATCH_SELECT as kernel_name("bt_sort_small", T::DTYPE);
        requires out_values.len() as u64 >= nspans * k, out_idx.len() as u64 >= nspans * k,
            k <= SHORT as u64;

    /// `x[idx[i]] = values[i]` for `total` entries: the kept entries written back.
    fn bt_scatter[T: Element](values: dev &CudaSlice<T>, idx: dev &CudaSlice<u64>, total: val u64,
                              x: dev &mut CudaSlice<T>)
        from BATCH_SELECT as kernel_name("bt_scatter", T::DTYPE);
        requires values.len() as u64 >= total, idx.len() as u64 >= total,
            x.len() as u64 >= total;

    /// One block of `SEG_THREADS` a span: its `k` results sorted by (order key, index) by a
    /// stable radix sort of (key, place) pairs in the global scratch `a` and `b`, then
    /// gathered into `out_values` and `out_idx`.
    fn bt_sort_spans[T: Element](values: dev &CudaSlice<T>, idx: dev &CudaSlice<u64>, nspans: val u64,
                                 k: val u64, mode: val u32, keys_a: dev &mut CudaSlice<T::Key>,
                                 places_a: dev &mut CudaSlice<u32>,
                                 keys_b: dev &mut CudaSlice<T::Key>,
                                 places_b: dev &mut CudaSlice<u32>,
                                 out_values: dev &mut CudaSlice<T>, out_idx: dev &mut CudaSlice<u64>)
        from BATCH_SELECT as kernel_name("bt_sort_spans", T::DTYPE);
        requires nspans * k <= u32::MAX as u64, values.len() as u64 >= nspans * k,
            idx.len() as u64 >= nspans * k, keys_a.len() as u64 >= nspans * k,
            places_a.len() as u64 >= nspans * k, keys_b.len() as u64 >= nspans * k,
            places_b.len() as u64 >= nspans * k, out_values.len() as u64 >= nspans * k,
            out_idx.len() as u64 >= nspans * k;

    /// The threshold among `k` index-ordered results (`values` and their `indices`): pass 0
    /// puts the largest order key in `out[0]` (zeroed), pass 1 the last place holding it, plus
    /// one, in `out[1]`, pass 2 (one thread) that entry's key in `out[2]`, its index in
    /// `out[3]` and `nans[0]` in `out[4]`.
    fn bt_last_taken[T: Element](values: dev &CudaSlice<T>, indices: dev &CudaSlice<u64>,
                                 nans: dev &CudaSlice<u64>, k: val u64, mode: val u32, pass: val u32,
                                 out: dev &mut CudaSlice<u64>)
        from BATCH_SELECT as kernel_name("bt_last_taken", T::DTYPE);
        requires k > 0, values.len() as u64 >= k, indices.len() as u64 >= k, !nans.is_empty(),
            out.len() >= 5, pass < 3;

    /// `m` sample order keys a span (`m` a multiple of `CHUNK`, at most a span's length):
    /// `m / CHUNK` evenly spaced chunks of consecutive values. `K` is `T`'s key type.
    fn bt_sample[T: Element, K: RadixKey](spans: dev &SpanArgs<'_, T>,
                                          m: val u32, mode: val u32,
                                          samples: dev &mut CudaSlice<K>)
        from BATCH_SELECT as kernel_name("bt_sample", T::DTYPE);
        requires K::BITS == T::Key::BITS,
            spans.fit(),
            m > 0, (m as usize).is_multiple_of(CHUNK), samples.len() as u64 >= spans.nspans * m as u64;

    /// One block a span: the sample keys of ranks `brackets[2s]` and `brackets[2s + 1]`
    /// (`NO_BOUND`: that side open) by radix selection of its `m` sample keys in shared
    /// memory, into `bounds[2s]` and `bounds[2s + 1]`.
    fn bt_sample_bounds[K: RadixKey](samples: dev &CudaSlice<K>, nspans: val u64, m: val u32,
                                     brackets: dev &CudaSlice<u32>, bounds: dev &mut CudaSlice<K>)
        from BATCH_SELECT as format!("bt_sample_bounds_{}", key_suffix::<K>());
        requires samples.len() as u64 >= nspans * m as u64, brackets.len() as u64 >= 2 * nspans,
            bounds.len() as u64 >= 2 * nspans;

    /// The sampled pass over the data: per span the keys below its bracket (`counts[2s]`) and
    /// inside it (`counts[2s + 1]`, counted on past the region's end), those inside copied to
    /// its region `region[s]..region[s + 1]` of `ckeys` (and their indices to `cidx`, or
    /// null) until the region is full; each span's NaNs. `K` is `T`'s key type.
    fn bt_window[T: Element, K: RadixKey](spans: dev &SpanArgs<'_, T>,
                                          tile_first: dev &CudaSlice<u64>, mode: val u32,
                                          bounds: dev &CudaSlice<K>, region: dev &CudaSlice<u64>,
                                          counts: dev &mut CudaSlice<u64>,
                                          nan_counts: dev &mut CudaSlice<u64>,
                                          ckeys: dev &mut CudaSlice<K>,
                                          cidx: dev OrNull<&mut CudaSlice<u32>>)
        from BATCH_SELECT as kernel_name("bt_window", T::DTYPE);
        requires K::BITS == T::Key::BITS,
            spans.fit(),
            tile_first.len() as u64 > spans.nspans, bounds.len() as u64 >= 2 * spans.nspans,
            region.len() as u64 > spans.nspans, counts.len() as u64 >= 2 * spans.nspans,
            nan_counts.len() as u64 >= spans.nspans,
            cidx.given_len().is_none_or(|len| len == ckeys.len());

    /// The window pass of one span with its copy in index order: the keys below the bracket
    /// `bounds` (`counts[0]`) and inside it (`counts[1]`, counted on past `cap`), those inside
    /// copied to `ckeys[..cap]` with their offsets in the span in `cidx`, in index order, and
    /// the span's NaNs. Tiles of [`ORDER_TILE_BYTES`] are taken in order from `ticket` (zero)
    /// and placed by their `status` words (one a tile, zeroed): `tiles` of them, the span's
    /// length over a tile's values. `K` is `T`'s key type.
    fn bt_window_ordered[T: Element, K: RadixKey](spans: dev &SpanArgs<'_, T>, mode: val u32,
                                                  bounds: dev &CudaSlice<K>, cap: val u64,
                                                  counts: dev &mut CudaSlice<u64>,
                                                  nan_counts: dev &mut CudaSlice<u64>,
                                                  ckeys: dev &mut CudaSlice<K>,
                                                  cidx: dev &mut CudaSlice<u32>,
                                                  status: dev &mut CudaSlice<u64>,
                                                  ticket: dev &mut CudaSlice<u32>, tiles: val u64)
        from BATCH_SELECT as kernel_name("bt_window_ordered", T::DTYPE);
        requires K::BITS == T::Key::BITS, spans.fit(), spans.nspans == 1, bounds.len() >= 2,
            counts.len() >= 2, !nan_counts.is_empty(), ckeys.len() as u64 >= cap,
            cidx.len() as u64 >= cap, !ticket.is_empty(), status.len() as u64 >= tiles;

    /// One block a span, 32-bit keys: the `k` first of the span's copied (key, index) pairs
    /// (`counts[2s + 1]` of them in its region) as words in shared memory (the largest region,
    /// `max_region` words, then a power of two of at least `k`), sorted when asked, else by
    /// index; the values read from `x`.
    fn bt_topk_window[T: Element](spans: dev &SpanArgs<'_, T>,
                                  region: dev &CudaSlice<u64>, counts: dev &CudaSlice<u64>,
                                  max_region: val u64, ckeys: dev &CudaSlice<u32>,
                                  cidx: dev &CudaSlice<u32>, k: val u64, sorted: val u32,
                                  out_values: dev &mut CudaSlice<T>,
                                  out_idx: dev &mut CudaSlice<u64>)
        from BATCH_SELECT as kernel_name("bt_topk_window", T::DTYPE);
        requires T::Key::BITS == 32,
            spans.fit(),
            region.len() as u64 > spans.nspans, counts.len() as u64 >= 2 * spans.nspans,
            ckeys.len() == cidx.len(), out_values.len() as u64 >= spans.nspans * k,
            out_idx.len() as u64 >= spans.nspans * k;

    /// One block a query: the digit of its rank from its histogram (`nq` queries of 256 bins),
    /// its prefix and rank narrowed, the histogram cleared.
    fn bt_choose[K: RadixKey](state: dev &mut CudaSlice<QueryState>, hist: dev &mut CudaSlice<u32>,
                              nq: val u64, shift: val u32)
        from BATCH_SELECT as format!("bt_choose_{}", key_suffix::<K>());
        requires state.len() as u64 >= nq, hist.len() as u64 >= nq * BINS, shift < K::BITS;

    /// The regions' copied keys packed one span after another (span s's at
    /// `first[s]..first[s + 1]`, at most its region's size).
    fn bt_gather_window[K: RadixKey](ckeys: dev &CudaSlice<K>, region: dev &CudaSlice<u64>,
                                     first: dev &CudaSlice<u64>, nspans: val u64,
                                     out: dev &mut CudaSlice<K>)
        from BATCH_SELECT as format!("bt_gather_window_{}", key_suffix::<K>());
        requires region.len() as u64 > nspans, first.len() as u64 > nspans;

    /// Per span, how many of its packed keys (`first[s]..first[s + 1]`) lie below its
    /// selected key `kth[s]`.
    fn bt_count_below[K: RadixKey](keys: dev &CudaSlice<K>, first: dev &CudaSlice<u64>,
                                   nspans: val u64, kth: dev &CudaSlice<u64>,
                                   below: dev &mut CudaSlice<u64>)
        from BATCH_SELECT as format!("bt_count_below_{}", key_suffix::<K>());
        requires first.len() as u64 > nspans, kth.len() as u64 >= nspans,
            below.len() as u64 >= nspans;

    /// `out[i] = i` for `total` places (below 2^32).
    fn bt_iota(total: val u64, out: dev &mut CudaSlice<u32>)
        from BATCH_SELECT as "bt_iota";
        requires out.len() as u64 >= total, total <= 1 << 32;

    /// The indices of results narrowed to 32 bits (every span is shorter than 2^32).
    fn bt_narrow(input: dev &CudaSlice<u64>, total: val u64, out: dev &mut CudaSlice<u32>)
        from BATCH_SELECT as "bt_narrow";
        requires input.len() as u64 >= total, out.len() as u64 >= total;

    /// The span of each sorted result: `out[i] = perm[i] / k`.
    fn bt_span_ids(perm: dev &CudaSlice<u32>, total: val u64, k: val u64, out: dev &mut CudaSlice<u32>)
        from BATCH_SELECT as "bt_span_ids";
        requires perm.len() as u64 >= total, out.len() as u64 >= total, k > 0;

    /// Per tile after the digit at `shift` (one warp a tile, one query a span): how many of its
    /// values a filter would now keep (from its histogram in `tile_hist`) into `tile_counts`;
    /// `below` (zero before the first digit) carries the values whose digits so far are below
    /// the chosen ones.
    fn bt_filter_counts(tile_first: dev &CudaSlice<u64>, nspans: val u64,
                        tile_hist: dev &CudaSlice<u32>, state: dev &CudaSlice<QueryState>,
                        shift: val u32, equal_only: val u32, below: dev &mut CudaSlice<u64>,
                        tile_counts: dev &mut CudaSlice<u64>)
        from BATCH_SELECT as "bt_filter_counts";
        requires tile_first.len() as u64 > nspans, state.len() as u64 >= nspans, shift < 64,
            below.len() == tile_counts.len(),
            tile_hist.len() as u64 >= BINS * tile_counts.len() as u64;
}
