//! The GPU engine of the regressions ([`GpuEngine`]): the design on the device, the candidates'
//! residuals by cuBLAS, their thresholds by batched selection, their C-step sums by
//! `kernels/regression.cu` (the [module documentation](super) of `regression` describes the
//! steps).
//!
//! - [`blas`]: the product `X B` of the design and the candidates' coefficients;
//! - [`kernels`]: the launches of `kernels/regression.cu`;
//! - [`csteps`]: batched C-steps of LTS and the least squares of the reweighting;
//! - [`lms`]: the scores of LMS's elemental fits.

mod blas;
mod csteps;
mod kernels;
mod lms;
#[cfg(test)]
mod tests;

use cudarc::driver::CudaSlice;

use crate::device::cuda::driver_error;
use crate::device::cuda::upload::upload_filled;
use crate::device::{CudaDevice, Device, DeviceBuffer};
use crate::error::Result;
use crate::regression::csteps::Candidate;
use crate::regression::design::Design;
use crate::regression::engine::Engine;
use crate::select::{NanPolicy, Selector};
use kernels::{DesignOnDevice, Keep, Residual};

/// Values in one batch of LTS candidates' residuals (at least one candidate a batch).
const LTS_BATCH_VALUES: usize = 1 << 27;
/// Values in one batch of LMS candidates' residuals (their sort takes several times as many).
const LMS_BATCH_VALUES: usize = 1 << 24;
/// Rows from which the order statistics of host residuals are selected on the GPU.
const HOST_SELECTION_ROWS: usize = 1 << 18;
/// The most candidates of a batch (the kernels' grids hold one candidate a row of blocks).
const MAX_BATCH: usize = 4096;

/// The engine of a CUDA device for one fit: the design uploaded once, a buffer of the
/// candidates' residuals (grown as needed), the device's cuBLAS handle and a selector there.
pub(crate) struct GpuEngine<'a> {
    design: &'a Design<'a>,
    dev: CudaDevice,
    blas: blas::Handle,
    selector: Selector,
    x: DeviceBuffer<f64>,
    y: DeviceBuffer<f64>,
    /// The coefficients of the candidates of the last batch, `p` each.
    coef: CudaSlice<f64>,
    /// Rows of `n` values, one a candidate: the products `x_i b`, then the residuals.
    rows: DeviceBuffer<f64>,
    /// The rows `rows` holds.
    capacity: usize,
    /// The coverage, coefficients and evaluation of each candidate the last C-steps ended
    /// with, which the next C-steps start from.
    evaluated: Vec<(usize, Vec<f64>, csteps::Eval)>,
}

impl<'a> GpuEngine<'a> {
    /// Whether the GPU kernels handle the model: at most [`kernels::MAX_P`] coefficients and
    /// a row count cuBLAS takes.
    pub fn supports(design: &Design) -> bool {
        design.p <= kernels::MAX_P && design.n <= i32::MAX as usize
    }

    /// The engine of `design` on `dev`: copies the design to the device, its rows standardized
    /// on their way (no standardized copy on the host), and checks its rank there.
    pub fn new(dev: &CudaDevice, design: &'a Design<'a>) -> Result<Self> {
        let blas = blas::handle(dev)?;
        let (n, p) = (design.n, design.p);
        let mut x = dev.alloc::<f64>(n * p, "the design")?;
        upload_filled(dev, &mut x.as_view_mut(), p, "the design", |first, out| {
            design.standardize_into(first / p, out)
        })?;
        let x = DeviceBuffer::from_slice(dev, x);
        let y = DeviceBuffer::from_host_on(dev, &design.y)?;
        let coef = dev.alloc::<f64>(design.p, "the candidates' coefficients")?;
        let rows = DeviceBuffer::from_slice(dev, dev.alloc::<f64>(design.n, "the residuals")?);
        let mut engine = GpuEngine {
            design,
            dev: dev.clone(),
            blas,
            selector: Selector::on(Device::Cuda(dev.clone())).nan_policy(NanPolicy::Last),
            x,
            y,
            coef,
            rows,
            capacity: 1,
            evaluated: Vec::new(),
        };
        engine.check_rank()?;
        Ok(engine)
    }

    /// [`Design::check_rank`] of the standardized `X'X` summed on the device: the C-step sums
    /// of every row (all squares 0, below an infinite threshold).
    fn check_rank(&mut self) -> Result<()> {
        let (n, p) = (self.design.n, self.design.p);
        self.dev
            .stream()
            .memset_zeros(&mut self.rows.as_slice_mut().slice_mut(..n))
            .map_err(|e| driver_error("clearing the residuals", e))?;
        self.upload_coefficients(&[vec![0.0; p]])?;
        let keep = Keep::Trim {
            squares: self.rows.as_slice(),
            thresholds: &[f64::INFINITY],
            cuts: &[n as u64],
        };
        let sums = kernels::sums(&self.dev, &self.on_device(), &self.coef, &keep, 0, 1)?;
        let (xtx, _) = csteps::gram_matrix(&sums.values, p);
        self.design.check_rank(xtx)
    }

