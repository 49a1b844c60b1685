//! Batched selection, top-k with indices and hard thresholding.
//!
//! A batch is the rows of a row-major [`Matrix`](crate::Matrix) (any row stride) or the segments of a
//! flat array given by offsets ([`Segments`]); its data are a host slice or a CUDA
//! [`DeviceBuffer`], read in place. The operations are methods of [`Selector`]:
//!
//! - selection: the element of one rank per row or segment ([`Selector::select_rows`],
//!   [`Selector::select_segments`]; the same rank for all or one each, [`BatchRank`]), or of
//!   several ranks in every one ([`Selector::multiselect_rows`],
//!   [`Selector::multiselect_segments`]);
//! - top-k: the `k` largest or smallest values of an array, of every row or of every segment,
//!   with their indices ([`Selector::top_k`], [`Selector::top_k_rows`],
//!   [`Selector::top_k_segments`]; [`TopK`], [`TopKOptions`]);
//! - hard thresholding: keep the `k` entries of largest magnitude and zero the rest
//!   ([`Selector::hard_threshold`], in place), or only find them ([`Selector::threshold`]);
//!   [`Threshold`].
//!
//! Every operation has a `_device` form for data in a [`DeviceBuffer`], on a selector of the
//! buffer's CUDA device (on another selector it is an [`Error::Batch`](crate::Error::Batch)). The selector's
//! algorithm does not apply: the batched operations have algorithms of their own on each
//! backend, which return the same results.
//!
//! # Semantics
//!
//! - **Ranks** are 0-based in ascending order of the crate's key order (NaN after `+inf`,
//!   `-0.0` just below `+0.0`), as for [`Selector::select`](crate::Selector::select), and must
//!   be below the length of their row or segment ([`Error::RankOutOfRange`](crate::Error::RankOutOfRange) with that length
//!   otherwise, also for an empty segment).
//! - **Top-k** takes values in order (largest first, or smallest first); **ties go to the lower
//!   index**, so the result is deterministic. The `k` results of a row are sorted in that order
//!   ([`TopKOptions::sorted`]) or by ascending index. Indices count inside their row (a column
//!   index) or segment. `k` is 1 to the length of every row or segment; there is no other
//!   limit (another `k` is an [`Error::Batch`](crate::Error::Batch) naming the row or segment).
//! - **Hard thresholding** takes the `k` values of largest magnitude: `|x|` for floats (`-0.0`
//!   and `+0.0` both of magnitude 0), `unsigned_abs` for signed integers (`i32::MIN` has the
//!   largest magnitude), the value for unsigned ones; ties go to the lower index.
//! - **NaN**, by the selector's [`NanPolicy`](crate::NanPolicy): `Error` refuses a batch with a
//!   NaN in any row or segment ([`Error::NanInInput`](crate::Error::NanInInput) with the index of the first, in the
//!   data); `Omit` leaves NaNs out: ranks refer to the other values of their row or segment (a
//!   rank not below their number is [`Error::RankOutOfRange`](crate::Error::RankOutOfRange) with that number), top-k and
//!   thresholding never take a NaN (an [`Error::Batch`](crate::Error::Batch) when a row or segment holds
//!   fewer than `k` numbers); `Last` orders NaN after `+inf`: selected at the largest ranks,
//!   taken first by top-k largest and last by smallest (as `torch.topk` does), and of the
//!   largest magnitude.
//! - An empty batch (no rows, no segments) gives empty results. Inputs are never modified,
//!   except by the in-place [`Selector::hard_threshold`] and
//!   [`Selector::hard_threshold_device`].
//!
//! ```
//! use kselect::{Matrix, Segments, Selector, TopKOptions};
//!
//! let sel = Selector::new();
//! let data = [4.0f32, 1.0, 3.0, 2.0, 8.0, 6.0, 7.0, 5.0];
//! // Two rows of 4: the median (rank 1) of each, and the two largest with their columns.
//! assert_eq!(sel.select_rows(Matrix::new(&data, 2, 4), 1).unwrap(), vec![2.0, 6.0]);
//! let sorted = TopKOptions::largest().sorted(true);
//! let top = sel.top_k_rows(Matrix::new(&data, 2, 4), 2, sorted).unwrap();
//! assert_eq!(top.row(0), (&[4.0, 3.0][..], &[0, 2][..]));
//! assert_eq!(top.row(1), (&[8.0, 7.0][..], &[0, 2][..]));
//! // Segments of lengths 3 and 5: the smallest of each.
//! let v = sel.multiselect_segments(&data, Segments::new(&[0, 3, 8]), &[0]).unwrap();
//! assert_eq!(v, vec![1.0, 2.0]);
//! // Keep the 3 entries of largest magnitude.
//! let mut x = vec![0.5, -3.0, 2.0, -0.25, 3.0];
//! let t = sel.hard_threshold(&mut x, 3).unwrap();
//! assert_eq!(x, vec![0.0, -3.0, 2.0, 0.0, 3.0]);
//! assert_eq!((t.support, t.index, t.value), (vec![1, 2, 4], 2, 2.0));
//! ```

mod api;
pub(crate) mod cpu;
pub(crate) mod cuda;
mod device_threshold;
mod device_top_k;
mod error;
mod layout;
mod policy;
pub(crate) mod priority;
pub(crate) mod spans;
mod threshold;
mod top_k;

pub use device_threshold::DeviceThreshold;
pub use device_top_k::DeviceTopK;
pub use error::{BatchError, Place};
pub(crate) use layout::Rows;
pub use layout::{BatchRank, Segments};
pub use threshold::Threshold;
pub use top_k::{TopK, TopKOptions, TopKOrder};

use crate::device::{Device, DeviceBuffer};
use crate::element::Element;
use crate::error::Result;
use crate::select::input::Input;
use crate::select::Selector;
use spans::{KeyOrder, SpanRanks, SpanSelection, Spans, TopKSpans};

/// The values of `ranks` in every span (checked) on the selector's device.
fn select_spans<T: Element>(
    selector: &Selector,
    input: Input<'_, T>,
    spans: Spans<'_>,
    ranks: SpanRanks<'_>,
) -> Result<SpanSelection<T>> {
    match selector.device() {
        Device::Cpu => cpu::select_spans(input, spans, ranks, selector.allows_threads()),
        Device::Cuda(dev) => cuda::select_spans(dev, input, spans, ranks),
    }
}

/// The first `k` values of every span (checked) in `order`, on the selector's device.
fn top_k_spans<T: Element>(
    selector: &Selector,
    input: Input<'_, T>,
    spans: Spans<'_>,
    k: usize,
    order: KeyOrder,
    sorted: bool,
) -> Result<TopKSpans<T>> {
    match selector.device() {
        Device::Cpu => cpu::top_k_spans(input, spans, k, order, sorted, selector.allows_threads()),
        Device::Cuda(dev) => cuda::top_k_spans(dev, input, spans, k, order, sorted),
    }
}

/// Keeps the `k` entries of largest magnitude of a device buffer and zeroes the rest, on the
/// selector's device, under the selector's NaN policy (refusals leave the buffer as it was);
/// the support and the threshold.
fn hard_threshold_in_place<T: Element>(
    selector: &Selector,
    buf: &mut DeviceBuffer<T>,
    k: usize,
) -> Result<DeviceThreshold<T>> {
    match selector.device() {
        Device::Cpu => Err(api::cpu_selector_error("hard thresholding")),
        Device::Cuda(_) => cuda::hard_threshold_in_place(buf, k, selector.nan_policy_choice()),
    }
}
