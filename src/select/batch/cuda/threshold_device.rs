//! Hard thresholding on the device: the `k` entries of largest magnitude by the top-k passes
//! (in index order), the threshold entry found among them on the device; the support stays
//! there (copied to the host as 32-bit words when asked).

use cudarc::driver::CudaSlice;

use super::{
    check_span_lengths, config, download, driver_error, grid_blocks, mode_of, on_device,
    top_k_on_device, DeviceTopK,
};
use crate::device::cuda::kernels::batch_select::{bt_last_taken, bt_narrow, bt_scatter, THREADS};
use crate::device::cuda::CudaDevice;
use crate::device::DeviceBuffer;
use crate::element::Element;
use crate::error::{Error, Result};
use crate::select::batch::policy::check_taken;
use crate::select::batch::spans::{KeyOrder, Spans};
use crate::select::batch::DeviceThreshold;
use crate::select::input::Input;
use crate::select::nan::NanPolicy;

/// The support and threshold of `H_k` of `input`, which is not modified; the NaN policy is
/// applied as for every batch.
pub(crate) fn threshold<T: Element>(
    dev: &CudaDevice,
    input: Input<'_, T>,
    k: usize,
    policy: NanPolicy,
) -> Result<DeviceThreshold<T>> {
    let x = on_device(dev, input)?;
    let kept = kept(dev, x.as_slice(), input.len(), k, policy)?;
    check_taken(policy, input, &one_span(input.len()), k, &[kept.nans])?;
    threshold_of(dev, kept, k)
}

/// Keeps the `k` entries of `buf` of largest magnitude (ties by index) and zeroes the rest, in
/// place; returns the support and the threshold.
///
/// The policy is applied (as for every batch, by `policy::check_taken`) before the buffer is
/// touched: NaN under `Error`, or fewer than `k` numbers under `Omit`, is an error and leaves
/// the buffer as it was. Under `Last` NaN has the largest magnitude.
pub(crate) fn hard_threshold_in_place<T: Element>(
    buf: &mut DeviceBuffer<T>,
    k: usize,
    policy: NanPolicy,
) -> Result<DeviceThreshold<T>> {
    let n = buf.len();
    if n == 0 {
        return Err(Error::EmptyInput);
    }
    if k == 0 || k > n {
        return Err(Error::RankOutOfRange { k, n });
    }
    let dev = buf.device().clone();
    let kept = kept(&dev, buf.as_slice(), n, k, policy)?;
    check_taken(policy, Input::Device(buf), &one_span(n), k, &[kept.nans])?;
    let stream = dev.stream();
    stream
        .memset_zeros(buf.as_slice_mut())
        .map_err(|e| driver_error("zeroing the thresholded buffer", e))?;
    bt_scatter(
        &dev,
        config(k.div_ceil(THREADS as usize), THREADS),
        &kept.top.values,
        &kept.top.indices,
        k as u64,
        buf.as_slice_mut(),
    )?;
    threshold_of(&dev, kept, k)
}

/// The array as one span.
fn one_span(n: usize) -> Spans<'static> {
    Spans::Rows {
        rows: 1,
        cols: n,
        stride: n,
    }
}

/// The entries kept, by index, and the array's NaN count.
struct Kept<T: Element> {
    top: DeviceTopK<T>,
    nans: usize,
    mode: u32,
}

fn kept<T: Element>(
    dev: &CudaDevice,
    x: &CudaSlice<T>,
    n: usize,
    k: usize,
    policy: NanPolicy,
) -> Result<Kept<T>> {
    let spans = one_span(n);
    check_span_lengths(spans)?;
    let order = KeyOrder::LargestMagnitude {
        nan_low: policy == NanPolicy::Omit,
    };
    let top = top_k_on_device(dev, x, spans, k, order, false)?;
    let nans = download(dev, &top.nans, 1, "the NaN count")?[0] as usize;
    Ok(Kept {
        top,
        nans,
        mode: mode_of(order),
    })
}

/// The support (ascending, left on the device) and the threshold: the kept entry taken last.
fn threshold_of<T: Element>(
    dev: &CudaDevice,
    kept: Kept<T>,
    k: usize,
) -> Result<DeviceThreshold<T>> {
    let place = last_taken(dev, &kept.top.values, k, kept.mode)?;
    let mut value = [T::default()];
    let mut index = [0u64];
    let stream = dev.stream();
    stream
        .memcpy_dtoh(&kept.top.values.slice(place..place + 1), &mut value)
        .map_err(|e| driver_error("copying the threshold to the host", e))?;
    stream
        .memcpy_dtoh(&kept.top.indices.slice(place..place + 1), &mut index)
        .map_err(|e| driver_error("copying the threshold's index to the host", e))?;
    let support = DeviceBuffer::from_slice(dev, kept.top.indices);
    Ok(DeviceThreshold::new(support, index[0] as usize, value[0]))
}

/// The place among the `k` index-ordered results of the one taken last: of the largest order
/// key, the last.
fn last_taken<T: Element>(
    dev: &CudaDevice,
    values: &CudaSlice<T>,
    k: usize,
    mode: u32,
) -> Result<usize> {
    let mut out = dev.alloc_zeros::<u64>(2, "the threshold's key and place")?;
    let cfg = config(grid_blocks(dev, k), THREADS);
    for pass in 0u32..2 {
        bt_last_taken(dev, cfg, values, k as u64, mode, pass, &mut out)?;
    }
    let words = download(dev, &out, 2, "the threshold's place")?;
    // Pass 1 found the key of pass 0 among the values, so its place plus one is at least 1.
    Ok(words[1] as usize - 1)
}

/// A support on the host, copied as 32-bit words (spans are shorter than 2^32).
pub(crate) fn support_to_host(support: &DeviceBuffer<u64>) -> Result<Vec<usize>> {
    let k = support.len();
    if k == 0 {
        return Ok(Vec::new());
    }
    let dev = support.device();
    let indices = support.as_slice();
    let mut narrow = dev.alloc::<u32>(k, "the support")?;
    bt_narrow(
        dev,
        config(grid_blocks(dev, k), THREADS),
        indices,
        k as u64,
        &mut narrow,
    )?;
    let words = download(dev, &narrow, k, "the support")?;
    Ok(words.into_iter().map(|i| i as usize).collect())
}
