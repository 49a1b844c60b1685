//! Kelley's cutting-plane method (Beliakov 2011) on the CPU.
//!
//! With `τ = (k + ½) / n`, the element of rank `k` is the unique minimiser of the convex,
//! piecewise-linear check (pinball) loss `f(y) = Σ ρ_τ(x_i − y)`, i.e.
//! `f(y) = τ · Σ_{x>y} (x − y) + (1 − τ) · Σ_{x<y} (y − x)`. Its one-sided slopes count
//! values: `f'(y−) = #(x < y) − (k + ½)` and `f'(y+) = #(x ≤ y) − (k + ½)`. Kelley's method keeps
//! an interval `[a, b]` with `f'(a+) < 0 < f'(b−)`, so the minimiser lies strictly inside, and
//! evaluates `f` and its counts at the intersection of the tangent lines at `a` and `b` (one
//! parallel reduction over the data per evaluation). The sign of the slopes at the new point
//! replaces one end; when they bracket zero the point *is* the answer. Once few values lie
//! strictly between `a` and `b`, those are copied and selected exactly on their keys (the
//! paper's hybrid: a few cutting-plane iterations, then selection among the candidates).
//!
//! Values are compared as `f64` (`x.to_f64()`, monotone), so every count describes a prefix of
//! the key order and the result is exact; candidates that share one `f64` (`-0.0` and `+0.0`,
//! 64-bit integers above 2^53) are told apart by key at the end. `±inf` and NaN are counted
//! apart (they are the extreme keys) and left out of the objective; sums are scaled by a power
//! of two so that they cannot overflow. If a tangent step leaves the interval or shrinks it too
//! little, the next point is the midpoint of `[a, b]` in the order-preserving bit pattern of
//! `f64`, which bounds the number of iterations.
//!
//! Workspace: the final candidates — at most `max(4096, n / 64)` keys on normal exits, at
//! most `n` keys when a single `f64` value holds more (many 64-bit integers rounding alike).

use crate::element::Element;
use crate::select::cpu::util::{collect_where, finite, finite_stats, map_chunks};

/// Copy the candidates once at most this many (or `n / 64`) remain.
const FINISH: usize = 4096;

/// After this many evaluations the candidates are copied whatever their number.
const MAX_EVALUATIONS: u32 = 200;

/// The element of rank `k` (`k < data.len()`).
pub(crate) fn select<T: Element>(data: &[T], k: usize, parallel: bool) -> T {
    let stats = finite_stats(data, parallel);
    let n = data.len();
    let k = match stats.finite_rank::<T>(n, k) {
        Ok(k) => k,
        Err(key) => return T::from_key(key),
    };
    if stats.min == stats.max {
        return T::from_key(stats.min);
    }
    let finite_n = stats.finite(n);
    let lo = T::from_key(stats.min).to_f64();
    let hi = T::from_key(stats.max).to_f64();
    let mut search = Search {
        data,
        parallel,
        k,
        target: k as f64 + 0.5,
        tau: (k as f64 + 0.5) / finite_n as f64,
        n: finite_n,
        inv_scale: scale_for(lo.abs().max(hi.abs())),
        lo,
        neg_inf: stats.neg_inf,
        total: 0.0,
    };
    T::from_key(search.run(lo, hi))
}

/// `2^-e` for the smallest `e` with `2^e >= m` (so scaled values have magnitude at most 1).
fn scale_for(m: f64) -> f64 {
    if m == 0.0 {
        return 1.0;
    }
    let e = m.log2().ceil().clamp(-1000.0, 1000.0) as i32;
    2f64.powi(-e)
}

/// A point where the objective was evaluated.
#[derive(Clone, Copy, Debug)]
struct Point {
    /// The point (unscaled).
    y: f64,
    /// The (scaled) objective.
    f: f64,
    /// The slope of the side facing the minimiser.
    slope: f64,
    /// Values `< y`.
    lt: usize,
    /// Values `<= y`.
    le: usize,
}

/// One evaluation's reduction over the finite values.
#[derive(Clone, Copy, Debug, Default)]
struct Reduction {
    /// Values `< y`.
    lt: usize,
    /// Values `<= y`.
    le: usize,
    /// Scaled sum of the values `< y`.
    sum_lt: f64,
}

/// The state of one cutting-plane search.
struct Search<'a, T: Element> {
    /// The input.
    data: &'a [T],
    /// Whether reductions may use several threads.
    parallel: bool,
    /// The rank among the finite values.
    k: usize,
    /// `k + ½`.
    target: f64,
    /// `(k + ½) / n`.
    tau: f64,
    /// The number of finite values.
    n: usize,
    /// The factor that scales values into `[-1, 1]`.
    inv_scale: f64,
    /// The smallest finite value.
    lo: f64,
    /// The number of `-inf` values.
    neg_inf: usize,
    /// The scaled sum of the finite values (known after the first reduction).
    total: f64,
}

