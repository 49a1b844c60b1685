//! Launchers of `kernels/distributed.cu` (distributed selection's local passes on a rank's
//! GPU): the statistics, the sample gather, a pass's bucket counts and their totals, the
//! reduction to the active buckets.
//!
//! A pass reads the elements themselves (first pass) or the keys kept by the last reduction
//! (`_keys` kernels), and the plan's intervals as `IV_WORDS` words each (laid out by
//! `BucketPlan::device_words`). Plans of fewer than `u16::MAX` buckets have the count write each
//! input's bucket (`ids`), which the reduction then reads (`_ids` kernels); the others leave
//! `ids` null and the reduction finds the buckets again from the plan.

use cudarc::driver::{CudaSlice, CudaView, CudaViewMut};

use super::NullPtr;
use super::{kernel_name, DISTRIBUTED};
use crate::element::Element;

/// Threads of a block of the count and reduction kernels (`DIST_BLOCK`): their tiles are made
/// of this many threads, and the count kernels are bounded for it.
pub(crate) const BLOCK: u32 = 256;
/// Words of an interval of a bucket plan (`IV_WORDS`).
pub(crate) const IV_WORDS: usize = 8;
/// Words of the statistics: NaNs, the first NaN's index, the smallest and largest keys.
pub(crate) const STATS_WORDS: usize = 4;
/// The most blocks a pass's counts may come from (`dist_offsets` scans them in one block).
pub(crate) const MAX_BLOCKS: usize = 1024;
/// Plans of fewer buckets than this have the count write every input's bucket (`u16::MAX`:
/// none).
pub(crate) const ID_BUCKETS: usize = u16::MAX as usize;
/// The most buckets a count that copies the keys of marked buckets takes (`COPY_BUCKETS`).
pub(crate) const COPY_BUCKETS: usize = 8192;

