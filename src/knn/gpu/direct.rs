//! The direct search: every pair measured by the canonical arithmetic, tile by tile, each
//! query's best kept by batched top-k and merged across reference tiles.

use crate::device::{CudaDevice, DeviceBuffer};
use crate::error::Result;
use crate::knn::gpu::kernels;
use crate::knn::gpu::output::{Lists, Place};
use crate::knn::gpu::plan::Plan;
use crate::knn::gpu::points::DevicePoints;
use crate::knn::{KnnFloat, Metric, Points};
use crate::select::{Matrix, Selector, TopKOptions};

/// Distances (canonical values in `T`) and indices of the `k` best reference points of every
/// query, nearest first, ties by index, in `place`; `resident` is the whole reference set on
/// the device, when it is there, else reference tiles are copied in turn.
#[allow(clippy::too_many_arguments)]
pub(super) fn search<T: KnnFloat>(
    dev: &CudaDevice,
    selector: &Selector,
    reference: &Points<'_, T>,
    resident: Option<&DevicePoints<T>>,
    queries: &Points<'_, T>,
    k: usize,
    metric: Metric,
    plan: &Plan,
    place: Place,
) -> Result<Lists<T>> {
    let n = reference.rows();
    let mut out = Lists::new(dev, place, queries.rows(), k)?;
    for q0 in (0..queries.rows()).step_by(plan.query_tile) {
        let q_rows = plan.query_tile.min(queries.rows() - q0);
        let q_tile = DevicePoints::upload(dev, &queries.slice_rows(q0..q0 + q_rows), metric)?;
        let mut distances = DeviceBuffer::from_slice(
            dev,
            dev.alloc::<f64>(q_rows * plan.reference_tile, "a tile of distances")?,
        );
        // The running lists and their width (k once k points have been seen).
        let mut running: Option<(DeviceBuffer<f64>, DeviceBuffer<u64>, usize)> = None;
        for r0 in (0..reference.rows()).step_by(plan.reference_tile) {
            let r_rows = plan.reference_tile.min(reference.rows() - r0);
            let streamed;
            let r_tile = match resident {
                Some(all) => all,
                None => {
                    let rows = reference.slice_rows(r0..r0 + r_rows);
                    streamed = DevicePoints::upload(dev, &rows, metric)?;
                    &streamed
                }
            };
            kernels::distances(
                dev,
                metric,
                &q_tile.tile(q_rows),
                &r_tile.tile(r_rows),
                reference.dim(),
                distances.as_slice_mut(),
                plan.reference_tile,
            )?;
            let rows = Matrix::new(&distances, q_rows, r_rows).with_stride(plan.reference_tile);
            let t = k.min(r_rows);
            let best = selector.top_k_rows_device(rows, t, TopKOptions::smallest())?;
            running = Some(match running {
                None => {
                    let (keys, index) = kernels::gather_rows(
                        dev,
                        best.indices(),
                        &distances,
                        None,
                        (q_rows, t, plan.reference_tile),
                        r0,
                    )?;
                    (keys, index, t)
                }
                Some((run_keys, run_index, width)) => {
                    let kept = k.min(width + t);
                    let (keys, index) = merge(
                        dev,
                        selector,
                        (&run_keys, &run_index, width),
                        (best.values(), best.indices(), t),
                        q_rows,
                        kept,
                        r0,
                    )?;
                    (keys, index, kept)
                }
            });
        }
        let (run_keys, run_index, width) = running.expect("the reference set is not empty");
        debug_assert_eq!(width, k);
        sorted_lists(
            dev,
            selector,
            metric,
            n,
            (&run_keys, &run_index),
            (q_rows, k, k),
            &mut out,
            q0 * k,
        )?;
    }
    Ok(out)
}

/// The best `k` of each of `rows` rows of `width` rank keys, sorted (ties by position, which
/// is index order), with the indices `index` holds for them, written into `out` from entry
/// `first` on (`rows k` entries) as canonical values of `metric` and indices below `points`.
#[allow(clippy::too_many_arguments)]
pub(super) fn sorted_lists<T: KnnFloat>(
    dev: &CudaDevice,
    selector: &Selector,
    metric: Metric,
    points: usize,
    (keys, index): (&DeviceBuffer<f64>, &DeviceBuffer<u64>),
    (rows, width, k): (usize, usize, usize),
    out: &mut Lists<T>,
    first: usize,
) -> Result<()> {
    let sorted = selector.top_k_rows_device(
        Matrix::new(keys, rows, width),
        k,
        TopKOptions::smallest().sorted(true),
    )?;
    let (keys, index) = kernels::gather_rows(
        dev,
        sorted.indices(),
        keys,
        Some(index),
        (rows, k, width),
        0,
    )?;
    out.write(dev, metric, points, first, &keys, &index, rows * k)
}

/// The running lists (keys, indices and their width) merged with a tile's best (keys, indices
/// inside the tile that starts at `first`, and their width): the best `kept` of the two, in
/// ascending index order.
fn merge(
    dev: &CudaDevice,
    selector: &Selector,
    running: (&DeviceBuffer<f64>, &DeviceBuffer<u64>, usize),
    tile: (&DeviceBuffer<f64>, &DeviceBuffer<u64>, usize),
    rows: usize,
    kept: usize,
    first: usize,
) -> Result<(DeviceBuffer<f64>, DeviceBuffer<u64>)> {
    let (k, t) = (running.2, tile.2);
    let width = k + t;
    let mut keys = dev.alloc::<f64>(rows * width, "the merge of running lists")?;
    let mut index = dev.alloc::<u64>(rows * width, "the merge of running lists")?;
    kernels::merge_rows(
        dev,
        (running.0.as_slice(), running.1.as_slice()),
        (tile.0.as_slice(), tile.1.as_slice()),
        rows,
        k,
        t,
        first,
        &mut keys,
        &mut index,
    )?;
    let keys = DeviceBuffer::from_slice(dev, keys);
    let index = DeviceBuffer::from_slice(dev, index);
    let rows_of = Matrix::new(&keys, rows, width);
    let best = selector.top_k_rows_device(rows_of, kept, TopKOptions::smallest())?;
    kernels::gather_rows(
        dev,
        best.indices(),
        &keys,
        Some(&index),
        (rows, kept, width),
        0,
    )
}
