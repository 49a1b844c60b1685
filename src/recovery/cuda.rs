//! The CUDA backend of the solvers: vectors in device memory, the operator's products by
//! cuBLAS (dense matrices), cuFFT (the subsampled DCT: one real FFT of length `n` between the
//! packing and the choice of rows; the CPU takes a complex one) or the crate's kernels (sparse
//! binary matrices), hard thresholding by the crate's device top-k, and the reductions of
//! `kernels/recovery.cu`, summed on the host from per-block parts.

use cudarc::driver::{CudaSlice, CudaView, CudaViewMut, LaunchConfig};

use crate::device::cuda::blas::blas_handle;
use crate::device::cuda::download::download_vec;
use crate::device::cuda::kernels::recovery::{
    rec_add_scaled, rec_axpy, rec_dct_pack, rec_dct_rows, rec_dct_spread, rec_dct_unpack,
    rec_dense_transpose, rec_dot, rec_dot_all, rec_iota, rec_sparse_adjoint, rec_sparse_apply,
    rec_xpay, THREADS,
};
use crate::device::cuda::kernels::NULL;
use crate::device::cuda::launch::config;
use crate::device::cuda::{driver_error, CudaDevice};
use crate::device::{Device, DeviceBuffer};
use crate::error::{Error, Result};
use crate::recovery::backend::Backend;
use crate::recovery::columns::{upload, Columns};
use crate::recovery::operator::check_one_shape;
use crate::recovery::{
    DenseMatrix, LinearOperator, Operator, OperatorKind, Real, RecoveryError, SparseBinary,
};
use crate::select::batch::cuda::largest_magnitudes;

/// Blocks of the reductions: their parts are summed on the host.
const PARTS: usize = 264;

/// An operator copied to a CUDA device, ready for the solvers.
///
/// ```no_run
/// use kselect::recovery::{DeviceOperator, Ensemble};
/// use kselect::Device;
/// let a = Ensemble::Gaussian.generate::<f32>(64, 256, 1)?;
/// let on_gpu = DeviceOperator::upload(&a, &Device::cuda(0)?)?;
/// assert_eq!(on_gpu.shape(), (64, 256));
/// # Ok::<(), kselect::Error>(())
/// ```
pub struct DeviceOperator<T: Real> {
    dev: CudaDevice,
    form: Form<T>,
    m: usize,
    n: usize,
    /// The operators held: 1, or one a problem ([`upload_each`](DeviceOperator::upload_each)),
    /// their device forms one after the other.
    members: usize,
}

impl<T: Real> std::fmt::Debug for DeviceOperator<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DeviceOperator")
            .field("m", &self.m)
            .field("n", &self.n)
            .field("operators", &self.members)
            .field("device", &self.dev.ordinal())
            .finish_non_exhaustive()
    }
}

/// The device form of each kind of operator (of every member of a stack: their matrices, rows
/// or index arrays one after the other).
enum Form<T> {
    /// Column-major `m x n` (each column of `A` contiguous, as cuBLAS reads it), so that the
    /// products with vectors of few nonzeros read only their columns.
    Dense(CudaSlice<T>),
    /// The rows kept (`m` a member), the forward and inverse factors (`n` complex pairs each,
    /// shared), and the plans of batches of real FFTs of length `n` made so far (each batch a
    /// power of two).
    Dct {
        rows: CudaSlice<u64>,
        turn: CudaSlice<T>,
        unturn: CudaSlice<T>,
        plans: std::sync::Mutex<Vec<DctPlans>>,
    },
    /// Rows' columns (CSR: `m + 1` offsets and `n d` columns a member), columns' rows (`n d` a
    /// member), `d` and the entries' value.
    Sparse {
        start: CudaSlice<u64>,
        cols: CudaSlice<u64>,
        rows: CudaSlice<u64>,
        d: u32,
        value: f64,
    },
}

impl<T: Real> DeviceOperator<T> {
    /// Copies `op` to `device` (a CUDA device): a dense matrix (its products by cuBLAS), a
    /// subsampled DCT (by cuFFT) or a sparse binary matrix (by the crate's kernels).
    ///
    /// ```no_run
    /// use kselect::recovery::{DeviceOperator, Ensemble};
    /// use kselect::Device;
    /// let a = Ensemble::Sparse { d: 7 }.generate::<f64>(128, 512, 3)?;
    /// assert!(DeviceOperator::upload(&a, &Device::Cpu).is_err());
    /// # Ok::<(), kselect::Error>(())
    /// ```
    pub fn upload(op: &Operator<T>, device: &Device) -> Result<DeviceOperator<T>> {
        DeviceOperator::upload_each(std::slice::from_ref(op), device)
    }