launchers! {
    /// NaNs (count, first index) and the extreme keys of the included values of the `n`
    /// elements of `x` into `out` (initialised `{0, u64::MAX, u64::MAX, 0}`).
    fn dist_stats[T: Element](x: dev &CudaSlice<T>, n: val u64, omit_nan: val u32,
                              out: dev &mut CudaSlice<u64>)
        from DISTRIBUTED as kernel_name("dist_stats", T::DTYPE);
        requires x.len() as u64 >= n, out.len() >= STATS_WORDS;

    /// `out[i]` = the key (widened) of element `pos[i]` (below the elements of `x`) for
    /// `i < count`.
    fn dist_gather[T: Element](x: dev &CudaSlice<T>, pos: dev &CudaSlice<u64>, count: val u64,
                               out: dev &mut CudaSlice<u64>)
        from DISTRIBUTED as kernel_name("dist_gather", T::DTYPE);
        requires pos.len() as u64 >= count, out.len() as u64 >= count;

    /// The bucket counts of the `n` elements of `x` under the plan (`p` intervals of `iv`, of
    /// `buckets` buckets), a row of `partial` a block (counted in `4 buckets` bytes of shared
    /// memory and written when `shared_ok`, else added to the zeroed row), and each element's
    /// bucket into `ids` (`u16::MAX`: none).
    fn dist_count[T: Element](x: dev &CudaSlice<T>, n: val u64, iv: dev &CudaSlice<u64>, p: val u32,
                              buckets: val u32, shared_ok: val u32,
                              partial: dev &mut CudaSlice<u32>, ids: dev &mut CudaSlice<u16>)
        from DISTRIBUTED as kernel_name("dist_count", T::DTYPE);
        requires x.len() as u64 >= n, iv.len() >= IV_WORDS * p as usize, shared_ok <= 1,
            partial.len() >= buckets as usize, (buckets as usize) < ID_BUCKETS,
            ids.len() as u64 >= n;

    /// [`dist_count_no_ids`] of a sketch's `places` places of `x` (one run of 16 elements in
    /// each group of 16 runs, at a hashed place: `shard::sketch_run`), the places below
    /// `x.len() / 256 * 16`.
    fn dist_sketch[T: Element](x: dev &CudaSlice<T>, places: val u64, iv: dev &CudaSlice<u64>,
                               p: val u32, buckets: val u32, shared_ok: val u32,
                               partial: dev &mut CudaSlice<u32>)
        from DISTRIBUTED as kernel_name("dist_sketch", T::DTYPE);
        requires places <= x.len() as u64 / 256 * 16, iv.len() >= IV_WORDS * p as usize,
            shared_ok <= 1, partial.len() >= buckets as usize;

    /// [`dist_count_no_ids`] counting in shared memory (`buckets` at most [`COPY_BUCKETS`]),
    /// which also appends the keys of the buckets marked in the bit set `marks` to
    /// `out[0, cap)` (in no order) through `out_count` (zeroed by the caller; places from `cap`
    /// on are counted only).
    fn dist_count_copy[T: Element](x: dev &CudaSlice<T>, n: val u64, iv: dev &CudaSlice<u64>,
                                   p: val u32, buckets: val u32, partial: dev &mut CudaSlice<u32>,
                                   marks: dev &CudaSlice<u32>, out: dev &mut CudaSlice<T::Key>,
                                   cap: val u64, out_count: dev &mut CudaViewMut<'_, u64>)
        from DISTRIBUTED as kernel_name("dist_count_copy", T::DTYPE);
        requires x.len() as u64 >= n, iv.len() >= IV_WORDS * p as usize,
            partial.len() >= buckets as usize, buckets as usize <= COPY_BUCKETS,
            marks.len() as u64 >= (buckets as u64).div_ceil(32), out.len() as u64 >= cap,
            !out_count.is_empty();

    /// [`dist_count`] without the elements' buckets (`ids` null).
    fn dist_count_no_ids[T: Element](x: dev &CudaSlice<T>, n: val u64, iv: dev &CudaSlice<u64>,
                                     p: val u32, buckets: val u32, shared_ok: val u32,
                                     partial: dev &mut CudaSlice<u32>, ids: val NullPtr)
        from DISTRIBUTED as kernel_name("dist_count", T::DTYPE);
        requires x.len() as u64 >= n, iv.len() >= IV_WORDS * p as usize, shared_ok <= 1,
            partial.len() >= buckets as usize;

    /// [`dist_count`] of the `n` keys of `x` kept by the last reduction.
    fn dist_count_keys[T: Element](x: dev &CudaSlice<T::Key>, n: val u64, iv: dev &CudaSlice<u64>,
                                   p: val u32, buckets: val u32, shared_ok: val u32,
                                   partial: dev &mut CudaSlice<u32>, ids: dev &mut CudaSlice<u16>)
        from DISTRIBUTED as kernel_name("dist_count_keys", T::DTYPE);
        requires x.len() as u64 >= n, iv.len() >= IV_WORDS * p as usize, shared_ok <= 1,
            partial.len() >= buckets as usize, (buckets as usize) < ID_BUCKETS,
            ids.len() as u64 >= n;

    /// [`dist_count_keys`] without the keys' buckets (`ids` null).
    fn dist_count_keys_no_ids[T: Element](x: dev &CudaSlice<T::Key>, n: val u64,
                                          iv: dev &CudaSlice<u64>, p: val u32, buckets: val u32,
                                          shared_ok: val u32, partial: dev &mut CudaSlice<u32>,
                                          ids: val NullPtr)
        from DISTRIBUTED as kernel_name("dist_count_keys", T::DTYPE);
        requires x.len() as u64 >= n, iv.len() >= IV_WORDS * p as usize, shared_ok <= 1,
            partial.len() >= buckets as usize;

    /// `counts[j]` = the sum of bucket `j`'s counts over the `blocks` rows of `partial`.
    fn dist_totals(partial: dev &CudaSlice<u32>, blocks: val u32, buckets: val u32,
                   counts: dev &mut CudaSlice<u64>)
        from DISTRIBUTED as "dist_totals";
        requires partial.len() as u64 >= blocks as u64 * buckets as u64,
            counts.len() >= buckets as usize;

    /// The offsets (`blocks + 1`) at which each block of a pass writes the inputs it keeps: the
    /// running sums of its counts of the `a` active buckets listed in `active`; one block.
    fn dist_offsets(partial: dev &CudaSlice<u32>, blocks: val u32, buckets: val u32,
                    active: dev &CudaView<'_, u32>, a: val u32, offsets: dev &mut CudaSlice<u64>)
        from DISTRIBUTED as "dist_offsets";
        requires blocks as usize <= MAX_BLOCKS,
            partial.len() as u64 >= blocks as u64 * buckets as u64, active.len() >= a as usize,
            offsets.len() > blocks as usize;

    /// The keys of the `n` elements of `x` in active buckets (`slot[bucket]` below `slots`,
    /// found from the plan) into `out`, block `b` from `offsets[b]` on (the same blocks, tiles
    /// and plan as the count's), and each slot's smallest and largest key into `extremes`.
    fn dist_reduce[T: Element](x: dev &CudaSlice<T>, n: val u64, iv: dev &CudaSlice<u64>, p: val u32,
                               slot: dev &CudaView<'_, u32>, slots: val u32,
                               offsets: dev &CudaSlice<u64>, out: dev &mut CudaSlice<T::Key>,
                               extremes: dev &mut CudaSlice<u64>)
        from DISTRIBUTED as kernel_name("dist_reduce", T::DTYPE);
        requires x.len() as u64 >= n, iv.len() >= IV_WORDS * p as usize, offsets.len() >= 2,
            extremes.len() as u64 >= 2 * slots as u64;

    /// [`dist_reduce`] of the `n` keys of `x` kept by the last reduction.
    fn dist_reduce_keys[T: Element](x: dev &CudaSlice<T::Key>, n: val u64, iv: dev &CudaSlice<u64>,
                                    p: val u32, slot: dev &CudaView<'_, u32>, slots: val u32,
                                    offsets: dev &CudaSlice<u64>, out: dev &mut CudaSlice<T::Key>,
                                    extremes: dev &mut CudaSlice<u64>)
        from DISTRIBUTED as kernel_name("dist_reduce_keys", T::DTYPE);
        requires x.len() as u64 >= n, iv.len() >= IV_WORDS * p as usize, offsets.len() >= 2,
            extremes.len() as u64 >= 2 * slots as u64;

    /// [`dist_reduce`] with each element's bucket read from `ids` (written by the count; a
    /// slot for each of the `buckets` buckets).
    fn dist_reduce_ids[T: Element](x: dev &CudaSlice<T>, ids: dev &CudaSlice<u16>, n: val u64,
                                   buckets: val u32, slot: dev &CudaView<'_, u32>, slots: val u32,
                                   offsets: dev &CudaSlice<u64>, out: dev &mut CudaSlice<T::Key>,
                                   extremes: dev &mut CudaSlice<u64>)
        from DISTRIBUTED as kernel_name("dist_reduce_ids", T::DTYPE);
        requires x.len() as u64 >= n, ids.len() as u64 >= n, (buckets as usize) < ID_BUCKETS,
            slot.len() >= buckets as usize, offsets.len() >= 2,
            extremes.len() as u64 >= 2 * slots as u64;

    /// [`dist_reduce_ids`] of the `n` keys of `x` kept by the last reduction.
    fn dist_reduce_ids_keys[T: Element](x: dev &CudaSlice<T::Key>, ids: dev &CudaSlice<u16>,
                                        n: val u64, buckets: val u32,
                                        slot: dev &CudaView<'_, u32>, slots: val u32,
                                        offsets: dev &CudaSlice<u64>,
                                        out: dev &mut CudaSlice<T::Key>,
                                        extremes: dev &mut CudaSlice<u64>)
        from DISTRIBUTED as kernel_name("dist_reduce_ids_keys", T::DTYPE);
        requires x.len() as u64 >= n, ids.len() as u64 >= n, (buckets as usize) < ID_BUCKETS,
            slot.len() >= buckets as usize, offsets.len() >= 2,
            extremes.len() as u64 >= 2 * slots as u64;
}
