//! Exact neighbour search on the CPU. Every pair that can enter a query's list is measured by the
//! canonical arithmetic of [`Metric::measure`], and each query's `k` best are kept by
//! [`Candidates`], the reference points offered in index order.
//!
//! **The Euclidean metrics** are screened first: a cheap lower bound on each pair's canonical
//! value, from the matrix form `|q'|^2 + |x'|^2 - 2 q'.x'` of the points centred on the
//! reference set's mean, turns away the pairs that provably cannot enter the list, and only the
//! others are measured. A pair is turned away only when its canonical value is at least the
//! bound of the query's [`Candidates`] (the `k`-th kept at its last cut), which the selection
//! would turn away too, so the lists are those of measuring every pair, bit for bit ([`limit`]
//! proves the bound). The screen runs in `f32` (six queries against sixteen points at a time) where its
//! error is far below the query's current `k`-th distance, else in `f64` (six against eight);
//! with AVX2 and fused multiply–add where the CPU has them (it is a bound, not a distance).
//! Tiles of the reference set stay in the cache while a chunk of queries passes over them.
//!
//! **The other metrics** measure every pair, eight reference points at a time (one accumulator
//! each, so that each sum still runs in coordinate order).

use rayon::prelude::*;

use crate::knn::candidates::Candidates;
use crate::knn::metric::{cosine_from_parts, cosine_scale, scaled_norm2, Metric};
use crate::knn::{KnnFloat, Points};

/// Reference points measured together, and screened together in `f64` (a block).
const LANES: usize = 8;
/// Reference points screened together in `f32` (two blocks).
const WIDE: usize = 2 * LANES;
/// Queries screened together.
const PANEL: usize = 6;
/// Blocks of a reference tile (512 points; even), screened by every query of a chunk in turn.
const TILE_BLOCKS: usize = 64;
/// Queries of a parallel task.
const CHUNK: usize = 8 * PANEL;
/// The largest number of coordinates the screen serves (its error bound assumes `d u` tiny).
const SCREEN_MAX_DIM: usize = 1 << 20;
/// Open pairs measured together at most (more are measured as soon as a block leaves them).
const SETTLE: usize = 64;
/// Open points of a block (for one query) from which the whole block is measured, eight lanes
/// side by side, rather than each point on its own.
const DENSE: u32 = 4;
/// The `f32` screen is used for a query while the margin it adds to the query's current
/// `k`-th (squared) distance is at most this fraction of it.
const NARROW_MARGIN: f64 = 1.0 / 1024.0;

/// The reference set laid out for the search: the points themselves (row-major); in blocks of
/// [`LANES`] points, coordinate-major inside a block (coordinate `j` of the block's point `l` at
/// `j * LANES + l`), the last block padded with zeros; for cosine, each point's scale and scaled
/// squared norm; for the Euclidean metrics, what the screen needs.
pub(super) struct Prepared<'r, T: KnnFloat> {
    reference: &'r [T],
    blocks: Vec<f64>,
    rows: usize,
    dim: usize,
    scales: Vec<f64>,
    norms: Vec<f64>,
    screen: Option<Screen>,
}

/// What the screen needs. The centre `m`; for the `f64` screen, which centres the blocks' points
/// as it reads them (`x' = fl(x - m)`, each coordinate rounded once), each point's computed
/// `|x'|^2` in block order (0 for padding) and the largest of those in each tile; for the `f32`
/// screen, the points centred and rounded to `f32` (`x'' = f32(fl(x - m))`) in blocks of
/// [`WIDE`] (coordinate `j` of point `l` at `j * WIDE + l`, the last padded with zeros), each
/// one's `|x''|^2` (computed in `f64`, rounded to `f32`; 0 for padding) and the tiles' largest.
struct Screen {
    center: Vec<f64>,
    norms: Vec<f64>,
    tile_norms: Vec<f64>,
    narrow: Vec<f32>,
    narrow_norms: Vec<f32>,
    narrow_tile_norms: Vec<f64>,
}

impl<'r, T: KnnFloat> Prepared<'r, T> {
    /// Reference point `i`.
    fn row(&self, i: usize) -> &[T] {
        &self.reference[i * self.dim..(i + 1) * self.dim]
    }

