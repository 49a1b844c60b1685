//! The page-locked staging buffer of each device, through which large copies between the host
//! and the device go ([`download`](super::download), [`upload`](super::upload)): copies from
//! and to page-locked memory run several times faster than from and to ordinary (pageable)
//! memory, and asynchronously, so the threads of the pool fill or empty one half of the buffer
//! while the other half's copy is on its way.

use std::collections::HashMap;
use std::sync::{Mutex, OnceLock};

use cudarc::driver::PinnedHostSlice;

use crate::device::cuda::{driver_error, CudaDevice};
use crate::error::Result;

/// Bytes of a device's staging buffer.
pub(crate) const STAGE: usize = 64 << 20;

/// Bytes from which copies go through the staging buffer; below it one copy is quicker.
pub(crate) const STAGED_BYTES: usize = 1 << 20;

/// The page-locked staging buffer of each device (allocated on first use, kept).
fn stages() -> &'static Mutex<HashMap<usize, PinnedHostSlice<u8>>> {
    static STAGES: OnceLock<Mutex<HashMap<usize, PinnedHostSlice<u8>>>> = OnceLock::new();
    STAGES.get_or_init(Default::default)
}

/// `f` of the two halves of `dev`'s staging buffer, which no other copy uses meanwhile. `f`
/// must leave no copy from or to them queued when it returns.
pub(crate) fn with_halves<R>(
    dev: &CudaDevice,
    f: impl FnOnce([&mut [u8]; 2]) -> Result<R>,
) -> Result<R> {
    let mut stages = stages().lock().unwrap_or_else(|e| e.into_inner());
    let stage = match stages.entry(dev.ordinal()) {
        std::collections::hash_map::Entry::Occupied(e) => e.into_mut(),
        std::collections::hash_map::Entry::Vacant(e) => {
            // SAFETY: the buffer is only read after a copy or the host has written the part
            // read.
            let stage = unsafe {
                dev.stream()
                    .context()
                    .alloc_pinned_with_flags::<u8>(STAGE, 0)
            }
            .map_err(|e| driver_error("allocating a page-locked staging buffer", e))?;
            e.insert(stage)
        }
    };
    let (first, second) = stage
        .as_mut_slice()
        .map_err(|e| driver_error("waiting for the staging buffer", e))?
        .split_at_mut(STAGE / 2);
    f([first, second])
}
