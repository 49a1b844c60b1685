//! Launchers of `kernels/fused_multiselect.cu` (fused bucket multiselection): the plan, the
//! subset count, the fused count-and-write pass, the totals, the prediction, the choice, the
//! gather and the final sorts; for the exact form, the count pass, the settlement and the
//! appending pass. Every kernel after the plan returns at once once the status
//! word records a failure.

use cudarc::driver::{CudaSlice, CudaView, CudaViewMut};

use super::{kernel_name, key_suffix, FUSED_MULTISELECT};
use crate::element::{Element, RadixKey};

/// Threads of the passes (`FMS_BLOCK`).
pub(crate) const BLOCK: u32 = 512;
/// Threads of the one-block kernels (`FMS_PLAN_THREADS`) and of the final blocks
/// (`FMS_FINAL_THREADS`).
pub(crate) const ONE_BLOCK: u32 = 1024;
/// Buckets at most (`FMS_BUCKETS`).
pub(crate) const BUCKETS: usize = 16384;
/// Entries of the plan's table (`FMS_TABLE`), one word each.
pub(crate) const TABLE: usize = 1026;
/// Distinct ranks a run takes (`FMS_MAX_RANKS`).
pub(crate) const MAX_RANKS: usize = 256;
/// Blocks of partial counts one thread of `fms_totals` adds (`FMS_TOTAL_GROUP`).
pub(crate) const TOTAL_GROUP: usize = 16;
/// Words of the plan's parameters (`FMS_PARAMS`): base, coarse shift, buckets used, the
/// largest key's bucket.
pub(crate) const PARAMS: usize = 4;
/// Words of the choice's output: active buckets, the keys they hold, the elements whose key is
/// the largest.
pub(crate) const CHOICE: usize = 3;
/// Words of the bucket mark bits (`FMS_BUCKETS / 32`).
pub(crate) const MARK_WORDS: usize = BUCKETS / 32;

/// The gather's dynamic shared memory for `max_active` active buckets: two bytes a bucket for
/// the slots, then 24 bytes an active bucket (its segment's start, the tile's base in it, two
/// counts).
pub(crate) fn gather_shared(max_active: usize) -> usize {
    BUCKETS * 2 + max_active * 24
}

