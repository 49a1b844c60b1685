//! Sorted results of many spans: one block a span sorts its `k` results by a stable radix sort
//! of (order key, place) pairs in global scratch, skipping the digits its keys all share.

use cudarc::driver::{LaunchConfig, PushKernelArg};

use super::{driver_error, kernel_name, DeviceTopK, BATCH_SELECT};
use crate::device::cuda::CudaDevice;
use crate::element::Element;
use crate::error::Result;

/// Threads of a span's block (`BT_SEG_THREADS`).
const SPAN_SORT_THREADS: u32 = 512;

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
    let function = dev.function(&BATCH_SELECT, &kernel_name("bt_sort_spans", T::DTYPE))?;
    let mut keys_a = dev.alloc::<T::Key>(total, "the sort's keys")?;
    let mut keys_b = dev.alloc::<T::Key>(total, "the sort's keys")?;
    let mut places_a = dev.alloc::<u32>(total, "the sort's places")?;
    let mut places_b = dev.alloc::<u32>(total, "the sort's places")?;
    let mut values = dev.alloc::<T>(total, "the sorted top-k values")?;
    let mut indices = dev.alloc::<u64>(total, "the sorted top-k indices")?;
    let (count64, k64) = (count as u64, k as u64);
    let mut launch = dev.stream().launch_builder(&function);
    launch
        .arg(&top.values)
        .arg(&top.indices)
        .arg(&count64)
        .arg(&k64)
        .arg(&mode)
        .arg(&mut keys_a)
        .arg(&mut places_a)
        .arg(&mut keys_b)
        .arg(&mut places_b)
        .arg(&mut values)
        .arg(&mut indices);
    let cfg = LaunchConfig {
        grid_dim: (count.min(1 << 16) as u32, 1, 1),
        block_dim: (SPAN_SORT_THREADS, 1, 1),
        shared_mem_bytes: 0,
    };
    // SAFETY: bt_sort_spans_T(const T* values, const u64* idx, u64 nspans, u64 k, u32 mode,
    // K* keys_a, u32* places_a, K* keys_b, u32* places_b, T* out_values, u64* out_idx): every
    // buffer holds nspans * k entries (below 2^32, checked by top-k), the results of span s at
    // s * k.
    unsafe { launch.launch(cfg) }.map_err(|e| driver_error("launching bt_sort_spans", e))?;
    Ok(DeviceTopK {
        values,
        indices,
        nans: top.nans,
    })
}
