//! Launches of `kernels/regression.cu`: residuals from the products, the C-step sums of each
//! candidate and their reduction, the shortest windows of sorted residuals.

use cudarc::driver::{CudaSlice, LaunchConfig};

pub(super) use crate::device::cuda::kernels::regression::MAX_P;
use crate::device::cuda::kernels::regression::{
    rg_gram, rg_gram_warp, rg_reduce, rg_residuals, rg_residuals_direct, rg_shortest_window,
    warp_gram_shared_bytes, DIRECT_MAX_COUNT, DIRECT_MAX_P, DIRECT_THREADS, GRAM_THREADS,
    WARP_GRAM_GROUP, WARP_GRAM_MAX_P,
};
use crate::device::cuda::kernels::OrNull;
use crate::device::cuda::launch::config;
use crate::device::cuda::upload::upload_into;
use crate::device::cuda::{driver_error, CudaDevice};
use crate::error::Result;

/// Rows a Gram block stages at a time (`RG_TILE`).
const TILE: usize = 64;
/// Gram blocks a multiprocessor, for the grid size: two waves of the kernel's two resident
/// blocks (fewer partial sums to reduce than four waves, a shorter tail than one).
const GRAM_BLOCKS_PER_SM: usize = 4;
/// Threads of the element-wise kernels.
const THREADS: u32 = 256;
/// Threads of the reduction of the blocks' sums (a warp takes every 32nd block).
const REDUCE_THREADS: u32 = 1024;

/// What the residual pass leaves of `y_i - x_i b` (`op` of `rg_residuals`).
#[derive(Clone, Copy, Debug)]
pub(super) enum Residual {
    Square = 0,
    Signed = 1,
    Absolute = 2,
}

/// The entries of one candidate's sums: the upper triangle of `X_H'X_H` (row by row), `X_H'r_H`,
/// then the count of squared residuals below the threshold, the count at it and the sum below.
pub(super) fn entries(p: usize) -> usize {
    gram_entries(p) + 3
}

/// The entries of `X_H'X_H` and `X_H'r_H`.
pub(super) fn gram_entries(p: usize) -> usize {
    p * (p + 1) / 2 + p
}

/// Rows `0..count` of `v` (rows of `n` values holding `x_i b_j`) become `op(y_i - x_i b_j)`.
pub(super) fn residuals(
    dev: &CudaDevice,
    v: &mut CudaSlice<f64>,
    y: &CudaSlice<f64>,
    n: usize,
    count: usize,
    op: Residual,
) -> Result<()> {
    let blocks = n
        .div_ceil(THREADS as usize)
        .clamp(1, dev.multiprocessors() * 8);
    // Rows along y: count rows of n values.
    let cfg = LaunchConfig {
        grid_dim: (blocks as u32, count as u32, 1),
        block_dim: (THREADS, 1, 1),
        shared_mem_bytes: 0,
    };
    rg_residuals(dev, cfg, v, y, n as u64, op as u32)
}

/// Direct residual blocks a multiprocessor, for the grid size (its launch bound).
const DIRECT_BLOCKS_PER_SM: usize = 3;

/// Whether [`direct_residuals`] takes `count` candidates of `p` coefficients.
pub(super) fn direct(count: usize, p: usize) -> bool {
    (1..=DIRECT_MAX_COUNT).contains(&count) && (1..=DIRECT_MAX_P).contains(&p)
}

/// Rows `0..count` of `v` (rows of `n` values) become `op(y_i - x_i b_j)` for the coefficients
/// in `coef` (`p` a candidate): one pass over the design for a few candidates ([`direct`]),
/// where a product and a pass over its rows would read the design and the rows again.
pub(super) fn direct_residuals(
    dev: &CudaDevice,
    design: &DesignOnDevice<'_>,
    coef: &CudaSlice<f64>,
    count: usize,
    op: Residual,
    v: &mut CudaSlice<f64>,
) -> Result<()> {
    let (n, p) = (design.n, design.p);
    let tiles = n.div_ceil(32);
    let warps = (DIRECT_THREADS / 32) as usize;
    let blocks = tiles
        .div_ceil(warps)
        .clamp(1, dev.multiprocessors() * DIRECT_BLOCKS_PER_SM);
    rg_residuals_direct(
        dev,
        config(blocks, DIRECT_THREADS),
        design.x,
        design.y,
        n as u64,
        p as u32,
        coef,
        count as u32,
        op as u32,
        v,
    )
}

/// Which rows a candidate's sums run over.
pub(super) enum Keep<'a> {
    /// Its `h`-subset: `squares` holds each candidate's squared residuals (rows of `n`), the
    /// rows below `thresholds[j]` are kept, and those at it before `cuts[j]`.
    Trim {
        squares: &'a CudaSlice<f64>,
        thresholds: &'a [f64],
        cuts: &'a [u64],
    },
    /// The rows flagged in `mask` (`n` bytes).
    Mask(&'a CudaSlice<u8>),
}

/// The design on the device: `n` rows of `p` values and the response.
pub(super) struct DesignOnDevice<'a> {
    pub x: &'a CudaSlice<f64>,
    pub y: &'a CudaSlice<f64>,
    pub n: usize,
    pub p: usize,
}

/// The C-step sums of a batch of candidates ([`sums`]): the totals, read back, and the
/// blocks' partial sums, left on the device (the tie cuts read from them).
pub(super) struct Sums {
    /// [`entries`] values a candidate.
    pub values: Vec<f64>,
    /// Per candidate, per block, [`entries`] values.
    partial: CudaSlice<f64>,
    /// Blocks a candidate.
    blocks: usize,
    /// Rows a block sums: block `b` holds rows `b * chunk..min(n, (b + 1) * chunk)`.
    chunk: usize,
}

