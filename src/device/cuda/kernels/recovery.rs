//! Launchers of `kernels/recovery.cu` (sparse recovery): the solvers' vector steps and
//! reductions, the products of the sparse binary operator and of the subsampled DCT's
//! transforms, the batched column steps and the listed products of a dense operator.

use cudarc::driver::{CudaSlice, CudaView, CudaViewMut};

use super::{kernel_name, NullPtr, RECOVERY};
use crate::recovery::Real;

/// Threads of a block of every kernel (`REC_THREADS`): the block reductions are sized for it.
pub(crate) const THREADS: u32 = 256;

/// Entries of a problem's transform of length `n` (`n / 2 + 1` complex pairs of values).
const fn transform_len(n: u64) -> u64 {
    2 * (n / 2 + 1)
}

/// The rows of `count` problems, `len` a problem, where `stacked` gives every problem its own
/// (else one list serves all).
const fn per_problem(stacked: u64, count: u64, len: u64) -> u64 {
    if stacked != 0 {
        count * len
    } else {
        len
    }
}

launchers! {
    /// `out = a + s b` over `n` entries.
    fn rec_add_scaled[T: Real](a: dev &CudaSlice<T>, b: dev &CudaSlice<T>, s: val f64, n: val u64,
                               out: dev &mut CudaSlice<T>)
        from RECOVERY as kernel_name("rec_add_scaled", T::DTYPE);
        requires a.len() as u64 >= n, b.len() as u64 >= n, out.len() as u64 >= n;

    /// `y = y + s b` over `n` entries.
    fn rec_axpy[T: Real](b: dev &CudaSlice<T>, s: val f64, n: val u64, y: dev &mut CudaSlice<T>)
        from RECOVERY as kernel_name("rec_axpy", T::DTYPE);
        requires b.len() as u64 >= n, y.len() as u64 >= n;

    /// `y = a + s y` over `n` entries.
    fn rec_xpay[T: Real](a: dev &CudaSlice<T>, s: val f64, n: val u64, y: dev &mut CudaSlice<T>)
        from RECOVERY as kernel_name("rec_xpay", T::DTYPE);
        requires a.len() as u64 >= n, y.len() as u64 >= n;

    /// `out = a - b` over `n` entries.
    fn rec_difference[T: Real](a: dev &CudaSlice<T>, b: dev &CudaSlice<T>, n: val u64,
                               out: dev &mut CudaSlice<T>)
        from RECOVERY as kernel_name("rec_difference", T::DTYPE);
        requires a.len() as u64 >= n, b.len() as u64 >= n, out.len() as u64 >= n;

    /// `partial[b]` = block `b`'s share (in `f64`) of `sum a[s[j]] b[s[j]]` over the `count`
    /// indices of the support `s` (below the vectors' lengths).
    fn rec_dot[T: Real](a: dev &CudaSlice<T>, b: dev &CudaSlice<T>, s: dev &CudaSlice<u64>,
                        count: val u64, partial: dev &mut CudaViewMut<'_, f64>)
        from RECOVERY as kernel_name("rec_dot", T::DTYPE);
        requires s.len() as u64 >= count, !partial.is_empty();

    /// `partial[b]` = block `b`'s share (in `f64`) of `sum a[i] b[i]` over the first `count`
    /// entries: [`rec_dot`] without a support.
    fn rec_dot_all[T: Real](a: dev &CudaSlice<T>, b: dev &CudaSlice<T>, s: val NullPtr,
                            count: val u64, partial: dev &mut CudaViewMut<'_, f64>)
        from RECOVERY as kernel_name("rec_dot", T::DTYPE);
        requires a.len() as u64 >= count, b.len() as u64 >= count, !partial.is_empty();

    /// `s[j] = j` for `j < n`: the support of every entry.
    fn rec_iota(n: val u64, s: dev &mut CudaSlice<u64>)
        from RECOVERY as "rec_iota";
        requires s.len() as u64 >= n;

    /// `y = w A x` by rows for the sparse binary operator (CSR: `m + 1` offsets in `start` into
    /// `cols`, whose entries are below `n`), for `count` problems side by side (`x` of `n`
    /// values each, `y` of `m`); with `stacked` set, each problem has its own operator (`count`
    /// of them one after the other).
    fn rec_sparse_apply[T: Real](start: dev &CudaView<'_, u64>, cols: dev &CudaView<'_, u64>,
                                 stacked: val u64, x: dev &CudaView<'_, T>, w: val f64,
                                 m: val u64, n: val u64, count: val u64,
                                 y: dev &mut CudaViewMut<'_, T>)
        from RECOVERY as kernel_name("rec_sparse_apply", T::DTYPE);
        requires start.len() as u64 >= per_problem(stacked, count, m + 1),
            x.len() as u64 >= count * n, y.len() as u64 >= count * m;

    /// `x = w A^T y` by columns for the sparse binary operator (column `j`'s `d` rows at
    /// `rows[j d ..]`, each below `m`), for `count` problems side by side; with `stacked` set,
    /// each problem has its own operator.
    fn rec_sparse_adjoint[T: Real](rows: dev &CudaView<'_, u64>, d: val u32, stacked: val u64,
                                   y: dev &CudaView<'_, T>, w: val f64, m: val u64, n: val u64,
                                   count: val u64, x: dev &mut CudaViewMut<'_, T>)
        from RECOVERY as kernel_name("rec_sparse_adjoint", T::DTYPE);
        requires rows.len() as u64 >= per_problem(stacked, count, n * d as u64),
            y.len() as u64 >= count * m, x.len() as u64 >= count * n;

    /// The DCT's packing before the forward FFT, `count` signals of `n` values: `buf[j] =
    /// x[2j]`, `buf[n - 1 - j] = x[2j + 1]`.
    fn rec_dct_pack[T: Real](x: dev &CudaView<'_, T>, n: val u64, count: val u64,
                             buf: dev &mut CudaSlice<T>)
        from RECOVERY as kernel_name("rec_dct_pack", T::DTYPE);
        requires x.len() as u64 >= count * n, buf.len() as u64 >= count * n;

    /// The kept coefficients of the orthonormal DCT-II from the forward FFT `v` (`n / 2 + 1`
    /// pairs a problem): `y[i] = Re(turn[k] V[k])` for `k = rows[i]` (below `n`; `m` rows a
    /// problem, each problem its own with `stacked` set).
    fn rec_dct_rows[T: Real](v: dev &CudaSlice<T>, turn: dev &CudaSlice<T>,
                             rows: dev &CudaView<'_, u64>, stacked: val u64, m: val u64,
                             n: val u64, count: val u64, y: dev &mut CudaViewMut<'_, T>)
        from RECOVERY as kernel_name("rec_dct_rows", T::DTYPE);
        requires v.len() as u64 >= count * transform_len(n), turn.len() as u64 >= 2 * n,
            rows.len() as u64 >= per_problem(stacked, count, m), y.len() as u64 >= count * m;

    /// The measurements `y` spread into the inverse FFT's coefficients `buf` (zeroed before):
    /// `buf[k] = unturn[k] (z[k] - i z[n - k])`; the `z[k]` terms when `second` is 0, the
    /// `-i z[n - k]` ones when 1.
    fn rec_dct_spread[T: Real](y: dev &CudaView<'_, T>, unturn: dev &CudaSlice<T>,
                               rows: dev &CudaView<'_, u64>, stacked: val u64, m: val u64,
                               n: val u64, count: val u64, second: val u32,
                               buf: dev &mut CudaSlice<T>)
        from RECOVERY as kernel_name("rec_dct_spread", T::DTYPE);
        requires y.len() as u64 >= count * m, unturn.len() as u64 >= 2 * n,
            rows.len() as u64 >= per_problem(stacked, count, m), second <= 1,
            buf.len() as u64 >= count * transform_len(n);

    /// The DCT's unpacking after the inverse FFT, `count` signals of `n` values: `x[2j] =
    /// v[j]`, `x[2j + 1] = v[n - 1 - j]`.
    fn rec_dct_unpack[T: Real](v: dev &CudaSlice<T>, n: val u64, count: val u64,
                               x: dev &mut CudaViewMut<'_, T>)
        from RECOVERY as kernel_name("rec_dct_unpack", T::DTYPE);
        requires v.len() as u64 >= count * n, x.len() as u64 >= count * n;

    /// A row-major block of `rows` rows of `n` values (rows `first ..` of `A`) written into `a`,
    /// `A` column-major `m x n`.
    fn rec_dense_transpose[T: Real](block: dev &CudaSlice<T>, rows: val u64, first: val u64,
                                    m: val u64, n: val u64, a: dev &mut CudaViewMut<'_, T>)
        from RECOVERY as kernel_name("rec_dense_transpose", T::DTYPE);
        requires block.len() as u64 >= rows * n, first + rows <= m, a.len() as u64 >= m * n;

    /// `v = x + mu[c] g` in each column `c` of `n` entries (`total` entries in all).
    fn rec_cols_step[T: Real](x: dev &CudaSlice<T>, g: dev &CudaSlice<T>, mu: dev &CudaSlice<f64>,
                              n: val u64, total: val u64, v: dev &mut CudaSlice<T>)
        from RECOVERY as kernel_name("rec_cols_step", T::DTYPE);
        requires x.len() as u64 >= total, g.len() as u64 >= total, v.len() as u64 >= total,
            n > 0 || total == 0, total == 0 || mu.len() as u64 >= total.div_ceil(n);

    /// `out = v` on each column's support (`k` indices below `n` a column, `total` in all;
    /// `out` zeroed before).
    fn rec_cols_restrict[T: Real](v: dev &CudaSlice<T>, s: dev &CudaSlice<u64>, k: val u64,
                                  n: val u64, total: val u64, out: dev &mut CudaSlice<T>)
        from RECOVERY as kernel_name("rec_cols_restrict", T::DTYPE);
        requires s.len() as u64 >= total, k > 0 || total == 0,
            total == 0 || v.len() as u64 >= total.div_ceil(k) * n,
            total == 0 || out.len() as u64 >= total.div_ceil(k) * n;

    /// `r = r - ad` (column `place[c]` of `ad`) in the columns `c` whose support moved, `r =
    /// r - mu[c] ag` in those where it held (`place[c] = u64::MAX`); `m` entries a column.
    fn rec_cols_residual[T: Real](ag: dev &CudaSlice<T>, ad: dev &CudaSlice<T>,
                                  mu: dev &CudaSlice<f64>, place: dev &CudaSlice<u64>, m: val u64,
                                  total: val u64, r: dev &mut CudaSlice<T>)
        from RECOVERY as kernel_name("rec_cols_residual", T::DTYPE);
        requires ag.len() as u64 >= total, r.len() as u64 >= total, m > 0 || total == 0,
            total == 0 || mu.len() as u64 >= total.div_ceil(m),
            total == 0 || place.len() as u64 >= total.div_ceil(m);

    /// `r = y - ax` in the columns marked (`m` entries a column).
    fn rec_cols_refresh[T: Real](y: dev &CudaSlice<T>, ax: dev &CudaSlice<T>,
                                 marked: dev &CudaSlice<u32>, m: val u64, total: val u64,
                                 r: dev &mut CudaSlice<T>)
        from RECOVERY as kernel_name("rec_cols_refresh", T::DTYPE);
        requires y.len() as u64 >= total, ax.len() as u64 >= total, r.len() as u64 >= total,
            m > 0 || total == 0, total == 0 || marked.len() as u64 >= total.div_ceil(m);

    /// `partial[b]` = part `p` of `|a_c|^2` (in `f64`) for block `b = c parts + p`, columns of
    /// `len` values.
    fn rec_cols_partial_sumsq[T: Real](a: dev &CudaSlice<T>, len: val u64, parts: val u32,
                                       partial: dev &mut CudaViewMut<'_, f64>)
        from RECOVERY as kernel_name("rec_cols_partial_sumsq", T::DTYPE);
        requires a.len() as u64 >= len, parts > 0, partial.len() >= parts as usize;

    /// `sums[c]` = the sum of column `c`'s `parts` partial sums, one block a column.
    fn rec_cols_sum_parts(partial: dev &CudaSlice<f64>, parts: val u32,
                          sums: dev &mut CudaViewMut<'_, f64>)
        from RECOVERY as "rec_cols_sum_parts";
        requires parts > 0, partial.len() >= parts as usize, !sums.is_empty();

    /// NIHT's step of each column from the partial sums of `|g_S|^2` and `|A g_S|^2`: their
    /// quotient, 1 when the latter is 0; one block a column.
    fn rec_cols_step_parts(gg: dev &CudaSlice<f64>, g_parts: val u32, agg: dev &CudaSlice<f64>,
                           a_parts: val u32, mu: dev &mut CudaSlice<f64>)
        from RECOVERY as "rec_cols_step_parts";
        requires g_parts > 0, a_parts > 0, gg.len() >= g_parts as usize,
            agg.len() >= a_parts as usize, !mu.is_empty();

    /// NIHT's step of each column: `mu[c] = |g_S|^2 / |A g_S|^2` (1 when the latter is 0),
    /// columns of `n` and `m` values, one block a column.
    fn rec_cols_step_size[T: Real](gs: dev &CudaSlice<T>, n: val u64, ags: dev &CudaSlice<T>,
                                   m: val u64, mu: dev &mut CudaSlice<f64>)
        from RECOVERY as kernel_name("rec_cols_step_size", T::DTYPE);
        requires gs.len() as u64 >= n, ags.len() as u64 >= m, !mu.is_empty();

    /// `a = 0` in the columns listed in `cols` (`len` values each, `total` in all).
    fn rec_cols_clear[T: Real](cols: dev &CudaSlice<u64>, len: val u64, total: val u64,
                               a: dev &mut CudaSlice<T>)
        from RECOVERY as kernel_name("rec_cols_clear", T::DTYPE);
        requires cols.len() as u64 * len >= total;

    /// Column `j` of `dst` = column `cols[j]` of `src` (`len` values a column, `total` in all).
    fn rec_cols_gather[T: Real](src: dev &CudaSlice<T>, cols: dev &CudaSlice<u64>, len: val u64,
                                total: val u64, dst: dev &mut CudaSlice<T>)
        from RECOVERY as kernel_name("rec_cols_gather", T::DTYPE);
        requires cols.len() as u64 * len >= total, dst.len() as u64 >= total;

    /// Column `cols[j]` of `dst` = column `j` of `src` (`len` values a column, `total` in all).
    fn rec_cols_scatter[T: Real](src: dev &CudaSlice<T>, cols: dev &CudaSlice<u64>, len: val u64,
                                 total: val u64, dst: dev &mut CudaSlice<T>)
        from RECOVERY as kernel_name("rec_cols_scatter", T::DTYPE);
        requires cols.len() as u64 * len >= total, src.len() as u64 >= total;

    /// [`rec_cols_gather`] of supports.
    fn rec_cols_gather_index(src: dev &CudaSlice<u64>, cols: dev &CudaSlice<u64>, len: val u64,
                             total: val u64, dst: dev &mut CudaSlice<u64>)
        from RECOVERY as "rec_cols_gather_index";
        requires cols.len() as u64 * len >= total, dst.len() as u64 >= total;

    /// [`rec_cols_scatter`] of supports.
    fn rec_cols_scatter_index(src: dev &CudaSlice<u64>, cols: dev &CudaSlice<u64>, len: val u64,
                              total: val u64, dst: dev &mut CudaSlice<u64>)
        from RECOVERY as "rec_cols_scatter_index";
        requires cols.len() as u64 * len >= total, src.len() as u64 >= total;

    /// Column `j` of `out` = column `cols[j]` of `a - b` (`len` values a column, `total` in
    /// all).
    fn rec_cols_gather_difference[T: Real](a: dev &CudaSlice<T>, b: dev &CudaSlice<T>,
                                           cols: dev &CudaSlice<u64>, len: val u64,
                                           total: val u64, out: dev &mut CudaSlice<T>)
        from RECOVERY as kernel_name("rec_cols_gather_difference", T::DTYPE);
        requires cols.len() as u64 * len >= total, out.len() as u64 >= total;

    /// `differ[j / k] = 1` where the supports `a` and `b` (`k` indices a column, `total` in
    /// all) differ at `j` (`differ` zeroed before).
    fn rec_cols_differ(a: dev &CudaSlice<u64>, b: dev &CudaSlice<u64>, k: val u64, total: val u64,
                       differ: dev &mut CudaViewMut<'_, f64>)
        from RECOVERY as "rec_cols_differ";
        requires a.len() as u64 >= total, b.len() as u64 >= total, k > 0 || total == 0,
            total == 0 || differ.len() as u64 >= total.div_ceil(k);

    /// `prints[c]` (its 64 bits in an `f64`) = the wrapping sum of a hash of column `c`'s `k`
    /// indices, `parts` blocks a column (`prints` zeroed before when `parts > 1`).
    fn rec_cols_fingerprint(s: dev &CudaSlice<u64>, k: val u64, parts: val u32,
                            prints: dev &mut CudaViewMut<'_, f64>)
        from RECOVERY as "rec_cols_fingerprint";
        requires s.len() as u64 >= k, parts > 0, !prints.is_empty();

    /// Each column's change of support from `s` to `t` (`k` ascending indices each), one block
    /// a column: the indices of `t` not in `s`, then those of `s` not in `t` (bit 63 set), into
    /// `list` (`2 k` a column); their number into `lengths`.
    fn rec_cols_changes(s: dev &CudaSlice<u64>, t: dev &CudaSlice<u64>, k: val u64,
                        list: dev &mut CudaSlice<u64>, lengths: dev &mut CudaViewMut<'_, f64>)
        from RECOVERY as "rec_cols_changes";
        requires s.len() as u64 >= k, t.len() as u64 >= k, list.len() as u64 >= 2 * k,
            !lengths.is_empty();

    /// Products of the dense `A` (column-major `m x n`; column `c`'s own at `c a_stride` in a
    /// stack) with the entries of `v` each column's list names (`lengths[c]` entries, `stride`
    /// apart; bit 63: negated): stretch `q` of `per_chunk` entries of column `c`'s list, row
    /// `i`, summed into `partial[q total + c m + i]`, `chunks` stretches.
    fn rec_dense_columns[T: Real](a: dev &CudaSlice<T>, a_stride: val u64, m: val u64, n: val u64,
                                  list: dev &CudaSlice<u64>, lengths: dev &CudaView<'_, f64>,
                                  stride: val u64, per_chunk: val u64, v: dev &CudaSlice<T>,
                                  total: val u64, chunks: val u64,
                                  partial: dev &mut CudaSlice<T>)
        from RECOVERY as kernel_name("rec_dense_columns", T::DTYPE);
        requires a.len() as u64 >= m * n, per_chunk * chunks >= stride,
            partial.len() as u64 >= total * chunks, m > 0 || total == 0,
            total == 0 || lengths.len() as u64 >= total.div_ceil(m),
            total == 0 || list.len() as u64 >= total.div_ceil(m) * stride,
            total == 0 || v.len() as u64 >= total.div_ceil(m) * n;

    /// `out[s]` = the sum in order of the `chunks` stretches' sums `partial[q total + s]`.
    fn rec_dense_columns_sum[T: Real](partial: dev &CudaSlice<T>, chunks: val u64, m: val u64,
                                      mu: val NullPtr, base: val NullPtr, total: val u64,
                                      out: dev &mut CudaSlice<T>)
        from RECOVERY as kernel_name("rec_dense_columns_sum", T::DTYPE);
        requires partial.len() as u64 >= total * chunks, out.len() as u64 >= total;

    /// `out[s]` = `mu[c] base[s]` plus the sum in order of the `chunks` stretches' sums
    /// `partial[q total + s]`, `c` the column (of `m` entries) of `s`.
    fn rec_dense_columns_scaled_sum[T: Real](partial: dev &CudaSlice<T>, chunks: val u64,
                                             m: val u64, mu: dev &CudaSlice<f64>,
                                             base: dev &CudaSlice<T>, total: val u64,
                                             out: dev &mut CudaSlice<T>)
        from RECOVERY as kernel_name("rec_dense_columns_scaled_sum", T::DTYPE);
        requires partial.len() as u64 >= total * chunks, base.len() as u64 >= total,
            out.len() as u64 >= total, m > 0 || total == 0,
            total == 0 || mu.len() as u64 >= total.div_ceil(m);
}
