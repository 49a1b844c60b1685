//! sort&choose on CUDA: our LSD radix sort (`kernels/radix_sort.cu`), 8 bits a pass, of the
//! order-preserving keys, optionally carrying `u32` values; then the ranks are gathered.
//!
//! Workspace: a second key buffer (and value buffer) of `n` elements, and a `256 × G` table of
//! counts for `G ≤ 1024` blocks.

use cudarc::driver::{CudaSlice, PushKernelArg};

use crate::device::cuda::kernels::{kernel_name, key_suffix, RADIX_SORT, REDUCE};
use crate::device::cuda::launch::{config, stride_blocks};
use crate::device::cuda::{driver_error, CudaDevice};
use crate::device::DeviceBuffer;
use crate::element::{Element, RadixKey};
use crate::error::Result;

const BLOCK: u32 = 256;
/// Keys one scatter tile holds (`RS_TILE` in the kernel).
const TILE: usize = 256 * 8;
const MAX_BLOCKS: usize = 1024;
const RADIX: usize = 256;

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
        return Err(crate::Error::InvalidArgument(format!(
            "sort_pairs_device: {} keys but {} values",
            keys.len(),
            values.len()
        )));
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
    let f = dev.function(&REDUCE, &format!("gather_{}", key_suffix::<T::Key>()))?;
    let m = ranks.len() as u64;
    let mut launch = stream.launch_builder(&f);
    launch.arg(keys).arg(&d_ranks).arg(&mut out).arg(&m);
    // SAFETY: gather_kXX(const K*, const u64*, K*, u64): every rank is < keys.len() (checked by
    // the selector), `out` holds m keys.
    unsafe { launch.launch(config(ranks.len().div_ceil(BLOCK as usize), BLOCK)) }
        .map_err(|e| driver_error("launching gather", e))?;
    let keys = stream
        .clone_dtoh(&out)
        .map_err(|e| driver_error("copying results", e))?;
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
    let f = dev.function(&REDUCE, &kernel_name("to_keys", T::DTYPE))?;
    let n64 = n as u64;
    let mut launch = dev.stream().launch_builder(&f);
    launch.arg(buf.as_slice()).arg(&mut keys).arg(&n64);
    // SAFETY: to_keys_T(const T*, K*, u64): both buffers hold n elements.
    unsafe {
        launch.launch(config(
            stride_blocks(n, BLOCK, dev.multiprocessors(), 8),
            BLOCK,
        ))
    }
    .map_err(|e| driver_error("launching to_keys", e))?;
    Ok(keys)
}

/// A new buffer with the values of `keys`.
fn from_keys<T: Element>(dev: &CudaDevice, keys: &CudaSlice<T::Key>) -> Result<CudaSlice<T>> {
    let n = keys.len();
    let mut out = dev.alloc::<T>(n, "the sorted values")?;
    if n == 0 {
        return Ok(out);
    }
    let f = dev.function(&REDUCE, &kernel_name("from_keys", T::DTYPE))?;
    let n64 = n as u64;
    let mut launch = dev.stream().launch_builder(&f);
    launch.arg(keys).arg(&mut out).arg(&n64);
    // SAFETY: from_keys_T(const K*, T*, u64): both buffers hold n elements.
    unsafe {
        launch.launch(config(
            stride_blocks(n, BLOCK, dev.multiprocessors(), 8),
            BLOCK,
        ))
    }
    .map_err(|e| driver_error("launching from_keys", e))?;
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
    let stream = dev.stream();
    let blocks_wanted = n.div_ceil(TILE).min(MAX_BLOCKS);
    let chunk = n.div_ceil(blocks_wanted).div_ceil(TILE) * TILE;
    let blocks = n.div_ceil(chunk);
    let mut other_keys = dev.alloc::<K>(n, "the sort's second key buffer")?;
    let mut other_values = match values {
        Some(_) => Some(dev.alloc::<u32>(n, "the sort's second value buffer")?),
        None => None,
    };
    let mut counts = dev.alloc::<u64>(RADIX * blocks, "the sort's count table")?;
    let suffix = key_suffix::<K>();
    let hist = dev.function(&RADIX_SORT, &format!("rs_histogram_{suffix}"))?;
    let scan = dev.function(&RADIX_SORT, "rs_scan")?;
    let scatter = dev.function(&RADIX_SORT, &format!("rs_scatter_{suffix}"))?;
    let scatter_pairs = dev.function(&RADIX_SORT, &format!("rs_scatter_pairs_{suffix}"))?;
    let (n64, chunk64, table) = (n as u64, chunk as u64, (RADIX * blocks) as u64);
    let passes = K::BITS / 8;
    for pass in 0..passes {
        let shift = pass * 8;
        // Even passes read `keys`, odd ones `other_keys`; with an even pass count the result
        // lands back in `keys`.
        let (src, dst) = if pass % 2 == 0 {
            (&*keys, &mut other_keys)
        } else {
            (&other_keys, &mut *keys)
        };
        let mut launch = stream.launch_builder(&hist);
        launch
            .arg(src)
            .arg(&n64)
            .arg(&chunk64)
            .arg(&shift)
            .arg(&mut counts);
        // SAFETY: rs_histogram_K(const K*, u64 n, u64 chunk, u32, u64* counts): `src` holds n
        // keys, counts holds 256 * blocks entries and the grid has `blocks` blocks.
        unsafe { launch.launch(config(blocks, BLOCK)) }
            .map_err(|e| driver_error("launching rs_histogram", e))?;
        let mut launch = stream.launch_builder(&scan);
        launch.arg(&mut counts).arg(&table);
        // SAFETY: rs_scan(u64*, u64 len): counts holds `table` entries; one block of 1024.
        unsafe { launch.launch(config(1, 1024)) }
            .map_err(|e| driver_error("launching rs_scan", e))?;
        match (values.as_deref_mut(), other_values.as_mut()) {
            (Some(vals), Some(other)) => {
                let (vsrc, vdst) = if pass % 2 == 0 {
                    (&*vals, other)
                } else {
                    (&*other, vals)
                };
                let mut launch = stream.launch_builder(&scatter_pairs);
                launch
                    .arg(src)
                    .arg(dst)
                    .arg(vsrc)
                    .arg(vdst)
                    .arg(&n64)
                    .arg(&chunk64)
                    .arg(&shift)
                    .arg(&counts);
                // SAFETY: rs_scatter_pairs_K(const K*, K*, const u32*, u32*, u64, u64, u32,
                // const u64*): all four buffers hold n elements, distinct; offsets from rs_scan
                // address each key exactly once.
                unsafe { launch.launch(config(blocks, BLOCK)) }
                    .map_err(|e| driver_error("launching rs_scatter_pairs", e))?;
            }
            _ => {
                let mut launch = stream.launch_builder(&scatter);
                launch
                    .arg(src)
                    .arg(dst)
                    .arg(&n64)
                    .arg(&chunk64)
                    .arg(&shift)
                    .arg(&counts);
                // SAFETY: rs_scatter_K(const K*, K*, u64, u64, u32, const u64*): both buffers
                // hold n keys, distinct; offsets address each key exactly once.
                unsafe { launch.launch(config(blocks, BLOCK)) }
                    .map_err(|e| driver_error("launching rs_scatter", e))?;
            }
        }
    }
    Ok(())
}