impl Sums {
    /// Where candidate `j`'s (of this batch) tie of index `take` (0-based, in index order) lies:
    /// the block holding it and the ties in the blocks before it, from the blocks' counts of
    /// squared residuals at the threshold (`blocks` entries a candidate come back). `None` when
    /// the candidate has no more than `take` ties.
    pub fn tie_block(
        &self,
        dev: &CudaDevice,
        j: usize,
        p: usize,
        take: usize,
    ) -> Result<Option<(std::ops::Range<usize>, usize)>> {
        let e = entries(p);
        let at = gram_entries(p) + 1;
        let mine = self
            .partial
            .slice(j * self.blocks * e..(j + 1) * self.blocks * e);
        let partial = dev
            .stream()
            .clone_dtoh(&mine)
            .map_err(|e| driver_error("reading a candidate's partial sums", e))?;
        let mut before = 0usize;
        for b in 0..self.blocks {
            let here = partial[b * e + at] as usize;
            if take < before + here {
                return Ok(Some((b * self.chunk..(b + 1) * self.chunk, before)));
            }
            before += here;
        }
        Ok(None)
    }
}

/// The sums ([`entries`] each) of candidates `first..first + count`, whose coefficients are
/// `coef` (`p` each, from candidate 0), over the rows `keep` gives: a Gram pass and a reduction
/// in a fixed order, read back (the blocks' partial sums stay on the device, [`Sums`]).
pub(super) fn sums(
    dev: &CudaDevice,
    design: &DesignOnDevice<'_>,
    coef: &CudaSlice<f64>,
    keep: &Keep<'_>,
    first: usize,
    count: usize,
) -> Result<Sums> {
    let (n, p) = (design.n, design.p);
    let e = entries(p);
    // Contiguous chunks of whole tiles, enough blocks to fill the device.
    let tiles = n.div_ceil(TILE).max(1);
    // Rows of blocks: one a candidate, or a group of candidates for small models.
    let warp_tiles = p <= WARP_GRAM_MAX_P;
    let block_rows = if warp_tiles {
        count.div_ceil(WARP_GRAM_GROUP as usize)
    } else {
        count
    };
    let per_candidate = (dev.multiprocessors() * GRAM_BLOCKS_PER_SM / block_rows).clamp(1, tiles);
    let chunk = tiles.div_ceil(per_candidate) * TILE;
    let blocks = n.div_ceil(chunk).max(1);
    let mut partial = dev.alloc::<f64>(count * blocks * e, "the C-step partial sums")?;
    let mut out = dev.alloc::<f64>(count * e, "the C-step sums")?;

    let (n64, p32, row0, chunk64) = (n as u64, p as u32, first as u64, chunk as u64);
    // With a mask the thresholds and cuts are not read: one placeholder each.
    let (squares, mask, thresholds, cuts) = match keep {
        Keep::Trim {
            squares,
            thresholds,
            cuts,
        } => (Some(*squares), None, *thresholds, *cuts),
        Keep::Mask(mask) => (None, Some(*mask), &[0.0][..], &[0u64][..]),
    };
    let thresholds = upload(dev, thresholds, "the thresholds")?;
    let cuts = upload(dev, cuts, "the tie cuts")?;
    // Groups of candidates along y (a warp a tile), or one a block.
    let gram = if warp_tiles { rg_gram_warp } else { rg_gram };
    let shared_mem_bytes = if warp_tiles {
        warp_gram_shared_bytes(p32, GRAM_THREADS)
    } else {
        0
    };
    let cfg = LaunchConfig {
        grid_dim: (blocks as u32, block_rows as u32, 1),
        block_dim: (GRAM_THREADS, 1, 1),
        shared_mem_bytes,
    };
    gram(
        dev,
        cfg,
        design.x,
        design.y,
        n64,
        p32,
        OrNull(squares),
        OrNull(mask),
        coef,
        &thresholds,
        &cuts,
        row0,
        count as u32,
        chunk64,
        &mut partial,
    )?;

    // One block a candidate.
    rg_reduce(
        dev,
        config(count, REDUCE_THREADS),
        &partial,
        blocks as u64,
        e as u32,
        &mut out,
    )?;
    let values = dev.read(&out, "the C-step sums")?;
    Ok(Sums {
        values,
        partial,
        blocks,
        chunk,
    })
}

/// For each of the `count` rows of `sorted` (rows of `n` ascending values), the ends of its
/// first shortest window of `h` consecutive values: `[lo_0, hi_0, lo_1, hi_1, ...]`, NaN where
/// no width is a number.
pub(super) fn shortest_windows(
    dev: &CudaDevice,
    sorted: &CudaSlice<f64>,
    n: usize,
    h: usize,
    count: usize,
) -> Result<Vec<f64>> {
    let mut out = dev.alloc::<f64>(2 * count, "the shortest windows")?;
    // One block a row.
    rg_shortest_window(
        dev,
        config(count, THREADS),
        sorted,
        n as u64,
        h as u64,
        &mut out,
    )?;
    dev.read(&out, "the shortest windows")
}

/// A copy of `values` on the device.
pub(super) fn upload<W: cudarc::driver::DeviceRepr + Copy + Sync>(
    dev: &CudaDevice,
    values: &[W],
    what: &str,
) -> Result<CudaSlice<W>> {
    let mut slice = dev.alloc::<W>(values.len(), what)?;
    if !values.is_empty() {
        upload_into(dev, values, &mut slice.as_view_mut(), what)?;
    }
    Ok(slice)
}
