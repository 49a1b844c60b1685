//! Many problems with one operator on a CUDA device, solved together: each problem's vectors
//! are a column of a matrix (`n x count` signals, `m x count` measurements), so the operator's
//! products are one `gemm` (or one launch of the sparse kernels) for every problem, and the
//! hard thresholds one batched top-k. The problems run in lockstep, each by the steps and
//! decisions of the single solve ([`iterative`](super::iterative)): the scalars of each
//! problem (step sizes, norms, whether its support moved) are computed on the device for every
//! column at once and read by the host once or twice an iteration, where each problem's
//! [`Monitor`] decides. A problem that stops has its solution copied out and its columns
//! cleared to zero, which every later step keeps at zero.

use cudarc::driver::CudaSlice;

use crate::device::cuda::download::download_vec;
use crate::device::cuda::{driver_error, CudaDevice};
use crate::error::Result;
use crate::recovery::columns::{upload, Columns};
use crate::recovery::cuda::{Cuda, DeviceOperator};
use crate::recovery::iterative::{
    power_estimate, power_start, squared_norm, POWER_STEPS, REFRESH, SAFETY, SHRINK,
};
use crate::recovery::solver::Recovery;
use crate::recovery::stopping::{Monitor, StopReason};
use crate::recovery::Real;

/// What the lockstep solvers need of each problem: the sparsity, the tolerance and the
/// iteration limit.
pub(crate) struct Settings {
    pub k: usize,
    pub tol: f64,
    pub max_iterations: usize,
}

/// `count` problems `y_c = A x_c` on the operator's device, and what the host knows of each.
pub(crate) struct Lockstep<'a, T: Real> {
    op: &'a DeviceOperator<T>,
    m: usize,
    n: usize,
    k: usize,
    count: usize,
    tol: f64,
    /// The measurements, a column each (cleared where the problem stopped).
    y: CudaSlice<T>,
    /// Each problem's `|y|`.
    norm_y: Vec<f64>,
    /// Each running problem's monitor (`None` once it stopped).
    monitors: Vec<Option<Monitor>>,
    /// Each problem's result, once it stopped.
    results: Vec<Option<Recovery<T>>>,
}

