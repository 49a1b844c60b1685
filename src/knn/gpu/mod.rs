//! Exact neighbour search on a CUDA GPU.
//!
//! Two paths, both exact and equal to the CPU's lists bit for bit:
//!
//! - **screened** (Euclidean metrics, inner product, cosine; the reference set resident on
//!   the device): approximate keys of every pair by one TF32 product (then, for the queries
//!   it leaves unsettled, by the split product of TF32 parts and remainders, about `2^-20`),
//!   each query's best candidates by them, a proven bound that says when those hold the exact
//!   answer, and the canonical measure of the candidates only ([`screen`]);
//! - **direct** (Manhattan, reference sets streamed through a small budget, and the queries
//!   whose candidates fail the bound): every pair measured by the canonical arithmetic, tile by
//!   tile, the best of each tile kept by batched top-k and merged across tiles ([`direct`]).
//!
//! The reference set is copied to the device once and kept there by the [`Neighbors`]
//! (and its clones) for later searches on that device with that metric, when it takes at most
//! half the memory budget.
//!
//! [`Neighbors`]: crate::knn::Neighbors

mod direct;
mod kernels;
mod output;
mod plan;
mod points;
mod screen;

pub(crate) use output::{Lists, Place};

use std::sync::{Arc, Mutex};

use crate::device::{CudaDevice, Device};
use crate::error::Result;
use crate::knn::{KnnFloat, Metric, Points};
use crate::select::{NanPolicy, Selector};
use plan::Plan;
use points::DevicePoints;
use screen::{Precision, ScreenedReference};

/// The reference set kept on a device between searches.
pub(crate) struct Resident<T: KnnFloat> {
    ordinal: usize,
    metric: Metric,
    points: DevicePoints<T>,
    screened: Option<ScreenedReference>,
}

/// A shared slot for the resident reference set (shared by clones of a search).
pub(crate) type Cache<T> = Arc<Mutex<Option<Resident<T>>>>;

/// Candidates a query for `k` neighbours among `n` points: `k` and a margin of a quarter (at
/// least 128), so that the bound usually holds at the first try.
fn candidates(k: usize, n: usize) -> usize {
    (k + (k / 4).max(128)).min(n)
}

/// Distances (canonical values in `T`) and indices of the `k` best reference points of every
/// query, nearest first, ties by index, in `place`.
#[allow(clippy::too_many_arguments)]
pub(crate) fn search<T: KnnFloat>(
    dev: &CudaDevice,
    reference: &Points<'_, T>,
    queries: &Points<'_, T>,
    k: usize,
    metric: Metric,
    budget: Option<usize>,
    cache: &Cache<T>,
    place: Place,
) -> Result<Lists<T>> {
    let selector = Selector::on(Device::Cuda(dev.clone())).nan_policy(NanPolicy::Last);
    let (n, dim) = (reference.rows(), reference.dim());
    let point = DevicePoints::<T>::bytes(1, dim);
    let resident_bytes = DevicePoints::<T>::bytes(n, dim) + ScreenedReference::bytes(n, dim);
    let budget = match budget {
        Some(b) => b,
        None => {
            // Half the free memory, counting the reference set kept from an earlier search
            // as free: it is this search's to use.
            let held = cache
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .as_ref()
                .filter(|r| r.ordinal == dev.ordinal())
                .map_or(0, |_| resident_bytes);
            (dev.memory_info()?.0 + held) / 2
        }
    };
    if resident_bytes > budget / 2 {
        let plan = Plan::direct(n, queries.rows(), point, k, budget, false)?;
        return direct::search(
            dev, &selector, reference, None, queries, k, metric, &plan, place,
        );
    }
    let mut slot = cache.lock().unwrap_or_else(|e| e.into_inner());
    let stale = slot
        .as_ref()
        .is_none_or(|r| r.ordinal != dev.ordinal() || r.metric != metric);
    if stale {
        *slot = None;
        let points = DevicePoints::upload(dev, reference, metric)?;
        let screened = ScreenedReference::build(dev, reference, &points, metric)?;
        *slot = Some(Resident {
            ordinal: dev.ordinal(),
            metric,
            points,
            screened,
        });
    }
    let resident = slot.as_ref().expect("the reference set was just placed");
    let direct_plan = Plan::direct(n, queries.rows(), point, k, budget, true)?;
    let Some(screened) = &resident.screened else {
        let points = Some(&resident.points);
        return direct::search(
            dev,
            &selector,
            reference,
            points,
            queries,
            k,
            metric,
            &direct_plan,
            place,
        );
    };
    let c = candidates(k, n);
    let width = 3 * screen::width(dim);
    let plan = Plan::screened(
        n,
        queries.rows(),
        point,
        width,
        k,
        c,
        budget,
        resident_bytes,
    )?;
    let screen = |queries: &Points<'_, T>, precision| {
        screen::search(
            dev,
            &selector,
            screened,
            &resident.points,
            queries,
            k,
            c,
            metric,
            &plan,
            precision,
            place,
        )
    };
    let (mut lists, unsettled) = screen(queries, Precision::Single)?;
    let mut direct = unsettled.split;
    if !unsettled.single.is_empty() {
        // The queries the single product could not settle, by the split product.
        let rest = subset(queries, &unsettled.single)?;
        let (part, again) = screen(&rest, Precision::Split)?;
        lists.splice(dev, &unsettled.single, part, k)?;
        direct.extend(again.split.iter().map(|&j| unsettled.single[j]));
    }
    if !direct.is_empty() {
        // The queries no product could settle (many points at nearly their k-th distance),
        // searched directly.
        direct.sort_unstable();
        let rest = subset(queries, &direct)?;
        let plan = Plan::direct(n, rest.rows(), point, k, budget, true)?;
        let points = Some(&resident.points);
        let part = direct::search(
            dev, &selector, reference, points, &rest, k, metric, &plan, place,
        )?;
        lists.splice(dev, &direct, part, k)?;
    }
    Ok(lists)
}

/// The queries `rows` of `queries`, as a set of their own.
fn subset<T: KnnFloat>(queries: &Points<'_, T>, rows: &[usize]) -> Result<Points<'static, T>> {
    let data = rows
        .iter()
        .flat_map(|&i| queries.row(i).iter().copied())
        .collect();
    Points::from_vec(data, queries.dim())
}
