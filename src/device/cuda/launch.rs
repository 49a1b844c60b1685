//! Launch geometry shared by the kernels.

use cudarc::driver::LaunchConfig;

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
