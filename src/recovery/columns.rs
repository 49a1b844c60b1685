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
    /// enough to fill the device, else enough (up to 16 stretches of a block each) to.
    fn parts(&self, len: usize) -> u32 {
        let wanted = len.div_ceil(16 * THREADS as usize);
        let room = (4 * self.dev().multiprocessors()).div_ceil(self.count.max(1));
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
        let count64 = self.count as u64;
        let (f, name) = recovery_kernel(dev, "rec_cols_sum_parts".to_string())?;
        let mut l = dev.stream().launch_builder(&f);
        l.arg(&partial).arg(&parts).arg(&count64).arg(sums);
        launch_recovery(l, blocks(self.count), &name)
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
        let count64 = self.count as u64;
        let (f, name) = recovery_kernel(dev, "rec_cols_step_parts".to_string())?;
        let mut l = dev.stream().launch_builder(&f);
        l.arg(&gg)
            .arg(&g_parts)
            .arg(&agg)
            .arg(&a_parts)
            .arg(&count64)
            .arg(mu);
        launch_recovery(l, blocks(self.count), &name)
    }

    /// Each column's support fingerprint, its bits in an `f64`.
    pub fn fingerprints(
        &self,
        support: &CudaSlice<u64>,
        prints: &mut CudaViewMut<'_, f64>,
    ) -> Result<()> {
        let dev = self.dev();
        let k64 = self.k as u64;
        let (f, name) = recovery_kernel(dev, "rec_cols_fingerprint".to_string())?;
        let mut l = dev.stream().launch_builder(&f);
        l.arg(support).arg(&k64).arg(prints);
        launch_recovery(l, self.count, &name)
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

    /// `ad_c = mu_c ag_c + A w_c` for a dense `A`, `w_c` the change of column `c`'s support
    /// (`v` on the indices entering it, `-v` on those leaving; [`changes`](Columns::changes)):
    /// NIHT's `A d` from `A g_S` and the few columns of `A` the change touches.
    #[allow(clippy::too_many_arguments)]
    pub fn change_product(
        &self,
        a: &CudaSlice<T>,
        (list, lengths): (&CudaSlice<u64>, &CudaView<'_, f64>),
        v: &CudaSlice<T>,
        mu: &CudaSlice<f64>,
        ag: &CudaSlice<T>,
        ad: &mut CudaSlice<T>,
    ) -> Result<()> {
        let dev = self.dev();
        let (m64, n64) = (self.m as u64, self.n as u64);
        let (stride, total) = ((2 * self.k) as u64, (self.m * self.count) as u64);
        let (f, name) = typed::<T>(dev, "rec_dense_change_product")?;
        let mut l = dev.stream().launch_builder(&f);
        l.arg(a)
            .arg(&m64)
            .arg(&n64)
            .arg(list)
            .arg(lengths)
            .arg(&stride)
            .arg(v)
            .arg(mu)
            .arg(ag)
            .arg(&total)
            .arg(ad);
        launch_recovery(l, blocks(self.m * self.count), &name)
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

/// A host copy of device values.
pub(crate) fn download<P: DeviceRepr + Copy + Default>(
    dev: &CudaDevice,
    a: &CudaView<'_, P>,
    what: &str,
) -> Result<Vec<P>> {
    dev.stream()
        .clone_dtoh(a)
        .map_err(|e| driver_error(&format!("copying {what} to the host"), e))
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