    /// Copies `ops`, one operator a problem, to `device` (a CUDA device), for
    /// [`Solver::solve_many_on`](crate::recovery::Solver::solve_many_on) to solve problem `c`
    /// with `ops[c]`: B operators of one ensemble, say, so that small problems fill the GPU.
    /// They must have one shape and one kind (dense, DCT, or sparse with one `d`). Dense
    /// stacks take strided batched cuBLAS products, sparse ones one launch of their kernels.
    ///
    /// ```no_run
    /// use kselect::recovery::{DeviceOperator, Ensemble};
    /// use kselect::Device;
    /// let ops: Vec<_> = (0..4)
    ///     .map(|seed| Ensemble::Gaussian.generate::<f32>(32, 128, seed))
    ///     .collect::<Result<_, _>>()?;
    /// let stack = DeviceOperator::upload_each(&ops, &Device::cuda(0)?)?;
    /// assert_eq!((stack.shape(), stack.operators()), ((32, 128), 4));
    /// # Ok::<(), kselect::Error>(())
    /// ```
    pub fn upload_each(ops: &[Operator<T>], device: &Device) -> Result<DeviceOperator<T>> {
        let Device::Cuda(dev) = device else {
            return Err(RecoveryError::NotCuda {
                what: "DeviceOperator::upload",
                on_cpu: "the solvers take the operator itself there",
            }
            .into());
        };
        let first = ops.first().ok_or(RecoveryError::Empty {
            what: "an upload",
            item: "operator",
        })?;
        let (m, n) = first.shape();
        check_one_shape(ops)?;
        let form = match first {
            Operator::Dense(_) => dense(
                dev,
                &members(ops, |o| match o {
                    Operator::Dense(a) => Some(a),
                    _ => None,
                })?,
            )?,
            Operator::Sparse(a) => {
                let d = a.nonzeros_per_column();
                sparse(
                    dev,
                    &members(ops, |o| match o {
                        Operator::Sparse(b) if b.nonzeros_per_column() == d => Some(b),
                        _ => None,
                    })?,
                )?
            }
            Operator::Dct(_) => dct(
                dev,
                &members(ops, |o| match o {
                    Operator::Dct(a) => Some(a),
                    _ => None,
                })?,
            )?,
        };
        Ok(DeviceOperator {
            dev: dev.clone(),
            form,
            m,
            n,
            members: ops.len(),
        })
    }

    /// How many operators this holds: 1 from [`upload`](DeviceOperator::upload), one a
    /// problem from [`upload_each`](DeviceOperator::upload_each).
    ///
    /// ```no_run
    /// # use kselect::recovery::{DeviceOperator, Ensemble};
    /// # use kselect::Device;
    /// let a = Ensemble::Sign.generate::<f32>(8, 16, 1)?;
    /// assert_eq!(DeviceOperator::upload(&a, &Device::cuda(0)?)?.operators(), 1);
    /// # Ok::<(), kselect::Error>(())
    /// ```
    pub fn operators(&self) -> usize {
        self.members
    }

    /// Whether this holds one operator a problem (more than one).
    pub(crate) fn stacked(&self) -> bool {
        self.members > 1
    }

    /// `(m, n)`.
    ///
    /// ```no_run
    /// # use kselect::recovery::{DeviceOperator, Ensemble};
    /// # use kselect::Device;
    /// let a = Ensemble::Sign.generate::<f32>(8, 16, 1)?;
    /// assert_eq!(DeviceOperator::upload(&a, &Device::cuda(0)?)?.shape(), (8, 16));
    /// # Ok::<(), kselect::Error>(())
    /// ```
    pub fn shape(&self) -> (usize, usize) {
        (self.m, self.n)
    }

    /// The matrix of a dense operator (column-major `m x n`; a stack's matrices one after the
    /// other), `None` for the other forms.
    pub(crate) fn dense_matrix(&self) -> Option<&CudaSlice<T>> {
        match &self.form {
            Form::Dense(a) => Some(a),
            _ => None,
        }
    }

    /// The device.
    pub(crate) fn device(&self) -> &CudaDevice {
        &self.dev
    }

    /// `y = A x` on the device: `x` holds `n` values, `y` `m` (overwritten).
    ///
    /// ```no_run
    /// use kselect::recovery::{DeviceOperator, Ensemble};
    /// use kselect::{Device, DeviceBuffer};
    /// let device = Device::cuda(0)?;
    /// let a = DeviceOperator::upload(&Ensemble::Sign.generate::<f64>(4, 16, 1)?, &device)?;
    /// let x = DeviceBuffer::from_host(&device, &[0.0; 16])?;
    /// let mut y = DeviceBuffer::from_host(&device, &[1.0; 4])?;
    /// a.apply(&x, &mut y)?;
    /// assert_eq!(y.to_host()?, vec![0.0; 4]);
    /// # Ok::<(), kselect::Error>(())
    /// ```
    pub fn apply(&self, x: &DeviceBuffer<T>, y: &mut DeviceBuffer<T>) -> Result<()> {
        self.check_lengths(x.len(), y.len(), self.n, self.m)?;
        self.product(0, x.as_slice(), y.as_slice_mut(), false)
    }

    /// `x = A^T y` on the device: `y` holds `m` values, `x` `n` (overwritten).
    ///
    /// ```no_run
    /// use kselect::recovery::{DeviceOperator, Ensemble};
    /// use kselect::{Device, DeviceBuffer};
    /// let device = Device::cuda(0)?;
    /// let a = DeviceOperator::upload(&Ensemble::Sign.generate::<f64>(4, 16, 1)?, &device)?;
    /// let y = DeviceBuffer::from_host(&device, &[0.0; 4])?;
    /// let mut x = DeviceBuffer::from_host(&device, &[1.0; 16])?;
    /// a.adjoint(&y, &mut x)?;
    /// assert_eq!(x.to_host()?, vec![0.0; 16]);
    /// # Ok::<(), kselect::Error>(())
    /// ```
    pub fn adjoint(&self, y: &DeviceBuffer<T>, x: &mut DeviceBuffer<T>) -> Result<()> {
        self.check_lengths(y.len(), x.len(), self.m, self.n)?;
        self.product(0, y.as_slice(), x.as_slice_mut(), true)
    }

