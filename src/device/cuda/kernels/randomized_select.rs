//! Launchers of `kernels/randomized_select.cu` (randomizedSelect).

use cudarc::driver::{CudaSlice, CudaView, CudaViewMut};

use super::radix_select::{SelState, RADIX};
use super::{kernel_name, key_suffix, RANDOMIZED_SELECT};
use crate::element::{Element, RadixKey};

/// Bins of the sample's first-digit histogram (`1 << RND_SPLIT_DIGIT`).
pub(crate) const TOP_BINS: usize = 1 << 11;
/// The pass's counters and the splitters' duplicate counts (`RND_COUNTERS`).
pub(crate) const COUNTERS: usize = 7;
/// `rnd_resolve`'s outcome for a rank the bracket missed (`RND_MISSED`).
pub(crate) const MISSED: u64 = 3;

launchers! {
    /// Gathers `s` sample keys, one from each of `s` equal strides of `x` at a hashed offset,
    /// and histograms their first digit into `top_hist` (zeroed).
    fn rnd_sample[T: Element](x: dev &CudaView<'_, T>, n: val u64, sample: dev &mut CudaSlice<T::Key>,
                              s: val u64, seed: val u64, top_hist: dev &mut CudaSlice<u32>)
        from RANDOMIZED_SELECT as kernel_name("rnd_sample", T::DTYPE);
        requires x.len() as u64 >= n, n >= s, sample.len() as u64 >= s, top_hist.len() >= TOP_BINS;

    /// Selects the splitters of sample ranks `r_lo` and `r_hi` (`u64::MAX`: that side open)
    /// into `bounds`, two blocks of `RND_SPLIT_BLOCK` threads, and clears the counters.
    fn rnd_splitters[K: RadixKey](sample: dev &CudaSlice<K>, s: val u64, top_hist: dev &CudaSlice<u32>,
                                  r_lo: val u64, r_hi: val u64, bounds: dev &mut CudaSlice<K>,
                                  counters: dev &mut CudaSlice<u64>)
        from RANDOMIZED_SELECT as format!("rnd_splitters_{}", key_suffix::<K>());
        requires sample.len() as u64 >= s, top_hist.len() >= TOP_BINS, bounds.len() >= 2,
            counters.len() >= COUNTERS;

    /// Counts the keys below and at the splitters and the NaNs, and copies those of the bracket
    /// into `cand` (at most `cap`; the rest are counted, not written).
    fn rnd_pass[T: Element](x: dev &CudaView<'_, T>, n: val u64, bounds: dev &CudaSlice<T::Key>,
                            cand: dev &mut CudaSlice<T::Key>, cap: val u64,
                            counters: dev &mut CudaSlice<u64>)
        from RANDOMIZED_SELECT as kernel_name("rnd_pass", T::DTYPE);
        requires x.len() as u64 >= n, bounds.len() >= 2, cand.len() as u64 >= cap,
            counters.len() >= COUNTERS;

    /// Places rank `k` among the counts (one block): on a splitter (its key to `out[slot]`),
    /// among the copies (whose radix selection it starts in `state`), or missed; writes the
    /// outcome to `out[ranks + slot]` and the NaN count to `out[2 * ranks]`.
    fn rnd_resolve[K: RadixKey](bounds: dev &CudaSlice<K>, counters: dev &CudaSlice<u64>, k: val u64,
                                cap: val u64, state: dev &mut CudaSlice<SelState>,
                                hist: dev &mut CudaSlice<u64>, out: dev &mut CudaViewMut<'_, u64>,
                                slot: val u64, ranks: val u64)
        from RANDOMIZED_SELECT as format!("rnd_resolve_{}", key_suffix::<K>());
        requires bounds.len() >= 2, counters.len() >= COUNTERS, !state.is_empty(),
            hist.len() >= RADIX, slot < ranks, out.len() as u64 > 2 * ranks;
}