launchers! {
    /// The plan, one block of [`ONE_BLOCK`] threads: from a 16384-element sample of `x[0..n)`
    /// (positions hashed from `seed`), coarse bins over its key range with a power of two of
    /// equal buckets each (at most `max_buckets` in all) in `table`, and `params`.
    fn fms_plan[T: Element](x: dev &CudaView<'_, T>, n: val u64, seed: val u64,
                            max_buckets: val u32, table: dev &mut CudaSlice<u32>,
                            params: dev &mut CudaViewMut<'_, u64>)
        from FUSED_MULTISELECT as kernel_name("fms_plan", T::DTYPE);
        requires @shape: shape.block_dim == (ONE_BLOCK, 1, 1),
            x.len() as u64 >= n, max_buckets as usize <= BUCKETS, table.len() >= TABLE,
            params.len() >= PARAMS;

    /// The subset count, blocks of [`BLOCK`] threads: every bucket counted over one 64-byte
    /// piece in each group of `group` (a power of two from 2 to 16, the piece hashed from
    /// `seed`), per block, into row `blockIdx.x` of `partial` (the plan's buckets a row).
    fn fms_subset[T: Element](x: dev &CudaView<'_, T>, n: val u64, table: dev &CudaSlice<u32>,
                              params: dev &CudaView<'_, u64>, group: val u32, seed: val u64,
                              partial: dev &mut CudaSlice<u32>)
        from FUSED_MULTISELECT as kernel_name("fms_subset", T::DTYPE);
        requires @shape: shape.block_dim == (BLOCK, 1, 1),
            x.len() as u64 >= n, table.len() >= TABLE, params.len() >= PARAMS,
            group.is_power_of_two() && (2..=16).contains(&group);

    /// The fused pass, blocks of [`BLOCK`] threads: every element counted in its bucket (per
    /// block, into `partial` as the subset count), and the keys of the buckets marked in
    /// `marks` appended to `out[0..cap)` through `out_count`.
    fn fms_fused[T: Element](x: dev &CudaView<'_, T>, n: val u64, table: dev &CudaSlice<u32>,
                             params: dev &CudaView<'_, u64>, marks: dev &CudaView<'_, u32>,
                             partial: dev &mut CudaSlice<u32>, out: dev &mut CudaSlice<T::Key>,
                             cap: val u64, out_count: dev &mut CudaViewMut<'_, u64>,
                             status: dev &CudaView<'_, u32>)
        from FUSED_MULTISELECT as kernel_name("fms_fused", T::DTYPE);
        requires @shape: shape.block_dim == (BLOCK, 1, 1),
            x.len() as u64 >= n, table.len() >= TABLE, params.len() >= PARAMS,
            marks.len() >= MARK_WORDS, out.len() as u64 >= cap, !out_count.is_empty(),
            !status.is_empty();

    /// The exact form's count pass, blocks of [`BLOCK`] threads: every element counted in its
    /// bucket, per block, into row `blockIdx.x` of `partial` (the plan's buckets a row).
    fn fms_count[T: Element](x: dev &CudaView<'_, T>, n: val u64, table: dev &CudaSlice<u32>,
                             params: dev &CudaView<'_, u64>, partial: dev &mut CudaSlice<u32>,
                             status: dev &CudaView<'_, u32>)
        from FUSED_MULTISELECT as kernel_name("fms_count", T::DTYPE);
        requires @shape: shape.block_dim == (BLOCK, 1, 1),
            x.len() as u64 >= n, table.len() >= TABLE, params.len() >= PARAMS,
            !status.is_empty();

    /// The exact form's second pass, blocks of [`BLOCK`] threads: the keys of the buckets
    /// marked in `marks` appended to `out[0..cap)` through `out_count` (in no order), nothing
    /// counted.
    fn fms_append[T: Element](x: dev &CudaView<'_, T>, n: val u64, table: dev &CudaSlice<u32>,
                              params: dev &CudaView<'_, u64>, marks: dev &CudaView<'_, u32>,
                              out: dev &mut CudaSlice<T::Key>, cap: val u64,
                              out_count: dev &mut CudaViewMut<'_, u64>,
                              status: dev &CudaView<'_, u32>)
        from FUSED_MULTISELECT as kernel_name("fms_append", T::DTYPE);
        requires @shape: shape.block_dim == (BLOCK, 1, 1),
            x.len() as u64 >= n, table.len() >= TABLE, params.len() >= PARAMS,
            marks.len() >= MARK_WORDS, out.len() as u64 >= cap, !out_count.is_empty(),
            !status.is_empty();

    /// `totals[c] += of bucket `c` in a group of [`TOTAL_GROUP`] of the `blocks`
    /// rows of `partial` (`blockIdx.y` the group), one thread a bucket; `totals` zero on entry.
    fn fms_totals(partial: dev &CudaSlice<u32>, blocks: val u64, params: dev &CudaView<'_, u64>,
                  totals: dev &mut CudaViewMut<'_, u64>, status: dev &CudaView<'_, u32>)
        from FUSED_MULTISELECT as "fms_totals";
        requires @shape: (shape.grid_dim.0 * shape.block_dim.0) as usize >= BUCKETS,
            shape.grid_dim.1 as u64 * TOTAL_GROUP as u64 >= blocks,
            partial.len() as u64 >= blocks, params.len() >= PARAMS,
            totals.len() >= BUCKETS, !status.is_empty();

    /// The prediction, one block of [`ONE_BLOCK`] threads: from the subset totals, `marks` of
    /// the buckets each of the `r` ranks of `n` may fall in (a window of `sigmas` standard
    /// deviations of the estimate each side); marks that would overflow the workspace of `cap`
    /// keys (by the estimate) fail the run. `starts`: `BUCKETS + 1` words of scratch.
    fn fms_predict(totals: dev &CudaView<'_, u64>, params: dev &CudaView<'_, u64>,
                   ranks: dev &CudaView<'_, u64>, r: val u64, n: val u64, cap: val u64,
                   sigmas: val f64, starts: dev &mut CudaViewMut<'_, u64>,
                   marks: dev &mut CudaViewMut<'_, u32>, status: dev &mut CudaViewMut<'_, u32>)
        from FUSED_MULTISELECT as "fms_predict";
        requires @shape: shape.block_dim == (ONE_BLOCK, 1, 1),
            totals.len() >= BUCKETS, params.len() >= PARAMS, ranks.len() as u64 >= r,
            r <= MAX_RANKS as u64, starts.len() > BUCKETS, marks.len() >= MARK_WORDS,
            !status.is_empty();

    /// The choice, one block of [`ONE_BLOCK`] threads: from the exact totals, each of the `r`
    /// ranks' bucket and rank inside (`info`, two words a rank; a rank whose bucket was not
    /// written fails the run), a segment of the second workspace (`cap2` keys) for each active
    /// bucket (`act`, four words each; `slots`: each bucket's active index), `out` (active
    /// buckets, their keys, the largest key's elements) and the results known without a sort.
    /// `written` is the fused pass's count of appended keys (a workspace of `cap`).
    fn fms_choose[K: RadixKey](totals: dev &CudaView<'_, u64>, table: dev &CudaSlice<u32>,
                               params: dev &CudaView<'_, u64>, marks: dev &CudaView<'_, u32>,
                               ranks: dev &CudaView<'_, u64>, r: val u64,
                               written: dev &CudaView<'_, u64>, cap: val u64, cap2: val u64,
                               starts: dev &mut CudaViewMut<'_, u64>,
                               slots: dev &mut CudaSlice<u16>,
                               act: dev &mut CudaViewMut<'_, u64>,
                               info: dev &mut CudaViewMut<'_, u64>,
                               out: dev &mut CudaViewMut<'_, u64>,
                               results: dev &mut CudaViewMut<'_, u64>,
                               status: dev &mut CudaViewMut<'_, u32>)
        from FUSED_MULTISELECT as format!("fms_choose_{}", key_suffix::<K>());
        requires @shape: shape.block_dim == (ONE_BLOCK, 1, 1),
            totals.len() >= BUCKETS, table.len() >= TABLE, params.len() >= PARAMS,
            marks.len() >= MARK_WORDS, ranks.len() as u64 >= r, r <= MAX_RANKS as u64,
            !written.is_empty(), starts.len() > BUCKETS, slots.len() >= BUCKETS,
            act.len() as u64 >= 4 * r, info.len() as u64 >= 2 * r, out.len() >= CHOICE,
            results.len() as u64 >= r, !status.is_empty();

    /// The exact form's settlement, one block of [`ONE_BLOCK`] threads: from the exact
    /// `totals`, their prefix sums (`starts`), the active buckets (those holding one of the `r`
    /// ranks and more than one key: `marks`, zero on entry) and, through `sizes` and `segs`
    /// (scratch), each one's index in `slots` and segment in a workspace of `cap2` keys; per
    /// rank its active bucket and rank inside (`info`, two words a rank) and per active bucket
    /// its segment and key range (`act`, four words each); `out` and the results known without
    /// a sort as [`fms_choose`].
    fn fms_settle[K: RadixKey](totals: dev &CudaView<'_, u64>, table: dev &CudaSlice<u32>,
                               params: dev &CudaView<'_, u64>, ranks: dev &CudaView<'_, u64>,
                               r: val u64, cap2: val u64, starts: dev &mut CudaViewMut<'_, u64>,
                               sizes: dev &mut CudaViewMut<'_, u64>,
                               segs: dev &mut CudaViewMut<'_, u64>,
                               marks: dev &mut CudaViewMut<'_, u32>,
                               slots: dev &mut CudaSlice<u16>,
                               act: dev &mut CudaViewMut<'_, u64>,
                               info: dev &mut CudaViewMut<'_, u64>,
                               out: dev &mut CudaViewMut<'_, u64>,
                               results: dev &mut CudaViewMut<'_, u64>,
                               status: dev &mut CudaViewMut<'_, u32>)
        from FUSED_MULTISELECT as format!("fms_settle_{}", key_suffix::<K>());
        requires @shape: shape.block_dim == (ONE_BLOCK, 1, 1),
            totals.len() >= BUCKETS, table.len() >= TABLE, params.len() >= PARAMS,
            ranks.len() as u64 >= r, starts.len() > BUCKETS, sizes.len() >= BUCKETS,
            segs.len() > BUCKETS, marks.len() >= MARK_WORDS, slots.len() >= BUCKETS,
            act.len() as u64 >= 4 * r, info.len() as u64 >= 2 * r, out.len() >= CHOICE,
            results.len() as u64 >= r, !status.is_empty();

    /// The gather, blocks of [`BLOCK`] threads: the keys of the active buckets (at most
    /// `max_active` of them) among the `count` (at most `cap`) kept `keys` moved to their
    /// segments of `out`. Dynamic shared memory: [`gather_shared`]`(max_active)` bytes.
    fn fms_gather[K: RadixKey](keys: dev &CudaSlice<K>, count: dev &CudaView<'_, u64>,
                               cap: val u64, table: dev &CudaSlice<u32>,
                               params: dev &CudaView<'_, u64>, slots: dev &CudaSlice<u16>,
                               act: dev &mut CudaViewMut<'_, u64>,
                               choice: dev &CudaView<'_, u64>, max_active: val u32,
                               out: dev &mut CudaSlice<K>, status: dev &CudaView<'_, u32>)
        from FUSED_MULTISELECT as format!("fms_gather_{}", key_suffix::<K>());
        requires @shape: shape.block_dim == (BLOCK, 1, 1)
                && shape.shared_mem_bytes as usize >= gather_shared(max_active as usize),
            keys.len() as u64 >= cap, !count.is_empty(), table.len() >= TABLE,
            params.len() >= PARAMS, slots.len() >= BUCKETS, choice.len() >= CHOICE,
            !status.is_empty();

    /// The final step, one block of [`ONE_BLOCK`] threads a rank: its active bucket's segment
    /// narrowed by 8-bit digits while more than 4096 keys remain, then sorted on chip; the key
    /// of the rank to `results`.
    fn fms_final[K: RadixKey](segments: dev &CudaSlice<K>, act: dev &CudaView<'_, u64>,
                              info: dev &CudaView<'_, u64>,
                              results: dev &mut CudaViewMut<'_, u64>,
                              status: dev &mut CudaViewMut<'_, u32>)
        from FUSED_MULTISELECT as format!("fms_final_{}", key_suffix::<K>());
        requires @shape: shape.block_dim == (ONE_BLOCK, 1, 1),
            info.len() >= 2 * results.len(), !status.is_empty();
}
