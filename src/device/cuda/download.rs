//! Copies from the device to the host through a page-locked staging buffer, several times
//! faster than copies into ordinary (pageable) memory, straight into the caller's memory.

use std::collections::HashMap;
use std::sync::{Mutex, OnceLock};

use cudarc::driver::{CudaSlice, DeviceRepr, PinnedHostSlice};

use crate::device::cuda::{driver_error, CudaDevice};
use crate::error::Result;

/// Bytes of a device's staging buffer.
const STAGE: usize = 64 << 20;

/// The page-locked staging buffer of each device (allocated on first use, kept).
fn stages() -> &'static Mutex<HashMap<usize, PinnedHostSlice<u8>>> {
    static STAGES: OnceLock<Mutex<HashMap<usize, PinnedHostSlice<u8>>>> = OnceLock::new();
    STAGES.get_or_init(Default::default)
}

/// Writes `convert` of each value of `src` into `out` (as long), copying through the device's
/// staging buffer a chunk at a time; `what` names the values in errors.
pub(crate) fn download_into<S: DeviceRepr + Copy, D>(
    dev: &CudaDevice,
    src: &CudaSlice<S>,
    out: &mut [D],
    convert: impl Fn(S) -> D,
    what: &str,
) -> Result<()> {
    assert_eq!(src.len(), out.len(), "a download fills its destination");
    if out.is_empty() {
        return Ok(());
    }
    let stream = dev.stream();
    let failed = |e| driver_error(&format!("copying {what} to the host"), e);
    let mut stages = stages().lock().unwrap_or_else(|e| e.into_inner());
    let stage = match stages.entry(dev.ordinal()) {
        std::collections::hash_map::Entry::Occupied(e) => e.into_mut(),
        std::collections::hash_map::Entry::Vacant(e) => {
            // SAFETY: the buffer is only read after a copy has written the part read.
            let stage = unsafe { stream.context().alloc_pinned_with_flags::<u8>(STAGE, 0) }
                .map_err(|e| driver_error("allocating a page-locked staging buffer", e))?;
            e.insert(stage)
        }
    };
    let per_chunk = STAGE / size_of::<S>();
    let bytes = src.len() * size_of::<S>();
    // SAFETY: a device buffer of `len` values of S is `bytes` bytes; viewing it as bytes reads
    // nothing it does not hold.
    let view = unsafe { src.transmute::<u8>(bytes) }.expect("a buffer's bytes fit it");
    for (c, chunk) in out.chunks_mut(per_chunk).enumerate() {
        let start = c * per_chunk * size_of::<S>();
        let len = chunk.len() * size_of::<S>();
        let staged = &mut stage.as_mut_slice().map_err(failed)?[..len];
        // The copy takes the destination's length; into page-locked memory it is
        // asynchronous, hence the synchronisation before the bytes are read.
        stream
            .memcpy_dtoh(&view.slice(start..start + len), staged)
            .map_err(failed)?;
        stream.synchronize().map_err(failed)?;
        // SAFETY: the staging buffer is page-aligned and `start` a multiple of S's size, so
        // the `chunk.len()` values of S just copied are aligned; S is plain data (DeviceRepr).
        let values =
            unsafe { std::slice::from_raw_parts(staged.as_ptr().cast::<S>(), chunk.len()) };
        for (o, &v) in chunk.iter_mut().zip(values) {
            *o = convert(v);
        }
    }
    Ok(())
}
