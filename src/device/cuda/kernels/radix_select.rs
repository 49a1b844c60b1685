//! Launchers of `kernels/radix_select.cu` (MSD radix select) and its state, `SelState`, which
//! randomizedSelect's resolve kernel also leaves for the digit passes.

use cudarc::driver::{CudaSlice, CudaView, CudaViewMut};

use super::{kernel_name, key_suffix, OrNull, RADIX_SELECT};
use crate::element::{Element, RadixKey};

/// The digits of a key: one histogram entry each.
pub(crate) const RADIX: usize = 256;
/// Threads a block of the one-launch selection of a short input (`SMALL_BLOCK`).
pub(crate) const SMALL_BLOCK: u32 = 1024;
/// The most elements a block of the one-launch selection holds: `SMALL_PER_THREAD` keys a
/// thread.
pub(crate) const SMALL_CAP: usize = SMALL_BLOCK as usize * 16;

/// The zeroed `u32` words a one-launch selection of `ranks` ranks of keys `K` takes on several
/// blocks: a histogram a rank and digit, the NaN count and the barrier's arrivals.
pub(crate) fn small_work_words<K: RadixKey>(ranks: usize) -> usize {
    ranks * (K::BITS as usize / 8) * RADIX + 2
}

device_state! {
    /// One radix selection's progress, `SelState` of `kernels/common.cuh`.
    #[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
    pub(crate) struct SelState[72] {
        /// The key bits fixed so far (in place, higher bits).
        pub prefix: u64,
        /// The rank still sought among the candidates.
        pub k: u64,
        /// How many keys match the prefix.
        pub count: u64,
        /// How many keys the source buffer holds (when not the input).
        pub src_count: u64,
        /// Keys written by the current pass.
        pub out_count: u64,
        /// How many leading bits the prefix fixes.
        pub fixed_bits: u32,
        /// The input (0), or 1 / 2 for candidate buffer 0 / 1.
        pub src: u32,
        /// 0: the pass writes nothing; 1 / 2: it copies candidates to buffer 0 / 1.
        pub dst: u32,
        /// Padding to the next `u64`.
        pub pad: u32,
        /// NaNs of the input, counted by the first pass (floats only).
        pub nans: u64,
        /// What the candidates' keys are less (0: the keys themselves); the result has it
        /// added back.
        pub base: u64,
    }
}

launchers! {
    /// Starts the selection of rank `k` among `n` keys (candidates are copied once at most
    /// `cap` remain) and clears the histogram. One block.
    fn rsel_init(state: dev &mut CudaSlice<SelState>, hist: dev &mut CudaSlice<u64>, k: val u64,
                 n: val u64, cap: val u64)
        from RADIX_SELECT as "rsel_init";
        requires !state.is_empty(), hist.len() >= RADIX, k < n;

    /// One digit's histogram pass over the candidates (the input `x` of `n` elements or a
    /// candidate buffer of `cap` keys), copying them when the state asks and counting NaNs in
    /// the first pass.
    fn rsel_pass[T: Element](x: dev &CudaView<'_, T>, n: val u64, buf0: dev &mut CudaSlice<T::Key>,
                             buf1: dev &mut CudaSlice<T::Key>,
                             state: dev &mut CudaSlice<SelState>, hist: dev &mut CudaSlice<u64>,
                             shift: val u32)
        from RADIX_SELECT as kernel_name("rsel_pass", T::DTYPE);
        requires x.len() as u64 >= n, buf0.len() == buf1.len(), !state.is_empty(),
            hist.len() >= RADIX, shift < T::Key::BITS;

    /// Chooses the digit whose bucket holds the rank sought (one block of `RADIX` threads);
    /// after the last digit, writes the key to `result[slot]` and the NaN count to
    /// `result[nans_at]`.
    fn rsel_choose[K: RadixKey](state: dev &mut CudaSlice<SelState>, hist: dev &mut CudaSlice<u64>,
                                shift: val u32, cap: val u64, result: dev &mut CudaViewMut<'_, u64>,
                                slot: val u64, nans_at: val u64)
        from RADIX_SELECT as format!("rsel_choose_{}", key_suffix::<K>());
        requires !state.is_empty(), hist.len() >= RADIX, slot < result.len() as u64,
            nans_at < result.len() as u64;

    /// Radix select of one or two ranks (`k0`, then `k1` when `ranks` is 2) of a short input
    /// (`n` at most [`SMALL_CAP`] a block) by blocks of [`SMALL_BLOCK`] threads holding its keys
    /// in registers, all resident at once: `out[r]` the key of the `r`-th rank, `out[ranks]`
    /// the NaN count. Several blocks need `work`: [`small_work_words`] zeroed words.
    fn rsel_small[T: Element](x: dev &CudaView<'_, T>, n: val u64, k0: val u64, k1: val u64,
                              ranks: val u32, out: dev &mut CudaViewMut<'_, u64>,
                              work: dev OrNull<&mut CudaSlice<u32>>)
        from RADIX_SELECT as kernel_name("rsel_small", T::DTYPE), cooperatively;
        requires @shape: shape.block_dim == (SMALL_BLOCK, 1, 1)
                && shape.grid_dim.1 == 1 && shape.grid_dim.2 == 1,
            x.len() as u64 >= n, n <= shape.grid_dim.0 as u64 * SMALL_CAP as u64,
            (1..=2).contains(&ranks), out.len() > ranks as usize, k0 < n, ranks < 2 || k1 < n,
            shape.grid_dim.0 == 1
                || work.given_len() >= Some(small_work_words::<T::Key>(ranks as usize));
}