    /// The layout of `reference` for `metric`.
    pub(super) fn new(reference: &'r Points<'_, T>, metric: Metric) -> Prepared<'r, T> {
        let (rows, dim) = (reference.rows(), reference.dim());
        let mut blocks = vec![0.0; rows.div_ceil(LANES) * LANES * dim];
        blocks
            .par_chunks_mut(LANES * dim)
            .zip(reference.as_slice().par_chunks(LANES * dim))
            .for_each(|(block, points)| {
                for (l, point) in points.chunks_exact(dim).enumerate() {
                    for (j, &v) in point.iter().enumerate() {
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
        let screen = (matches!(metric, Metric::Euclidean | Metric::SquaredEuclidean)
            && dim <= SCREEN_MAX_DIM)
            .then(|| Screen::new(&blocks, rows, dim));
        Prepared {
            reference: reference.as_slice(),
            blocks,
            rows,
            dim,
            scales,
            norms,
            screen,
        }
    }
}

impl Screen {
    /// The screen's layout of the `rows` points of `dim` coordinates in `blocks`.
    fn new(blocks: &[f64], rows: usize, dim: usize) -> Screen {
        let count = rows.div_ceil(LANES);
        // The mean, the centre that keeps the matrix form's cancellation small (any centre
        // would keep the bound valid).
        let mut center = vec![0.0; dim];
        for block in blocks.chunks_exact(LANES * dim) {
            for (j, c) in center.iter_mut().enumerate() {
                *c += block[j * LANES..(j + 1) * LANES].iter().sum::<f64>();
            }
        }
        for c in center.iter_mut() {
            *c /= rows as f64;
            // Huge coordinates may overflow the mean: the origin is a centre too.
            if !c.is_finite() {
                *c = 0.0;
            }
        }
        let norms: Vec<f64> = blocks
            .par_chunks(LANES * dim)
            .enumerate()
            .flat_map_iter(|(b, block)| {
                let center = &center;
                (0..LANES).map(move |l| {
                    if b * LANES + l >= rows {
                        return 0.0;
                    }
                    (0..dim)
                        .map(|j| (block[j * LANES + l] - center[j]).powi(2))
                        .sum()
                })
            })
            .collect();
        let mut narrow = vec![0.0f32; count.div_ceil(2) * WIDE * dim];
        narrow
            .par_chunks_mut(WIDE * dim)
            .zip(blocks.par_chunks(WIDE * dim))
            .enumerate()
            .for_each(|(g, (wide, pair))| {
                for (h, block) in pair.chunks_exact(LANES * dim).enumerate() {
                    for l in 0..LANES.min(rows.saturating_sub((2 * g + h) * LANES)) {
                        for j in 0..dim {
                            wide[j * WIDE + h * LANES + l] =
                                (block[j * LANES + l] - center[j]) as f32;
                        }
                    }
                }
            });
        let narrow_norms: Vec<f32> = narrow
            .par_chunks(WIDE * dim)
            .flat_map_iter(|wide| {
                (0..WIDE).map(move |l| {
                    (0..dim)
                        .map(|j| f64::from(wide[j * WIDE + l]).powi(2))
                        .sum::<f64>() as f32
                })
            })
            .collect();
        let tile_max = |norms: &[f64]| -> Vec<f64> {
            norms
                .chunks(TILE_BLOCKS * LANES)
                .map(|tile| {
                    // NaN, were there any, would win (and make the limits infinite).
                    tile.iter()
                        .fold(0.0, |m: f64, &v| if v > m || v.is_nan() { v } else { m })
                })
                .collect()
        };
        let tile_norms = tile_max(&norms);
        let narrow_tile_norms = tile_max(
            &narrow_norms
                .iter()
                .map(|&v| f64::from(v))
                .collect::<Vec<_>>(),
        );
        Screen {
            center,
            norms,
            tile_norms,
            narrow,
            narrow_norms,
            narrow_tile_norms,
        }
    }
}

/// The `k` nearest reference points of every query (`k <= reference rows`), each list sorted
/// by distance, ties by index: canonical values and indices, query after query.
pub(super) fn search<T: KnnFloat>(
    prepared: &Prepared<'_, T>,
    queries: &Points<'_, T>,
    k: usize,
    metric: Metric,
) -> (Vec<f64>, Vec<usize>) {
    let mut values = vec![0.0; queries.rows() * k];
    let mut indices = vec![0usize; queries.rows() * k];
    match &prepared.screen {
        None => values
            .par_chunks_mut(k)
            .zip(indices.par_chunks_mut(k))
            .enumerate()
            .for_each_init(
                || (Candidates::new(k), Vec::with_capacity(prepared.dim)),
                |(best, q), (i, (values, indices))| {
                    best.clear();
                    q.clear();
                    q.extend(queries.row(i).iter().map(|v| v.to_f64()));
                    scan(prepared, q, metric, best);
                    best.finish(values, indices, metric);
                },
            ),
        Some(screen) => {
            let kernel = Kernel::detect();
            values
                .par_chunks_mut(CHUNK * k)
                .zip(indices.par_chunks_mut(CHUNK * k))
                .enumerate()
                .for_each_init(
                    || Workspace::new(k, prepared.dim),
                    |work, (c, (values, indices))| {
                        let count = values.len() / k;
                        screened_chunk(
                            prepared,
                            screen,
                            queries,
                            c * CHUNK..c * CHUNK + count,
                            metric,
                            kernel,
                            work,
                        );
                        let lists = values.chunks_mut(k).zip(indices.chunks_mut(k));
                        for (best, (values, indices)) in work.best.iter_mut().zip(lists) {
                            best.finish(values, indices, metric);
                        }
                    },
                )
        }
    }
    (values, indices)
}

/// Offers every reference point's rank key for query `q` to `best`.
fn scan<T: KnnFloat>(prepared: &Prepared<'_, T>, q: &[f64], metric: Metric, best: &mut Candidates) {
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

/// What a task of the screened search keeps between chunks, for each query of a chunk: its
/// selection; its coordinates in `f64`, centred (`q' = fl(q - m)`) and centred in `f32` (`q'' =
/// f32(q')`), row-major; the computed `|q'|^2` and `|q''|^2` (in `f64`); and its current
/// limits for the `f32` and `f64` screens, with whether the `f32` one is tight enough to use
/// (see [`NARROW_MARGIN`]). And what the screen left open for a panel of queries, in the order
/// it is offered, with the single pairs' positions there and canonical values.
struct Workspace {
    best: Vec<Candidates>,
    queries: Vec<f64>,
    centred: Vec<f64>,
    narrow: Vec<f32>,
    norms: Vec<f64>,
    narrow_norms: Vec<f64>,
    limits: Vec<f64>,
    narrow_limits: Vec<f32>,
    narrow_ok: Vec<bool>,
    open: Vec<Open>,
    pairs: Vec<(usize, usize, usize)>,
    values: Vec<f64>,
}

/// What a screen left open: a pair (query, point), or a query and a whole block (of which
/// [`DENSE`] or more points were open), measured together.
#[derive(Clone, Copy)]
enum Open {
    Pair(usize, usize),
    Block(usize, usize),
}

impl Workspace {
    fn new(k: usize, dim: usize) -> Workspace {
        Workspace {
            best: (0..CHUNK).map(|_| Candidates::new(k)).collect(),
            queries: vec![0.0; CHUNK * dim],
            centred: vec![0.0; CHUNK * dim],
            narrow: vec![0.0; CHUNK * dim],
            norms: vec![0.0; CHUNK],
            narrow_norms: vec![0.0; CHUNK],
            limits: vec![0.0; CHUNK],
            narrow_limits: vec![0.0; CHUNK],
            narrow_ok: vec![false; CHUNK],
            open: Vec::new(),
            pairs: Vec::new(),
            values: Vec::new(),
        }
    }

    /// Query `i`'s limits against tile `tile`, from the bound of its selection.
    fn refresh(&mut self, i: usize, screen: &Screen, tile: usize, metric: Metric) {
        let dim = screen.center.len();
        let tau = self.best[i].bound();
        let wide = limit(
            tau,
            self.norms[i],
            screen.tile_norms[tile],
            dim,
            metric,
            &F64,
        );
        let narrow = limit(
            tau,
            self.narrow_norms[i],
            screen.narrow_tile_norms[tile],
            dim,
            metric,
            &F32,
        );
        self.limits[i] = wide;
        self.narrow_limits[i] = round_up(narrow);
        // The f32 screen where nothing is turned away yet, or where it turns away nearly
        // as much as the f64 one (its margin `narrow + nq - t` small next to `t`).
        self.narrow_ok[i] = match tau {
            None => true,
            Some(tau) => {
                let t = if metric == Metric::Euclidean {
                    tau * tau
                } else {
                    tau
                };
                narrow + self.narrow_norms[i] - t <= NARROW_MARGIN * t
            }
        };
    }

    /// Records the pairs of `open` (bit `i * LANES + l`: query `p + i` and point `l` of block
    /// `b`), query by query, points in index order, and asks for their points to be cached: one
    /// by one, or as the whole block where [`DENSE`] or more of its points are open for the
    /// query.
    fn record<T: KnnFloat>(&mut self, open: u64, b: usize, p: usize, prepared: &Prepared<'_, T>) {
        let dim = prepared.dim;
        let mut rest = open;
        while rest != 0 {
            let i = rest.trailing_zeros() as usize / LANES;
            rest &= !(0xff << (i * LANES));
            let mut lanes = (open >> (i * LANES)) & 0xff;
            if lanes == 0 || b * LANES >= prepared.rows {
                continue;
            }
            if lanes.count_ones() >= DENSE {
                self.open.push(Open::Block(p + i, b));
                prefetch(&prepared.blocks[b * LANES * dim..(b + 1) * LANES * dim]);
                continue;
            }
            while lanes != 0 {
                let x = b * LANES + lanes.trailing_zeros() as usize;
                lanes &= lanes - 1;
                if x < prepared.rows {
                    self.open.push(Open::Pair(p + i, x));
                    prefetch(prepared.row(x));
                }
            }
        }
    }

    /// Measures the recorded pairs and blocks, offers them in the order recorded, and
    /// refreshes the limits of the queries whose selection changed.
    fn settle<T: KnnFloat>(
        &mut self,
        prepared: &Prepared<'_, T>,
        screen: &Screen,
        tile: usize,
        metric: Metric,
    ) {
        let dim = prepared.dim;
        let Workspace {
            best,
            queries,
            open,
            pairs,
            values,
            ..
        } = self;
        let query = |i: usize| &queries[i * dim..(i + 1) * dim];
        // The single pairs first, four side by side.
        pairs.clear();
        pairs.extend(open.iter().enumerate().filter_map(|(n, o)| match *o {
            Open::Pair(i, x) => Some((n, i, x)),
            Open::Block(..) => None,
        }));
        values.clear();
        values.resize(open.len(), 0.0);
        for four in pairs.chunks(4) {
            let pair = |n: usize| {
                let (_, i, x) = four[n.min(four.len() - 1)];
                (query(i), prepared.row(x))
            };
            let measured = measure4([pair(0), pair(1), pair(2), pair(3)], metric);
            for (&(n, _, _), &value) in four.iter().zip(&measured) {
                values[n] = value;
            }
        }
        let mut changed = 0u64;
        for (&entry, &value) in open.iter().zip(values.iter()) {
            let i = match entry {
                Open::Pair(i, _) => i,
                Open::Block(i, _) => i,
            };
            let before = best[i].bound();
            match entry {
                Open::Pair(_, x) => best[i].offer(metric.rank_key(value), x),
                Open::Block(_, b) => {
                    let block = &prepared.blocks[b * LANES * dim..(b + 1) * LANES * dim];
                    let measured = measure_block(query(i), block, metric);
                    let lanes = LANES.min(prepared.rows - b * LANES);
                    for (l, &value) in measured[..lanes].iter().enumerate() {
                        best[i].offer(metric.rank_key(value), b * LANES + l);
                    }
                }
            }
            if best[i].bound() != before {
                changed |= 1 << i;
            }
        }
        open.clear();
        while changed != 0 {
            let i = changed.trailing_zeros() as usize;
            changed &= changed - 1;
            self.refresh(i, screen, tile, metric);
        }
    }
}

/// Searches the queries `range` (at most [`CHUNK`]) by screening, leaving their selections in
/// `work.best`.
fn screened_chunk<T: KnnFloat>(
    prepared: &Prepared<'_, T>,
    screen: &Screen,
    queries: &Points<'_, T>,
    range: std::ops::Range<usize>,
    metric: Metric,
    kernel: Kernel,
    work: &mut Workspace,
) {
    let dim = prepared.dim;
    let count = range.len();
    for (i, q) in range.clone().enumerate() {
        work.best[i].clear();
        let span = i * dim..(i + 1) * dim;
        for (j, &v) in queries.row(q).iter().enumerate() {
            let v = v.to_f64();
            let c = v - screen.center[j];
            work.queries[span.start + j] = v;
            work.centred[span.start + j] = c;
            work.narrow[span.start + j] = c as f32;
        }
        work.norms[i] = work.centred[span.clone()].iter().map(|v| v * v).sum();
        work.narrow_norms[i] = work.narrow[span]
            .iter()
            .map(|&v| f64::from(v).powi(2))
            .sum();
    }
    let blocks = prepared.rows.div_ceil(LANES);
    for (t, first) in (0..blocks).step_by(TILE_BLOCKS).enumerate() {
        for i in 0..count {
            work.refresh(i, screen, t, metric);
        }
        for p in (0..count).step_by(PANEL) {
            let panel = p..p + PANEL.min(count - p);
            let width = panel.len();
            for b in (first..blocks.min(first + TILE_BLOCKS)).step_by(2) {
                let open = if work.limits[panel.clone()].iter().all(|l| l.is_infinite()) {
                    // No query of the panel turns anything away yet: measure them all.
                    [u64::MAX >> (64 - width * LANES); 2]
                } else if work.narrow_ok[panel.clone()].iter().all(|&ok| ok) {
                    let g = b / 2;
                    kernel.screen32(
                        &work.narrow[p * dim..panel.end * dim],
                        &screen.narrow[g * WIDE * dim..(g + 1) * WIDE * dim],
                        &screen.narrow_norms[g * WIDE..(g + 1) * WIDE],
                        &work.narrow_limits[panel.clone()],
                    )
                } else {
                    let centred = &work.centred[p * dim..panel.end * dim];
                    let limits = &work.limits[panel.clone()];
                    let mut open = [0; 2];
                    for (h, o) in open.iter_mut().enumerate().take(blocks - b) {
                        let c = b + h;
                        *o = kernel.screen64(
                            centred,
                            &prepared.blocks[c * LANES * dim..(c + 1) * LANES * dim],
                            &screen.center,
                            &screen.norms[c * LANES..(c + 1) * LANES],
                            limits,
                        );
                    }
                    open
                };
                work.record(open[0], b, p, prepared);
                work.record(open[1], b + 1, p, prepared);
                if work.open.len() >= SETTLE {
                    work.settle(prepared, screen, t, metric);
                }
            }
            work.settle(prepared, screen, t, metric);
        }
    }
}

/// Asks for the cache lines of `values` to be loaded (a hint; nothing where the CPU has no
/// prefetch instruction Rust exposes).
#[inline]
fn prefetch<T>(values: &[T]) {
    #[cfg(target_arch = "x86_64")]
    for line in (0..std::mem::size_of_val(values)).step_by(64) {
        // SAFETY: a prefetch of addresses inside the slice; it reads nothing and faults never.
        unsafe {
            use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
            _mm_prefetch::<_MM_HINT_T0>(values.as_ptr().cast::<i8>().add(line));
        }
    }
}

/// The canonical (squared) Euclidean distances of `metric` between `q` and the points of
/// `block`: [`Metric::measure`]'s arithmetic for each, eight lanes side by side.
#[inline]
fn measure_block(q: &[f64], block: &[f64], metric: Metric) -> [f64; LANES] {
    let mut sums = [0.0f64; LANES];
    for (j, &qj) in q.iter().enumerate() {
        let x = &block[j * LANES..(j + 1) * LANES];
        for l in 0..LANES {
            let t = qj - x[l];
            sums[l] += t * t;
        }
    }
    if metric == Metric::Euclidean {
        sums.iter_mut().for_each(|s| *s = s.sqrt());
    }
    sums
}

/// The canonical (squared) Euclidean distances of `metric` of four pairs (a query in `f64`, a
/// reference point), side by side: [`Metric::measure`]'s arithmetic for each.
#[inline]
fn measure4<T: KnnFloat>(pairs: [(&[f64], &[T]); 4], metric: Metric) -> [f64; 4] {
    let mut sums = [0.0f64; 4];
    for j in 0..pairs[0].0.len() {
        for (s, (q, x)) in sums.iter_mut().zip(&pairs) {
            let t = q[j] - x[j].to_f64();
            *s += t * t;
        }
    }
    if metric == Metric::Euclidean {
        sums.iter_mut().for_each(|s| *s = s.sqrt());
    }
    sums
}

/// A precision the screen runs in: its unit roundoff, smallest normal and largest finite
/// values.
struct Precision {
    unit: f64,
    min_positive: f64,
    max: f64,
}

/// The `f64` screen's precision.
const F64: Precision = Precision {
    unit: f64::EPSILON / 2.0,
    min_positive: f64::MIN_POSITIVE,
    max: f64::MAX,
};

/// The `f32` screen's precision.
const F32: Precision = Precision {
    unit: f32::EPSILON as f64 / 2.0,
    min_positive: f32::MIN_POSITIVE as f64,
    max: f32::MAX as f64,
};

/// The screen's limit for a query against a tile: every pair of the tile whose screened value
/// `y = fl(|x'|^2 - 2 fl(q'.x'))` exceeds it has a canonical rank key of at least `tau`, the
/// bound of the query's selection ([`Candidates::bound`]; `None`: not cut yet, nothing turned
/// away, and the limit is infinite), so [`Candidates::offer`] would turn the pair away. `nq` is the query's
/// computed `|q'|^2`, `tile_norm` the largest computed `|x'|^2` of the tile, `precision` the
/// one the screen computes `q'`, `x'`, the dot products and `y` in (the norms may be computed
/// more precisely, and `nq` is not rounded to it).
///
/// **Proof.** Let `u` be the screen's unit roundoff (`2^-53` or `2^-24`), `g_m = m u / (1 - m
/// u)`, `d` the coordinates (at most [`SCREEN_MAX_DIM`], so `d u` is tiny), `m` the centre,
/// `q'`, `x'` the centred points as the screen holds them (each coordinate of `q - m` rounded
/// to `f64`, then to `f32` for the `f32` screen: within `u' = u (1 + 2^-28)` of its own
/// magnitude), `Q = |q'|^2`, `X = |x'|^2`, `P = q'.x'` and `D' = Q + X - 2P = |q' - x'|^2`
/// exactly, `D = |q - x|^2` exactly, `c` the canonical sum `sum_j fl(fl(q_j - x_j)^2)` in
/// coordinate order (in `f64`). Sums of products computed in any order, with or without fused
/// multiply–add, are within `g_d` of the sum of the products' magnitudes (plus `d` times the
/// smallest subnormal for underflow, which the absolute term below covers), so with `nq`, `nx`,
/// `p` the computed `Q`, `X`, `P`: `|nq - Q| <= g_d Q`, `|nx - X| <= g_d X` (also when `nx` is
/// computed in `f64` and rounded to `f32` once), `|p - P| <= g_d sqrt(QX) <= g_d (Q + X) / 2`.
///
/// 1. `c >= (1 - g53_{d+2}) D` (less `d 2^-1075`; `g53` for `u = 2^-53`): each term is `(q_j -
///    x_j)^2` within three roundings, and a sum of non-negative terms loses at most
///    `g53_{d-1}`.
/// 2. `D >= D' - 4u'(Q + X)` (with `u'` over `1 - u'`): `|(q - x) - (q' - x')| <= u'(|q'| +
///    |x'|) = e`, and `D >= D' - 2 e sqrt(D') >= D' - 2 u'(|q'| + |x'|)^2 >= D' - 4u'(Q + X)`.
/// 3. `D' >= nq + nx - 2p - 2 g_d (Q + X)`, and `y` is `nx - 2p` rounded once, with `|nx -
///    2p| <= (2 + 2 g_d)(Q + X)`, so `nx - 2p >= y - u (2 + 2 g_d)(Q + X)`.
/// 4. Together `D >= nq + y - K (Q + X)` with `K = 2 g_d + 4u' + 2u + 2u g_d <= (2d + 8) u`,
///    and `Q + X <= (nq + nx) / (1 - g_d) <= (nq + M) (1 + 2 g_d)` with `M = tile_norm >= nx`.
/// 5. The key is at least `tau` when `c >= T`, with `T = tau` for the squared distance and
///    `T = tau^2` for the distance (then `sqrt(c) >= tau`, so the rounded root is too, `tau`
///    being a float). By 1 and 4 that holds when `y >= T (1 + 2 g53_{d+2}) - nq + (2d + 9) u
///    (nq + M) + a0`, `a0` the absolute underflow terms (`4 (d + 1)` smallest subnormals).
///
/// The limit returned is `((t + r ((t + nq) + M)) + a) - nq`, computed in `f64`, with `t =
/// fl(tau^2)` (or `tau`), `r = (2d + 32) u` and `a = (d + 2)` times the smallest normal of the
/// screen's precision (more than `2 a0`): `t >= T (1 - 2^-53)`, the five roundings of the
/// expression lose at most `5 2^-53 (t + nq + M + a)`, and `r` leaves more than `20u` of `t +
/// nq + M` to cover them, so it is at least the right side of 5. Values so large that `2p` or
/// the sums could overflow in the screen's precision make the limit infinite.
fn limit(
    tau: Option<f64>,
    nq: f64,
    tile_norm: f64,
    dim: usize,
    metric: Metric,
    precision: &Precision,
) -> f64 {
    let Some(tau) = tau else {
        return f64::INFINITY;
    };
    let t = if metric == Metric::Euclidean {
        tau * tau
    } else {
        tau
    };
    let huge = precision.max / 16.0;
    // Also false for NaN.
    if !(t <= huge && nq + tile_norm <= huge) {
        return f64::INFINITY;
    }
    let r = (2 * dim + 32) as f64 * precision.unit;
    let a = (dim + 2) as f64 * precision.min_positive;
    ((t + r * ((t + nq) + tile_norm)) + a) - nq
}

/// The least `f32` at least `v` (`v` not NaN).
fn round_up(v: f64) -> f32 {
    let f = v as f32;
    if f64::from(f) >= v {
        f
    } else if f == 0.0 {
        f32::from_bits(1)
    } else if f > 0.0 {
        f32::from_bits(f.to_bits() + 1)
    } else {
        // Negative, -inf included (whose successor is -f32::MAX).
        f32::from_bits(f.to_bits() - 1)
    }
}

/// `$f::<W>(args)` with `W` = `$width`, the number of queries (1 to [`PANEL`]; more are
/// `PANEL`): the AVX2 kernels are compiled for each number of queries.
#[cfg(target_arch = "x86_64")]
macro_rules! by_width {
    ($width:expr, $($f:ident)::+ ($($arg:expr),* $(,)?)) => {
        match $width {
            1 => $($f)::+::<1>($($arg),*),
            2 => $($f)::+::<2>($($arg),*),
            3 => $($f)::+::<3>($($arg),*),
            4 => $($f)::+::<4>($($arg),*),
            5 => $($f)::+::<5>($($arg),*),
            _ => $($f)::+::<6>($($arg),*),
        }
    };
}

/// The screening kernels this CPU runs.
#[derive(Clone, Copy)]
enum Kernel {
    /// AVX2 with fused multiply–add.
    #[cfg(target_arch = "x86_64")]
    Avx2Fma,
    /// Plain arithmetic.
    Portable,
}

impl Kernel {
    fn detect() -> Kernel {
        #[cfg(target_arch = "x86_64")]
        if std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("fma")
        {
            return Kernel::Avx2Fma;
        }
        Kernel::Portable
    }

    /// The `f64` screen of the centred queries `centred` (1 to [`PANEL`] of them, row-major)
    /// against the points of `block` centred on `center` (`fl(x - center)`, coordinatewise),
    /// of computed squared norms `norms`: bit `i * LANES + l` of the result is set when the
    /// pair of query `i` and the block's point `l` is left open, its value `fl(norms[l] - 2
    /// q'.x')` not above `limits[i]`.
    fn screen64(
        self,
        centred: &[f64],
        block: &[f64],
        center: &[f64],
        norms: &[f64],
        limits: &[f64],
    ) -> u64 {
        let (dim, width) = (center.len(), limits.len());
        assert!(
            (1..=PANEL).contains(&width)
                && centred.len() == width * dim
                && block.len() == LANES * dim
                && norms.len() == LANES
        );
        match self {
            #[cfg(target_arch = "x86_64")]
            // SAFETY: the CPU has AVX2 and FMA (`detect`), and the slices are as long as the
            // kernel reads (asserted above).
            Kernel::Avx2Fma => unsafe {
                by_width!(width, avx2::screen64(centred, block, center, norms, limits))
            },
            Kernel::Portable => {
                portable_screen::<f64, LANES>(centred, block, Some(center), norms, limits)[0]
            }
        }
    }

    /// The `f32` screen of the centred queries `narrow` (1 to [`PANEL`] of them, row-major)
    /// against the centred points `wide` ([`WIDE`] of them, coordinate-major) of squared norms
    /// `norms`: bit `i * LANES + l` of the result's element `h` is set when the pair of query
    /// `i` and point `h * LANES + l` is left open, its value `f32(norms[l] - 2 q''.x'')` not
    /// above `limits[i]`.
    fn screen32(self, narrow: &[f32], wide: &[f32], norms: &[f32], limits: &[f32]) -> [u64; 2] {
        let width = limits.len();
        let dim = wide.len() / WIDE;
        assert!(
            (1..=PANEL).contains(&width)
                && narrow.len() == width * dim
                && wide.len() == WIDE * dim
                && norms.len() == WIDE
        );
        match self {
            #[cfg(target_arch = "x86_64")]
            // SAFETY: the CPU has AVX2 and FMA (`detect`), and the slices are as long as the
            // kernel reads (asserted above).
            Kernel::Avx2Fma => unsafe {
                by_width!(width, avx2::screen32(narrow, wide, norms, limits))
            },
            Kernel::Portable => portable_screen::<f32, WIDE>(narrow, wide, None, norms, limits),
        }
    }
}

/// The portable screen of the queries `queries` (row-major) against `N` points `points`
/// (coordinate-major) less `center` (coordinatewise; none: no shift, `x - 0 = x` exactly) of
/// squared norms `norms`: bit `i * LANES + l % LANES` of the result's element `l / LANES` is
/// set when the pair of query `i` and point `l` is left open, its value `norms[l] - 2 q.x`
/// (summed in coordinate order) not above `limits[i]`.
fn portable_screen<F: num_traits::Float, const N: usize>(
    queries: &[F],
    points: &[F],
    center: Option<&[F]>,
    norms: &[F],
    limits: &[F],
) -> [u64; 2] {
    let dim = points.len() / N;
    let two = F::one() + F::one();
    let mut open = [0u64; 2];
    for (i, q) in queries.chunks_exact(dim).enumerate() {
        let mut acc = [F::zero(); N];
        for (j, &qj) in q.iter().enumerate() {
            let m = center.map_or(F::zero(), |c| c[j]);
            let x = &points[j * N..(j + 1) * N];
            for l in 0..N {
                acc[l] = acc[l] + qj * (x[l] - m);
            }
        }
        for l in 0..N {
            if left_open(norms[l] - two * acc[l], limits[i]) {
                open[l / LANES] |= 1 << (i * LANES + l % LANES);
            }
        }
    }
    open
}

/// Whether a screened value `y` leaves its pair open: not above `limit` (NaN included).
#[inline]
fn left_open<F: PartialOrd>(y: F, limit: F) -> bool {
    y.partial_cmp(&limit) != Some(std::cmp::Ordering::Greater)
}

#[cfg(target_arch = "x86_64")]
mod avx2 {
    use std::arch::x86_64::*;

    use super::{LANES, WIDE};

    /// [`Kernel::screen64`](super::Kernel::screen64) of `W` queries: the block's points
    /// centred as they are loaded, `2 W` accumulators of four lanes, one fused multiply–add
    /// per coordinate, query and four points.
    ///
    /// # Safety
    ///
    /// The CPU has AVX2 and FMA; with `dim = center.len()`, `centred` holds `W * dim` values,
    /// `block` `LANES * dim`, `norms` `LANES` and `limits` `W`.
    #[target_feature(enable = "avx2,fma")]
    pub(super) unsafe fn screen64<const W: usize>(
        centred: &[f64],
        block: &[f64],
        center: &[f64],
        norms: &[f64],
        limits: &[f64],
    ) -> u64 {
        let dim = center.len();
        let (q, x, m) = (centred.as_ptr(), block.as_ptr(), center.as_ptr());
        let mut lo = [_mm256_setzero_pd(); W];
        let mut hi = [_mm256_setzero_pd(); W];
        for j in 0..dim {
            let mj = _mm256_broadcast_sd(&*m.add(j));
            let x0 = _mm256_sub_pd(_mm256_loadu_pd(x.add(j * LANES)), mj);
            let x1 = _mm256_sub_pd(_mm256_loadu_pd(x.add(j * LANES + 4)), mj);
            for i in 0..W {
                let qj = _mm256_broadcast_sd(&*q.add(i * dim + j));
                lo[i] = _mm256_fmadd_pd(qj, x0, lo[i]);
                hi[i] = _mm256_fmadd_pd(qj, x1, hi[i]);
            }
        }
        let n0 = _mm256_loadu_pd(norms.as_ptr());
        let n1 = _mm256_loadu_pd(norms.as_ptr().add(4));
        let minus_two = _mm256_set1_pd(-2.0);
        let mut open = 0u64;
        for i in 0..W {
            let limit = _mm256_set1_pd(limits[i]);
            // -2 acc is exact, so this is fl(norm - 2 acc), rounded once.
            let y0 = _mm256_fmadd_pd(minus_two, lo[i], n0);
            let y1 = _mm256_fmadd_pd(minus_two, hi[i], n1);
            // Not greater (NaN included): left open.
            let o0 = _mm256_movemask_pd(_mm256_cmp_pd::<_CMP_NGT_UQ>(y0, limit)) as u64;
            let o1 = _mm256_movemask_pd(_mm256_cmp_pd::<_CMP_NGT_UQ>(y1, limit)) as u64;
            open |= (o0 | o1 << 4) << (i * LANES);
        }
        open
    }

    /// [`Kernel::screen32`](super::Kernel::screen32) of `W` queries: `2 W` accumulators of
    /// eight lanes, one fused multiply–add per coordinate, query and eight points.
    ///
    /// # Safety
    ///
    /// The CPU has AVX2 and FMA; with `dim = wide.len() / WIDE`, `narrow` holds `W * dim`
    /// values, `wide` `WIDE * dim`, `norms` `WIDE` and `limits` `W`.
    #[target_feature(enable = "avx2,fma")]
    pub(super) unsafe fn screen32<const W: usize>(
        narrow: &[f32],
        wide: &[f32],
        norms: &[f32],
        limits: &[f32],
    ) -> [u64; 2] {
        let dim = wide.len() / WIDE;
        let (q, x) = (narrow.as_ptr(), wide.as_ptr());
        let mut lo = [_mm256_setzero_ps(); W];
        let mut hi = [_mm256_setzero_ps(); W];
        for j in 0..dim {
            let x0 = _mm256_loadu_ps(x.add(j * WIDE));
            let x1 = _mm256_loadu_ps(x.add(j * WIDE + LANES));
            for i in 0..W {
                let qj = _mm256_broadcast_ss(&*q.add(i * dim + j));
                lo[i] = _mm256_fmadd_ps(qj, x0, lo[i]);
                hi[i] = _mm256_fmadd_ps(qj, x1, hi[i]);
            }
        }
        let n0 = _mm256_loadu_ps(norms.as_ptr());
        let n1 = _mm256_loadu_ps(norms.as_ptr().add(LANES));
        let minus_two = _mm256_set1_ps(-2.0);
        let mut open = [0u64; 2];
        for i in 0..W {
            let limit = _mm256_set1_ps(limits[i]);
            // -2 acc is exact, so this is f32(norm - 2 acc), rounded once.
            let y0 = _mm256_fmadd_ps(minus_two, lo[i], n0);
            let y1 = _mm256_fmadd_ps(minus_two, hi[i], n1);
            // Not greater (NaN included): left open.
            open[0] |=
                (_mm256_movemask_ps(_mm256_cmp_ps::<_CMP_NGT_UQ>(y0, limit)) as u64) << (i * LANES);
            open[1] |=
                (_mm256_movemask_ps(_mm256_cmp_ps::<_CMP_NGT_UQ>(y1, limit)) as u64) << (i * LANES);
        }
        open
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// On small integers every sum is exact, so the portable screens and the kernel this CPU
    /// runs leave the same pairs open.
    #[test]
    fn portable_screens_match_the_detected_kernel_on_exact_values() {
        let (dim, kernel) = (3, Kernel::detect());
        let center = [1.0, 2.0, -3.0];
        let block: Vec<f64> = (0..LANES * dim).map(|i| ((i * 3) % 7) as f64).collect();
        let norms: Vec<f64> = (0..LANES).map(|l| ((l * 5) % 11) as f64).collect();
        let wide: Vec<f32> = (0..WIDE * dim)
            .map(|i| ((i * 5) % 9) as f32 - 4.0)
            .collect();
        let norms32: Vec<f32> = (0..WIDE).map(|l| ((l * 7) % 13) as f32).collect();
        for width in 1..=PANEL {
            let queries: Vec<f64> = (0..width * dim)
                .map(|i| ((i * 7) % 5) as f64 - 2.0)
                .collect();
            let limits: Vec<f64> = (0..width).map(|i| i as f64 * 3.0 - 4.0).collect();
            let open = Kernel::Portable.screen64(&queries, &block, &center, &norms, &limits);
            assert_eq!(
                open,
                kernel.screen64(&queries, &block, &center, &norms, &limits)
            );
            assert!(
                open != 0 && open.count_ones() < (width * LANES) as u32,
                "{open:b}"
            );
            let narrow: Vec<f32> = queries.iter().map(|&v| v as f32).collect();
            let limits32: Vec<f32> = limits.iter().map(|&v| v as f32).collect();
            let open = Kernel::Portable.screen32(&narrow, &wide, &norms32, &limits32);
            assert_eq!(open, kernel.screen32(&narrow, &wide, &norms32, &limits32));
            let count = open[0].count_ones() + open[1].count_ones();
            assert!(count != 0 && count < (width * WIDE) as u32, "{open:?}");
        }
    }
}
