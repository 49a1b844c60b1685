//! The steps of the solvers on many problems at once, on a CUDA device: each problem's vector
//! is a column of a matrix (`n` values a column for signals, `m` for measurements, `k`
//! indices for supports), and each step one launch over every column (`kernels/recovery.cu`,
//! the `rec_cols_*` kernels). Per-column scalars are `f64`s written into a view of a buffer
//! the host reads at once.

use cudarc::driver::{CudaSlice, CudaView, CudaViewMut, DeviceRepr};

use crate::device::cuda::kernels::recovery::{
    rec_cols_changes, rec_cols_clear, rec_cols_differ, rec_cols_fingerprint, rec_cols_gather,
    rec_cols_gather_difference, rec_cols_gather_index, rec_cols_partial_sumsq, rec_cols_refresh,
    rec_cols_residual, rec_cols_restrict, rec_cols_scatter, rec_cols_scatter_index, rec_cols_step,
    rec_cols_step_parts, rec_cols_step_size, rec_cols_sum_parts, rec_dense_columns,
    rec_dense_columns_scaled_sum, rec_dense_columns_sum, rec_difference, THREADS,
};
use crate::device::cuda::kernels::NULL;
use crate::device::cuda::{driver_error, CudaDevice};
use crate::error::Result;
use crate::recovery::cuda::{grid, over, DeviceOperator};
use crate::recovery::Real;
use crate::select::batch::cuda::largest_magnitudes;

/// `count` columns of problems of one operator (`m x n`) and sparsity `k`.
pub(crate) struct Columns<'a, T: Real> {
    pub op: &'a DeviceOperator<T>,
    pub m: usize,
    pub n: usize,
    pub k: usize,
    pub count: usize,
}

impl<T: Real> Clone for Columns<'_, T> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<T: Real> Copy for Columns<'_, T> {}

impl<'a, T: Real> Columns<'a, T> {
    /// The columns of problems `y = A x` of sparsity `k`.
    pub fn new(op: &'a DeviceOperator<T>, k: usize, count: usize) -> Columns<'a, T> {
        let (m, n) = op.shape();
        Columns { op, m, n, k, count }
    }

    /// The same problems' shape with `count` columns.
    pub fn with_count(self, count: usize) -> Columns<'a, T> {
        Columns { count, ..self }
    }

