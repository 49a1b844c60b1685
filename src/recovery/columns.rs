//! The steps of the solvers on many problems at once, on a CUDA device: each problem's vector
//! is a column of a matrix (`n` values a column for signals, `m` for measurements, `k`
//! indices for supports), and each step one launch over every column (`kernels/recovery.cu`,
//! the `rec_cols_*` kernels). Per-column scalars are `f64`s written into a view of a buffer
//! the host reads at once.

use cudarc::driver::{CudaSlice, CudaView, CudaViewMut, DeviceRepr, PushKernelArg};

use crate::device::cuda::kernels::kernel_name;
use crate::device::cuda::{driver_error, CudaDevice};
use crate::error::Result;
use crate::recovery::cuda::{blocks, launch_recovery, recovery_kernel, DeviceOperator, THREADS};
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

/// The kernel `{op}_{dtype}` of `T`.
fn typed<T: Real>(dev: &CudaDevice, op: &str) -> Result<(cudarc::driver::CudaFunction, String)> {
    recovery_kernel(dev, kernel_name(op, T::DTYPE))
}

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
        let (k64, n64, total) = (self.k as u64, self.n as u64, (self.k * self.count) as u64);
        let (f, name) = typed::<T>(dev, "rec_cols_restrict")?;
        let mut l = dev.stream().launch_builder(&f);
        l.arg(v)
            .arg(support)
            .arg(&k64)
            .arg(&n64)
            .arg(&total)
            .arg(out);
        launch_recovery(l, blocks(self.k * self.count), &name)
    }

    /// `v = x + mu_c g` in each column `c`.
    pub fn step(
        &self,
        x: &CudaSlice<T>,
        g: &CudaSlice<T>,
        mu: &CudaSlice<f64>,
        v: &mut CudaSlice<T>,
    ) -> Result<()> {
        let dev = self.dev();
        let (n64, total) = (self.n as u64, (self.n * self.count) as u64);
        let (f, name) = typed::<T>(dev, "rec_cols_step")?;
        let mut l = dev.stream().launch_builder(&f);
        l.arg(x).arg(g).arg(mu).arg(&n64).arg(&total).arg(v);
        launch_recovery(l, blocks(self.n * self.count), &name)
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
        let dev = self.dev();
        let len64 = len as u64;
        let (f, name) = typed::<T>(dev, "rec_cols_partial_sumsq")?;
        let mut l = dev.stream().launch_builder(&f);
        l.arg(a).arg(&len64).arg(&parts).arg(partial);
        launch_recovery(l, self.count * parts as usize, &name)
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
        let (f, name) = recovery_kernel(dev, "rec_cols_sum_parts".to_string())?;
        let mut l = dev.stream().launch_builder(&f);
        l.arg(&partial).arg(&parts).arg(sums);
        launch_recovery(l, self.count, &name)
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
            let (f, name) = typed::<T>(dev, "rec_cols_step_size")?;
            let mut l = dev.stream().launch_builder(&f);
            l.arg(gs).arg(&n64).arg(ags).arg(&m64).arg(mu);
            return launch_recovery(l, self.count, &name);
        }
        let mut gg = dev.alloc::<f64>(self.count * g_parts as usize, "partial sums")?;
        let mut agg = dev.alloc::<f64>(self.count * a_parts as usize, "partial sums")?;
        self.partial_sumsq(gs, self.n, g_parts, &mut gg.as_view_mut())?;
        self.partial_sumsq(ags, self.m, a_parts, &mut agg.as_view_mut())?;
        let (f, name) = recovery_kernel(dev, "rec_cols_step_parts".to_string())?;
        let mut l = dev.stream().launch_builder(&f);
        l.arg(&gg).arg(&g_parts).arg(&agg).arg(&a_parts).arg(mu);
        launch_recovery(l, self.count, &name)
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
        let (f, name) = recovery_kernel(dev, "rec_cols_fingerprint".to_string())?;
        let mut l = dev.stream().launch_builder(&f);
        l.arg(support).arg(&k64).arg(&parts).arg(prints);
        launch_recovery(l, self.count * parts as usize, &name)
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
        let (k64, total) = (self.k as u64, (self.k * self.count) as u64);
        let (f, name) = recovery_kernel(dev, "rec_cols_differ".to_string())?;
        let mut l = dev.stream().launch_builder(&f);
        l.arg(a).arg(b).arg(&k64).arg(&total).arg(changed);
        launch_recovery(l, blocks(self.k * self.count), &name)
    }

    /// `out = a - b`, every column.
    pub fn difference(
        &self,
        a: &CudaSlice<T>,
        b: &CudaSlice<T>,
        out: &mut CudaSlice<T>,
    ) -> Result<()> {
        let dev = self.dev();
        let total = a.len() as u64;
        let (f, name) = typed::<T>(dev, "rec_difference")?;
        let mut l = dev.stream().launch_builder(&f);
        l.arg(a).arg(b).arg(&total).arg(out);
        launch_recovery(l, blocks(a.len()), &name)
    }

    /// Column `j` of `dst` = column `cols[j]` of `src` (of `len` values), for this batch's
    /// `count` = `cols.len()` columns; `kernel` names the gather of the element type.
    fn gather_with<P: DeviceRepr>(
        &self,
        kernel: (cudarc::driver::CudaFunction, String),
        src: &CudaSlice<P>,
        cols: &CudaSlice<u64>,
        len: usize,
        dst: &mut CudaSlice<P>,
    ) -> Result<()> {
        let (f, name) = kernel;
        let (len64, total) = (len as u64, (len * self.count) as u64);
        let mut l = self.dev().stream().launch_builder(&f);
        l.arg(src).arg(cols).arg(&len64).arg(&total).arg(dst);
        launch_recovery(l, blocks(len * self.count), &name)
    }

    /// Column `j` of `dst` = column `cols[j]` of `src`, `len` values a column.
    pub fn gather(
        &self,
        src: &CudaSlice<T>,
        cols: &CudaSlice<u64>,
        len: usize,
        dst: &mut CudaSlice<T>,
    ) -> Result<()> {
        let kernel = typed::<T>(self.dev(), "rec_cols_gather")?;
        self.gather_with(kernel, src, cols, len, dst)
    }

    /// Column `cols[j]` of `dst` = column `j` of `src`, `len` values a column.
    pub fn scatter(
        &self,
        src: &CudaSlice<T>,
        cols: &CudaSlice<u64>,
        len: usize,
        dst: &mut CudaSlice<T>,
    ) -> Result<()> {
        let kernel = typed::<T>(self.dev(), "rec_cols_scatter")?;
        self.gather_with(kernel, src, cols, len, dst)
    }

    /// [`gather`](Columns::gather) of supports (`k` indices a column).
    pub fn gather_support(
        &self,
        src: &CudaSlice<u64>,
        cols: &CudaSlice<u64>,
        dst: &mut CudaSlice<u64>,
    ) -> Result<()> {
        let kernel = recovery_kernel(self.dev(), "rec_cols_gather_index".to_string())?;
        self.gather_with(kernel, src, cols, self.k, dst)
    }

    /// [`scatter`](Columns::scatter) of supports (`k` indices a column).
    pub fn scatter_support(
        &self,
        src: &CudaSlice<u64>,
        cols: &CudaSlice<u64>,
        dst: &mut CudaSlice<u64>,
    ) -> Result<()> {
        let kernel = recovery_kernel(self.dev(), "rec_cols_scatter_index".to_string())?;
        self.gather_with(kernel, src, cols, self.k, dst)
    }

    /// Column `j` of `out` = column `cols[j]` of `a - b`, `n` values a column.
    pub fn gather_difference(
        &self,
        (a, b): (&CudaSlice<T>, &CudaSlice<T>),
        cols: &CudaSlice<u64>,
        out: &mut CudaSlice<T>,
    ) -> Result<()> {
        let dev = self.dev();
        let (n64, total) = (self.n as u64, (self.n * self.count) as u64);
        let (f, name) = typed::<T>(dev, "rec_cols_gather_difference")?;
        let mut l = dev.stream().launch_builder(&f);
        l.arg(a).arg(b).arg(cols).arg(&n64).arg(&total).arg(out);
        launch_recovery(l, blocks(self.n * self.count), &name)
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
        let dev = self.dev();
        let k64 = self.k as u64;
        let (f, name) = recovery_kernel(dev, "rec_cols_changes".to_string())?;
        let mut l = dev.stream().launch_builder(&f);
        l.arg(support).arg(taken).arg(&k64).arg(list).arg(lengths);
        launch_recovery(l, self.count, &name)
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
        let (f, name) = typed::<T>(dev, "rec_dense_columns")?;
        let mut l = dev.stream().launch_builder(&f);
        l.arg(a)
            .arg(&a_stride)
            .arg(&m64)
            .arg(&n64)
            .arg(listed.list)
            .arg(listed.lengths)
            .arg(&stride64)
            .arg(&per_chunk)
            .arg(v)
            .arg(&total64)
            .arg(&chunks64)
            .arg(&mut partial);
        launch_recovery(l, blocks(total * chunks), &name)?;
        let sum = if scaled.is_some() {
            "rec_dense_columns_scaled_sum"
        } else {
            "rec_dense_columns_sum"
        };
        let (f, name) = typed::<T>(dev, sum)?;
        let mut l = dev.stream().launch_builder(&f);
        l.arg(&partial).arg(&chunks64).arg(&m64);
        match scaled {
            Some((mu, base)) => l.arg(mu).arg(base),
            // Not read: the sum has no scaled part.
            None => l.arg(&partial).arg(&partial),
        };
        l.arg(&total64).arg(out);
        launch_recovery(l, blocks(total), &name)
    }

    /// `a = 0` in the columns listed in `cols` (of `len` values each).
    pub fn clear(&self, cols: &CudaSlice<u64>, a: &mut CudaSlice<T>, len: usize) -> Result<()> {
        let dev = self.dev();
        let (len64, total) = (len as u64, (len * cols.len()) as u64);
        let (f, name) = typed::<T>(dev, "rec_cols_clear")?;
        let mut l = dev.stream().launch_builder(&f);
        l.arg(cols).arg(&len64).arg(&total).arg(a);
        launch_recovery(l, blocks(len * cols.len()), &name)
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
        let dev = self.dev();
        let (m64, total) = (self.m as u64, (self.m * self.count) as u64);
        let (f, name) = typed::<T>(dev, "rec_cols_residual")?;
        let mut l = dev.stream().launch_builder(&f);
        l.arg(ag)
            .arg(ad)
            .arg(mu)
            .arg(place)
            .arg(&m64)
            .arg(&total)
            .arg(r);
        launch_recovery(l, blocks(self.m * self.count), &name)
    }

    /// `r_c = y_c - (A x)_c` in the marked columns, `ax` holding `A x`.
    pub fn refresh(
        &self,
        (y, ax): (&CudaSlice<T>, &CudaSlice<T>),
        marked: &CudaSlice<u32>,
        r: &mut CudaSlice<T>,
    ) -> Result<()> {
        let dev = self.dev();
        let (m64, total) = (self.m as u64, (self.m * self.count) as u64);
        let (f, name) = typed::<T>(dev, "rec_cols_refresh")?;
        let mut l = dev.stream().launch_builder(&f);
        l.arg(y).arg(ax).arg(marked).arg(&m64).arg(&total).arg(r);
        launch_recovery(l, blocks(self.m * self.count), &name)
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
