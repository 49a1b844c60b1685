//! Launchers of `kernels/regression.cu` (robust regression): the residuals of many candidate
//! fits, the C-step sums over each candidate's rows and their reduction, the shortest windows
//! of sorted residuals.

use cudarc::driver::CudaSlice;

use super::OrNull;
use super::REGRESSION;

/// The most coefficients the Gram kernel handles (`RG_MAX_P`).
pub(crate) const MAX_P: usize = 40;
/// Threads of a Gram block (`RG_THREADS`, the kernel's launch bound).
pub(crate) const GRAM_THREADS: u32 = 256;
/// The most coefficients of [`rg_gram_warp`] (`RG_WARP_MAX_P`).
pub(crate) const WARP_GRAM_MAX_P: usize = 13;
/// Gram entries a lane of [`rg_gram_warp`] holds (`RG_WARP_SLOTS`).
const WARP_GRAM_SLOTS: u32 = 4;
/// Candidates a block of [`rg_gram_warp`] sums (`RG_WARP_GROUP`).
pub(crate) const WARP_GRAM_GROUP: u32 = 4;

/// The most candidates of [`rg_residuals_direct`] (`RD_MAX_COUNT`).
pub(crate) const DIRECT_MAX_COUNT: usize = 16;
/// The most coefficients of [`rg_residuals_direct`] (`RD_MAX_P`).
pub(crate) const DIRECT_MAX_P: usize = 13;
/// Threads of a [`rg_residuals_direct`] block (`RD_THREADS`, its launch bound).
pub(crate) const DIRECT_THREADS: u32 = 256;

/// The dynamic shared memory of a [`rg_gram_warp`] block of `threads` for `p` coefficients: a
/// warp's 32 rows of `p + WARP_GRAM_GROUP` doubles, or its candidates' entries and counts where
/// those are more.
pub(crate) const fn warp_gram_shared_bytes(p: u32, threads: u32) -> u32 {
    let rows = 32 * (p + WARP_GRAM_GROUP);
    let sums = WARP_GRAM_GROUP * (32 * WARP_GRAM_SLOTS + 3);
    let per_warp = if rows > sums { rows } else { sums };
    threads / 32 * per_warp * 8
}

/// The sums of a candidate the Gram kernel writes for `p` coefficients: the upper triangle of
/// `X_H'X_H`, `X_H'r_H` and three counts and sums.
const fn gram_sums(p: u32) -> u64 {
    let p = p as u64;
    p * (p + 1) / 2 + p + 3
}

