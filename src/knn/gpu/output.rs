//! Where a search puts its finished lists: the host's memory, or buffers left on the device.

use cudarc::driver::CudaSlice;

use crate::device::cuda::download::download_into;
use crate::device::cuda::driver_error;
use crate::device::{CudaDevice, DeviceBuffer};
use crate::error::Result;
use crate::knn::gpu::kernels;
use crate::knn::{KnnFloat, Metric};

/// Where the lists of a search go.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Place {
    /// Copied to the host (values and `usize` indices).
    Host,
    /// Left on the device (values and `u64` indices).
    Device,
}

/// The lists of a search, `k` entries a query, row-major, filled a tile of queries at a time.
pub(crate) enum Lists<T: KnnFloat> {
    /// In the host's memory.
    Host { values: Vec<T>, indices: Vec<usize> },
    /// On the device.
    Device {
        values: CudaSlice<T>,
        indices: CudaSlice<u64>,
    },
}

impl<T: KnnFloat> Lists<T> {
    /// Room for the lists of `queries` queries of `k` entries in `place`.
    pub fn new(dev: &CudaDevice, place: Place, queries: usize, k: usize) -> Result<Self> {
        let count = queries * k;
        Ok(match place {
            Place::Host => Lists::Host {
                values: vec![T::default(); count],
                indices: vec![0; count],
            },
            Place::Device => Lists::Device {
                values: dev.alloc::<T>(count, "the lists' distances")?,
                indices: dev.alloc::<u64>(count, "the lists' indices")?,
            },
        })
    }

    /// Writes the `count` entries from entry `first` on: the rank keys `keys` of `metric` as
    /// canonical values in `T`, with their reference indices `index` (below `points`).
    #[allow(clippy::too_many_arguments)]
    pub fn write(
        &mut self,
        dev: &CudaDevice,
        metric: Metric,
        points: usize,
        first: usize,
        keys: &DeviceBuffer<f64>,
        index: &DeviceBuffer<u64>,
        count: usize,
    ) -> Result<()> {
        debug_assert_eq!(index.len(), count);
        let mut finished = dev.alloc::<T>(count, "the lists' distances")?;
        let range = first..first + count;
        match self {
            Lists::Host { values, indices } => {
                let indices = &mut indices[range.clone()];
                if points <= u32::MAX as usize + 1 {
                    // Half the bytes to copy.
                    let mut index32 = dev.alloc::<u32>(count, "the lists' indices")?;
                    kernels::finish(
                        dev,
                        metric,
                        keys,
                        index,
                        count,
                        &mut finished,
                        Some(&mut index32),
                    )?;
                    download_into(
                        dev,
                        &index32.as_view(),
                        indices,
                        |i| i as usize,
                        "the lists' indices",
                    )?;
                } else {
                    kernels::finish(dev, metric, keys, index, count, &mut finished, None)?;
                    let index = index.as_slice();
                    download_into(
                        dev,
                        &index.as_view(),
                        indices,
                        |i| i as usize,
                        "the lists' indices",
                    )?;
                }
                download_into(
                    dev,
                    &finished.as_view(),
                    &mut values[range],
                    |v| v,
                    "the lists' distances",
                )
            }
            Lists::Device { values, indices } => {
                kernels::finish(dev, metric, keys, index, count, &mut finished, None)?;
                let stream = dev.stream();
                let failed = |e| driver_error("placing the lists on the device", e);
                stream
                    .memcpy_dtod(&finished, &mut values.slice_mut(range.clone()))
                    .map_err(failed)?;
                stream
                    .memcpy_dtod(index.as_slice(), &mut indices.slice_mut(range))
                    .map_err(failed)
            }
        }
    }

    /// Puts `part`'s lists (`k` entries a row, in the order of `rows`) in rows `rows`.
    pub fn splice(
        &mut self,
        dev: &CudaDevice,
        rows: &[usize],
        part: Lists<T>,
        k: usize,
    ) -> Result<()> {
        match (self, part) {
            (
                Lists::Host { values, indices },
                Lists::Host {
                    values: v,
                    indices: idx,
                },
            ) => {
                for (j, &i) in rows.iter().enumerate() {
                    values[i * k..(i + 1) * k].copy_from_slice(&v[j * k..(j + 1) * k]);
                    indices[i * k..(i + 1) * k].copy_from_slice(&idx[j * k..(j + 1) * k]);
                }
                Ok(())
            }
            (
                Lists::Device { values, indices },
                Lists::Device {
                    values: v,
                    indices: idx,
                },
            ) => {
                kernels::scatter_rows(dev, &v, values, rows, k)?;
                kernels::scatter_rows(dev, &idx, indices, rows, k)
            }
            _ => unreachable!("the parts of a search put their lists in one place"),
        }
    }
}
