//! sort&choose on CUDA: our LSD radix sort (`kernels/radix_sort.cu`), 8 bits a pass, of the
//! order-preserving keys, optionally carrying `u32` values; then the ranks are gathered.
//!
//! Workspace: a second key buffer (and value buffer) of `n` elements, and a `256 × G` table of
//! counts for `G ≤ 1024` blocks.

use cudarc::driver::CudaSlice;

use crate::device::cuda::kernels::radix_sort::{
    rs_histogram, rs_scan, rs_scatter, rs_scatter_pairs, RADIX, SCAN_THREADS,
};
use crate::device::cuda::kernels::reduce::{
    from_keys as keys_to_values, gather as gather_keys, to_keys as values_to_keys,
};
use crate::device::cuda::launch::{config, stride_blocks};
use crate::device::cuda::{driver_error, CudaDevice, MemoryNeed};
use crate::device::DeviceBuffer;
use crate::element::{Element, RadixKey};
use crate::error::Result;

const BLOCK: u32 = 256;
/// Keys one scatter tile holds (`RS_TILE` in the kernel).
const TILE: usize = 256 * 8;
const MAX_BLOCKS: usize = 1024;

/// Sorts a device buffer ascending (NaN last, `-0.0` before `+0.0`) into a new buffer.
///
/// ```no_run
/// use kselect::{Device, DeviceBuffer};
/// let device = Device::cuda(0)?;
/// let buf = DeviceBuffer::from_host(&device, &[3.0f32, -1.0, 2.0])?;
/// let sorted = kselect::select::sort_device(&buf)?;
/// assert_eq!(sorted.to_host()?, vec![-1.0, 2.0, 3.0]);
/// # Ok::<(), kselect::Error>(())
/// ```
pub fn sort_device<T: Element>(buf: &DeviceBuffer<T>) -> Result<DeviceBuffer<T>> {
    let dev = buf.device();
    let mut keys = to_keys(buf)?;
    sort_keys(dev, &mut keys, None)?;
    Ok(DeviceBuffer::from_slice(dev, from_keys::<T>(dev, &keys)?))
}

/// Sorts `keys` ascending carrying `values` along (a stable sort: equal keys keep their order).
///
/// ```no_run
/// use kselect::{Device, DeviceBuffer};
/// let device = Device::cuda(0)?;
/// let keys = DeviceBuffer::from_host(&device, &[30i64, 10, 20])?;
/// let idx = DeviceBuffer::from_host(&device, &[0u32, 1, 2])?;
/// let (k, v) = kselect::select::sort_pairs_device(&keys, &idx)?;
/// assert_eq!((k.to_host()?, v.to_host()?), (vec![10, 20, 30], vec![1, 2, 0]));
/// # Ok::<(), kselect::Error>(())
/// ```
pub fn sort_pairs_device<T: Element>(
    keys: &DeviceBuffer<T>,
    values: &DeviceBuffer<u32>,
) -> Result<(DeviceBuffer<T>, DeviceBuffer<u32>)> {
    if keys.len() != values.len() {
        return Err(crate::Error::LengthMismatch {
            operation: "sort_pairs_device",
            first: "keys",
            first_len: keys.len(),
            second: "values",
            second_len: values.len(),
        });
    }
    let dev = keys.device();
    let mut sorted_keys = to_keys(keys)?;
    let mut sorted_values = dev.alloc::<u32>(values.len(), "the sorted values")?;
    dev.stream()
        .memcpy_dtod(values.as_slice(), &mut sorted_values)
        .map_err(|e| driver_error("copying the values", e))?;
    sort_keys(dev, &mut sorted_keys, Some(&mut sorted_values))?;
    Ok((
        DeviceBuffer::from_slice(dev, from_keys::<T>(dev, &sorted_keys)?),
        DeviceBuffer::from_slice(dev, sorted_values),
    ))
}

/// The most device memory [`multiselect`] takes for `n` values of `T` and `ranks` ranks: the
/// keys, the sort's workspace ([`sort_workspace`]), then the ranks and their keys.
pub(crate) fn workspace<T: Element>(dev: &CudaDevice, n: usize, ranks: usize) -> MemoryNeed {
    let _ = dev;
    MemoryNeed::of::<T::Key>(n)
        .and(sort_workspace::<T::Key>(n, false).or(gather_workspace::<T>(ranks)))
}

/// The most device memory [`sort_keys`] takes for `n` keys `K` (with `u32` values when
/// `values`): the second key (and value) buffer, the count table and the digit totals.
pub(crate) fn sort_workspace<K: RadixKey>(n: usize, values: bool) -> MemoryNeed {
    if n <= 1 {
        return MemoryNeed::NONE;
    }
    let second_values = if values {
        MemoryNeed::of::<u32>(n)
    } else {
        MemoryNeed::NONE
    };
    MemoryNeed::of::<K>(n)
        .and(second_values)
        .and(MemoryNeed::of::<u64>(RADIX * sort_grid(n).1))
        .and(MemoryNeed::of::<u64>(RADIX * K::BITS as usize / 8))
}

