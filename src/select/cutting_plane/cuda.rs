//! The cutting-plane method on CUDA (`kernels/cutting_plane.cu`).
//!
//! Per rank: `cp_stats` (one pass: `±inf` and NaN counts, the finite key range), then the
//! cutting-plane steps, each one `cp_reduce` pass (per-block partial counts and sums of the
//! framed values) and a one-block `cp_combine` that adds the partials in a fixed order (so a
//! run is deterministic) — 32 bytes read back per step. Once at most `max(2^16, n / 128)`
//! values lie inside the bracket, `cp_copy` copies them (one atomic per block) and radix select
//! finishes among the copies. A minimiser point whose `f64` names a single element is
//! answered directly; otherwise the values at it are copied likewise. Candidate sets larger
//! than `n / 16` (many values sharing the answer's `f64`, or the step bound reached) are left
//! to radix select over the input instead, so the result is always exact.
//!
//! Workspace: `4 · ⌈blocks⌉` words of partials (at most `8 · multiprocessors` blocks) and a
//! few words; the copies, at most `max(2^16, n / 16)` elements, and radix select's workspace
//! for them (or for the input on the fallback).

use std::cell::{Cell, RefCell};

use cudarc::driver::CudaSlice;

use super::error::CuttingPlaneError;
use super::hybrid::{self, Plan, Trace};
use super::problem::{Census, Data, Exact, Reduction};
use super::transform::{Frame, Transform};
use crate::device::cuda::kernels::cutting_plane::{
    cp_combine, cp_copy, cp_reduce, cp_stats, PlaneCensus, PlaneSums,
};
use crate::device::cuda::launch::{config, stride_blocks};
use crate::device::cuda::{driver_error, CudaDevice, MemoryNeed};
use crate::device::DeviceBuffer;
use crate::element::{DType, Element, RadixKey};
use crate::error::Result;
use crate::select::radix;

/// Threads a block (`CP_BLOCK` in the kernel).
const BLOCK: u32 = 256;
/// Hand over to exact selection once at most this many (or `n / 128`) values remain.
const FINISH: usize = 1 << 16;
/// Candidate sets above `max(FINISH, n / MAX_COPY_FRACTION)` go to radix select on the input.
const MAX_COPY_FRACTION: usize = 16;

/// Values in a device buffer, with the workspace of the fused reduction.
///
/// ```no_run
/// use argmin::core::{Executor, State};
/// use kselect::select::cutting_plane::{CheckLoss, DeviceData, Kelley};
/// use kselect::{Device, DeviceBuffer};
/// let device = Device::cuda(0)?;
/// let buf = DeviceBuffer::from_host(&device, &[5.0f32, 1.0, 4.0, 2.0, 3.0])?;
/// let p = CheckLoss::new(DeviceData::new(&buf)?, 2)?;
/// let solver = Kelley::new(p.lower(), p.upper());
/// let r = Executor::new(p, solver).run().unwrap();
/// assert!(r.solver.outcome().is_some());
/// # Ok::<(), kselect::Error>(())
/// ```
pub struct DeviceData<'a, T: Element> {
    /// The values.
    buf: &'a DeviceBuffer<T>,
    /// Blocks of the passes over the values.
    blocks: usize,
    /// One row of sums per block.
    partial: RefCell<CudaSlice<PlaneSums>>,
    /// The combined row.
    out: RefCell<CudaSlice<PlaneSums>>,
    /// The first pass's result, once made.
    census: Cell<Option<Census<T::Key>>>,
}

impl<T: Element> std::fmt::Debug for DeviceData<'_, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DeviceData")
            .field("len", &self.buf.len())
            .field("blocks", &self.blocks)
            .finish()
    }
}

impl<'a, T: Element> DeviceData<'a, T> {
    /// The values of `buf`, with the reduction's workspace allocated on its device.
    pub fn new(buf: &'a DeviceBuffer<T>) -> Result<Self> {
        let dev = buf.device();
        let blocks = reduction_blocks::<T>(dev, buf.len());
        Ok(DeviceData {
            buf,
            blocks,
            partial: RefCell::new(dev.alloc::<PlaneSums>(blocks, "cutting-plane partials")?),
            out: RefCell::new(dev.alloc::<PlaneSums>(1, "cutting-plane sums")?),
            census: Cell::new(None),
        })
    }

    /// The device.
    fn dev(&self) -> &CudaDevice {
        self.buf.device()
    }

