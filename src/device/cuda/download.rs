//! Copies from the device to the host through the device's page-locked staging buffer
//! ([`staging`](super::staging)), several times faster than copies into ordinary (pageable)
//! memory, straight into the caller's memory.

use std::mem::MaybeUninit;

use cudarc::driver::{CudaView, DeviceRepr};
use rayon::prelude::*;

use crate::device::cuda::staging::{with_halves, STAGE, STAGED_BYTES};
use crate::device::cuda::{driver_error, CudaDevice};
use crate::error::Result;

/// A host copy of `src`: through the page-locked staging buffer when it is large (see
/// [`download_into`]), else by one copy; `what` names the values in errors.
pub(crate) fn download_vec<S>(dev: &CudaDevice, src: &CudaView<'_, S>, what: &str) -> Result<Vec<S>>
where
    S: DeviceRepr + Copy + Default + Send + Sync,
{
    if src.len() * size_of::<S>() < STAGED_BYTES {
        return dev
            .stream()
            .clone_dtoh(src)
            .map_err(|e| driver_error(&format!("copying {what} to the host"), e));
    }
    // Left uninitialised (zeroing 64 MB takes milliseconds): the conversion threads write
    // every value, and take the first faults of the fresh pages in parallel.
    let mut out = Vec::with_capacity(src.len());
    download_uninit(
        dev,
        src,
        &mut out.spare_capacity_mut()[..src.len()],
        |v| v,
        what,
    )?;
    // SAFETY: download_uninit returned Ok, so it wrote each of the first src.len() values.
    unsafe { out.set_len(src.len()) };
    Ok(out)
}

/// Values converted on one thread at a time (a parallel task each).
const CONVERT_GRAIN: usize = 1 << 18;

/// Writes `convert` of each value of `src` into `out` (as long), copying through the device's
/// staging buffer a chunk at a time: its two halves take turns, so that the next chunk is on
/// its way while the threads of the pool convert the last one (and take the first faults of
/// fresh memory in parallel); `what` names the values in errors.
pub(crate) fn download_into<S, D>(
    dev: &CudaDevice,
    src: &CudaView<'_, S>,
    out: &mut [D],
    convert: impl Fn(S) -> D + Sync,
    what: &str,
) -> Result<()>
where
    S: DeviceRepr + Copy + Sync,
    D: Copy + Send,
{
    // SAFETY: MaybeUninit<D> has D's layout, and only initialised values are written.
    let out = unsafe { &mut *(out as *mut [D] as *mut [MaybeUninit<D>]) };
    download_uninit(dev, src, out, convert, what)
}

/// [`download_into`] into memory not yet initialised: on `Ok`, every value of `out` is
/// written.
fn download_uninit<S, D>(
    dev: &CudaDevice,
    src: &CudaView<'_, S>,
    out: &mut [MaybeUninit<D>],
    convert: impl Fn(S) -> D + Sync,
    what: &str,
) -> Result<()>
where
    S: DeviceRepr + Copy + Sync,
    D: Send,
{
    assert_eq!(src.len(), out.len(), "a download fills its destination");
    if out.is_empty() {
        return Ok(());
    }
    let stream = dev.stream();
    let failed = |e| driver_error(&format!("copying {what} to the host"), e);
    let per_chunk = STAGE / 2 / size_of::<S>();
    let bytes = src.len() * size_of::<S>();
    // SAFETY: a device buffer of `len` values of S is `bytes` bytes; viewing it as bytes reads
    // nothing it does not hold.
    let view = unsafe { src.transmute::<u8>(bytes) }.expect("a buffer's bytes fit it");
    with_halves(dev, |mut halves| {
        let chunks = out.len().div_ceil(per_chunk);
        let range = |c: usize| {
            let start = c * per_chunk;
            start..(start + per_chunk).min(src.len())
        };
        // The copy takes the destination's length; into page-locked memory it is asynchronous:
        // each is waited for before its half is read, and before the half is written again.
        let copy = |c: usize, half: &mut [u8]| {
            let values = range(c);
            let (start, end) = (values.start * size_of::<S>(), values.end * size_of::<S>());
            stream
                .memcpy_dtoh(&view.slice(start..end), &mut half[..end - start])
                .map_err(failed)
        };
        copy(0, halves[0])?;
        for c in 0..chunks {
            stream.synchronize().map_err(failed)?;
            let [this, next] = &mut halves;
            let (staged, other) = if c % 2 == 0 {
                (this, next)
            } else {
                (next, this)
            };
            if c + 1 < chunks {
                copy(c + 1, other)?;
            }
            let values = range(c);
            // SAFETY: the staging buffer is page-aligned and each half starts at a multiple of
            // S's size, so the values just copied are aligned; S is plain data (DeviceRepr).
            let staged =
                unsafe { std::slice::from_raw_parts(staged.as_ptr().cast::<S>(), values.len()) };
            out[values]
                .par_chunks_mut(CONVERT_GRAIN)
                .zip(staged.par_chunks(CONVERT_GRAIN))
                .for_each(|(o, v)| {
                    for (o, &v) in o.iter_mut().zip(v) {
                        o.write(convert(v));
                    }
                });
        }
        // The last chunk's half is free once the loop is done: every copy was waited for.
        Ok(())
    })
}