    pub fn dev(&self) -> &'a CudaDevice {
        self.op.device()
    }

    /// A matrix of `len` zeros a column.
    pub fn zeros(&self, len: usize) -> Result<CudaSlice<T>> {
        self.dev()
            .alloc_zeros::<T>(len * self.count, "a batch of recovery vectors")
    }

    /// A matrix of `len` values a column, not initialised (for results that overwrite it).
    pub fn scratch(&self, len: usize) -> Result<CudaSlice<T>> {
        self.dev()
            .alloc::<T>(len * self.count, "a batch of recovery vectors")
    }

    /// `Y = A X`, column by column.
    pub fn apply(&self, x: &CudaSlice<T>, y: &mut CudaSlice<T>) -> Result<()> {
        self.op
            .products(&x.as_view(), &mut y.as_view_mut(), self.count, false)
    }

    /// `X = A^T Y`, column by column.
    pub fn adjoint(&self, y: &CudaSlice<T>, x: &mut CudaSlice<T>) -> Result<()> {
        self.op
            .products(&y.as_view(), &mut x.as_view_mut(), self.count, true)
    }

    /// The `k` entries of largest magnitude of each column of `v` (ties to the lower index),
    /// ascending.
    pub fn largest(&self, v: &CudaSlice<T>) -> Result<CudaSlice<u64>> {
        largest_magnitudes(self.dev(), v, self.count, self.n, self.k)
    }

    /// `out = v` on each column's support, zero elsewhere.
    pub fn restrict(
        &self,
        v: &CudaSlice<T>,
        support: &CudaSlice<u64>,
        out: &mut CudaSlice<T>,
    ) -> Result<()> {
        let dev = self.dev();
        dev.stream()
            .memset_zeros(out)
            .map_err(|e| driver_error("zeroing a batch of recovery vectors", e))?;
        let (shape, k64, total) = self.by_column(self.k);
        rec_cols_restrict(dev, shape, v, support, k64, self.n as u64, total, out)
    }

    /// `v = x + mu_c g` in each column `c`.
    pub fn step(
        &self,
        x: &CudaSlice<T>,
        g: &CudaSlice<T>,
        mu: &CudaSlice<f64>,
        v: &mut CudaSlice<T>,
    ) -> Result<()> {
        let (shape, n64, total) = self.by_column(self.n);
        rec_cols_step(self.dev(), shape, x, g, mu, n64, total, v)
    }

    /// The blocks that share each column's sum of `len` values: one when there are columns
    /// enough to fill the device, else enough (up to 4 stretches of a block each) to.
    fn parts(&self, len: usize) -> u32 {
        let wanted = len.div_ceil(4 * THREADS as usize);
        let room = (16 * self.dev().multiprocessors()).div_ceil(self.count.max(1));
        wanted.min(room).clamp(1, u32::MAX as usize) as u32
    }

    /// The partial sums of squares of the columns of `a` (`len` values each), `parts` a
    /// column (`count * parts` of them, a column's one after the other), into `partial`.
    fn partial_sumsq(
        &self,
        a: &CudaSlice<T>,
        len: usize,
        parts: u32,
        partial: &mut CudaViewMut<'_, f64>,
    ) -> Result<()> {
        let shape = grid(self.count * parts as usize);
        rec_cols_partial_sumsq(self.dev(), shape, a, len as u64, parts, partial)
    }

    /// `sums[c] = |a_c|^2` for columns of `len` values.
    pub fn sumsq(
        &self,
        a: &CudaSlice<T>,
        len: usize,
        sums: &mut CudaViewMut<'_, f64>,
    ) -> Result<()> {
        let parts = self.parts(len);
        if parts == 1 {
            return self.partial_sumsq(a, len, 1, sums);
        }
        let dev = self.dev();
        let mut partial = dev.alloc::<f64>(self.count * parts as usize, "partial sums")?;
        self.partial_sumsq(a, len, parts, &mut partial.as_view_mut())?;
        rec_cols_sum_parts(dev, grid(self.count), &partial, parts, sums)
    }

    /// NIHT's step of each column: `|g_S|^2 / |A g_S|^2` (1 when the latter is 0).
    pub fn step_sizes(
        &self,
        gs: &CudaSlice<T>,
        ags: &CudaSlice<T>,
        mu: &mut CudaSlice<f64>,
    ) -> Result<()> {
        let dev = self.dev();
        let (n64, m64) = (self.n as u64, self.m as u64);
        let (g_parts, a_parts) = (self.parts(self.n), self.parts(self.m));
        if g_parts == 1 && a_parts == 1 {
            return rec_cols_step_size(dev, grid(self.count), gs, n64, ags, m64, mu);
        }
        let mut gg = dev.alloc::<f64>(self.count * g_parts as usize, "partial sums")?;
        let mut agg = dev.alloc::<f64>(self.count * a_parts as usize, "partial sums")?;
        self.partial_sumsq(gs, self.n, g_parts, &mut gg.as_view_mut())?;
        self.partial_sumsq(ags, self.m, a_parts, &mut agg.as_view_mut())?;
        rec_cols_step_parts(dev, grid(self.count), &gg, g_parts, &agg, a_parts, mu)
    }

    /// Each column's support fingerprint, its bits in an `f64`.
    pub fn fingerprints(
        &self,
        support: &CudaSlice<u64>,
        prints: &mut CudaViewMut<'_, f64>,
    ) -> Result<()> {
        let dev = self.dev();
        let (k64, parts) = (self.k as u64, self.parts(self.k));
        if parts > 1 {
            dev.stream()
                .memset_zeros(prints)
                .map_err(|e| driver_error("zeroing the fingerprints", e))?;
        }
        let shape = grid(self.count * parts as usize);
        rec_cols_fingerprint(dev, shape, support, k64, parts, prints)
    }

    /// `changed[c] = 1` where column `c` of the supports `a` differs from that of `b`, else 0.
    pub fn differ(
        &self,
        a: &CudaSlice<u64>,
        b: &CudaSlice<u64>,
        changed: &mut CudaViewMut<'_, f64>,
    ) -> Result<()> {
        let dev = self.dev();
        dev.stream()
            .memset_zeros(changed)
            .map_err(|e| driver_error("zeroing the supports' changes", e))?;
        let (shape, k64, total) = self.by_column(self.k);
        rec_cols_differ(dev, shape, a, b, k64, total, changed)
    }

    /// `out = a - b`, every column.
    pub fn difference(
        &self,
        a: &CudaSlice<T>,
        b: &CudaSlice<T>,
        out: &mut CudaSlice<T>,
    ) -> Result<()> {
        let total = a.len() as u64;
        rec_difference(self.dev(), over(a.len()), a, b, total, out)
    }

    /// The launch over this batch's `count` columns of `len` values (a gather's or scatter's:
    /// `count` = `cols.len()`), the column length and the entries in all.
    fn by_column(&self, len: usize) -> (cudarc::driver::LaunchConfig, u64, u64) {
        (
            over(len * self.count),
            len as u64,
            (len * self.count) as u64,
        )
    }

    /// Column `j` of `dst` = column `cols[j]` of `src`, `len` values a column.
    pub fn gather(
        &self,
        src: &CudaSlice<T>,
        cols: &CudaSlice<u64>,
        len: usize,
        dst: &mut CudaSlice<T>,
    ) -> Result<()> {
        let (shape, len64, total) = self.by_column(len);
        rec_cols_gather(self.dev(), shape, src, cols, len64, total, dst)
    }

    /// Column `cols[j]` of `dst` = column `j` of `src`, `len` values a column.
    pub fn scatter(
        &self,
        src: &CudaSlice<T>,
        cols: &CudaSlice<u64>,
        len: usize,
        dst: &mut CudaSlice<T>,
    ) -> Result<()> {
        let (shape, len64, total) = self.by_column(len);
        rec_cols_scatter(self.dev(), shape, src, cols, len64, total, dst)
    }

    /// [`gather`](Columns::gather) of supports (`k` indices a column).
    pub fn gather_support(
        &self,
        src: &CudaSlice<u64>,
        cols: &CudaSlice<u64>,
        dst: &mut CudaSlice<u64>,
    ) -> Result<()> {
        let (shape, len64, total) = self.by_column(self.k);
        rec_cols_gather_index(self.dev(), shape, src, cols, len64, total, dst)
    }

    /// [`scatter`](Columns::scatter) of supports (`k` indices a column).
    pub fn scatter_support(
        &self,
        src: &CudaSlice<u64>,
        cols: &CudaSlice<u64>,
        dst: &mut CudaSlice<u64>,
    ) -> Result<()> {
        let (shape, len64, total) = self.by_column(self.k);
        rec_cols_scatter_index(self.dev(), shape, src, cols, len64, total, dst)
    }

    /// Column `j` of `out` = column `cols[j]` of `a - b`, `n` values a column.
    pub fn gather_difference(
        &self,
        (a, b): (&CudaSlice<T>, &CudaSlice<T>),
        cols: &CudaSlice<u64>,
        out: &mut CudaSlice<T>,
    ) -> Result<()> {
        let (shape, n64, total) = self.by_column(self.n);
        rec_cols_gather_difference(self.dev(), shape, a, b, cols, n64, total, out)
    }

    /// Each column's change of support from `support` to `taken`: the indices of `taken` not
    /// in `support`, then those of `support` not in `taken` (bit 63 set), into `list` (`2 k` a
    /// column), their number into `lengths`.
    pub fn changes(
        &self,
        (support, taken): (&CudaSlice<u64>, &CudaSlice<u64>),
        list: &mut CudaSlice<u64>,
        lengths: &mut CudaViewMut<'_, f64>,
    ) -> Result<()> {
        let k64 = self.k as u64;
        rec_cols_changes(
            self.dev(),
            grid(self.count),
            support,
            taken,
            k64,
            list,
            lengths,
        )
    }

    /// Whether the products with vectors of at most `k` nonzeros (or `2 k`, a support's
    /// change) are read from their columns of `A` ([`listed_product`](Columns::listed_product)):
    /// a dense operator whose supports, in all columns together, are a tenth of its columns or
    /// fewer. (A product of few vectors reads all of `A` once, so reading only the supports'
    /// columns saves most of it; many vectors reuse `A` from the cache, and `gemm` is then
    /// faster than the gathered reads.) With a stack of dense operators, each column has its own
    /// `A` to read: from its supports' columns when they are a quarter of its columns or fewer.
    pub fn by_columns(&self) -> bool {
        let few = if self.op.stacked() {
            4 * self.k <= self.n
        } else {
            10 * self.k * self.count <= self.n
        };
        self.op.dense_matrix().is_some() && few
    }

    /// Whether NIHT's `A d` is best taken as `mu A g_S` plus the columns of the support's
    /// change, that change having had `changes` entries in all columns last time: for a dense
    /// operator, always where [`by_columns`](Columns::by_columns), else when they were at most
    /// 1% of its columns.
    pub fn change_by_columns(&self, changes: f64) -> bool {
        self.op.dense_matrix().is_some()
            && (self.by_columns() || changes * 100.0 <= (self.n * self.count) as f64)
    }

    /// `out = A x`, each column of `x` zero outside its support (`k` indices a column; `full`
    /// holds `k` for every column): from the support's columns of `A` where
    /// [`by_columns`](Columns::by_columns), else the operator's product.
    pub fn apply_supported(
        &self,
        x: &CudaSlice<T>,
        support: (&CudaSlice<u64>, &CudaSlice<f64>),
        out: &mut CudaSlice<T>,
    ) -> Result<()> {
        if self.by_columns() {
            self.support_product(support, x, out)
        } else {
            self.apply(x, out)
        }
    }

    /// `out_c = A v_c` over the entries of `v_c` on column `c`'s support (`k` indices a column):
    /// `A v_S` from the support's columns of a dense `A`. `full` holds `k` for every column.
    pub fn support_product(
        &self,
        (support, full): (&CudaSlice<u64>, &CudaSlice<f64>),
        v: &CudaSlice<T>,
        out: &mut CudaSlice<T>,
    ) -> Result<()> {
        let list = Listed {
            list: support,
            lengths: &full.as_view(),
            stride: self.k,
        };
        self.listed_product(list, v, None, out)
    }

    /// `ad_c = mu_c ag_c + A w_c` for a dense `A`, `w_c` the change of column `c`'s support
    /// (`v` on the indices entering it, `-v` on those leaving; [`changes`](Columns::changes)):
    /// NIHT's `A d` from `A g_S` and the few columns of `A` the change touches.
    pub fn change_product(
        &self,
        (list, lengths): (&CudaSlice<u64>, &CudaView<'_, f64>),
        v: &CudaSlice<T>,
        (mu, ag): (&CudaSlice<f64>, &CudaSlice<T>),
        ad: &mut CudaSlice<T>,
    ) -> Result<()> {
        let list = Listed {
            list,
            lengths,
            stride: 2 * self.k,
        };
        self.listed_product(list, v, Some((mu, ag)), ad)
    }

    /// `out_c = A w_c (+ mu_c base_c)`, `w_c` the entries of `v_c` that column `c`'s list
    /// names (negated where bit 63 is set), from those columns of the dense `A` alone (`A_c`,
    /// column `c`'s own, with a stack of operators). Each
    /// list is cut into stretches summed by their own threads (enough to fill the device) and
    /// the stretches are added in order, so the result does not depend on the launch.
    fn listed_product(
        &self,
        listed: Listed<'_>,
        v: &CudaSlice<T>,
        scaled: Option<(&CudaSlice<f64>, &CudaSlice<T>)>,
        out: &mut CudaSlice<T>,
    ) -> Result<()> {
        let dev = self.dev();
        let a = self
            .op
            .dense_matrix()
            .expect("listed products are taken of dense operators");
        let total = self.m * self.count;
        let threads = 2048 * dev.multiprocessors();
        let chunks = threads
            .div_ceil(total.max(1))
            .min(listed.stride.div_ceil(8))
            .max(1);
        let per_chunk = listed.stride.div_ceil(chunks) as u64;
        let mut partial = dev.alloc::<T>(total * chunks, "a product's partial sums")?;
        let (m64, n64, stride64) = (self.m as u64, self.n as u64, listed.stride as u64);
        let (total64, chunks64) = (total as u64, chunks as u64);
        // Each column's own matrix in a stack, one matrix for every column otherwise.
        let a_stride = if self.op.stacked() { m64 * n64 } else { 0 };
        rec_dense_columns(
            dev,
            over(total * chunks),
            a,
            a_stride,
            m64,
            n64,
            listed.list,
            listed.lengths,
            stride64,
            per_chunk,
            v,
            total64,
            chunks64,
            &mut partial,
        )?;
        let shape = over(total);
        match scaled {
            Some((mu, base)) => rec_dense_columns_scaled_sum(
                dev, shape, &partial, chunks64, m64, mu, base, total64, out,
            ),
            // The sum has no scaled part: no `mu` nor `base` to read.
            None => rec_dense_columns_sum(
                dev, shape, &partial, chunks64, m64, NULL, NULL, total64, out,
            ),
        }
    }

    /// `a = 0` in the columns listed in `cols` (of `len` values each).
    pub fn clear(&self, cols: &CudaSlice<u64>, a: &mut CudaSlice<T>, len: usize) -> Result<()> {
        let (len64, total) = (len as u64, (len * cols.len()) as u64);
        rec_cols_clear(self.dev(), over(len * cols.len()), cols, len64, total, a)
    }

    /// `r_c = r_c - (A d)_c` where column `c`'s support moved (`place[c] = c`; `ad` then holds
    /// its `A d`), `r_c - mu_c (A g_S)_c` where it held (`place[c] = u64::MAX`).
    pub fn residual_update(
        &self,
        (ag, ad): (&CudaSlice<T>, &CudaSlice<T>),
        mu: &CudaSlice<f64>,
        place: &CudaSlice<u64>,
        r: &mut CudaSlice<T>,
    ) -> Result<()> {
        let (shape, m64, total) = self.by_column(self.m);
        rec_cols_residual(self.dev(), shape, ag, ad, mu, place, m64, total, r)
    }

    /// `r_c = y_c - (A x)_c` in the marked columns, `ax` holding `A x`.
    pub fn refresh(
        &self,
        (y, ax): (&CudaSlice<T>, &CudaSlice<T>),
        marked: &CudaSlice<u32>,
        r: &mut CudaSlice<T>,
    ) -> Result<()> {
        let (shape, m64, total) = self.by_column(self.m);
        rec_cols_refresh(self.dev(), shape, y, ax, marked, m64, total, r)
    }
}