    /// [`apply`](DeviceOperator::apply) to many vectors at once: `xs` holds them one after
    /// the other (`n` values each), `ys` receives their products in the same order (`m` each;
    /// overwritten). Dense operators take one cuBLAS `gemm`. A stack of operators
    /// ([`upload_each`](DeviceOperator::upload_each)) takes one vector for each, vector `c`
    /// multiplied by operator `c`.
    ///
    /// ```no_run
    /// use kselect::recovery::{DeviceOperator, Ensemble};
    /// use kselect::{Device, DeviceBuffer};
    /// let device = Device::cuda(0)?;
    /// let a = DeviceOperator::upload(&Ensemble::Sign.generate::<f32>(4, 8, 1)?, &device)?;
    /// let xs = DeviceBuffer::from_host(&device, &[0.0f32; 3 * 8])?;
    /// let mut ys = DeviceBuffer::from_host(&device, &[1.0f32; 3 * 4])?;
    /// a.apply_many(&xs, &mut ys)?;
    /// assert_eq!(ys.to_host()?, vec![0.0; 12]);
    /// # Ok::<(), kselect::Error>(())
    /// ```
    pub fn apply_many(&self, xs: &DeviceBuffer<T>, ys: &mut DeviceBuffer<T>) -> Result<()> {
        let count = self.count_of(xs.len(), ys.len(), self.n, self.m)?;
        self.products(
            &xs.as_slice().as_view(),
            &mut ys.as_slice_mut().as_view_mut(),
            count,
            false,
        )
    }

    /// [`adjoint`](DeviceOperator::adjoint) of many vectors at once: `ys` holds them one after
    /// the other (`m` values each), `xs` receives their products in the same order (`n` each;
    /// overwritten).
    ///
    /// ```no_run
    /// use kselect::recovery::{DeviceOperator, Ensemble};
    /// use kselect::{Device, DeviceBuffer};
    /// let device = Device::cuda(0)?;
    /// let a = DeviceOperator::upload(&Ensemble::Sign.generate::<f32>(4, 8, 1)?, &device)?;
    /// let ys = DeviceBuffer::from_host(&device, &[0.0f32; 2 * 4])?;
    /// let mut xs = DeviceBuffer::from_host(&device, &[1.0f32; 2 * 8])?;
    /// a.adjoint_many(&ys, &mut xs)?;
    /// assert_eq!(xs.to_host()?, vec![0.0; 16]);
    /// # Ok::<(), kselect::Error>(())
    /// ```
    pub fn adjoint_many(&self, ys: &DeviceBuffer<T>, xs: &mut DeviceBuffer<T>) -> Result<()> {
        let count = self.count_of(ys.len(), xs.len(), self.m, self.n)?;
        self.products(
            &ys.as_slice().as_view(),
            &mut xs.as_slice_mut().as_view_mut(),
            count,
            true,
        )
    }

    /// The number of products of many vectors at once, or an error unless the input and
    /// output hold the same number of whole vectors (fewer than 2^31; one an operator for a
    /// stack).
    fn count_of(
        &self,
        input: usize,
        output: usize,
        len_in: usize,
        len_out: usize,
    ) -> Result<usize> {
        let count = input / len_in;
        if !input.is_multiple_of(len_in)
            || output != count * len_out
            || i32::try_from(count).is_err()
        {
            return Err(self.product_length(len_in, len_out, input, output));
        }
        if self.stacked() && count != self.members {
            return Err(RecoveryError::OneEach {
                what: "vectors",
                given: count,
                operators: self.members,
            }
            .into());
        }
        Ok(count)
    }

    /// An error unless the input and output lengths are those of the product (of one
    /// operator: not a stack).
    fn check_lengths(
        &self,
        input: usize,
        output: usize,
        want_in: usize,
        want_out: usize,
    ) -> Result<()> {
        if self.stacked() {
            return Err(RecoveryError::Stacked {
                operators: self.members,
                instead: "apply_many or adjoint_many",
            }
            .into());
        }
        if input != want_in || output != want_out {
            return Err(self.product_length(want_in, want_out, input, output));
        }
        Ok(())
    }

    /// The error for products of vectors of `len_in` values to `len_out` given `input` values
    /// and room for `output`.
    fn product_length(&self, len_in: usize, len_out: usize, input: usize, output: usize) -> Error {
        RecoveryError::ProductLength {
            m: self.m,
            n: self.n,
            len_in,
            len_out,
            input,
            output,
        }
        .into()
    }

    /// `y = A x` (`transpose`: `x = A^T y`) with member `member` of a stack (0 for one
    /// operator), `input` and `output` of the right lengths.
    fn product(
        &self,
        member: usize,
        input: &CudaSlice<T>,
        output: &mut CudaSlice<T>,
        transpose: bool,
    ) -> Result<()> {
        self.products_from(
            member,
            &input.as_view(),
            &mut output.as_view_mut(),
            1,
            transpose,
        )
    }

    /// `count` products side by side: `y_c = A x_c` (`transpose`: `x_c = A^T y_c`), each
    /// problem's input and output contiguous, one after the other (`count` times the lengths of
    /// one product); with a stack, every member's (`count` of them). Dense matrices take one
    /// cuBLAS `gemm` (`gemv` for one product; a stack a strided batched product), sparse ones
    /// one launch of their kernels; the DCT batched FFTs (a power of two of them at a time).
    pub(crate) fn products(
        &self,
        input: &CudaView<'_, T>,
        output: &mut CudaViewMut<'_, T>,
        count: usize,
        transpose: bool,
    ) -> Result<()> {
        self.products_from(0, input, output, count, transpose)
    }

