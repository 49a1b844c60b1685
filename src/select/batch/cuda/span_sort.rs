//! Sorted results of many spans: one block a span sorts its `k` results by a stable radix sort
//! of (order key, place) pairs in global scratch, skipping the digits its keys all share.

use super::DeviceTopK;
use crate::device::cuda::kernels::batch_select::{bt_sort_spans, SEG_THREADS};
use crate::device::cuda::launch::config;
use crate::device::cuda::CudaDevice;
use crate::element::Element;
use crate::error::Result;

/// Whether one block a span keeps the device busy: at least one span a multiprocessor.
pub(super) fn suits(dev: &CudaDevice, count: usize) -> bool {
    count >= dev.multiprocessors()
}

/// Sorts each span's `k` index-ordered results by (order key, index) into new buffers.
pub(super) fn sort_spans<T: Element>(
    dev: &CudaDevice,
    top: DeviceTopK<T>,
    count: usize,
    k: usize,
    mode: u32,
) -> Result<DeviceTopK<T>> {
    let total = count * k;
    let mut keys_a = dev.alloc::<T::Key>(total, "the sort's keys")?;
    let mut keys_b = dev.alloc::<T::Key>(total, "the sort's keys")?;
    let mut places_a = dev.alloc::<u32>(total, "the sort's places")?;
    let mut places_b = dev.alloc::<u32>(total, "the sort's places")?;
    top.regathered(dev, total, |top, values, indices| {
        bt_sort_spans(
            dev,
            config(count.min(1 << 16), SEG_THREADS),
            &top.values,
            &top.indices,
            count as u64,
            k as u64,
            mode,
            &mut keys_a,
            &mut places_a,
            &mut keys_b,
            &mut places_b,
            values,
            indices,
        )
    })
}