impl<T: Element> Search<'_, T> {
    /// The counts and scaled sum below `y` over the finite values.
    fn reduce(&self, y: f64) -> Reduction {
        let (s, lo) = (self.inv_scale, self.lo);
        let parts = map_chunks(self.data, self.parallel, move |chunk| {
            // Independent lanes: no long chain of dependent float additions. `-inf` is counted
            // (and summed as `lo`) like a finite value and taken out afterwards; `+inf` and NaN
            // compare false.
            /// Independent accumulators.
            const LANES: usize = 4;
            let mut lt = [0u64; LANES];
            let mut le = [0u64; LANES];
            let mut sum_lt = [0f64; LANES];
            let mut groups = chunk.chunks_exact(LANES);
            for group in &mut groups {
                for lane in 0..LANES {
                    let v = group[lane].to_f64();
                    let below = v < y;
                    lt[lane] += below as u64;
                    le[lane] += (v <= y) as u64;
                    // Branch-free `if below { v } else { 0 }` (the branch would be a coin toss).
                    let mask = (below as u64).wrapping_neg();
                    sum_lt[lane] += f64::from_bits((v.max(lo) * s).to_bits() & mask);
                }
            }
            let mut r = Reduction {
                lt: lt.iter().sum::<u64>() as usize,
                le: le.iter().sum::<u64>() as usize,
                sum_lt: sum_lt.iter().sum(),
            };
            for &x in groups.remainder() {
                let v = x.to_f64();
                r.lt += (v < y) as usize;
                r.le += (v <= y) as usize;
                r.sum_lt += if v < y { v.max(lo) * s } else { 0.0 };
            }
            r
        });
        let r = parts
            .into_iter()
            .fold(Reduction::default(), |a, b| Reduction {
                lt: a.lt + b.lt,
                le: a.le + b.le,
                sum_lt: a.sum_lt + b.sum_lt,
            });
        Reduction {
            lt: r.lt - self.neg_inf,
            le: r.le - self.neg_inf,
            sum_lt: r.sum_lt - self.neg_inf as f64 * lo * s,
        }
    }

    /// The objective at `y` from a reduction there (scaled units).
    fn objective(&self, y: f64, r: &Reduction) -> f64 {
        let ys = y * self.inv_scale;
        let gt = (self.n - r.le) as f64;
        let sum_gt = self.total - r.sum_lt - (r.le - r.lt) as f64 * ys;
        self.tau * (sum_gt - gt * ys) + (1.0 - self.tau) * (r.lt as f64 * ys - r.sum_lt)
    }

    /// Evaluates at `y`: the answer's key when `y` is the minimiser, else the point.
    fn evaluate(&self, y: f64) -> Result<Point, T::Key> {
        self.point(y, self.reduce(y))
    }

    /// The point `y` from its reduction `r`, or the answer's key when `y` is the minimiser.
    fn point(&self, y: f64, r: Reduction) -> Result<Point, T::Key> {
        if r.lt <= self.k && self.k < r.le {
            return Err(self.point_answer(y, self.k - r.lt, r.le - r.lt));
        }
        let f = self.objective(y, &r);
        let slope = if r.le <= self.k {
            r.le as f64 - self.target
        } else {
            r.lt as f64 - self.target
        };
        Ok(Point {
            y,
            f,
            slope,
            lt: r.lt,
            le: r.le,
        })
    }

    /// Runs the search on `[lo, hi]`, the range of the finite values (`lo < hi` as keys).
    fn run(&mut self, lo: f64, hi: f64) -> T::Key {
        if lo == hi {
            // Distinct keys, one `f64` (`-0.0` and `+0.0`, or large 64-bit integers).
            return self.point_answer(lo, self.k, self.n);
        }
        // At the largest value the sum below plus the values equal to it is the total.
        let top = self.reduce(hi);
        self.total = top.sum_lt + (top.le - top.lt) as f64 * hi * self.inv_scale;
        let mut b = match self.point(hi, top) {
            Ok(p) => p,
            Err(key) => return key,
        };
        let mut a = match self.evaluate(lo) {
            Ok(p) => p,
            Err(key) => return key,
        };
        let limit = FINISH.max(self.n / 64);
        let mut previous = usize::MAX;
        let mut evaluations = 2;
        loop {
            // The minimiser lies strictly between a and b: `a.le <= k < b.lt`.
            let inside = b.lt - a.le;
            if inside <= limit || evaluations >= MAX_EVALUATIONS {
                return self.finish(a, b);
            }
            let mut y = self.tangent_point(&a, &b);
            let in_range = a.y < y && y < b.y;
            if !in_range || inside.saturating_mul(4) > previous.saturating_mul(3) {
                y = bit_midpoint(a.y, b.y);
            }
            if !(a.y < y && y < b.y) {
                // Neighbouring `f64`s: nothing lies strictly between.
                return self.finish(a, b);
            }
            previous = inside;
            evaluations += 1;
            match self.evaluate(y) {
                Err(key) => return key,
                Ok(p) if p.le <= self.k => a = p,
                Ok(p) => b = p,
            }
        }
    }

    /// Where the tangent lines at `a` (slope < 0) and `b` (slope > 0) meet (unscaled).
    fn tangent_point(&self, a: &Point, b: &Point) -> f64 {
        let (ya, yb) = (a.y * self.inv_scale, b.y * self.inv_scale);
        let t = (b.f - a.f + a.slope * ya - b.slope * yb) / (a.slope - b.slope);
        t / self.inv_scale
    }

    /// Selects among the values strictly between `a.y` and `b.y`, exactly.
    fn finish(&self, a: Point, b: Point) -> T::Key {
        let (lo, hi) = (a.y, b.y);
        let parts = map_chunks(self.data, self.parallel, |chunk| {
            collect_where(
                chunk,
                |x: T| {
                    let v = x.to_f64();
                    (lo < v) & (v < hi)
                },
                |x| x.to_key(),
            )
        });
        let mut keys = parts.concat();
        *keys.select_nth_unstable(self.k - a.le).1
    }

    /// The key of rank `r` among the `count` finite values whose `f64` is `y`.
    fn point_answer(&self, y: f64, r: usize, count: usize) -> T::Key {
        let group = |x: &T| finite(*x) && x.to_f64() == y;
        // Usually one key (or the two zeros): the extreme keys and their counts decide.
        let parts = map_chunks(self.data, self.parallel, |chunk| {
            let mut min = None::<(T::Key, usize)>;
            let mut max = None::<(T::Key, usize)>;
            for x in chunk.iter().filter(|x| group(x)) {
                let key = x.to_key();
                min = Some(match min {
                    Some((m, c)) if m < key => (m, c),
                    Some((m, c)) if m == key => (m, c + 1),
                    _ => (key, 1),
                });
                max = Some(match max {
                    Some((m, c)) if m > key => (m, c),
                    Some((m, c)) if m == key => (m, c + 1),
                    _ => (key, 1),
                });
            }
            (min, max)
        });
        let combine =
            |a: Option<(T::Key, usize)>, b: Option<(T::Key, usize)>, smaller: bool| match (a, b) {
                (None, x) | (x, None) => x,
                (Some((ka, ca)), Some((kb, cb))) if ka == kb => Some((ka, ca + cb)),
                (Some((ka, ca)), Some((kb, cb))) => {
                    if (ka < kb) == smaller {
                        Some((ka, ca))
                    } else {
                        Some((kb, cb))
                    }
                }
            };
        let (mut min, mut max) = (None, None);
        for (lo, hi) in parts {
            min = combine(min, lo, true);
            max = combine(max, hi, false);
        }
        let (min, n_min) = min.expect("the group is not empty");
        let (max, n_max) = max.expect("the group is not empty");
        if r < n_min {
            return min;
        }
        if r >= count - n_max {
            return max;
        }
        // Three or more distinct keys share this f64: select among them.
        let parts = map_chunks(self.data, self.parallel, |chunk| {
            collect_where(chunk, |x: T| group(&x), |x| x.to_key())
        });
        let mut keys = parts.concat();
        *keys.select_nth_unstable(r).1
    }
}