    /// [`products`](DeviceOperator::products) by members `first .. first + count` of a stack
    /// (`first` is 0 for one operator).
    fn products_from(
        &self,
        first: usize,
        input: &CudaView<'_, T>,
        output: &mut CudaViewMut<'_, T>,
        count: usize,
        transpose: bool,
    ) -> Result<()> {
        let (m, n) = (self.m, self.n);
        let (len_in, len_out) = if transpose { (m, n) } else { (n, m) };
        debug_assert!(input.len() == count * len_in && output.len() == count * len_out);
        let stacked = self.stacked();
        debug_assert!(if stacked {
            first + count <= self.members
        } else {
            first == 0
        });
        match &self.form {
            Form::Dense(a) if count == 1 => {
                let a = a.slice(first * m * n..(first + 1) * m * n);
                gemv(&self.dev, &a, (m, n), input, output, transpose)
            }
            Form::Dense(a) if stacked => {
                let a = a.slice(first * m * n..);
                gemm_each(&self.dev, &a, (m, n), input, output, count, transpose)
            }
            Form::Dense(a) => gemm(&self.dev, a, (m, n), input, output, count, transpose),
            Form::Dct {
                rows,
                turn,
                unturn,
                plans,
            } => {
                let dev = &self.dev;
                // Batches of a power of two of transforms (so that few plans serve every
                // count), each at most DCT_BATCH_VALUES complex values.
                let cap = power_of_two_below((DCT_BATCH_VALUES / dct_pairs(n)).max(1));
                let widest = power_of_two_below(count).min(cap);
                // Each transform's n values, or its n / 2 + 1 coefficients' 2 (n / 2 + 1).
                let len = 2 * dct_pairs(n) * widest;
                let mut a = dev.alloc::<T>(len, "a DCT's transform")?;
                let mut b = dev.alloc::<T>(len, "a DCT's transform")?;
                let mut plans = plans.lock().unwrap_or_else(|e| e.into_inner());
                let mut done = 0;
                while done < count {
                    let batch = power_of_two_below(count - done).min(cap);
                    let plan = dct_plans::<T>(dev, &mut plans, n, batch)?;
                    let member = if stacked { first + done } else { 0 };
                    let parts = DctParts {
                        rows: rows.slice(member * m..),
                        stacked: u64::from(stacked),
                        turn,
                        unturn,
                        plan,
                    };
                    let x = input.slice(done * len_in..(done + batch) * len_in);
                    let mut y = output.slice_mut(done * len_out..(done + batch) * len_out);
                    dct_products(
                        dev,
                        &parts,
                        (m, n, batch),
                        &x,
                        &mut y,
                        (&mut a, &mut b),
                        transpose,
                    )?;
                    done += batch;
                }
                Ok(())
            }
            Form::Sparse {
                start,
                cols,
                rows,
                d,
                value,
            } => {
                let dev = &self.dev;
                let (m64, n64, count64) = (m as u64, n as u64, count as u64);
                let entries = n * *d as usize;
                let stacked = u64::from(stacked);
                let shape = over(count * len_out);
                if transpose {
                    let rows = rows.slice(first * entries..);
                    rec_sparse_adjoint(
                        dev, shape, &rows, *d, stacked, input, *value, m64, n64, count64, output,
                    )
                } else {
                    let (start, cols) = (
                        start.slice(first * (m + 1)..),
                        cols.slice(first * entries..),
                    );
                    rec_sparse_apply(
                        dev, shape, &start, &cols, stacked, input, *value, m64, n64, count64,
                        output,
                    )
                }
            }
        }
    }
}

/// The most complex values of one batch of DCT transforms (`2^25`: 256 MiB a buffer in `f32`).
const DCT_BATCH_VALUES: usize = 1 << 25;

/// The complex coefficients a real FFT of length `n` keeps: `n / 2 + 1` (the others are their
/// conjugates).
fn dct_pairs(n: usize) -> usize {
    n / 2 + 1
}

/// The plans of a batch of real FFTs of one length: the batch, the forward (real to complex)
/// plan and the inverse.
struct DctPlans {
    batch: usize,
    forward: cudarc::cufft::CudaFft,
    inverse: cudarc::cufft::CudaFft,
}

/// The largest power of two at most `x` (at least 1).
fn power_of_two_below(x: usize) -> usize {
    1 << (usize::BITS - 1 - x.max(1).leading_zeros())
}

/// The plans of `batch` real FFTs of length `n` and their inverses, made once and kept in
/// `plans`.
fn dct_plans<'p, T: Real>(
    dev: &CudaDevice,
    plans: &'p mut Vec<DctPlans>,
    n: usize,
    batch: usize,
) -> Result<&'p DctPlans> {
    let index = match plans.iter().position(|p| p.batch == batch) {
        Some(index) => index,
        None => {
            let error = || RecoveryError::DctTooLong { n, batch };
            let n32 = i32::try_from(n).map_err(|_| error())?;
            let batch32 = i32::try_from(batch).map_err(|_| error())?;
            let plan = |kind| {
                cudarc::cufft::CudaFft::plan_1d(n32, kind, batch32, dev.stream().clone()).map_err(
                    |e| Error::Cuda {
                        context: "planning cuFFT for the subsampled DCT".into(),
                        message: format!("{e:?}"),
                    },
                )
            };
            plans.push(DctPlans {
                batch,
                forward: plan(T::FORWARD)?,
                inverse: plan(T::INVERSE)?,
            });
            plans.len() - 1
        }
    };
    Ok(&plans[index])
}

/// The device parts of a subsampled DCT: the rows (of the first problem's member of a stack,
/// `stacked` set, or of the one operator), the factors and the plans of a batch of FFTs.
struct DctParts<'a, T> {
    rows: CudaView<'a, u64>,
    stacked: u64,
    turn: &'a CudaSlice<T>,
    unturn: &'a CudaSlice<T>,
    plan: &'a DctPlans,
}