impl<'a, T: Real> Lockstep<'a, T> {
    /// The problems of `ys` (`count` measurement vectors one after the other), checked by the
    /// caller. Problems with `y = 0` stop at once, converged at `x = 0`.
    pub fn new(
        op: &'a DeviceOperator<T>,
        ys: &[T],
        count: usize,
        settings: &Settings,
    ) -> Result<Lockstep<'a, T>> {
        let (m, n) = op.shape();
        let norm_y: Vec<f64> = ys
            .chunks(m)
            .map(|y| crate::recovery::vector::norm2(y).sqrt())
            .collect();
        let monitors = norm_y
            .iter()
            .map(|&norm| Some(Monitor::new(norm, settings.tol, settings.max_iterations)))
            .collect();
        let mut solve = Lockstep {
            op,
            m,
            n,
            k: settings.k,
            count,
            tol: settings.tol,
            y: op
                .device()
                .stream()
                .clone_htod(ys)
                .map_err(|e| driver_error("copying the measurements to the device", e))?,
            norm_y,
            monitors,
            results: (0..count).map(|_| None).collect(),
        };
        for c in 0..count {
            if solve.norm_y[c] == 0.0 {
                solve.record(c, 0.0, 0);
                let recovery = solve.stopped(c, StopReason::Converged, vec![T::zero(); n], vec![]);
                solve.results[c] = Some(recovery);
            }
        }
        Ok(solve)
    }

    fn dev(&self) -> &CudaDevice {
        self.op.device()
    }

    /// Whether problem `c` still runs.
    fn running(&self, c: usize) -> bool {
        self.results[c].is_none()
    }

    /// The results, in order (every problem has stopped).
    fn into_results(self) -> Vec<Recovery<T>> {
        self.results
            .into_iter()
            .map(|r| r.expect("every problem stopped"))
            .collect()
    }

    /// Records problem `c`'s residual and support fingerprint; `Some` when it must stop.
    fn record(&mut self, c: usize, residual: f64, print: u64) -> Option<StopReason> {
        let monitor = self.monitors[c].as_mut().expect("a running problem");
        monitor.record(residual, print)
    }

    /// The result of problem `c`, stopped for `stop` at `solution` and `support`.
    fn stopped(
        &mut self,
        c: usize,
        stop: StopReason,
        solution: Vec<T>,
        support: Vec<usize>,
    ) -> Recovery<T> {
        let residuals = self.monitors[c]
            .take()
            .expect("a running problem")
            .into_residuals();
        Recovery {
            solution,
            support,
            iterations: residuals.len() - 1,
            residuals,
            stop,
        }
    }

    /// Stops the problems of `stops` at their columns of `x` and `supports` (`k` indices a
    /// column; both gathered and copied to the host at once), clears their measurements, and
    /// returns the list of their columns (to clear them in the solver's other matrices);
    /// `None` when none stopped.
    fn finish(
        &mut self,
        stops: &[(usize, StopReason)],
        x: &CudaSlice<T>,
        supports: &CudaSlice<u64>,
    ) -> Result<Option<CudaSlice<u64>>> {
        if stops.is_empty() {
            return Ok(None);
        }
        let (n, k) = (self.n, self.k);
        let dev = self.dev();
        let cols = column_list(dev, stops)?;
        let some = self.columns().with_count(stops.len());
        let mut xs = some.scratch(n)?;
        some.gather(x, &cols, n, &mut xs)?;
        let mut ss = dev.alloc::<u64>(k * stops.len(), "the supports")?;
        some.gather_support(supports, &cols, &mut ss)?;
        let mut xs = download_vec(dev, &xs.as_view(), "the solutions")?;
        let ss = download_vec(dev, &ss.as_view(), "the supports")?;
        for (j, &(c, stop)) in stops.iter().enumerate().rev() {
            // Each solution the end of xs, taken off it; the first is xs itself, not copied
            // (a copy of a long solution into fresh memory takes tens of milliseconds).
            let solution = if j == 0 {
                std::mem::take(&mut xs)
            } else {
                xs.split_off(j * n)
            };
            let support = ss[j * k..(j + 1) * k].iter().map(|&i| i as usize).collect();
            let recovery = self.stopped(c, stop, solution, support);
            self.results[c] = Some(recovery);
        }
        self.columns().clear(&cols, &mut self.y, self.m)?;
        Ok(Some(cols))
    }

    /// Stops the problems of `stops` at `x = 0` with an empty support (before an iteration).
    fn finish_at_zero(&mut self, stops: &[(usize, StopReason)]) -> Result<()> {
        for &(c, stop) in stops {
            let recovery = self.stopped(c, stop, vec![T::zero(); self.n], Vec::new());
            self.results[c] = Some(recovery);
        }
        if !stops.is_empty() {
            let cols = column_list(self.dev(), stops)?;
            self.columns().clear(&cols, &mut self.y, self.m)?;
        }
        Ok(())
    }

    /// Every column of the batch.
    fn columns(&self) -> Columns<'a, T> {
        Columns::new(self.op, self.k, self.count)
    }

    /// The problems still running.
    fn running_problems(&self) -> Vec<usize> {
        (0..self.count).filter(|&c| self.running(c)).collect()
    }

    /// The first record of each problem (`|y|`, at `x = 0`), and the stops it causes.
    fn start(&mut self) -> Result<()> {
        let mut stops = Vec::new();
        for c in self.running_problems() {
            if let Some(stop) = self.record(c, self.norm_y[c], 0) {
                stops.push((c, stop));
            }
        }
        self.finish_at_zero(&stops)
    }

    /// Records each running problem's residual norm (from the squared norms `sums`) and
    /// support fingerprint; returns the problems that must stop.
    fn record_all(&mut self, sums: &[f64], prints: &[u64]) -> Vec<(usize, StopReason)> {
        let mut stops = Vec::new();
        for c in self.running_problems() {
            if let Some(stop) = self.record(c, sums[c].sqrt(), prints[c]) {
                stops.push((c, stop));
            }
        }
        stops
    }

    /// IHT for every problem: `x = H_k(x + mu A^T (y - A x))`, `mu` given or `1 / |A|^2`
    /// (estimated as for one problem; for each problem's own operator of a stack).
    pub fn iht(mut self, step: Option<f64>, first_y: &[T]) -> Result<Vec<Recovery<T>>> {
        let all = self.columns();
        let (m, n, count) = (self.m, self.n, self.count);
        let mu: Vec<f64> = match step {
            Some(mu) => vec![mu; count],
            None if self.op.stacked() => squared_norms(all)?.iter().map(|s| 1.0 / s).collect(),
            None => vec![1.0 / squared_norm(&Cuda::new(self.op, 0, first_y)?)?; count],
        };
        self.start()?;
        let diverged: Vec<_> = self
            .running_problems()
            .into_iter()
            .filter(|&c| !mu[c].is_finite())
            .collect();
        for &c in &diverged {
            self.record(c, f64::INFINITY, 0);
        }
        let stops: Vec<_> = diverged
            .iter()
            .map(|&c| (c, StopReason::Diverged))
            .collect();
        self.finish_at_zero(&stops)?;
        let dev = all.dev();
        let mut x = all.zeros(n)?;
        let mut r = self.y.clone();
        let (mut g, mut v, mut ax) = (all.zeros(n)?, all.zeros(n)?, all.zeros(m)?);
        // A stopped problem's step is never used (its columns stay zero).
        let mu: Vec<f64> = mu
            .iter()
            .map(|&s| if s.is_finite() { s } else { 0.0 })
            .collect();
        let steps = upload(dev, &mu)?;
        let full = upload(dev, &vec![self.k as f64; count])?;
        // Each column's squared residual norm, then its support's fingerprint.
        let mut scalars = dev.alloc_zeros::<f64>(2 * count, "a batch's scalars")?;
        while !self.running_problems().is_empty() {
            all.adjoint(&r, &mut g)?;
            all.step(&x, &g, &steps, &mut v)?;
            let support = all.largest(&v)?;
            all.restrict(&v, &support, &mut x)?;
            all.apply_supported(&x, (&support, &full), &mut ax)?;
            all.difference(&self.y, &ax, &mut r)?;
            all.sumsq(&r, m, &mut scalars.slice_mut(..count))?;
            all.fingerprints(&support, &mut scalars.slice_mut(count..))?;
            let values = download_vec(dev, &scalars.as_view(), "the residuals' norms")?;
            let prints = bits(&values[count..]);
            let stops = self.record_all(&values[..count], &prints);
            if let Some(marked) = self.finish(&stops, &x, &support)? {
                all.clear(&marked, &mut x, n)?;
                all.clear(&marked, &mut r, m)?;
            }
        }
        Ok(self.into_results())
    }

    /// NIHT for every problem, each column by the steps of the single solve: the normalised
    /// step on the support, the safeguard when the support moves (the step shortened until it
    /// is safe), the residual updated by linearity and recomputed every [`REFRESH`] updates or
    /// near convergence. The columns whose support moved are gathered for the product `A d`
    /// and for the safeguard's retries, so that a step costs two products for every column
    /// and a third for those whose support moved.
    pub fn niht(mut self) -> Result<Vec<Recovery<T>>> {
        let all = self.columns();
        let (m, n, count) = (self.m, self.n, self.count);
        let dev = all.dev().clone();
        let mut x = all.zeros(n)?;
        let mut r = self.y.clone();
        let (mut g, mut gs, mut v, mut next) =
            (all.zeros(n)?, all.zeros(n)?, all.zeros(n)?, all.zeros(n)?);
        let (mut ag, mut ad, mut ax) = (all.zeros(m)?, all.zeros(m)?, all.zeros(m)?);
        let mut mu = dev.alloc_zeros::<f64>(count, "the steps")?;
        // The steps and the supports' changes; the residuals' norms and the fingerprints.
        let mut scalars = dev.alloc_zeros::<f64>(2 * count, "a batch's scalars")?;
        // The residual updates' places where no column moved and where every column did, and
        // the refresh's marks where every column refreshes (kept, so that a single problem
        // copies nothing to the device in an iteration).
        let held = upload(&dev, &vec![u64::MAX; count])?;
        let every = upload(&dev, &(0..count as u64).collect::<Vec<_>>())?;
        let all_marked = upload(&dev, &vec![1u32; count])?;
        let full = upload(&dev, &vec![self.k as f64; count])?;
        all.adjoint(&r, &mut g)?;
        // The first step's support: the k largest of A^T y.
        let mut support = all.largest(&g)?;
        all.fingerprints(&support, &mut scalars.slice_mut(count..))?;
        let mut print = bits(&download_vec(
            &dev,
            &scalars.slice(count..),
            "the fingerprints",
        )?);
        let mut updates = vec![0usize; count];
        // The entries of the supports' last change (unknown at first).
        let mut changes = f64::INFINITY;
        self.start()?;
        while !self.running_problems().is_empty() {
            all.restrict(&g, &support, &mut gs)?;
            all.apply_supported(&gs, (&support, &full), &mut ag)?;
            all.step_sizes(&gs, &ag, &mut mu)?;
            all.step(&x, &g, &mu, &mut v)?;
            let mut taken = all.largest(&v)?;
            all.restrict(&v, &taken, &mut next)?;
            all.differ(&taken, &support, &mut scalars.slice_mut(count..))?;
            dev.stream()
                .memcpy_dtod(&mu, &mut scalars.slice_mut(..count))
                .map_err(|e| driver_error("copying the steps", e))?;
            let values = download_vec(&dev, &scalars.as_view(), "the steps")?;
            let mut steps = values[..count].to_vec();
            let mut stops = Vec::new();
            let mut candidates = Vec::new();
            for c in self.running_problems() {
                if !steps[c].is_finite() {
                    stops.push((c, StopReason::Diverged));
                    // The column is cleared below; a zero step keeps it finite meanwhile.
                    steps[c] = 0.0;
                } else if values[count + c] != 0.0 {
                    candidates.push(c);
                }
            }
            let mut steps_changed = !stops.is_empty();
            let mut moved = Vec::new();
            let mut first = true;
            while !candidates.is_empty() {
                // A d from the support's change when it touches few columns of A.
                let by_change = all.change_by_columns(changes);
                let four = safeguard_round(
                    all,
                    Iterate {
                        x: &x,
                        g: &g,
                        support: &support,
                        v: &v,
                        mu: &mu,
                        ag: &ag,
                    },
                    (&mut taken, &mut next, &mut ad),
                    &candidates,
                    (!first).then_some(&steps),
                    by_change,
                )?;
                let some = candidates.len();
                let (changed, dd, add, lengths) = (
                    &four[..some],
                    &four[some..2 * some],
                    &four[2 * some..3 * some],
                    &four[3 * some..],
                );
                changes = lengths.iter().sum::<f64>();
                if changes.is_nan() {
                    changes = f64::INFINITY;
                }
                let mut retry = Vec::new();
                for (j, &c) in candidates.iter().enumerate() {
                    if !first && changed[j] == 0.0 {
                        // With the shorter step the support held.
                        continue;
                    }
                    let omega = if add[j] > 0.0 {
                        (1.0 - SAFETY) * dd[j] / add[j]
                    } else {
                        f64::INFINITY
                    };
                    if steps[c] <= omega {
                        moved.push(c);
                    } else {
                        steps[c] /= SHRINK * (1.0 - SAFETY);
                        steps_changed = true;
                        retry.push(c);
                    }
                }
                candidates = retry;
                first = false;
            }
            if steps_changed {
                dev.stream()
                    .memcpy_htod(&steps, &mut mu)
                    .map_err(|e| driver_error("copying the steps to the device", e))?;
            }
            for &(c, _) in &stops {
                self.record(c, f64::INFINITY, 0);
            }
            if let Some(marked) = self.finish(&stops, &x, &support)? {
                for (a, len) in [
                    (&mut x, n),
                    (&mut r, m),
                    (&mut g, n),
                    (&mut next, n),
                    (&mut ag, m),
                ] {
                    all.clear(&marked, a, len)?;
                }
            }
            let place = if moved.is_empty() || moved.len() == count {
                None
            } else {
                let mut place = vec![u64::MAX; count];
                for &c in &moved {
                    place[c] = c as u64;
                }
                Some(upload(&dev, &place)?)
            };
            let place = match &place {
                Some(place) => place,
                None if moved.is_empty() => &held,
                None => &every,
            };
            all.residual_update((&ag, &ad), &mu, place, &mut r)?;
            std::mem::swap(&mut x, &mut next);
            support = taken;
            all.sumsq(&r, m, &mut scalars.slice_mut(..count))?;
            let values = if moved.is_empty() {
                download_vec(&dev, &scalars.slice(..count), "the residuals' norms")?
            } else {
                all.fingerprints(&support, &mut scalars.slice_mut(count..))?;
                download_vec(&dev, &scalars.as_view(), "the residuals' norms")?
            };
            let mut norms = values[..count].to_vec();
            if !moved.is_empty() {
                let prints = bits(&values[count..]);
                for &c in &moved {
                    print[c] = prints[c];
                }
            }
            // The residual recomputed from x where it was updated REFRESH times or seems to
            // have converged.
            let mut refresh = vec![0u32; count];
            for c in self.running_problems() {
                updates[c] += 1;
                let norm = norms[c].sqrt();
                if updates[c] >= REFRESH || norm <= 2.0 * self.tol * self.norm_y[c] {
                    refresh[c] = 1;
                    updates[c] = 0;
                }
            }
            if refresh.contains(&1) {
                let marked = if refresh.contains(&0) {
                    Some(upload(&dev, &refresh)?)
                } else {
                    None
                };
                all.apply_supported(&x, (&support, &full), &mut ax)?;
                all.refresh(
                    (&self.y, &ax),
                    marked.as_ref().unwrap_or(&all_marked),
                    &mut r,
                )?;
                all.sumsq(&r, m, &mut scalars.slice_mut(..count))?;
                norms = download_vec(&dev, &scalars.slice(..count), "the residuals' norms")?;
            }
            let stops = self.record_all(&norms, &print);
            if let Some(marked) = self.finish(&stops, &x, &support)? {
                all.clear(&marked, &mut x, n)?;
                all.clear(&marked, &mut r, m)?;
            }
            if self.running_problems().is_empty() {
                break;
            }
            all.adjoint(&r, &mut g)?;
        }
        Ok(self.into_results())
    }
}

