//! Launchers of `kernels/cutting_plane.cu` (Beliakov's cutting-plane median) and the sums they
//! share with the host.

use cudarc::driver::CudaSlice;

use super::{kernel_name, CUTTING_PLANE};
use crate::element::Element;

device_state! {
    /// The first pass's census of the values: infinities, NaNs and the finite values' extreme keys.
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    pub(crate) struct PlaneCensus[40] {
        /// `-inf` values.
        pub neg_inf: u64,
        /// `+inf` values.
        pub pos_inf: u64,
        /// NaNs.
        pub nans: u64,
        /// The smallest key of a finite value (`u64::MAX` when there is none).
        pub min_key: u64,
        /// The largest such key (0 when there is none).
        pub max_key: u64,
    }
}

impl Default for PlaneCensus {
    /// The census of no values, which `cp_stats` starts from.
    fn default() -> Self {
        PlaneCensus {
            neg_inf: 0,
            pos_inf: 0,
            nans: 0,
            min_key: u64::MAX,
            max_key: 0,
        }
    }
}

device_state! {
    /// One evaluation of the objective at `y` over the finite values (a block's, or all of them):
    /// the counts below and at most `y`, and the sums of the framed values below and above it.
    #[derive(Clone, Copy, Debug, Default, PartialEq)]
    pub(crate) struct PlaneSums[32] {
        /// Values below `y`.
        pub lt: u64,
        /// Values at most `y`.
        pub le: u64,
        /// The sum of the framed values below `y`.
        pub below: f64,
        /// The sum of the framed values above `y`.
        pub above: f64,
    }
}

launchers! {
    /// Adds the census of `x` into `census` (which starts as [`PlaneCensus::default`]).
    fn cp_stats[T: Element](x: dev &CudaSlice<T>, n: val u64, census: dev &mut CudaSlice<PlaneCensus>)
        from CUTTING_PLANE as kernel_name("cp_stats", T::DTYPE);
        requires x.len() as u64 >= n, !census.is_empty();

    /// One evaluation at `y` of the values transformed by `mode` (`center`, `scale`): block `b`
    /// writes `partial[b]` (one row a block launched).
    fn cp_reduce[T: Element](x: dev &CudaSlice<T>, n: val u64, y: val f64, mode: val u32,
                             center: val f64, scale: val f64,
                             partial: dev &mut CudaSlice<PlaneSums>)
        from CUTTING_PLANE as kernel_name("cp_reduce", T::DTYPE);
        requires x.len() as u64 >= n, !partial.is_empty();

    /// Sums the `blocks` rows of `partial` into `out` in a fixed order (one block).
    fn cp_combine(partial: dev &CudaSlice<PlaneSums>, blocks: val u64, out: dev &mut CudaSlice<PlaneSums>)
        from CUTTING_PLANE as "cp_combine";
        requires partial.len() as u64 >= blocks, !out.is_empty();

    /// Copies the values of `x` strictly between `lo` and `hi` into `out` (at most `cap`; the
    /// rest are counted, not written) and counts them in `count`.
    fn cp_copy[T: Element](x: dev &CudaSlice<T>, n: val u64, lo: val f64, hi: val f64,
                           out: dev &mut CudaSlice<T>, cap: val u64, count: dev &mut CudaSlice<u64>)
        from CUTTING_PLANE as kernel_name("cp_copy", T::DTYPE);
        requires x.len() as u64 >= n, out.len() as u64 >= cap, !count.is_empty();
}
