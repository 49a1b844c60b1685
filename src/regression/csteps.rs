//! The concentration step (C-step) of FAST-LTS and the trimmed objective it decreases.
//!
//! For coefficients `b`, the squared residuals `r_i^2 = (y_i - x_i b)^2` of all rows are
//! computed; their `h`-th smallest value `t` is found by selection (the crate's own
//! [`Selector`], never a sort); the `h`-subset `H(b)` is every row with `r_i^2 < t` and then
//! the rows with `r_i^2 = t` in index order until `h` rows are taken. The objective is the sum
//! of `r_i^2` over `H(b)`. One C-step replaces `b` by the least-squares fit on `H(b)`: normal
//! equations accumulated over `H(b)` (per chunk of rows, the Gram matrix of the kept rows
//! `[x | y]` by a matrix product) and solved by Cholesky, with a Householder QR of the gathered
//! rows when `X'X` is ill-conditioned. By Rousseeuw and Van Driessen's theorem the
//! objective never increases; iteration stops when it no longer decreases.
//!
//! The passes over the rows run in fixed chunks (several threads for long inputs), and the
//! chunks' partial sums are added in chunk order: the results are the same bits whatever the
//! number of threads. Buffers live in a [`Work`] that is reused from step to step.

use ndarray::ArrayView2;
use rayon::prelude::*;

use crate::regression::design::{dot, sum_in_order, Rows, CHUNK, PARALLEL_ROWS};
use crate::regression::linalg::{cholesky_solve, least_squares};
use crate::Selector;

/// Reusable buffers of the C-steps on up to `n` rows of `p` columns.
pub(crate) struct Work {
    /// The squared residuals of the current coefficients.
    pub r2: Vec<f64>,
    xtx: Vec<f64>,
    xty: Vec<f64>,
    selector: Selector,
}

impl Work {
    /// Buffers for `p` columns (the residual buffer grows as needed).
    pub fn new(p: usize) -> Work {
        Work {
            r2: Vec::new(),
            xtx: vec![0.0; p * p],
            xty: vec![0.0; p],
            selector: Selector::new().parallel(false),
        }
    }
}

/// The `h`-subset of the current residuals: its threshold and objective.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Trim {
    /// The `h`-th smallest squared residual.
    pub threshold: f64,
    /// How many squared residuals are below the threshold (`< h`).
    pub below: usize,
    /// The sum of the `h` smallest squared residuals.
    pub objective: f64,
}

/// Coefficients and their trimmed objective.
#[derive(Clone, Debug)]
pub(crate) struct Candidate {
    pub b: Vec<f64>,
    pub objective: f64,
}

/// `r2[i] = (y_i - x_i b)^2` for every row.
pub(crate) fn squared_residuals(rows: Rows<'_>, b: &[f64], r2: &mut Vec<f64>) {
    r2.resize(rows.n, 0.0);
    let fill = |(c, out): (usize, &mut [f64])| {
        let start = c * CHUNK;
        for (k, v) in out.iter_mut().enumerate() {
            let i = start + k;
            let r = rows.y[i] - dot(rows.row(i), b);
            *v = r * r;
        }
    };
    if rows.n >= PARALLEL_ROWS {
        r2.par_chunks_mut(CHUNK).enumerate().for_each(fill);
    } else {
        r2.chunks_mut(CHUNK).enumerate().for_each(fill);
    }
}

/// The `h`-th smallest value of `values` (`1 <= h <= len`), by selection; `None` when a value
/// is NaN.
pub(crate) fn hth_smallest(selector: &Selector, values: &[f64], h: usize) -> Option<f64> {
    selector.select(values, h - 1).ok()
}

/// The rows of the `h` smallest `values` (ties in index order), increasing, and the sum of
/// those values ([`smallest_rows`]'s): the `h`-th smallest found by `selector`, then
/// [`smallest_rows`].
pub(crate) fn h_smallest(selector: &Selector, values: &[f64], h: usize) -> (Vec<usize>, f64) {
    smallest_rows(values, |v| v, hth_smallest(selector, values, h), h)
}