/// The elements each block of a sort of `n > 0` keys takes (whole tiles) and the blocks.
fn sort_grid(n: usize) -> (usize, usize) {
    let blocks_wanted = n.div_ceil(TILE).min(MAX_BLOCKS);
    let chunk = n.div_ceil(blocks_wanted).div_ceil(TILE) * TILE;
    (chunk, n.div_ceil(chunk))
}

/// The most device memory [`gather`] takes for `ranks` ranks of `T`.
pub(crate) fn gather_workspace<T: Element>(ranks: usize) -> MemoryNeed {
    MemoryNeed::of::<u64>(ranks).and(MemoryNeed::of::<T::Key>(ranks))
}

/// The elements of `ranks` by sorting a copy of the keys.
pub(crate) fn multiselect<T: Element>(buf: &DeviceBuffer<T>, ranks: &[usize]) -> Result<Vec<T>> {
    let dev = buf.device();
    let mut keys = to_keys(buf)?;
    sort_keys(dev, &mut keys, None)?;
    gather(dev, &keys, ranks)
}

/// The keys at `ranks` of a sorted key buffer, copied to the host as values.
pub(crate) fn gather<T: Element>(
    dev: &CudaDevice,
    keys: &CudaSlice<T::Key>,
    ranks: &[usize],
) -> Result<Vec<T>> {
    let stream = dev.stream();
    let ranks64: Vec<u64> = ranks.iter().map(|&r| r as u64).collect();
    let d_ranks = stream
        .clone_htod(&ranks64)
        .map_err(|e| driver_error("copying ranks", e))?;
    let mut out = dev.alloc::<T::Key>(ranks.len(), "gathered keys")?;
    let shape = config(ranks.len().div_ceil(BLOCK as usize), BLOCK);
    gather_keys(dev, shape, keys, &d_ranks, &mut out, ranks.len() as u64)?;
    let keys = dev.read(&out, "the results")?;
    Ok(keys.into_iter().map(T::from_key).collect())
}

/// A new buffer with the keys of `buf`.
pub(crate) fn to_keys<T: Element>(buf: &DeviceBuffer<T>) -> Result<CudaSlice<T::Key>> {
    let dev = buf.device();
    let n = buf.len();
    let mut keys = dev.alloc::<T::Key>(n, "the keys")?;
    if n == 0 {
        return Ok(keys);
    }
    let shape = config(stride_blocks(n, BLOCK, dev.multiprocessors(), 8), BLOCK);
    values_to_keys(dev, shape, buf.as_slice(), &mut keys, n as u64)?;
    Ok(keys)
}

/// A new buffer with the values of `keys`.
fn from_keys<T: Element>(dev: &CudaDevice, keys: &CudaSlice<T::Key>) -> Result<CudaSlice<T>> {
    let n = keys.len();
    let mut out = dev.alloc::<T>(n, "the sorted values")?;
    if n == 0 {
        return Ok(out);
    }
    let shape = config(stride_blocks(n, BLOCK, dev.multiprocessors(), 8), BLOCK);
    keys_to_values(dev, shape, keys, &mut out, n as u64)?;
    Ok(out)
}

/// Sorts `keys` in place (through a second buffer), carrying `values` when given.
pub(crate) fn sort_keys<K: RadixKey>(
    dev: &CudaDevice,
    keys: &mut CudaSlice<K>,
    mut values: Option<&mut CudaSlice<u32>>,
) -> Result<()> {
    let n = keys.len();
    if n <= 1 {
        return Ok(());
    }
    let (chunk, blocks) = sort_grid(n);
    let mut other_keys = dev.alloc::<K>(n, "the sort's second key buffer")?;
    let mut other_values = match values {
        Some(_) => Some(dev.alloc::<u32>(n, "the sort's second value buffer")?),
        None => None,
    };
    let mut counts = dev.alloc::<u64>(RADIX * blocks, "the sort's count table")?;
    let passes = K::BITS / 8;
    let mut totals = dev.alloc_zeros::<u64>(RADIX * passes as usize, "the sort's digit totals")?;
    let (n64, chunk64) = (n as u64, chunk as u64);
    for pass in 0..passes {
        let shift = pass * 8;
        let (src, dst) = if pass % 2 == 0 {
            (&*keys, &mut other_keys)
        } else {
            (&other_keys, &mut *keys)
        };
        let tiles = config(blocks, BLOCK);
        let at = pass as usize * RADIX;
        let mut pass_totals = totals.slice_mut(at..at + RADIX);
        rs_histogram(
            dev,
            tiles,
            src,
            n64,
            chunk64,
            shift,
            &mut counts,
            &mut pass_totals,
        )?;
        rs_scan(
            dev,
            config(RADIX, SCAN_THREADS),
            &mut counts,
            blocks as u64,
            &pass_totals.as_view(),
        )?;
        match (values.as_deref_mut(), other_values.as_mut()) {
            (Some(vals), Some(other)) => {
                let (vsrc, vdst) = if pass % 2 == 0 {
                    (&*vals, other)
                } else {
                    (&*other, vals)
                };
                rs_scatter_pairs(
                    dev, tiles, src, dst, vsrc, vdst, n64, chunk64, shift, &counts,
                )?;
            }
            _ => rs_scatter(dev, tiles, src, dst, n64, chunk64, shift, &counts)?,
        }
    }
    Ok(())
}