/// `count` products of the subsampled DCT (`transpose`: its adjoint), side by side, through
/// the two transform buffers of at least `2 (n / 2 + 1) count` values and the plans of `count`
/// real FFTs.
fn dct_products<T: Real>(
    dev: &CudaDevice,
    parts: &DctParts<'_, T>,
    (m, n, count): (usize, usize, usize),
    input: &CudaView<'_, T>,
    output: &mut CudaViewMut<'_, T>,
    (a, b): (&mut CudaSlice<T>, &mut CudaSlice<T>),
    transpose: bool,
) -> Result<()> {
    let (m64, n64, count64) = (m as u64, n as u64, count as u64);
    let fft_error = |e| Error::Cuda {
        context: "cuFFT in the subsampled DCT".into(),
        message: format!("{e:?}"),
    };
    let lengths = (n * count, dct_pairs(n) * count);
    if transpose {
        // The measurements spread into the inverse transform's input (zeroed), in two passes
        // (each writes one entry a row), then the inverse FFT and the reordering.
        dev.stream()
            .memset_zeros(&mut a.slice_mut(..2 * lengths.1))
            .map_err(|e| driver_error("zeroing a DCT's transform", e))?;
        for second in [0u32, 1] {
            rec_dct_spread(
                dev,
                over(m * count),
                input,
                parts.unturn,
                &parts.rows,
                parts.stacked,
                m64,
                n64,
                count64,
                second,
                a,
            )?;
        }
        T::inverse_fft(&parts.plan.inverse, a, b, lengths).map_err(fft_error)?;
        rec_dct_unpack(dev, over(n.div_ceil(2) * count), b, n64, count64, output)
    } else {
        rec_dct_pack(dev, over(n.div_ceil(2) * count), input, n64, count64, a)?;
        T::forward_fft(&parts.plan.forward, a, b, lengths).map_err(fft_error)?;
        rec_dct_rows(
            dev,
            over(m * count),
            b,
            parts.turn,
            &parts.rows,
            parts.stacked,
            m64,
            n64,
            count64,
            output,
        )
    }
}

/// The members of a stack, each `pick`ed from its operator: an error where `pick` finds none
/// (an operator of another kind than the first's).
fn members<'a, T: Real, K>(
    ops: &'a [Operator<T>],
    pick: impl Fn(&'a Operator<T>) -> Option<&'a K>,
) -> Result<Vec<&'a K>> {
    let kind = |o: &Operator<T>| match o {
        Operator::Dense(_) => OperatorKind::Dense,
        Operator::Dct(_) => OperatorKind::Dct,
        Operator::Sparse(a) => OperatorKind::Sparse {
            d: a.nonzeros_per_column(),
        },
    };
    ops.iter()
        .enumerate()
        .map(|(c, o)| {
            pick(o)
                .ok_or_else(|| RecoveryError::KindMismatch {
                    index: c,
                    kind: kind(o),
                    first: kind(&ops[0]),
                })
                .map_err(Error::from)
        })
        .collect()
}

/// Dense matrices on the device, column-major, one after the other: the host's rows are copied
/// a block at a time (at most [`TRANSPOSE_BLOCK`] values) and written into their places by a
/// kernel.
fn dense<T: Real>(dev: &CudaDevice, matrices: &[&DenseMatrix<T>]) -> Result<Form<T>> {
    let (m, n) = matrices[0].shape();
    let mut out = dev.alloc::<T>(matrices.len() * m * n, "a dense operator")?;
    let rows_per_block = (TRANSPOSE_BLOCK / n.max(1)).max(1);
    for (c, a) in matrices.iter().enumerate() {
        let mut own = out.slice_mut(c * m * n..(c + 1) * m * n);
        for (b, block) in a.as_slice().chunks(rows_per_block * n).enumerate() {
            let rows = block.len() / n;
            let staged = upload(dev, block)?;
            let (rows64, first) = (rows as u64, (b * rows_per_block) as u64);
            let (m64, n64) = (m as u64, n as u64);
            rec_dense_transpose(
                dev,
                over(rows * n),
                &staged,
                rows64,
                first,
                m64,
                n64,
                &mut own,
            )?;
        }
    }
    Ok(Form::Dense(out))
}

/// The most values of a dense matrix staged on the device at once while it is uploaded.
const TRANSPOSE_BLOCK: usize = 1 << 24;

/// Subsampled DCTs of one length on the device: their rows (one after the other), their
/// factors, and the plans of a real FFT of their length and of its inverse.
fn dct<T: Real>(
    dev: &CudaDevice,
    members: &[&crate::recovery::SubsampledDct<T>],
) -> Result<Form<T>> {
    let a = members[0];
    // SAFETY: only tries to load the shared library.
    if !unsafe { cudarc::cufft::sys::is_culib_present() } {
        return Err(Error::CudaUnavailable(
            "the cuFFT library (libcufft.so) is not installed; the subsampled DCT on CUDA needs it"
                .into(),
        ));
    }
    let n = a.len();
    let (turn, unturn) = a.twiddles();
    let rows: Vec<u64> = members
        .iter()
        .flat_map(|a| a.rows().iter().map(|&r| r as u64))
        .collect();
    // The plan of one transform, made now: a length cuFFT refuses is an error of the upload.
    let mut plans = Vec::new();
    dct_plans::<T>(dev, &mut plans, n, 1)?;
    Ok(Form::Dct {
        rows: DeviceBuffer::from_host_on(dev, &rows)?.into_slice(),
        turn: DeviceBuffer::from_host_on(dev, &turn)?.into_slice(),
        unturn: DeviceBuffer::from_host_on(dev, &unturn)?.into_slice(),
        plans: std::sync::Mutex::new(plans),
    })
}

