//! Copies from the host to the device through the device's page-locked staging buffer
//! ([`staging`](super::staging)): the threads of the pool copy a chunk of the caller's memory
//! into one half while the chunk before is on its way from the other, several times faster
//! than a copy from ordinary (pageable) memory.

use cudarc::driver::{CudaEvent, CudaViewMut, DeviceRepr};
use rayon::prelude::*;

use crate::device::cuda::staging::{with_halves, STAGE, STAGED_BYTES};
use crate::device::cuda::{driver_error, CudaDevice};
use crate::element::Element;
use crate::error::Result;

/// Bytes copied into the staging buffer by one task.
const COPY_GRAIN: usize = 1 << 20;

/// Copies `src` into `dst` (of the same length); `what` names the values in errors. Large
/// copies go through the staging buffer and are done when it returns; small ones are one
/// copy, queued on the device's stream (a copy from pageable memory has read `src` when it
/// returns).
pub(crate) fn upload_into<T>(
    dev: &CudaDevice,
    src: &[T],
    dst: &mut CudaViewMut<'_, T>,
    what: &str,
) -> Result<()>
where
    T: DeviceRepr + Copy + Sync,
{
    assert_eq!(src.len(), dst.len(), "an upload fills its destination");
    let bytes = std::mem::size_of_val(src);
    if bytes < STAGED_BYTES {
        let failed = |e| driver_error(&format!("copying {what} to the device"), e);
        return dev.stream().memcpy_htod(src, dst).map_err(failed);
    }
    // SAFETY: T is plain data (DeviceRepr); its bytes are read, never written.
    let src = unsafe { std::slice::from_raw_parts(src.as_ptr().cast::<u8>(), bytes) };
    staged(dev, dst, 1, what, |start, to| {
        to.copy_from_slice(&src[start..start + to.len()]);
    })
}

/// Fills `dst` with values written by `fill(first, out)`: `out` becomes the values from index
/// `first` on, in pieces of whole `unit`s of values (whole rows of a matrix, for example);
/// pieces are filled on the threads of the pool, into the staging buffer when the values are
/// many, so that they need no copy in host memory. Done when it returns.
pub(crate) fn upload_filled<T>(
    dev: &CudaDevice,
    dst: &mut CudaViewMut<'_, T>,
    unit: usize,
    what: &str,
    fill: impl Fn(usize, &mut [T]) + Sync,
) -> Result<()>
where
    T: Element,
{
    let (len, size) = (dst.len(), std::mem::size_of::<T>());
    assert!(unit > 0 && len % unit == 0, "an upload fills whole units");
    if len * size < STAGED_BYTES {
        let piece = unit * (COPY_GRAIN / (unit * size)).max(1);
        let mut values = vec![T::default(); len];
        values
            .par_chunks_mut(piece)
            .enumerate()
            .for_each(|(c, out)| fill(c * piece, out));
        return upload_into(dev, &values, dst, what);
    }
    staged(dev, dst, unit * size, what, |start, to| {
        // SAFETY: `to` lies in the page-aligned staging buffer at a multiple of the unit's
        // bytes, so it is aligned for T; T (an Element, a number) takes any bits, and `fill`
        // writes every value before the copy reads them.
        let values =
            unsafe { std::slice::from_raw_parts_mut(to.as_mut_ptr().cast::<T>(), to.len() / size) };
        fill(start / size, values);
    })
}

/// Fills the bytes of `dst` through the halves of the staging buffer: `fill(start, to)` writes
/// the bytes from `start` on into `to`, a piece of whole `unit`s of bytes, on the threads of the
/// pool, while the half filled before is copied to the device.
fn staged<T>(
    dev: &CudaDevice,
    dst: &mut CudaViewMut<'_, T>,
    unit: usize,
    what: &str,
    fill: impl Fn(usize, &mut [u8]) + Sync,
) -> Result<()>
where
    T: DeviceRepr,
{
    let stream = dev.stream();
    let failed = |e| driver_error(&format!("copying {what} to the device"), e);
    let bytes = dst.len() * std::mem::size_of::<T>();
    // SAFETY: a device buffer of `len` values of T is `bytes` bytes; the bytes written are
    // those of values of T.
    let mut dst = unsafe { dst.transmute_mut::<u8>(bytes) }.expect("a buffer's bytes fit it");
    let half = STAGE / 2 / unit * unit;
    let grain = (COPY_GRAIN / unit).max(1) * unit;
    assert!(half > 0, "a unit fits the staging buffer");
    with_halves(dev, |halves| {
        // The copy out of each half, recorded: the half is filled again only once it is done.
        let mut sent: [Option<CudaEvent>; 2] = [None, None];
        for (c, start) in (0..bytes).step_by(half).enumerate() {
            let h = c % 2;
            if let Some(event) = sent[h].take() {
                event.synchronize().map_err(failed)?;
            }
            let len = half.min(bytes - start);
            let staged = &mut halves[h][..len];
            staged
                .par_chunks_mut(grain)
                .enumerate()
                .for_each(|(g, to)| fill(start + g * grain, to));
            // From page-locked memory the copy is asynchronous.
            stream
                .memcpy_htod(&*staged, &mut dst.slice_mut(start..start + len))
                .map_err(failed)?;
            sent[h] = Some(stream.record_event(None).map_err(failed)?);
        }
        // Nothing may still read the halves (nor the memory `fill` reads) once they are given
        // back.
        stream.synchronize().map_err(failed)
    })
}