/// The rows of the `h` smallest of `f(base[i])` (ties in index order), increasing, and the sum
/// of those values (in index order within chunks of [`CHUNK`] rows, the chunks' sums added in
/// chunk order: the same bits on any number of threads), where `t` is the `h`-th smallest; the
/// first `h` rows and a NaN sum when there is none (`t` is `None`: a value is NaN). Chunk by
/// chunk in parallel: each chunk's values below `t` and at it are counted, each is told how
/// many of its ties to take, and writes its rows at its place in the one list and sums their
/// values.
pub(crate) fn smallest_rows(
    base: &[f64],
    f: impl Fn(f64) -> f64 + Sync,
    t: Option<f64>,
    h: usize,
) -> (Vec<usize>, f64) {
    let Some(t) = t else {
        return ((0..h).collect(), f64::NAN);
    };
    let counts: Vec<(usize, usize)> = base
        .par_chunks(CHUNK)
        .map(|c| {
            c.iter().fold((0, 0), |(below, at), &v| {
                let v = f(v);
                (below + usize::from(v < t), at + usize::from(v == t))
            })
        })
        .collect();
    let below: usize = counts.iter().map(|c| c.0).sum();
    let mut ties = h - below;
    // Per chunk: the ties it takes, and its rows in the list.
    let takes: Vec<(usize, usize)> = counts
        .iter()
        .map(|&(below, at)| {
            let take = at.min(ties);
            ties -= take;
            (take, below + take)
        })
        .collect();
    let mut rows = vec![0usize; h];
    let mut places = Vec::with_capacity(takes.len());
    let mut rest = rows.as_mut_slice();
    for &(_, len) in &takes {
        let (place, after) = rest.split_at_mut(len);
        places.push(place);
        rest = after;
    }
    let sums = base
        .par_chunks(CHUNK)
        .zip(takes.par_iter())
        .zip(places.into_par_iter())
        .enumerate()
        .map(|(c, ((chunk, &(quota, _)), place))| {
            let mut ties = quota;
            let mut next = 0;
            let mut sum = 0.0;
            for (i, &v) in chunk.iter().enumerate() {
                let v = f(v);
                if v < t || (v == t && ties > 0) {
                    if v == t {
                        ties -= 1;
                    }
                    place[next] = c * CHUNK + i;
                    next += 1;
                    sum += v;
                }
            }
            sum
        });
    let sum = sum_in_order(sums);
    (rows, sum)
}

/// The squares of `r`.
pub(crate) fn squares(r: &[f64]) -> Vec<f64> {
    r.par_iter().map(|v| v * v).collect()
}

/// The trim of the squared residuals `r2` at `h`.
pub(crate) fn trim(work: &Work, h: usize) -> Option<Trim> {
    let r2 = &work.r2;
    let threshold = hth_smallest(&work.selector, r2, h)?;
    let part = |chunk: &[f64]| {
        let mut count = 0usize;
        let mut sum = 0.0;
        for &v in chunk {
            if v < threshold {
                count += 1;
                sum += v;
            }
        }
        (count, sum)
    };
    let parts: Vec<(usize, f64)> = if r2.len() >= PARALLEL_ROWS {
        r2.par_chunks(CHUNK).map(part).collect()
    } else {
        r2.chunks(CHUNK).map(part).collect()
    };
    let mut below = 0;
    let mut sum = 0.0;
    for (c, s) in parts {
        below += c;
        sum += s;
    }
    Some(Trim {
        threshold,
        below,
        objective: sum + (h - below) as f64 * threshold,
    })
}

/// The rows of the `h`-subset of `trim` over `r2`, in index order, into `out`.
pub(crate) fn subset_rows(r2: &[f64], trim: &Trim, h: usize, out: &mut Vec<usize>) {
    out.clear();
    let mut ties = h - trim.below;
    for (i, &v) in r2.iter().enumerate() {
        if v < trim.threshold {
            out.push(i);
        } else if v == trim.threshold && ties > 0 {
            ties -= 1;
            out.push(i);
        }
    }
}