/// Sparse binary matrices of one shape and `d` on the device: their columns' rows, and their
/// rows' columns (CSR), each's arrays one after the other.
fn sparse<T: Real>(dev: &CudaDevice, members: &[&SparseBinary<T>]) -> Result<Form<T>> {
    let d = members[0].nonzeros_per_column();
    let (mut start, mut cols, mut rows) = (Vec::new(), Vec::new(), Vec::new());
    for a in members {
        let (own_start, own_cols) = rows_to_columns(a);
        start.extend(own_start);
        cols.extend(own_cols);
        rows.extend(a.rows_of_columns().iter().map(|&i| i as u64));
    }
    let upload = |v: &[u64]| Ok::<_, Error>(DeviceBuffer::from_host_on(dev, v)?.into_slice());
    Ok(Form::Sparse {
        start: upload(&start)?,
        cols: upload(&cols)?,
        rows: upload(&rows)?,
        d: d as u32,
        value: 1.0 / (d as f64).sqrt(),
    })
}

/// The rows' columns of a sparse binary matrix (CSR): `m + 1` offsets and `n d` columns.
fn rows_to_columns<T: Real>(a: &SparseBinary<T>) -> (Vec<u64>, Vec<u64>) {
    let (m, n) = a.shape();
    let d = a.nonzeros_per_column();
    let rows_of_columns = a.rows_of_columns();
    let mut start = vec![0u64; m + 1];
    for &i in rows_of_columns {
        start[i + 1] += 1;
    }
    for i in 0..m {
        start[i + 1] += start[i];
    }
    let mut next = start.clone();
    let mut cols = vec![0u64; n * d];
    for j in 0..n {
        for &i in &rows_of_columns[j * d..(j + 1) * d] {
            cols[next[i] as usize] = j as u64;
            next[i] += 1;
        }
    }
    (start, cols)
}

/// `y = A x` or `x = A^T y` by cuBLAS `gemv`, `A` column-major `m x n`.
fn gemv<T: Real>(
    dev: &CudaDevice,
    a: &CudaView<'_, T>,
    (m, n): (usize, usize),
    input: &CudaView<'_, T>,
    output: &mut CudaViewMut<'_, T>,
    transpose: bool,
) -> Result<()> {
    use cudarc::cublas::GemvConfig;
    let handle = blas_handle(dev, "sparse recovery")?;
    let cfg = GemvConfig {
        trans: operation(transpose),
        m: m as i32,
        n: n as i32,
        alpha: T::one(),
        lda: m as i32,
        incx: 1,
        beta: T::zero(),
        incy: 1,
    };
    let blas = handle.lock().unwrap_or_else(|e| e.into_inner());
    // SAFETY: a holds m * n values (lda = m); input and output hold the lengths of the
    // product's sides (n for x, m for y, and the reverse when transposed).
    unsafe { T::gemv(&blas, cfg, a, input, output) }.map_err(|e| Error::Cuda {
        context: "cuBLAS gemv in sparse recovery".into(),
        message: format!("{e:?}"),
    })
}

/// `count` products `Y = A X` or `X = A^T Y` by cuBLAS `gemm`, `A` column-major `m x n`, each
/// problem's vector a column of `X` (`n x count`) or `Y` (`m x count`).
fn gemm<T: Real>(
    dev: &CudaDevice,
    a: &CudaSlice<T>,
    (m, n): (usize, usize),
    input: &CudaView<'_, T>,
    output: &mut CudaViewMut<'_, T>,
    count: usize,
    transpose: bool,
) -> Result<()> {
    let handle = blas_handle(dev, "sparse recovery")?;
    let cfg = gemm_config((m, n), count, transpose);
    let blas = handle.lock().unwrap_or_else(|e| e.into_inner());
    // SAFETY: a holds m * n values (lda = m); input holds count columns of the product's input
    // length (ldb), output count columns of its output length (ldc), without overlap.
    unsafe { T::gemm(&blas, cfg, a, input, output) }.map_err(|e| Error::Cuda {
        context: format!("cuBLAS gemm of {count} products in sparse recovery"),
        message: format!("{e:?}"),
    })
}

/// `count` products `y_c = A_c x_c` or `x_c = A_c^T y_c` by one strided batched cuBLAS `gemm`
/// of one column each, the matrices `A_c` column-major `m x n`, one after the other in `a`.
fn gemm_each<T: Real>(
    dev: &CudaDevice,
    a: &CudaView<'_, T>,
    (m, n): (usize, usize),
    input: &CudaView<'_, T>,
    output: &mut CudaViewMut<'_, T>,
    count: usize,
    transpose: bool,
) -> Result<()> {
    let handle = blas_handle(dev, "sparse recovery")?;
    let gemm = gemm_config((m, n), 1, transpose);
    // Each problem's input and output: a column of the product's inner and outer lengths.
    let cfg = cudarc::cublas::StridedBatchedConfig {
        gemm,
        batch_size: count as i32,
        stride_a: (m * n) as i64,
        stride_b: gemm.k as i64,
        stride_c: gemm.m as i64,
    };
    let blas = handle.lock().unwrap_or_else(|e| e.into_inner());
    // SAFETY: a holds count matrices of m * n values (lda = m), input count vectors of the
    // product's input length, output count of its output length, without overlap.
    unsafe { T::gemm_strided_batched(&blas, cfg, a, input, output) }.map_err(|e| Error::Cuda {
        context: format!("cuBLAS batched products of {count} operators in sparse recovery"),
        message: format!("{e:?}"),
    })
}