/// The vectors of an NIHT iteration that the safeguard's rounds read: the iterate, the
/// gradient, the support, the step `v = x + mu g` and the steps `mu` of the first round, and
/// `A g_S`.
struct Iterate<'b, T> {
    x: &'b CudaSlice<T>,
    g: &'b CudaSlice<T>,
    support: &'b CudaSlice<u64>,
    v: &'b CudaSlice<T>,
    mu: &'b CudaSlice<f64>,
    ag: &'b CudaSlice<T>,
}

/// One round of NIHT's safeguard for the `candidates` (ascending columns whose support moved):
/// after a retry (`steps` given: the candidates' shortened steps), their step, threshold and
/// support's change again, written into their columns of `taken` and `next`; then `d = next -
/// x` and `A d` (into their columns of `ad`). Returns, for each candidate, whether its support
/// changed (after a retry only), `|d|^2`, `|A d|^2`, and the number of entries of its support's
/// change (NaN where not counted), one list after the other. When most columns are candidates,
/// every column is computed in place (and, for a dense operator and `by_change`, `A d` is `mu A
/// g_S` plus the columns of `A` the support's change touches); otherwise the candidates'
/// columns are gathered and `A d` is one product.
fn safeguard_round<T: Real>(
    all: Columns<'_, T>,
    it: Iterate<'_, T>,
    (taken, next, ad): (&mut CudaSlice<u64>, &mut CudaSlice<T>, &mut CudaSlice<T>),
    candidates: &[usize],
    steps: Option<&Vec<f64>>,
    by_change: bool,
) -> Result<Vec<f64>> {
    let (m, n) = (all.m, all.n);
    let dev = all.dev();
    let some = all.with_count(candidates.len());
    // Most columns: every column recomputed (the others' results come out as they were, the
    // same steps on the same values), which spares the gathers; always with a stack of
    // operators, whose products are of every member at once.
    let whole = all.op.stacked() || 2 * candidates.len() > all.count;
    let count = if whole { all.count } else { some.count };
    let mut four = dev.alloc::<f64>(4 * count, "a batch's scalars")?;
    if whole {
        let retried = match steps {
            Some(steps) => {
                let mu = upload(dev, steps)?;
                let mut v = all.scratch(n)?;
                all.step(it.x, it.g, &mu, &mut v)?;
                *taken = all.largest(&v)?;
                all.restrict(&v, taken, next)?;
                all.differ(taken, it.support, &mut four.slice_mut(..count))?;
                Some((v, mu))
            }
            None => None,
        };
        let (v, mu) = match &retried {
            Some((v, mu)) => (v, mu),
            None => (it.v, it.mu),
        };
        let mut d = all.scratch(n)?;
        all.difference(next, it.x, &mut d)?;
        all.sumsq(&d, n, &mut four.slice_mut(count..2 * count))?;
        // The changes are counted for dense operators only (the last list; NaN: not counted).
        let counted = match all.op.dense_matrix() {
            Some(_) => {
                let mut list = dev.alloc::<u64>(2 * all.k * count, "the supports' changes")?;
                all.changes(
                    (it.support, taken),
                    &mut list,
                    &mut four.slice_mut(3 * count..),
                )?;
                if by_change {
                    let lengths = four.slice(3 * count..);
                    all.change_product((&list, &lengths), v, (mu, it.ag), ad)?;
                } else {
                    all.apply(&d, ad)?;
                }
                4
            }
            None => {
                all.apply(&d, ad)?;
                3
            }
        };
        all.sumsq(ad, m, &mut four.slice_mut(2 * count..3 * count))?;
        let mut every = download_vec(dev, &four.slice(..counted * count), "the safeguard's norms")?;
        every.resize(4 * count, f64::NAN);
        // The candidates' values, in the order of the gathered form.
        return Ok((0..4)
            .flat_map(|part| candidates.iter().map(move |&c| (part, c)))
            .map(|(part, c)| every[part * count + c])
            .collect());
    }
    let cols = upload(
        dev,
        &candidates.iter().map(|&c| c as u64).collect::<Vec<_>>(),
    )?;
    if let Some(steps) = steps {
        let (mut xs, mut gs) = (some.scratch(n)?, some.scratch(n)?);
        some.gather(it.x, &cols, n, &mut xs)?;
        some.gather(it.g, &cols, n, &mut gs)?;
        let theirs: Vec<f64> = candidates.iter().map(|&c| steps[c]).collect();
        let mut vs = some.scratch(n)?;
        some.step(&xs, &gs, &upload(dev, &theirs)?, &mut vs)?;
        let taken_some = some.largest(&vs)?;
        let mut next_some = some.scratch(n)?;
        some.restrict(&vs, &taken_some, &mut next_some)?;
        let mut support_some = dev.alloc::<u64>(some.k * count, "supports")?;
        some.gather_support(it.support, &cols, &mut support_some)?;
        some.differ(&taken_some, &support_some, &mut four.slice_mut(..count))?;
        some.scatter_support(&taken_some, &cols, taken)?;
        some.scatter(&next_some, &cols, n, next)?;
    }
    let mut d = some.scratch(n)?;
    some.gather_difference((next, it.x), &cols, &mut d)?;
    let mut ad_some = some.scratch(m)?;
    some.apply(&d, &mut ad_some)?;
    some.sumsq(&d, n, &mut four.slice_mut(count..2 * count))?;
    some.sumsq(&ad_some, m, &mut four.slice_mut(2 * count..3 * count))?;
    some.scatter(&ad_some, &cols, m, ad)?;
    let mut values = download_vec(dev, &four.slice(..3 * count), "the safeguard's norms")?;
    values.extend(std::iter::repeat_n(f64::NAN, count));
    Ok(values)
}