/// The midpoint of `a < b` in the order-preserving bit pattern of `f64` (bisects the number of
/// `f64` values between them, so it also splits ranges spanning many magnitudes).
fn bit_midpoint(a: f64, b: f64) -> f64 {
    let (ka, kb) = (a.to_key(), b.to_key());
    f64::from_key(ka + (kb - ka) / 2)
}

/// Unit tests against the sort reference.
#[cfg(test)]
mod tests {
    use super::*;
    use crate::select::cpu::util::testing::{check_all, Algo};

    /// The cutting-plane method as a test subject.
    struct CuttingPlane;
    impl Algo for CuttingPlane {
        /// Runs the algorithm.
        fn select<T: Element>(&self, data: &[T], k: usize, parallel: bool) -> T {
            select(data, k, parallel)
        }
    }

    /// Every type, adversarial input and boundary length agrees with sort&choose.
    #[test]
    fn matches_sort_on_adversarial_inputs() {
        check_all(CuttingPlane, true);
    }

    /// Keys that share one `f64` are told apart.
    #[test]
    fn zeros_and_wide_integers_sharing_an_f64() {
        let zeros: Vec<f32> = (0..10_000)
            .map(|i| if i % 3 == 0 { -0.0 } else { 0.0 })
            .collect();
        for k in [0, 3333, 3334, 9999] {
            let want = if k < 3334 { -0.0f32 } else { 0.0 };
            assert_eq!(select(&zeros, k, false).to_bits(), want.to_bits());
        }
        let wide: Vec<u64> = (0..10_000).map(|i| (1u64 << 60) + (i % 7)).collect();
        let mut sorted = wide.clone();
        sorted.sort_unstable();
        for k in [0, 1500, 5000, 9999] {
            assert_eq!(select(&wide, k, false), sorted[k]);
        }
    }

    /// The bisection point lies strictly inside its interval.
    #[test]
    fn bit_midpoint_is_inside() {
        assert!(bit_midpoint(-1.0, 1e300) > -1.0);
        let m = bit_midpoint(1.0, 1e300);
        assert!(1.0 < m && m < 1e300);
    }
}