/// Lists of entries a column (`stride` apart, `lengths` of them each, as `f64`s).
struct Listed<'b> {
    list: &'b CudaSlice<u64>,
    lengths: &'b CudaView<'b, f64>,
    stride: usize,
}

/// A device copy of host values.
pub(crate) fn upload<P: DeviceRepr + cudarc::driver::ValidAsZeroBits>(
    dev: &CudaDevice,
    a: &[P],
) -> Result<CudaSlice<P>> {
    dev.stream()
        .clone_htod(a)
        .map_err(|e| driver_error("copying a batch's values to the device", e))
}

#[cfg(test)]
mod tests {
    //! The products with listed columns against the operator's own products, on a GPU (skipped
    //! without one, failing when `KSELECT_REQUIRE_GPU=1`).

    use super::*;
    use crate::device::cuda::download::download_vec;
    use crate::device::Device;
    use crate::random::SplitMix64;
    use crate::recovery::Ensemble;

    /// Columns `c` of `v` (`n` each) restricted to `lists[c]` (negated where bit 63 is set).
    fn listed_vectors(v: &[f64], n: usize, lists: &[Vec<u64>]) -> Vec<f64> {
        let mut w = vec![0.0; v.len()];
        for (c, list) in lists.iter().enumerate() {
            for &word in list {
                let j = (word & !(1 << 63)) as usize;
                let sign = if word >> 63 == 1 { -1.0 } else { 1.0 };
                w[c * n + j] = sign * v[c * n + j];
            }
        }
        w
    }

