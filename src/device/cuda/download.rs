//! Copies from the device to the host through a page-locked staging buffer, several times
//! faster than copies into ordinary (pageable) memory.

use std::collections::HashMap;
use std::sync::{Mutex, OnceLock};

use cudarc::driver::{CudaSlice, DeviceRepr, PinnedHostSlice};

use crate::device::cuda::{driver_error, CudaDevice};
use crate::error::Result;

/// Bytes of a device's staging buffer.
const STAGE: usize = 64 << 20;
/// Copies smaller than this go straight to pageable memory.
const SMALL: usize = 1 << 20;

/// The page-locked staging buffer of each device (allocated on first use, kept).
fn stages() -> &'static Mutex<HashMap<usize, PinnedHostSlice<u8>>> {
    static STAGES: OnceLock<Mutex<HashMap<usize, PinnedHostSlice<u8>>>> = OnceLock::new();
    STAGES.get_or_init(Default::default)
}

/// The values of `src`, copied to the host in chunks through the device's staging buffer;
/// `what` names them in errors.
pub(crate) fn download<T: DeviceRepr + Copy>(
    dev: &CudaDevice,
    src: &CudaSlice<T>,
    what: &str,
) -> Result<Vec<T>> {
    let stream = dev.stream();
    let bytes = src.len() * size_of::<T>();
    if bytes < SMALL {
        return stream
            .clone_dtoh(src)
            .map_err(|e| driver_error(&format!("copying {what} to the host"), e));
    }
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
    let mut out: Vec<T> = Vec::with_capacity(src.len());
    // SAFETY: a device buffer of `len` values of T is `bytes` bytes; viewing it as bytes reads
    // nothing it does not hold.
    let view = unsafe { src.transmute::<u8>(bytes) }.expect("a buffer's bytes fit it");
    let out_bytes = out.as_mut_ptr().cast::<u8>();
    for start in (0..bytes).step_by(STAGE) {
        let len = STAGE.min(bytes - start);
        stream
            .memcpy_dtoh(&view.slice(start..start + len), stage)
            .map_err(|e| driver_error(&format!("copying {what} to the host"), e))?;
        let staged = stage
            .as_slice()
            .map_err(|e| driver_error(&format!("copying {what} to the host"), e))?;
        // SAFETY: `out` has capacity for `bytes` bytes; this chunk's `len` bytes start at
        // `start < bytes`, and the staging buffer holds `len >= 0` bytes just copied.
        unsafe { std::ptr::copy_nonoverlapping(staged.as_ptr(), out_bytes.add(start), len) };
    }
    // SAFETY: every byte of the `len` values was written above, and T is plain data
    // (DeviceRepr: any bit pattern the device wrote is a value of T).
    unsafe { out.set_len(src.len()) };
    Ok(out)
}