/// `|A_c|^2` (the square of the largest singular value, with a margin) of each member of a stack
/// of operators, estimated by the power iterations of
/// [`squared_norm`](crate::recovery::iterative::squared_norm) on every column at once.
fn squared_norms<T: Real>(all: Columns<'_, T>) -> Result<Vec<f64>> {
    let (m, n, count) = (all.m, all.n, all.count);
    let dev = all.dev();
    let start = power_start::<T>(n);
    let mut x = upload(dev, &start.repeat(count))?;
    let zeros = all.zeros(n)?;
    let (mut ax, mut back) = (all.scratch(m)?, all.scratch(n)?);
    let mut sums = dev.alloc::<f64>(count, "a batch's scalars")?;
    let mut lambda = vec![0.0; count];
    // The columns still iterating (a column stops at a zero or non-finite norm).
    let mut running = vec![true; count];
    for _ in 0..POWER_STEPS {
        all.apply(&x, &mut ax)?;
        all.adjoint(&ax, &mut back)?;
        all.sumsq(&back, n, &mut sums.as_view_mut())?;
        let norms = download_vec(dev, &sums.as_view(), "the operators' norms")?;
        let mut scale = vec![0.0; count];
        for c in 0..count {
            if running[c] {
                lambda[c] = norms[c].sqrt();
                if lambda[c] == 0.0 || !lambda[c].is_finite() {
                    running[c] = false;
                } else {
                    scale[c] = 1.0 / lambda[c];
                }
            }
        }
        if !running.contains(&true) {
            break;
        }
        // x = back / lambda where running, zero elsewhere.
        all.step(&zeros, &back, &upload(dev, &scale)?, &mut x)?;
    }
    Ok(lambda.into_iter().map(power_estimate).collect())
}

/// The columns of the problems of `stops`, on the device.
fn column_list(dev: &CudaDevice, stops: &[(usize, StopReason)]) -> Result<CudaSlice<u64>> {
    upload(
        dev,
        &stops.iter().map(|&(c, _)| c as u64).collect::<Vec<_>>(),
    )
}

/// Fingerprints from the `f64`s that hold their bits.
fn bits(values: &[f64]) -> Vec<u64> {
    values.iter().map(|v| v.to_bits()).collect()
}