/// The `gemm` of `Y (m x columns) = A (m x n) X (n x columns)`, or of `X (n x columns) = A^T Y
/// (m x columns)`, `A` column-major.
fn gemm_config<T: Real>(
    (m, n): (usize, usize),
    columns: usize,
    transpose: bool,
) -> cudarc::cublas::GemmConfig<T> {
    let (rows, inner) = if transpose { (n, m) } else { (m, n) };
    cudarc::cublas::GemmConfig {
        transa: operation(transpose),
        transb: cudarc::cublas::sys::cublasOperation_t::CUBLAS_OP_N,
        m: rows as i32,
        n: columns as i32,
        k: inner as i32,
        alpha: T::one(),
        lda: m as i32,
        ldb: inner as i32,
        beta: T::zero(),
        ldc: rows as i32,
    }
}

/// cuBLAS's operation on the column-major matrix: `A` itself, or its transpose.
fn operation(transpose: bool) -> cudarc::cublas::sys::cublasOperation_t {
    use cudarc::cublas::sys::cublasOperation_t;
    if transpose {
        cublasOperation_t::CUBLAS_OP_T
    } else {
        cublasOperation_t::CUBLAS_OP_N
    }
}

/// Blocks of an element-wise kernel over `count` items.
fn blocks(count: usize) -> usize {
    count.div_ceil(THREADS as usize).clamp(1, 4096)
}

/// The launch of an element-wise kernel over `count` items.
pub(super) fn over(count: usize) -> LaunchConfig {
    config(blocks(count), THREADS)
}

/// A launch of `grid` blocks of the kernels' threads (one block a column, a part, ...).
pub(super) fn grid(grid: usize) -> LaunchConfig {
    config(grid, THREADS)
}

/// One problem on a CUDA device: the uploaded operator (a member of a stack), the
/// measurements, the device's top-k.
pub(crate) struct Cuda<'a, T: Real> {
    op: &'a DeviceOperator<T>,
    member: usize,
    y: DeviceBuffer<T>,
}

impl<'a, T: Real> Cuda<'a, T> {
    /// The problem `y = A x` on `op`'s device, `A` its member `member` (0 for one operator).
    pub fn new(op: &'a DeviceOperator<T>, member: usize, y: &[T]) -> Result<Cuda<'a, T>> {
        Ok(Cuda {
            y: DeviceBuffer::from_host_on(op.device(), y)?,
            op,
            member,
        })
    }

    fn dev(&self) -> &CudaDevice {
        self.op.device()
    }

    /// The steps of `count = 1` problem with supports of `k` indices.
    fn one(&self, k: usize) -> Columns<'a, T> {
        Columns::new(self.op, k, 1)
    }

    /// `<a, b>` over `count` entries, or over the support's entries.
    fn dot_of(
        &self,
        a: &DeviceBuffer<T>,
        b: &DeviceBuffer<T>,
        support: Option<&DeviceBuffer<u64>>,
    ) -> Result<f64> {
        let count = support.map_or(a.len(), |s| s.len()) as u64;
        let mut parts = self
            .dev()
            .alloc_zeros::<f64>(PARTS, "a reduction's parts")?;
        let (a, b, shape) = (a.as_slice(), b.as_slice(), grid(PARTS));
        let mut out = parts.as_view_mut();
        match support {
            Some(s) => rec_dot(self.dev(), shape, a, b, s.as_slice(), count, &mut out)?,
            None => rec_dot_all(self.dev(), shape, a, b, NULL, count, &mut out)?,
        }
        Ok(
            download_vec(self.dev(), &parts.as_view(), "a reduction's parts")?
                .iter()
                .sum(),
        )
    }
}