/// The least-squares fit on the `h`-subset of `trim` (see the module documentation); `None`
/// when those rows do not determine a fit.
pub(crate) fn fit_subset(
    rows: Rows<'_>,
    trim: &Trim,
    h: usize,
    work: &mut Work,
) -> Option<Vec<f64>> {
    let p = rows.p;
    let r2 = &work.r2;
    let threshold = trim.threshold;
    let q = p + 1;
    let accumulate = |block: &mut Vec<f64>, c: usize| {
        // The chunk's rows below the threshold, as an m x (p + 1) block [x | y]; its Gram
        // matrix holds X'X and X'y (a matrix product: fast and vectorized).
        block.clear();
        let end = ((c + 1) * CHUNK).min(rows.n);
        let start = c * CHUNK;
        for (i, &v) in r2[start..end].iter().enumerate() {
            if v < threshold {
                let i = start + i;
                block.extend_from_slice(rows.row(i));
                block.push(rows.y[i]);
            }
        }
        let m = block.len() / q;
        match ArrayView2::from_shape((m, q), &block[..]) {
            Ok(view) => view.t().dot(&view).into_raw_vec_and_offset().0,
            Err(_) => vec![f64::NAN; q * q], // unreachable: the block has m rows of q
        }
    };
    let chunks = rows.n.div_ceil(CHUNK);
    let parts: Vec<Vec<f64>> = if rows.n >= PARALLEL_ROWS {
        (0..chunks)
            .into_par_iter()
            .map_init(Vec::new, accumulate)
            .collect()
    } else {
        let mut block = Vec::new();
        (0..chunks).map(|c| accumulate(&mut block, c)).collect()
    };
    let xtx = &mut work.xtx;
    let xty = &mut work.xty;
    xtx.iter_mut().for_each(|v| *v = 0.0);
    xty.iter_mut().for_each(|v| *v = 0.0);
    for gram in parts {
        for a in 0..p {
            for b in 0..p {
                xtx[a * p + b] += gram[a * q + b];
            }
            xty[a] += gram[a * q + p];
        }
    }
    // Ties at the threshold, in index order.
    let mut ties = h - trim.below;
    if ties > 0 {
        for (i, &v) in r2.iter().enumerate() {
            if v == threshold {
                add_row(xtx, xty, rows.row(i), rows.y[i], p);
                ties -= 1;
                if ties == 0 {
                    break;
                }
            }
        }
    }
    let mut b = vec![0.0; p];
    if cholesky_solve(xtx, xty, p, &mut b) {
        return Some(b);
    }
    // Ill-conditioned normal equations: QR of the gathered rows.
    let mut idx = Vec::with_capacity(h);
    subset_rows(r2, trim, h, &mut idx);
    let (x, y) = gather(rows, &idx);
    least_squares(&x, &y, idx.len(), p)
}

/// One C-step from `b` on the CPU: the least-squares fit on the `h`-subset of its residuals
/// ([`fit_subset`]); `None` when the residuals are not finite or the subset determines no fit.
pub(crate) fn step_from(rows: Rows<'_>, h: usize, b: &[f64]) -> Option<Vec<f64>> {
    let mut work = Work::new(rows.p);
    squared_residuals(rows, b, &mut work.r2);
    let t = trim(&work, h)?;
    fit_subset(rows, &t, h, &mut work)
}

/// Adds row `x` with response `y` to the upper triangle of `xtx` and to `xty`.
#[inline]
fn add_row(xtx: &mut [f64], xty: &mut [f64], x: &[f64], y: f64, p: usize) {
    for a in 0..p {
        let va = x[a];
        xty[a] += va * y;
        let row = &mut xtx[a * p..(a + 1) * p];
        for b in a..p {
            row[b] += va * x[b];
        }
    }
}

/// The rows `idx` of `rows`, as a row-major `x` and a `y`.
pub(crate) fn gather(rows: Rows<'_>, idx: &[usize]) -> (Vec<f64>, Vec<f64>) {
    let mut x = Vec::with_capacity(idx.len() * rows.p);
    let mut y = Vec::with_capacity(idx.len());
    for &i in idx {
        x.extend_from_slice(rows.row(i));
        y.push(rows.y[i]);
    }
    (x, y)
}

/// Up to `steps` C-steps from `b`, stopping when the objective no longer decreases; returns
/// the best coefficients met and their objective (`None` when `b`'s residuals are not finite).
pub(crate) fn iterate(
    rows: Rows<'_>,
    h: usize,
    b: Vec<f64>,
    steps: usize,
    work: &mut Work,
) -> Option<Candidate> {
    squared_residuals(rows, &b, &mut work.r2);
    let mut current = trim(work, h)?;
    let mut best = Candidate {
        b,
        objective: current.objective,
    };
    for _ in 0..steps {
        let Some(next) = fit_subset(rows, &current, h, work) else {
            break;
        };
        squared_residuals(rows, &next, &mut work.r2);
        let Some(next_trim) = trim(work, h) else {
            break;
        };
        if next_trim.objective < best.objective {
            best = Candidate {
                b: next,
                objective: next_trim.objective,
            };
            current = next_trim;
        } else {
            break;
        }
    }
    Some(best)
}

