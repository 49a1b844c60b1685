//! Exact neighbour search on the CPU: every pair measured by the canonical arithmetic of
//! [`Metric::measure`], eight reference points at a time (one accumulator each, so that each
//! sum still runs in coordinate order), and each query's `k` best kept by a buffered
//! selection.

use rayon::prelude::*;

use crate::knn::candidates::Candidates;
use crate::knn::metric::{cosine_from_parts, cosine_scale, scaled_norm2, Metric};
use crate::knn::{KnnFloat, Points};

/// Reference points measured together.
const LANES: usize = 8;

/// The reference set laid out for the search: blocks of [`LANES`] points, coordinate-major
/// inside a block (coordinate `j` of the block's point `l` at `j * LANES + l`), the last block
/// padded with zeros; for cosine, each point's scale and scaled squared norm.
pub(super) struct Prepared {
    blocks: Vec<f64>,
    rows: usize,
    dim: usize,
    scales: Vec<f64>,
    norms: Vec<f64>,
}

impl Prepared {
    /// The layout of `reference` for `metric`.
    pub(super) fn new<T: KnnFloat>(reference: &Points<'_, T>, metric: Metric) -> Prepared {
        let (rows, dim) = (reference.rows(), reference.dim());
        let count = rows.div_ceil(LANES);
        let mut blocks = vec![0.0; count * LANES * dim];
        blocks
            .par_chunks_mut(LANES * dim)
            .enumerate()
            .for_each(|(b, block)| {
                for l in 0..LANES.min(rows - b * LANES) {
                    for (j, &v) in reference.row(b * LANES + l).iter().enumerate() {
                        block[j * LANES + l] = v.to_f64();
                    }
                }
            });
        let (scales, norms) = if metric == Metric::Cosine {
            (0..rows)
                .map(|i| {
                    let s = cosine_scale(reference.row(i));
                    (s, scaled_norm2(reference.row(i), s))
                })
                .unzip()
        } else {
            (Vec::new(), Vec::new())
        };
        Prepared {
            blocks,
            rows,
            dim,
            scales,
            norms,
        }
    }
}

/// The `k` nearest reference points of every query (`k <= reference rows`), each list sorted
/// by distance, ties by index: canonical values and indices, query after query.
pub(super) fn search<T: KnnFloat>(
    prepared: &Prepared,
    queries: &Points<'_, T>,
    k: usize,
    metric: Metric,
) -> (Vec<f64>, Vec<usize>) {
    let mut values = vec![0.0; queries.rows() * k];
    let mut indices = vec![0usize; queries.rows() * k];
    values
        .par_chunks_mut(k)
        .zip(indices.par_chunks_mut(k))
        .enumerate()
        .for_each_init(
            || Candidates::new(k),
            |best, (i, (values, indices))| {
                best.clear();
                let q: Vec<f64> = queries.row(i).iter().map(|v| v.to_f64()).collect();
                scan(prepared, &q, metric, best);
                best.finish(values, indices, metric);
            },
        );
    (values, indices)
}

/// Offers every reference point's rank key for query `q` to `best`.
fn scan(prepared: &Prepared, q: &[f64], metric: Metric, best: &mut Candidates) {
    let dim = prepared.dim;
    let (q_scale, q_norm) = if metric == Metric::Cosine {
        let s = cosine_scale(q);
        (s, scaled_norm2(q, s))
    } else {
        (1.0, 0.0)
    };
    for (b, block) in prepared.blocks.chunks_exact(LANES * dim).enumerate() {
        let first = b * LANES;
        let lanes = LANES.min(prepared.rows - first);
        let mut acc = [0.0f64; LANES];
        match metric {
            Metric::SquaredEuclidean | Metric::Euclidean => {
                for (j, &qj) in q.iter().enumerate() {
                    let x = &block[j * LANES..(j + 1) * LANES];
                    for l in 0..LANES {
                        let t = qj - x[l];
                        acc[l] += t * t;
                    }
                }
                if metric == Metric::Euclidean {
                    acc.iter_mut().for_each(|a| *a = a.sqrt());
                }
            }
            Metric::Manhattan => {
                for (j, &qj) in q.iter().enumerate() {
                    let x = &block[j * LANES..(j + 1) * LANES];
                    for l in 0..LANES {
                        acc[l] += (qj - x[l]).abs();
                    }
                }
            }
            Metric::InnerProduct => {
                for (j, &qj) in q.iter().enumerate() {
                    let x = &block[j * LANES..(j + 1) * LANES];
                    for l in 0..LANES {
                        acc[l] += (qj * 1.0) * (x[l] * 1.0);
                    }
                }
            }
            Metric::Cosine => {
                let mut scale = [0.0f64; LANES];
                scale[..lanes].copy_from_slice(&prepared.scales[first..first + lanes]);
                for (j, &qj) in q.iter().enumerate() {
                    let x = &block[j * LANES..(j + 1) * LANES];
                    for l in 0..LANES {
                        acc[l] += (qj * q_scale) * (x[l] * scale[l]);
                    }
                }
                let norms = &prepared.norms[first..first + lanes];
                for (a, &norm) in acc.iter_mut().zip(norms) {
                    *a = cosine_from_parts(*a, q_norm, norm);
                }
            }
        }
        for (l, &value) in acc[..lanes].iter().enumerate() {
            best.offer(metric.rank_key(value), first + l);
        }
    }
}
