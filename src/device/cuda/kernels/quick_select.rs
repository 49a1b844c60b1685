//! Launchers of `kernels/quick_select.cu` (QuickSelect) and a level's state.

use cudarc::driver::{CudaSlice, CudaView};

use super::{kernel_name, QUICK_SELECT};
use crate::element::Element;

device_state! {
    /// A QuickSelect level's state: the kernels' words `QS_PIVOT`, `QS_LT`, `QS_EQ`, `QS_GT` and
    /// `QS_NANS`, in that order.
    #[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
    pub(crate) struct QuickState[40] {
        /// The pivot's key.
        pub pivot: u64,
        /// Candidates below the pivot.
        pub below: u64,
        /// Candidates equal to it.
        pub equal: u64,
        /// Candidates above it.
        pub above: u64,
        /// NaNs, counted by a pass asked to.
        pub nans: u64,
    }
}

launchers! {
    /// Picks the pivot of `x[skip..n]`: the median of a sorted sample of up to 1024 keys, one
    /// from each of equal strides at an offset hashed from `seed` (one block); clears the counts.
    fn qs_pivot[T: Element](x: dev &CudaView<'_, T>, n: val u64, skip: val u64, seed: val u64,
                            state: dev &mut CudaSlice<QuickState>)
        from QUICK_SELECT as kernel_name("qs_pivot", T::DTYPE);
        requires x.len() as u64 >= n, skip < n, !state.is_empty();

    /// Counts `x[skip..n]` below, equal to and above the pivot and bipartitions the others into
    /// `out` (below from the front, above from the back); counts NaNs when `count_nans` is 1.
    /// `x` starts on a 16-byte boundary of its buffer.
    fn qs_pass[T: Element](x: dev &CudaView<'_, T>, n: val u64, skip: val u64,
                           out: dev &mut CudaSlice<T>, cap: val u64,
                           state: dev &mut CudaSlice<QuickState>, count_nans: val u32)
        from QUICK_SELECT as kernel_name("qs_pass", T::DTYPE);
        requires x.len() as u64 >= n, skip <= n, cap >= n - skip, out.len() as u64 >= cap,
            !state.is_empty();
}
