//! Launchers of `kernels/sample_select.cu` (SampleSelect) and the layout of a level's split
//! array of keys.

use cudarc::driver::{CudaSlice, CudaView, CudaViewMut};

use super::{kernel_name, key_suffix, SAMPLE_SELECT};
use crate::element::{Element, RadixKey};

/// Threads of the count, filter, scan and choose kernels (`SS_BLOCK`).
pub(crate) const BLOCK: u32 = 256;
/// Threads of the one-block sorting kernels (`SS_SORT_THREADS`).
pub(crate) const SORT_THREADS: u32 = 1024;
/// Sample size, and the most candidates sorted on chip (`SS_SAMPLE`).
pub(crate) const SAMPLE: usize = 2048;
/// Oracle values, bucket counters per block (`SS_BUCKETS`).
pub(crate) const BUCKETS: usize = 256;
/// Splitter slots of the search tree (`SS_SLOTS`).
pub(crate) const SLOTS: usize = 128;
/// Keys of a level's split array: the tree, the sorted splitters, their number, a flag.
pub(crate) const SPLIT_WORDS: usize = 2 * SLOTS + 2;
/// The split array's word holding the number of splitters (`SS_WORD_M`).
pub(crate) const WORD_M: usize = 2 * SLOTS;
/// `ss_count` flag: store the oracles (`SS_WRITE_ORACLES`).
pub(crate) const WRITE_ORACLES: u32 = 1;
/// `ss_count` flag: count the NaNs (`SS_COUNT_NANS`).
pub(crate) const COUNT_NANS: u32 = 2;

launchers! {
    /// Sorts a sample of `x`'s `n` values (one key from each of equal strides at an offset
    /// hashed from `seed`) and writes the level's split array: up to 127 distinct splitters as
    /// a search tree. One block of [`SORT_THREADS`] threads.
    fn ss_sample[T: Element](x: dev &CudaView<'_, T>, n: val u64, seed: val u64,
                             split: dev &mut CudaViewMut<'_, T::Key>)
        from SAMPLE_SELECT as kernel_name("ss_sample", T::DTYPE);
        requires x.len() as u64 >= n, split.len() >= SPLIT_WORDS;

    /// Sorts `x`'s `n` (at most [`SAMPLE`]) values on chip and writes, for each of the `r`
    /// ranks, the key of that rank and the first and one past the last rank of that key to
    /// `out` (three words a rank); adds the NaN count to `nans` when `count_nans`. One block of
    /// [`SORT_THREADS`] threads.
    fn ss_sort_select[T: Element](x: dev &CudaView<'_, T>, n: val u64, ranks: dev &CudaSlice<u64>,
                                  r: val u64, out: dev &mut CudaSlice<u64>,
                                  nans: dev &mut CudaSlice<u64>, count_nans: val u32)
        from SAMPLE_SELECT as kernel_name("ss_sort_select", T::DTYPE);
        requires x.len() as u64 >= n, n <= SAMPLE as u64, ranks.len() as u64 >= r,
            out.len() as u64 >= 3 * r, !nans.is_empty();

    /// The bucket of each of `x`'s `n` values by the split array's search tree: stored as a
    /// one-byte oracle (`flags & WRITE_ORACLES`), counted per block into row `b` of `partial`
    /// (`BUCKETS` rows of one word a block); NaNs added to `nans` (`flags & COUNT_NANS`).
    /// Blocks of [`BLOCK`] threads.
    fn ss_count[T: Element](x: dev &CudaView<'_, T>, n: val u64, split: dev &CudaView<'_, T::Key>,
                            oracles: dev &mut CudaViewMut<'_, u8>,
                            partial: dev &mut CudaViewMut<'_, u64>,
                            nans: dev &mut CudaSlice<u64>, flags: val u32)
        from SAMPLE_SELECT as kernel_name("ss_count", T::DTYPE);
        requires x.len() as u64 >= n, split.len() >= SPLIT_WORDS,
            (flags & WRITE_ORACLES) == 0 || oracles.len() as u64 >= n, partial.len() >= BUCKETS,
            !nans.is_empty();

    /// Turns each of the `BUCKETS` rows of `blocks` per-block counts in `partial` into its
    /// exclusive prefix sums and writes the row's sum to `totals`. `BUCKETS` blocks of
    /// [`BLOCK`] threads, one a row.
    fn ss_scan(partial: dev &mut CudaViewMut<'_, u64>, blocks: val u64,
               totals: dev &mut CudaViewMut<'_, u64>)
        from SAMPLE_SELECT as "ss_scan";
        requires partial.len() as u64 >= BUCKETS as u64 * blocks, totals.len() >= BUCKETS;

    /// Finds the bucket of each of the `r` ranks and its rank inside it (and the splitter's key
    /// for an equality bucket) into `info` after the bucket totals, and places the selected
    /// range buckets' 16-byte aligned regions of the filter's output in `dest`. One block of
    /// `BUCKETS` threads.
    fn ss_choose[K: RadixKey](totals: dev &CudaView<'_, u64>, split: dev &CudaView<'_, K>,
                              ranks: dev &CudaView<'_, u64>, r: val u64,
                              info: dev &mut CudaViewMut<'_, u64>,
                              dest: dev &mut CudaViewMut<'_, u64>)
        from SAMPLE_SELECT as format!("ss_choose_{}", key_suffix::<K>());
        requires totals.len() >= BUCKETS, split.len() >= SPLIT_WORDS, ranks.len() as u64 >= r,
            info.len() as u64 >= BUCKETS as u64 + 3 * r, dest.len() >= BUCKETS;

    /// Copies each of `x`'s `n` values whose oracle is a selected bucket to `out`, at the
    /// bucket's region (`dest`) plus the block's prefix sum (`partial`) plus its place in the
    /// block. The same grid as the `ss_count` that wrote the oracles and counts.
    fn ss_filter[T: Element](x: dev &CudaView<'_, T>, n: val u64, oracles: dev &CudaView<'_, u8>,
                             partial: dev &CudaView<'_, u64>, dest: dev &CudaView<'_, u64>,
                             out: dev &mut CudaViewMut<'_, T>)
        from SAMPLE_SELECT as kernel_name("ss_filter", T::DTYPE);
        requires x.len() as u64 >= n, oracles.len() as u64 >= n, partial.len() >= BUCKETS,
            dest.len() >= BUCKETS;
}