    /// Candidates a batch of LTS (`lms = false`) or LMS scores holds.
    fn batch(&self, lms: bool) -> usize {
        let values = if lms {
            LMS_BATCH_VALUES
        } else {
            LTS_BATCH_VALUES
        };
        (values / self.design.n).clamp(1, MAX_BATCH)
    }

    /// The design on the device, for the kernels.
    fn on_device(&self) -> DesignOnDevice<'_> {
        on_device(self.design, &self.x, &self.y)
    }

    /// Copies the coefficients `bs` (`p` each) to the device.
    fn upload_coefficients(&mut self, bs: &[Vec<f64>]) -> Result<()> {
        let flat: Vec<f64> = bs.iter().flatten().copied().collect();
        self.coef = kernels::upload(&self.dev, &flat, "the candidates' coefficients")?;
        Ok(())
    }

    /// Rows `0..bs.len()` of the residual buffer become `op` of the residuals of `bs`: in one
    /// pass over the design for a few candidates, by a cuBLAS product for more.
    fn residual_rows(&mut self, bs: &[Vec<f64>], op: Residual) -> Result<()> {
        let (n, p, c) = (self.design.n, self.design.p, bs.len());
        if c > self.capacity {
            let rows = self.dev.alloc::<f64>(c * n, "the candidates' residuals")?;
            self.rows = DeviceBuffer::from_slice(&self.dev, rows);
            self.capacity = c;
        }
        self.upload_coefficients(bs)?;
        if kernels::direct(c, p) {
            // The fields apart: the rows are written while the design is read.
            let design = on_device(self.design, &self.x, &self.y);
            let rows = self.rows.as_slice_mut();
            return kernels::direct_residuals(&self.dev, &design, &self.coef, c, op, rows);
        }
        let rows = self.rows.as_slice_mut();
        blas::product(
            &self.blas,
            &self.dev,
            self.x.as_slice(),
            &self.coef,
            rows,
            n,
            p,
            c,
        )?;
        kernels::residuals(&self.dev, rows, self.y.as_slice(), n, c, op)
    }
}

/// `design` on the device, its rows `x` and response `y` there, for the kernels.
fn on_device<'b>(
    design: &Design<'_>,
    x: &'b DeviceBuffer<f64>,
    y: &'b DeviceBuffer<f64>,
) -> DesignOnDevice<'b> {
    DesignOnDevice {
        x: x.as_slice(),
        y: y.as_slice(),
        n: design.n,
        p: design.p,
    }
}

impl Engine for GpuEngine<'_> {
    fn step_all(
        &mut self,
        h: usize,
        candidates: Vec<Candidate>,
        steps: usize,
    ) -> Result<Vec<Candidate>> {
        csteps::step_all(self, h, candidates, steps)
    }

    /// C-steps on the GPU ([`Engine::step_all`]): their refits are already corrections
    /// computed from the residuals, as accurate as a QR.
    fn polish(&mut self, h: usize, best: Candidate) -> Result<Vec<f64>> {
        let fallback = best.b.clone();
        let polished = csteps::step_all(self, h, vec![best], crate::regression::engine::MAX_STEPS)?;
        Ok(polished.into_iter().next().map_or(fallback, |c| c.b))
    }

    fn fit_rows(&mut self, idx: &[usize], start: &[f64]) -> Result<Option<Vec<f64>>> {
        csteps::fit_rows(self, idx, start)
    }

    fn fit_subset(&mut self, h: usize, b: &[f64]) -> Result<Option<Vec<f64>>> {
        csteps::fit_subset(self, h, b)
    }

    fn residuals(&mut self, b: &[f64]) -> Result<Vec<f64>> {
        csteps::read_residuals(self, b)
    }

    fn trimmed_residuals(&mut self, b: &[f64], h: usize) -> Result<(Vec<f64>, Option<f64>)> {
        csteps::trimmed_residuals(self, b, h)
    }

    /// Selected in the device's copy of `y`.
    fn median_of_y(&self) -> Result<f64> {
        Selector::on(Device::Cuda(self.dev.clone())).median(&self.y)
    }

    /// The GPU's from [`HOST_SELECTION_ROWS`] rows, where the copy costs less than the CPU's
    /// selection; the CPU's below.
    fn selector(&self) -> Selector {
        if self.design.n >= HOST_SELECTION_ROWS {
            Selector::on(Device::Cuda(self.dev.clone()))
        } else {
            Selector::new()
        }
    }

    fn score_lms(&mut self, h: usize, fits: Vec<Vec<f64>>) -> Result<Vec<Option<Candidate>>> {
        lms::score(self, h, fits)
    }
}
