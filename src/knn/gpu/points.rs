//! Points on the device, with cosine's canonical parts.

use cudarc::driver::CudaSlice;

use crate::device::{CudaDevice, DeviceBuffer};
use crate::error::Result;
use crate::knn::gpu::kernels::{self, CosineParts, PointTile};
use crate::knn::{KnnFloat, Metric, Points};

/// Points copied to the device, with cosine's per-point scales and scaled squared norms
/// (computed there by the canonical arithmetic; empty for the other metrics).
pub(super) struct DevicePoints<T: KnnFloat> {
    pub data: CudaSlice<T>,
    pub rows: usize,
    pub cosine: CosineParts,
}

impl<T: KnnFloat> DevicePoints<T> {
    /// Copies `points` to the device.
    pub fn upload(dev: &CudaDevice, points: &Points<'_, T>, metric: Metric) -> Result<Self> {
        let data = DeviceBuffer::from_host_on(dev, points.as_slice())?.into_slice();
        let rows = points.rows();
        let cosine = if metric == Metric::Cosine {
            let mut parts = CosineParts {
                scale: dev.alloc::<f64>(rows, "cosine's scales")?,
                norm: dev.alloc::<f64>(rows, "cosine's norms")?,
            };
            kernels::cosine_parts(dev, &data, rows, points.dim(), &mut parts)?;
            parts
        } else {
            CosineParts {
                scale: dev.alloc::<f64>(0, "cosine's scales")?,
                norm: dev.alloc::<f64>(0, "cosine's norms")?,
            }
        };
        Ok(DevicePoints { data, rows, cosine })
    }

    /// The first `rows` points as a kernel argument.
    pub fn tile(&self, rows: usize) -> PointTile<'_, T> {
        debug_assert!(rows <= self.rows);
        PointTile {
            data: &self.data,
            rows,
            cosine: &self.cosine,
        }
    }

    /// The bytes the points take on the device.
    pub fn bytes(rows: usize, dim: usize) -> usize {
        rows * (dim * size_of::<T>() + 16)
    }
}