    /// The number of `-inf` values (after the first pass).
    fn neg_inf(&self) -> usize {
        self.census.get().map_or(0, |c| c.neg_inf)
    }

    /// The element of rank `k` of the whole input by radix select (the fallback).
    fn radix_rank(&self, k: usize) -> Result<T> {
        Ok(radix::cuda::multiselect(self.buf, &[k])?.0[0])
    }
}

/// The most device memory [`multiselect`] takes on `dev` for `n` values of `T` (whatever the
/// number of ranks: they run one after another): the reduction's rows and the census, then the
/// bracket's copies and radix select over them, or radix select over the input.
pub(crate) fn workspace<T: Element>(dev: &CudaDevice, n: usize, ranks: usize) -> MemoryNeed {
    let _ = ranks;
    let copies = FINISH.max(n / MAX_COPY_FRACTION).min(n);
    let on_copies = MemoryNeed::of::<T>(copies)
        .and(MemoryNeed::of::<u64>(1))
        .and(radix::cuda::workspace::<T>(dev, copies, 1));
    let on_input = radix::cuda::workspace::<T>(dev, n, 1);
    MemoryNeed::of::<PlaneSums>(reduction_blocks::<T>(dev, n))
        .and(MemoryNeed::of::<PlaneSums>(1))
        .and(MemoryNeed::of::<PlaneCensus>(1))
        .and(on_copies.or(on_input))
}

/// The blocks of a reduction over `n` values of `T`.
fn reduction_blocks<T: Element>(dev: &CudaDevice, n: usize) -> usize {
    let vec = 16 / std::mem::size_of::<T>();
    stride_blocks(n.div_ceil(vec), BLOCK, dev.multiprocessors(), 8)
}

/// The elements of `ranks` (all `< buf.len()`, not empty) and the input's NaN count.
pub(crate) fn multiselect<T: Element>(
    buf: &DeviceBuffer<T>,
    ranks: &[usize],
) -> Result<(Vec<T>, usize)> {
    let data = DeviceData::new(buf)?;
    let mut values = Vec::with_capacity(ranks.len());
    for &k in ranks {
        values.push(select_device(&data, k, None)?.0);
    }
    let nans = match data.census.get() {
        Some(c) => c.nan,
        None => data.census()?.nan,
    };
    Ok((values, nans))
}

/// The element of rank `k` (`< data.len()`) on the device and what the search did;
/// `transform` forces the transform of the sums (`None`: [`Transform::for_range`]'s choice).
///
/// ```no_run
/// use kselect::select::cutting_plane::{select_device, DeviceData};
/// use kselect::{Device, DeviceBuffer};
/// let buf = DeviceBuffer::from_host(&Device::cuda(0)?, &[3u64, 1, 2])?;
/// let (x, _trace) = select_device(&DeviceData::new(&buf)?, 1, None)?;
/// assert_eq!(x, 2);
/// # Ok::<(), kselect::Error>(())
/// ```
pub fn select_device<T: Element>(
    data: &DeviceData<'_, T>,
    k: usize,
    transform: Option<Transform>,
) -> Result<(T, Trace)> {
    let plan = Plan {
        finish_at: FINISH,
        finish_fraction: 128,
        transform,
    };
    hybrid::select(data, k, plan)
}

impl<T: Element> Data for DeviceData<'_, T> {
    type Elem = T;

    fn len(&self) -> usize {
        self.buf.len()
    }

    fn census(&self) -> Result<Census<T::Key>> {
        if let Some(c) = self.census.get() {
            return Ok(c);
        }
        let dev = self.dev();
        let mut out = dev
            .stream()
            .clone_htod(&[PlaneCensus::default()])
            .map_err(|e| driver_error("initialising the cutting-plane census", e))?;
        let n = self.buf.len() as u64;
        let shape = config(self.blocks, BLOCK);
        cp_stats(dev, shape, self.buf.as_slice(), n, &mut out)?;
        let host = dev.read(&out, "the cutting-plane census")?[0];
        let c = Census {
            neg_inf: host.neg_inf as usize,
            pos_inf: host.pos_inf as usize,
            nan: host.nans as usize,
            min: T::Key::from_u64(host.min_key),
            max: T::Key::from_u64(host.max_key),
        };
        self.census.set(Some(c));
        Ok(c)
    }

    fn reduce(&self, y: f64, frame: &Frame) -> Result<Reduction> {
        let dev = self.dev();
        let n = self.buf.len() as u64;
        let (mode, center, scale) = (frame.transform.code(), frame.center, frame.scale);
        let mut partial = self.partial.borrow_mut();
        let mut out = self.out.borrow_mut();
        let x = self.buf.as_slice();
        let shape = config(self.blocks, BLOCK);
        cp_reduce(dev, shape, x, n, y, mode, center, scale, &mut partial)?;
        cp_combine(
            dev,
            config(1, BLOCK),
            &partial,
            self.blocks as u64,
            &mut out,
        )?;
        let sums = dev.read(&out, "the cutting-plane sums")?[0];
        Ok(Reduction {
            lt: sums.lt,
            le: sums.le,
            below: sums.below,
            above: sums.above,
        })
    }
}

