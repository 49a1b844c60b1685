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
use crate::element::{Element, RadixKey};
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
    Ok(kept.into_threshold(dev))
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
    Ok(kept.into_threshold(&dev))
}

/// The array as one span.
fn one_span(n: usize) -> Spans<'static> {
    Spans::Rows {
        rows: 1,
        cols: n,
        stride: n,
    }
}

/// The entries kept (by index, left on the device), the array's NaN count and the threshold
/// entry: the kept entry taken last.
struct Kept<T: Element> {
    top: DeviceTopK<T>,
    nans: usize,
    index: usize,
    value: T,
}

impl<T: Element> Kept<T> {
    /// The support (ascending, left on the device) and the threshold.
    fn into_threshold(self, dev: &CudaDevice) -> DeviceThreshold<T> {
        let support = DeviceBuffer::from_slice(dev, self.top.indices);
        DeviceThreshold::new(support, self.index, self.value)
    }
}

/// The top-k of `x` by magnitude, with the NaN count and the threshold entry read back in one
/// copy.
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
    let [nans, index, key] = last_taken(dev, &top, k, mode_of(order))?;
    Ok(Kept {
        top,
        nans: nans as usize,
        index: index as usize,
        value: T::from_key(T::Key::from_u64(key)),
    })
}

/// The NaN count, and the index and key of the entry taken last among the `k` index-ordered
/// results of `top` (of the largest order key, the last), in one copy to the host.
fn last_taken<T: Element>(
    dev: &CudaDevice,
    top: &DeviceTopK<T>,
    k: usize,
    mode: u32,
) -> Result<[u64; 3]> {
    let mut out = dev.alloc_zeros::<u64>(5, "the threshold entry")?;
    for pass in 0u32..3 {
        let cfg = if pass == 2 {
            config(1, 1)
        } else {
            config(grid_blocks(dev, k), THREADS)
        };
        bt_last_taken(
            dev,
            cfg,
            &top.values,
            &top.indices,
            &top.nans,
            k as u64,
            mode,
            pass,
            &mut out,
        )?;
    }
    let words = download(dev, &out, 5, "the threshold entry")?;
    Ok([words[4], words[3], words[2]])
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