    #[test]
    fn listed_products_match_the_operators_products() {
        let device = match Device::cuda(0) {
            Ok(d) => d,
            Err(e) if std::env::var("KSELECT_REQUIRE_GPU").as_deref() == Ok("1") => {
                panic!("KSELECT_REQUIRE_GPU=1 but no GPU: {e}")
            }
            Err(e) => return eprintln!("skipped (no GPU): {e}"),
        };
        let (m, n, k, count) = (96, 1000, 40, 3);
        let mut rng = SplitMix64::new(7);
        for ensemble in [Ensemble::Gaussian, Ensemble::Sign] {
            let host = ensemble.generate::<f64>(m, n, 5).unwrap();
            let op = DeviceOperator::upload(&host, &device).unwrap();
            let dev = op.device();
            let cols = Columns::new(&op, k, count);
            let v: Vec<f64> = (0..n * count)
                .map(|_| (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64 - 0.5)
                .collect();
            let base: Vec<f64> = (0..m * count)
                .map(|_| (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64 - 0.5)
                .collect();
            let mu = [0.5, 2.0, -1.5];
            // Changes of 0, 7 and 2k entries (some leaving: bit 63).
            let lists: Vec<Vec<u64>> = [0usize, 7, 2 * k]
                .iter()
                .map(|&len| {
                    (0..len as u64)
                        .map(|e| (e * 23 % n as u64) | if e % 3 == 0 { 1 << 63 } else { 0 })
                        .collect()
                })
                .collect();
            let mut flat = vec![0u64; 2 * k * count];
            for (c, list) in lists.iter().enumerate() {
                flat[c * 2 * k..c * 2 * k + list.len()].copy_from_slice(list);
            }
            let lengths: Vec<f64> = lists.iter().map(|l| l.len() as f64).collect();
            let w = listed_vectors(&v, n, &lists);
            let mut want = upload(dev, &vec![0.0; m * count]).unwrap();
            op.products(
                &upload(dev, &w).unwrap().as_view(),
                &mut want.as_view_mut(),
                count,
                false,
            )
            .unwrap();
            let want = download_vec(dev, &want.as_view(), "A w").unwrap();
            let (list, lengths) = (upload(dev, &flat).unwrap(), upload(dev, &lengths).unwrap());
            let (vd, mud, based) = (
                upload(dev, &v).unwrap(),
                upload(dev, &mu).unwrap(),
                upload(dev, &base).unwrap(),
            );
            let mut got = cols.scratch(m).unwrap();
            cols.change_product((&list, &lengths.as_view()), &vd, (&mud, &based), &mut got)
                .unwrap();
            let got = download_vec(dev, &got.as_view(), "A d").unwrap();
            for (t, (&g, &a)) in got.iter().zip(&want).enumerate() {
                let expected = mu[t / m] * base[t] + a;
                assert!(
                    (g - expected).abs() <= 1e-12 * (1.0 + expected.abs()),
                    "{ensemble}: entry {t} is {g}, not {expected}"
                );
            }
            // A v_S from the support's columns, against the product of v_S.
            {
                let supports: Vec<Vec<u64>> = (0..count)
                    .map(|c| (0..k as u64).map(|e| e * 11 + c as u64).collect())
                    .collect();
                let vs = listed_vectors(&v, n, &supports);
                let mut want = cols.scratch(m).unwrap();
                cols.apply(&upload(dev, &vs).unwrap(), &mut want).unwrap();
                let want = download_vec(dev, &want.as_view(), "A v_S").unwrap();
                let flat: Vec<u64> = supports.concat();
                let full = upload(dev, &vec![k as f64; count]).unwrap();
                let mut got = cols.scratch(m).unwrap();
                cols.support_product((&upload(dev, &flat).unwrap(), &full), &vd, &mut got)
                    .unwrap();
                let got = download_vec(dev, &got.as_view(), "A v_S").unwrap();
                for (t, (&g, &a)) in got.iter().zip(&want).enumerate() {
                    assert!(
                        (g - a).abs() <= 1e-12 * (1.0 + a.abs()),
                        "support product entry {t} is {g}, not {a}"
                    );
                }
            }
        }
    }
}
