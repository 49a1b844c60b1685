//! Copies from the host to the device through the device's page-locked staging buffer
//! ([`staging`](super::staging)): the threads of the pool copy a chunk of the caller's memory
//! into one half while the chunk before is on its way from the other, several times faster
//! than a copy from ordinary (pageable) memory.

use cudarc::driver::{CudaEvent, CudaViewMut, DeviceRepr};
use rayon::prelude::*;

use crate::device::cuda::staging::{with_halves, STAGE, STAGED_BYTES};
use crate::device::cuda::{driver_error, CudaDevice};
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
    let stream = dev.stream();
    let failed = |e| driver_error(&format!("copying {what} to the device"), e);
    let bytes = std::mem::size_of_val(src);
    if bytes < STAGED_BYTES {
        return stream.memcpy_htod(src, dst).map_err(failed);
    }
    // SAFETY: T is plain data (DeviceRepr); its bytes are read, never written.
    let src = unsafe { std::slice::from_raw_parts(src.as_ptr().cast::<u8>(), bytes) };
    // SAFETY: a device buffer of `len` values of T is `bytes` bytes; the bytes written are
    // those of values of T.
    let mut dst = unsafe { dst.transmute_mut::<u8>(bytes) }.expect("a buffer's bytes fit it");
    let half = STAGE / 2;
    with_halves(dev, |halves| {
        // The copy out of each half, recorded: the half is filled again only once it is done.
        let mut sent: [Option<CudaEvent>; 2] = [None, None];
        for (c, part) in src.chunks(half).enumerate() {
            let h = c % 2;
            if let Some(event) = sent[h].take() {
                event.synchronize().map_err(failed)?;
            }
            let staged = &mut halves[h][..part.len()];
            staged
                .par_chunks_mut(COPY_GRAIN)
                .zip(part.par_chunks(COPY_GRAIN))
                .for_each(|(to, from)| to.copy_from_slice(from));
            // From page-locked memory the copy is asynchronous.
            let start = c * half;
            stream
                .memcpy_htod(&*staged, &mut dst.slice_mut(start..start + part.len()))
                .map_err(failed)?;
            sent[h] = Some(stream.record_event(None).map_err(failed)?);
        }
        // Nothing may still read the halves (nor `src`) once they are given back.
        stream.synchronize().map_err(failed)
    })
}
