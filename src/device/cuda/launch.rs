//! Launch geometry and shared-memory limits shared by the kernels.

use cudarc::driver::sys::{CUdevice_attribute, CUfunction_attribute};
use cudarc::driver::{CudaFunction, LaunchConfig};

use super::{driver_error, CudaDevice};
use crate::error::Result;

/// A one-dimensional launch of `blocks` blocks of `threads` threads.
pub(crate) fn config(blocks: usize, threads: u32) -> LaunchConfig {
    LaunchConfig {
        grid_dim: (blocks.clamp(1, u32::MAX as usize) as u32, 1, 1),
        block_dim: (threads, 1, 1),
        shared_mem_bytes: 0,
    }
}

/// Blocks for a grid-stride loop over `items` work items: enough to fill the device
/// (`blocks_per_sm` resident blocks on each multiprocessor), never more than the work needs.
pub(crate) fn stride_blocks(
    items: usize,
    threads: u32,
    multiprocessors: usize,
    blocks_per_sm: usize,
) -> usize {
    items
        .div_ceil(threads as usize)
        .clamp(1, (multiprocessors * blocks_per_sm).max(1))
}

/// A launch of `blocks` blocks (and `groups` along y) of `threads` threads with `shared` bytes
/// of dynamic shared memory.
pub(crate) fn shaped(blocks: usize, groups: usize, threads: u32, shared: usize) -> LaunchConfig {
    LaunchConfig {
        grid_dim: (
            blocks.clamp(1, u32::MAX as usize) as u32,
            groups.clamp(1, u32::MAX as usize) as u32,
            1,
        ),
        block_dim: (threads, 1, 1),
        shared_mem_bytes: shared as u32,
    }
}

/// The device's shared memory: the most a block may opt in to, and a multiprocessor's, in
/// bytes.
pub(crate) fn shared_memory(dev: &CudaDevice) -> Result<(usize, usize)> {
    let ctx = dev.stream().context();
    let per_block = ctx
        .attribute(CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN)
        .map_err(|e| driver_error("reading the shared memory per block", e))?
        .max(0) as usize;
    let per_sm = ctx
        .attribute(CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR)
        .map_err(|e| driver_error("reading the shared memory per multiprocessor", e))?
        .max(0) as usize;
    Ok((per_block, per_sm))
}

/// Allows `f` `bytes` of dynamic shared memory (an error when the device refuses). Functions
/// are shared by every thread that uses the device, so the limit set is always the most any
/// launch of `f` takes (never a launch's own size, which another thread's launch could find
/// too small).
pub(crate) fn allow_shared(f: &CudaFunction, bytes: usize) -> Result<()> {
    f.set_attribute(
        CUfunction_attribute::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
        bytes as i32,
    )
    .map_err(|e| driver_error("allowing a kernel's shared memory", e))
}

/// [`allow_shared`] with `dev`'s context made current first, and `false` (not an error) when
/// the device refuses, for callers that have another way.
pub(crate) fn try_allow_shared(dev: &CudaDevice, f: &CudaFunction, bytes: usize) -> Result<bool> {
    dev.stream()
        .context()
        .bind_to_thread()
        .map_err(|e| driver_error("binding the context", e))?;
    Ok(allow_shared(f, bytes).is_ok())
}