/// Up to `cap` candidates with the smallest objectives, one per distinct objective value (the
/// one from the smallest start index), ordered by objective: the same set whatever the order in
/// which candidates arrive.
#[derive(Clone, Debug)]
pub(crate) struct Best {
    cap: usize,
    items: Vec<(Candidate, u64)>,
}

impl Best {
    /// An empty set holding at most `cap` candidates.
    pub fn new(cap: usize) -> Best {
        Best {
            cap,
            items: Vec::with_capacity(cap + 1),
        }
    }

    /// Offers the candidate of start `start`.
    pub fn offer(&mut self, candidate: Candidate, start: u64) {
        let obj = candidate.objective;
        if obj.is_nan() {
            return;
        }
        if let Some(same) = self.items.iter_mut().find(|(c, _)| c.objective == obj) {
            if start < same.1 {
                *same = (candidate, start);
            }
            return;
        }
        let pos = self
            .items
            .iter()
            .position(|(c, s)| (c.objective, *s) > (obj, start))
            .unwrap_or(self.items.len());
        if pos < self.cap {
            self.items.insert(pos, (candidate, start));
            self.items.truncate(self.cap);
        }
    }

    /// The union of two sets, capped.
    pub fn merge(mut self, other: Best) -> Best {
        for (c, s) in other.items {
            self.offer(c, s);
        }
        self
    }

    /// The candidates, best first.
    pub fn into_candidates(self) -> Vec<Candidate> {
        self.items.into_iter().map(|(c, _)| c).collect()
    }

    /// Whether no candidate was kept.
    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line_rows() -> (Vec<f64>, Vec<f64>) {
        // y = 1 + 2x on 8 rows, 3 gross outliers.
        let xs: Vec<f64> = (0..11).map(|i| i as f64).collect();
        let mut ys: Vec<f64> = xs.iter().map(|x| 1.0 + 2.0 * x).collect();
        ys[2] += 50.0;
        ys[5] -= 40.0;
        ys[9] += 30.0;
        let x: Vec<f64> = xs.iter().flat_map(|&v| [1.0, v]).collect();
        (x, ys)
    }

    #[test]
    fn csteps_reach_the_clean_fit() {
        let (x, y) = line_rows();
        let rows = Rows {
            x: &x,
            y: &y,
            n: 11,
            p: 2,
        };
        let mut work = Work::new(2);
        // Start from a bad fit: ordinary least squares on everything.
        let b = least_squares(&x, &y, 11, 2).unwrap();
        let c = iterate(rows, 8, b, 20, &mut work).unwrap();
        assert!(c.objective < 1e-20, "{}", c.objective);
        assert!((c.b[0] - 1.0).abs() < 1e-10 && (c.b[1] - 2.0).abs() < 1e-10);
    }

    #[test]
    fn ties_are_taken_in_index_order() {
        let r2 = [4.0, 1.0, 1.0, 1.0, 0.5];
        let trim = Trim {
            threshold: 1.0,
            below: 1,
            objective: 2.5,
        };
        let mut rows = Vec::new();
        subset_rows(&r2, &trim, 3, &mut rows);
        assert_eq!(rows, vec![1, 2, 4]);
    }

    #[test]
    fn best_is_order_independent() {
        let cand = |o: f64| Candidate {
            b: vec![o],
            objective: o,
        };
        let offers = [
            (3.0, 0u64),
            (1.0, 5),
            (1.0, 2),
            (2.0, 1),
            (0.5, 9),
            (4.0, 3),
        ];
        let mut a = Best::new(3);
        for &(o, s) in &offers {
            a.offer(cand(o), s);
        }
        let mut b = Best::new(3);
        for &(o, s) in offers.iter().rev() {
            b.offer(cand(o), s);
        }
        let ka: Vec<(f64, u64)> = a.items.iter().map(|(c, s)| (c.objective, *s)).collect();
        let kb: Vec<(f64, u64)> = b.items.iter().map(|(c, s)| (c.objective, *s)).collect();
        assert_eq!(ka, kb);
        assert_eq!(ka, vec![(0.5, 9), (1.0, 2), (2.0, 1)]);
    }
}
