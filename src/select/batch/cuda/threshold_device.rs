//! Hard thresholding on the device: the `k` entries of largest magnitude by the top-k passes
//! (in index order), the threshold entry found among them on the device; the support stays
//! there (copied to the host as 32-bit words when asked).

use cudarc::driver::{CudaSlice, PushKernelArg};

use super::{
    check_span_lengths, config, download, driver_error, grid_blocks, kernel_name, mode_of,
    on_device, top_k_on_device, DeviceTopK, BATCH_SELECT, THREADS,
};
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
    let scatter = dev.function(&BATCH_SELECT, &kernel_name("bt_scatter", T::DTYPE))?;
    let k64 = k as u64;
    let mut launch = stream.launch_builder(&scatter);
    launch
        .arg(&kept.top.values)
        .arg(&kept.top.indices)
        .arg(&k64)
        .arg(buf.as_slice_mut());
    // SAFETY: bt_scatter_T(const T* values, const u64* idx, u64 total, T* x): k distinct
    // indices below the buffer's length.
    unsafe { launch.launch(config(k.div_ceil(THREADS as usize), THREADS)) }
        .map_err(|e| driver_error("launching bt_scatter", e))?;
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
    let function = dev.function(&BATCH_SELECT, &kernel_name("bt_last_taken", T::DTYPE))?;
    let mut out = dev.alloc_zeros::<u64>(2, "the threshold's key and place")?;
    let cfg = config(grid_blocks(dev, k), THREADS);
    let k64 = k as u64;
    for pass in 0u32..2 {
        let mut launch = dev.stream().launch_builder(&function);
        launch
            .arg(values)
            .arg(&k64)
            .arg(&mode)
            .arg(&pass)
            .arg(&mut out);
        // SAFETY: bt_last_taken_T(const T* values, u64 k, u32 mode, u32 pass, u64* out): k
        // values, two words of out (zeroed; pass 1 reads the key pass 0 wrote).
        unsafe { launch.launch(cfg) }.map_err(|e| driver_error("launching bt_last_taken", e))?;
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
    let function = dev.function(&BATCH_SELECT, "bt_narrow")?;
    let mut narrow = dev.alloc::<u32>(k, "the support")?;
    let k64 = k as u64;
    let mut launch = dev.stream().launch_builder(&function);
    launch.arg(indices).arg(&k64).arg(&mut narrow);
    // SAFETY: bt_narrow(const u64* in, u64 total, u32* out): k words each; the indices lie in
    // a span shorter than 2^32 (check_span_lengths).
    unsafe { launch.launch(config(grid_blocks(dev, k), THREADS)) }
        .map_err(|e| driver_error("launching bt_narrow", e))?;
    let words = download(dev, &narrow, k, "the support")?;
    Ok(words.into_iter().map(|i| i as usize).collect())
}
