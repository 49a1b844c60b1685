//! Launchers of `kernels/bucket_select.cu` (bucketSelect) and its state, `BktState`.

use cudarc::driver::{CudaSlice, CudaView};

use super::{kernel_name, BUCKET_SELECT};
use crate::element::Element;

/// Threads per block of the passes over the data (`BKT_BLOCK`).
pub(crate) const BLOCK: u32 = 512;
/// Threads of the one-block choice (`BKT_CHOOSE`); the bucket count is a multiple of it.
pub(crate) const CHOOSE_BLOCK: u32 = 1024;
/// Words of the min/max pass's statistics: smallest and largest finite key, NaN, `-inf` and
/// `+inf` counts.
pub(crate) const STATS: usize = 5;
/// Status (`BKT_ACTIVE`): the levels go on.
pub(crate) const ACTIVE: u64 = 0;
/// Status (`BKT_DONE`): the answer is the state's result.
pub(crate) const DONE: u64 = 2;

device_state! {
    /// One selection's progress, `BktState` of `kernels/bucket_select.cu`. The candidates are the
    /// elements of the current source whose keys lie in `lo..=hi`.
    #[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
    pub(crate) struct BktState[88] {
        /// The smallest candidate key (widened).
        pub lo: u64,
        /// The largest candidate key.
        pub hi: u64,
        /// The rank sought among the candidates.
        pub k: u64,
        /// How many candidates there are.
        pub count: u64,
        /// [`ACTIVE`], `BKT_STOP` (1: the host finishes on the candidates) or [`DONE`].
        pub status: u64,
        /// The bucket chosen by the last level.
        pub bucket: u64,
        /// Consecutive levels that kept more than half of their candidates.
        pub poor: u64,
        /// Elements appended by the copy kernel.
        pub out_count: u64,
        /// The smallest key appended.
        pub out_min: u64,
        /// The largest key appended.
        pub out_max: u64,
        /// The selected key when the status is [`DONE`].
        pub result: u64,
    }
}

launchers! {
    /// The statistics of `x`'s `n` values into `stats` (initialised to `{u64::MAX, 0, 0, 0,
    /// 0}`): the smallest and largest key of the finite values (atomics), the NaN, `-inf` and
    /// `+inf` counts (added). Blocks of [`BLOCK`] threads.
    fn bkt_minmax[T: Element](x: dev &CudaView<'_, T>, n: val u64, stats: dev &mut CudaSlice<u64>)
        from BUCKET_SELECT as kernel_name("bkt_minmax", T::DTYPE);
        requires x.len() as u64 >= n, stats.len() >= STATS;

    /// Starts the selection of rank `k` among the `count` elements of a source whose keys lie in
    /// `lo..=hi`. One thread writes the state.
    fn bkt_init(state: dev &mut CudaSlice<BktState>, lo: val u64, hi: val u64, k: val u64,
                count: val u64)
        from BUCKET_SELECT as "bkt_init";
        requires !state.is_empty(), lo <= hi, k < count;

    /// One level's count: adds the candidates of `x`'s `n` values in each of `buckets` buckets
    /// to `hist`, counted per block in `buckets` `u32` counters of dynamic shared memory.
    /// Blocks of [`BLOCK`] threads.
    fn bkt_count[T: Element](x: dev &CudaView<'_, T>, n: val u64, state: dev &CudaSlice<BktState>,
                             hist: dev &mut CudaSlice<u64>, buckets: val u32)
        from BUCKET_SELECT as kernel_name("bkt_count", T::DTYPE);
        requires x.len() as u64 >= n, !state.is_empty(), hist.len() >= buckets as usize;

    /// Finds the bucket holding the rank in `hist`, updates the state and clears the histogram:
    /// records the bucket (`refine` 0, Phase I) or narrows the key range to it and decides
    /// whether to go on (`refine` 1, Phase II; at most `finish` candidates stop). One block of
    /// [`CHOOSE_BLOCK`] threads.
    fn bkt_choose[T: Element](state: dev &mut CudaSlice<BktState>, hist: dev &mut CudaSlice<u64>,
                              buckets: val u32, refine: val u32, finish: val u64)
        from BUCKET_SELECT as kernel_name("bkt_choose", T::DTYPE);
        requires !state.is_empty(), hist.len() >= buckets as usize, buckets > 0,
            buckets.is_multiple_of(CHOOSE_BLOCK), refine <= 1;

    /// Appends the candidates of `x`'s `n` values (in the chosen bucket when `by_bucket`) to
    /// `out` (never at or past `cap`) and records their count and extreme keys in the state;
    /// runs only when they fit. Blocks of [`BLOCK`] threads.
    fn bkt_copy[T: Element](x: dev &CudaView<'_, T>, n: val u64, state: dev &mut CudaSlice<BktState>,
                            out: dev &mut CudaSlice<T>, cap: val u64, buckets: val u32,
                            by_bucket: val u32)
        from BUCKET_SELECT as kernel_name("bkt_copy", T::DTYPE);
        requires x.len() as u64 >= n, !state.is_empty(), out.len() as u64 >= cap, buckets > 0,
            by_bucket <= 1;
}