launchers! {
    /// Row `j` (`blockIdx.y`) of `v` (rows of `n` values holding `x_i b_j`) becomes
    /// `op(y_i - x_i b_j)`: `op` 0 the square, 1 the residual, 2 its absolute value.
    fn rg_residuals(v: dev &mut CudaSlice<f64>, y: dev &CudaSlice<f64>, n: val u64, op: val u32)
        from REGRESSION as "rg_residuals_f64";
        requires v.len() as u64 >= n, y.len() as u64 >= n, op <= 2;

    /// Rows `0..count` of `v` (rows of `n` values) become `op(y_i - x_i b_j)` (`op` as
    /// [`rg_residuals`]'s) for the coefficients `b_j` (`p` a candidate, one after the other in
    /// `coef`), with `x` (`n x p` row-major) read once for all of them: at most
    /// [`DIRECT_MAX_COUNT`] candidates and [`DIRECT_MAX_P`] coefficients, blocks of
    /// [`DIRECT_THREADS`].
    fn rg_residuals_direct(x: dev &CudaSlice<f64>, y: dev &CudaSlice<f64>, n: val u64,
                           p: val u32, coef: dev &CudaSlice<f64>, count: val u32, op: val u32,
                           v: dev &mut CudaSlice<f64>)
        from REGRESSION as "rg_residuals_direct_f64";
        requires x.len() as u64 >= n * p as u64, y.len() as u64 >= n,
            1 <= p && p as usize <= DIRECT_MAX_P,
            1 <= count && count as usize <= DIRECT_MAX_COUNT,
            coef.len() as u64 >= count as u64 * p as u64, op <= 2,
            v.len() as u64 >= count as u64 * n;

    /// The C-step sums (`p (p + 1) / 2 + p + 3` a block) of candidates `row0 + blockIdx.y`
    /// (`blockIdx.y < count`) over the rows of each block's `chunk` that they keep. Exactly one
    /// of `s` and `mask` is given:
    /// with `s` (squared residuals, rows of `n`), the rows below the candidate's threshold and
    /// those at it before its cut; with `mask` (`n` flags), the rows flagged (`thresholds` and
    /// `cuts` are then not read). `x` is `n x p` row-major, `coef` holds `p` coefficients a
    /// candidate.
    fn rg_gram(x: dev &CudaSlice<f64>, y: dev &CudaSlice<f64>, n: val u64, p: val u32,
               s: dev OrNull<&CudaSlice<f64>>, mask: dev OrNull<&CudaSlice<u8>>,
               coef: dev &CudaSlice<f64>, thresholds: dev &CudaSlice<f64>,
               cuts: dev &CudaSlice<u64>, row0: val u64, count: val u32, chunk: val u64,
               partial: dev &mut CudaSlice<f64>)
        from REGRESSION as "rg_gram_f64";
        requires x.len() as u64 >= n * p as u64, y.len() as u64 >= n, p as usize <= MAX_P,
            count >= 1,
            s.given_len().is_some() != mask.given_len().is_some(),
            s.given_len().is_none_or(|len| len as u64 >= (row0 + count as u64) * n),
            s.given_len().is_none()
                || (row0 + count as u64 <= thresholds.len() as u64
                    && row0 + count as u64 <= cuts.len() as u64),
            mask.given_len().is_none_or(|len| len as u64 >= n),
            coef.len() as u64 >= (row0 + count as u64) * p as u64, chunk > 0,
            partial.len() as u64 >= count as u64 * n.div_ceil(chunk).max(1) * gram_sums(p);

    /// [`rg_gram`] for `p <= WARP_GRAM_MAX_P` and the `count` candidates from `row0`,
    /// [`WARP_GRAM_GROUP`] of them a block (`blockIdx.y`), each warp on tiles of 32 rows of its
    /// own: the same sums, in the same places; its dynamic shared memory is
    /// [`warp_gram_shared_bytes`].
    fn rg_gram_warp(x: dev &CudaSlice<f64>, y: dev &CudaSlice<f64>, n: val u64, p: val u32,
               s: dev OrNull<&CudaSlice<f64>>, mask: dev OrNull<&CudaSlice<u8>>,
               coef: dev &CudaSlice<f64>, thresholds: dev &CudaSlice<f64>,
               cuts: dev &CudaSlice<u64>, row0: val u64, count: val u32, chunk: val u64,
               partial: dev &mut CudaSlice<f64>)
        from REGRESSION as "rg_gram_warp_f64";
        requires x.len() as u64 >= n * p as u64, y.len() as u64 >= n,
            1 <= p && p as usize <= WARP_GRAM_MAX_P, count >= 1,
            s.given_len().is_some() != mask.given_len().is_some(),
            s.given_len().is_none_or(|len| len as u64 >= (row0 + count as u64) * n),
            s.given_len().is_none()
                || (row0 + count as u64 <= thresholds.len() as u64
                    && row0 + count as u64 <= cuts.len() as u64),
            mask.given_len().is_none_or(|len| len as u64 >= n),
            coef.len() as u64 >= (row0 + count as u64) * p as u64, chunk > 0,
            partial.len() as u64 >= count as u64 * n.div_ceil(chunk).max(1) * gram_sums(p);

    /// `out[j entries + e]` = the sum of the `blocks` partial sums of row `j` (`entries` values
    /// each), one block a row: each warp's blocks in order, then the warps in order (the same
    /// order on every launch of the same shape).
    fn rg_reduce(partial: dev &CudaSlice<f64>, blocks: val u64, entries: val u32,
                 out: dev &mut CudaSlice<f64>)
        from REGRESSION as "rg_reduce_f64";
        requires partial.len() as u64 >= blocks * entries as u64,
            out.len() as u64 >= entries as u64;

    /// The ends of the first shortest window of `h` consecutive values of each row of `sorted`
    /// (rows of `n` ascending values), `[lo, hi]` a row into `out`; one block a row.
    fn rg_shortest_window(sorted: dev &CudaSlice<f64>, n: val u64, h: val u64,
                          out: dev &mut CudaSlice<f64>)
        from REGRESSION as "rg_shortest_window_f64";
        requires 1 <= h, h <= n, sorted.len() as u64 >= n, out.len() >= 2;
}