impl<T: Element> Exact for DeviceData<'_, T> {
    fn between(&self, lo: f64, hi: f64, below: usize, r: usize, count: usize) -> Result<T> {
        let n = self.buf.len();
        if count == 0 || r >= count {
            return Err(CuttingPlaneError::RankOutsideBracket { rank: r, count }.into());
        }
        if count > FINISH.max(n / MAX_COPY_FRACTION) {
            return self.radix_rank(self.neg_inf() + below + r);
        }
        let dev = self.dev();
        let mut cand = dev.alloc::<T>(count, "cutting-plane candidates")?;
        let mut counter = dev.alloc_zeros::<u64>(1, "cutting-plane candidate count")?;
        let x = self.buf.as_slice();
        let (n, cap) = (n as u64, count as u64);
        let shape = config(self.blocks, BLOCK);
        cp_copy(dev, shape, x, n, lo, hi, &mut cand, cap, &mut counter)?;
        let copied = dev.read(&counter, "the cutting-plane candidate count")?[0];
        if copied as usize != count {
            // The counts of the reductions and the copy disagree: never guess.
            return self.radix_rank(self.neg_inf() + below + r);
        }
        let copies = cand.slice(0..count);
        Ok(radix::cuda::multiselect_in(dev, &copies, &[r])?.0[0])
    }

    fn at(&self, y: f64, below: usize, r: usize, count: usize) -> Result<T> {
        match sole_element::<T>(y) {
            Some(x) => Ok(x),
            None => self.between(
                super::problem::next_down(y),
                super::problem::next_up(y),
                below,
                r,
                count,
            ),
        }
    }
}

/// The only element of `T` whose `f64` is the finite `y`, when only one has it: every value
/// of the 32-bit types, floats other than zero (`-0.0` and `+0.0` share `0.0`), 64-bit integers
/// below 2^53 in magnitude.
pub(crate) fn sole_element<T: Element>(y: f64) -> Option<T> {
    /// 2^53: from here on, 64-bit integers may share an `f64`.
    const EXACT: f64 = 9_007_199_254_740_992.0;
    let key = match T::DTYPE {
        DType::F32 if y != 0.0 => (y as f32).to_key().to_u64(),
        DType::F64 if y != 0.0 => y.to_key().to_u64(),
        DType::I32 => (y as i32).to_key().to_u64(),
        DType::U32 => (y as u32).to_key().to_u64(),
        DType::I64 if y.abs() < EXACT => (y as i64).to_key().to_u64(),
        DType::U64 if y.abs() < EXACT => (y as u64).to_key().to_u64(),
        _ => return None,
    };
    Some(T::from_key(T::Key::from_u64(key)))
}

/// Unit tests of the host-side logic.
#[cfg(test)]
mod tests {
    use super::*;

    /// A point names one element exactly where the conversion to `f64` is injective.
    #[test]
    fn sole_elements() {
        assert_eq!(sole_element::<f32>(1.5), Some(1.5f32));
        assert_eq!(sole_element::<f32>(0.0), None);
        assert_eq!(sole_element::<f64>(-2.25), Some(-2.25));
        assert_eq!(sole_element::<i32>(-7.0), Some(-7));
        assert_eq!(sole_element::<u32>(4_000_000_000.0), Some(4_000_000_000u32));
        assert_eq!(
            sole_element::<i64>(-((1u64 << 52) as f64)),
            Some(-(1i64 << 52))
        );
        assert_eq!(sole_element::<i64>((1u64 << 53) as f64), None);
        assert_eq!(sole_element::<u64>(1e300), None);
        assert_eq!(sole_element::<u64>(12.0), Some(12));
        assert_eq!(sole_element::<f64>(f64::MAX), Some(f64::MAX));
    }
}