impl<T: Real> Backend<T> for Cuda<'_, T> {
    type Vector = DeviceBuffer<T>;
    type Support = DeviceBuffer<u64>;

    fn shape(&self) -> (usize, usize) {
        self.op.shape()
    }
    fn measurements(&self) -> &DeviceBuffer<T> {
        &self.y
    }
    fn zeros(&self, len: usize) -> Result<DeviceBuffer<T>> {
        let slice = self.dev().alloc_zeros::<T>(len, "a recovery vector")?;
        Ok(DeviceBuffer::from_slice(self.dev(), slice))
    }
    fn upload(&self, v: &[T]) -> Result<DeviceBuffer<T>> {
        DeviceBuffer::from_host_on(self.dev(), v)
    }
    fn copy(&self, src: &DeviceBuffer<T>, dst: &mut DeviceBuffer<T>) -> Result<()> {
        self.dev()
            .stream()
            .memcpy_dtod(src.as_slice(), dst.as_slice_mut())
            .map_err(|e| driver_error("copying a recovery vector", e))
    }
    fn apply(&self, x: &DeviceBuffer<T>, y: &mut DeviceBuffer<T>) -> Result<()> {
        self.op
            .product(self.member, x.as_slice(), y.as_slice_mut(), false)
    }
    fn adjoint(&self, y: &DeviceBuffer<T>, x: &mut DeviceBuffer<T>) -> Result<()> {
        self.op
            .product(self.member, y.as_slice(), x.as_slice_mut(), true)
    }
    fn dot(&self, a: &DeviceBuffer<T>, b: &DeviceBuffer<T>) -> Result<f64> {
        self.dot_of(a, b, None)
    }
    fn norms2(&self, a: &DeviceBuffer<T>, b: &DeviceBuffer<T>) -> Result<(f64, f64)> {
        // Both reductions, then one copy of their parts.
        let mut parts = self
            .dev()
            .alloc_zeros::<f64>(2 * PARTS, "a reduction's parts")?;
        for (i, v) in [a, b].into_iter().enumerate() {
            let count = v.len() as u64;
            let mut half = parts.slice_mut(i * PARTS..(i + 1) * PARTS);
            let v = v.as_slice();
            rec_dot_all(self.dev(), grid(PARTS), v, v, NULL, count, &mut half)?;
        }
        let parts = download_vec(self.dev(), &parts.as_view(), "a reduction's parts")?;
        Ok((parts[..PARTS].iter().sum(), parts[PARTS..].iter().sum()))
    }
    fn dot_on(
        &self,
        s: &DeviceBuffer<u64>,
        a: &DeviceBuffer<T>,
        b: &DeviceBuffer<T>,
    ) -> Result<f64> {
        self.dot_of(a, b, Some(s))
    }
    fn add_scaled(
        &self,
        a: &DeviceBuffer<T>,
        s: f64,
        b: &DeviceBuffer<T>,
        out: &mut DeviceBuffer<T>,
    ) -> Result<()> {
        let n = a.len() as u64;
        rec_add_scaled(
            self.dev(),
            over(a.len()),
            a.as_slice(),
            b.as_slice(),
            s,
            n,
            out.as_slice_mut(),
        )
    }
    fn axpy(&self, s: f64, b: &DeviceBuffer<T>, y: &mut DeviceBuffer<T>) -> Result<()> {
        let n = b.len() as u64;
        rec_axpy(
            self.dev(),
            over(b.len()),
            b.as_slice(),
            s,
            n,
            y.as_slice_mut(),
        )
    }
    fn xpay(&self, a: &DeviceBuffer<T>, s: f64, y: &mut DeviceBuffer<T>) -> Result<()> {
        let n = a.len() as u64;
        rec_xpay(
            self.dev(),
            over(a.len()),
            a.as_slice(),
            s,
            n,
            y.as_slice_mut(),
        )
    }
    fn restrict(
        &self,
        v: &DeviceBuffer<T>,
        s: &DeviceBuffer<u64>,
        out: &mut DeviceBuffer<T>,
    ) -> Result<()> {
        self.one(s.len())
            .restrict(v.as_slice(), s.as_slice(), out.as_slice_mut())
    }
    fn difference(
        &self,
        a: &DeviceBuffer<T>,
        b: &DeviceBuffer<T>,
        out: &mut DeviceBuffer<T>,
    ) -> Result<()> {
        self.one(0)
            .difference(a.as_slice(), b.as_slice(), out.as_slice_mut())
    }
    fn largest(&self, v: &DeviceBuffer<T>, k: usize) -> Result<DeviceBuffer<u64>> {
        let n = v.len();
        if k == 0 {
            return self.empty();
        }
        if k >= n {
            let mut all = self.dev().alloc::<u64>(n, "a support")?;
            rec_iota(self.dev(), over(n), n as u64, &mut all)?;
            return Ok(DeviceBuffer::from_slice(self.dev(), all));
        }
        let support = largest_magnitudes(self.dev(), v.as_slice(), 1, n, k)?;
        Ok(DeviceBuffer::from_slice(self.dev(), support))
    }
    fn empty(&self) -> Result<DeviceBuffer<u64>> {
        let none = self.dev().alloc::<u64>(0, "a support")?;
        Ok(DeviceBuffer::from_slice(self.dev(), none))
    }
    fn union(&self, a: &DeviceBuffer<u64>, b: &DeviceBuffer<u64>) -> Result<DeviceBuffer<u64>> {
        // Supports of at most a few k entries: merged on the host.
        let (a, b) = (a.to_host()?, b.to_host()?);
        let (a, b): (Vec<usize>, Vec<usize>) = (
            a.iter().map(|&i| i as usize).collect(),
            b.iter().map(|&i| i as usize).collect(),
        );
        let joined: Vec<u64> = crate::recovery::vector::union(&a, &b)
            .into_iter()
            .map(|i| i as u64)
            .collect();
        DeviceBuffer::from_host_on(self.dev(), &joined)
    }
    fn same(&self, a: &DeviceBuffer<u64>, b: &DeviceBuffer<u64>) -> Result<bool> {
        if a.len() != b.len() {
            return Ok(false);
        }
        if a.is_empty() {
            return Ok(true);
        }
        let mut changed = self.dev().alloc::<f64>(1, "a flag")?;
        self.one(a.len())
            .differ(a.as_slice(), b.as_slice(), &mut changed.as_view_mut())?;
        Ok(download_vec(self.dev(), &changed.as_view(), "a flag")?[0] == 0.0)
    }
    fn fingerprint(&self, s: &DeviceBuffer<u64>) -> Result<u64> {
        if s.is_empty() {
            return Ok(0);
        }
        let mut print = self.dev().alloc::<f64>(1, "a fingerprint")?;
        self.one(s.len())
            .fingerprints(s.as_slice(), &mut print.as_view_mut())?;
        Ok(download_vec(self.dev(), &print.as_view(), "a fingerprint")?[0].to_bits())
    }
    fn to_host(&self, v: &DeviceBuffer<T>) -> Result<Vec<T>> {
        v.to_host()
    }
    fn indices(&self, s: &DeviceBuffer<u64>) -> Result<Vec<usize>> {
        Ok(s.to_host()?.into_iter().map(|i| i as usize).collect())
    }
}
