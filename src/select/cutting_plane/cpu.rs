//! The cutting-plane method on the CPU: the fused reduction (rayon chunks, independent lanes)
//! and the exact finish among the copied candidates' keys.
//!
//! Workspace: the final candidates' keys — at most `max(4096, n / 64)` on normal exits, at most
//! `n` when many values share the answer's `f64` (64-bit integers above 2^53) with three or
//! more distinct keys, or when the step bound ends the search.

use super::error::CuttingPlaneError;
use super::hybrid::{self, Plan, Trace};
use super::problem::{Census, Data, Exact, Reduction};
use super::transform::{Frame, Transform};
use crate::element::Element;
use crate::error::Result;
use crate::select::host::{collect_where, finite, finite_census, map_chunks};

/// Hand over to exact selection once at most this many (or `n / 64`) values remain.
const FINISH: usize = 4096;

/// Values in host memory.
///
/// ```
/// use kselect::select::cutting_plane::{Data, HostData};
/// let data = [3u32, 1, 2];
/// assert_eq!(HostData::new(&data).len(), 3);
/// ```
#[derive(Clone, Copy, Debug)]
pub struct HostData<'a, T> {
    /// The values.
    data: &'a [T],
    /// Whether passes may use several threads.
    parallel: bool,
}

impl<'a, T: Element> HostData<'a, T> {
    /// The values of `data`, read by several threads when long.
    pub fn new(data: &'a [T]) -> Self {
        HostData {
            data,
            parallel: true,
        }
    }

    /// Whether passes may use several threads.
    ///
    /// ```
    /// use kselect::select::cutting_plane::HostData;
    /// let _one_thread = HostData::new(&[1.0f32]).parallel(false);
    /// ```
    pub fn parallel(mut self, parallel: bool) -> Self {
        self.parallel = parallel;
        self
    }
}

/// The element of rank `k` (`k < data.len()`).
pub(crate) fn select<T: Element>(data: &[T], k: usize, parallel: bool) -> T {
    match select_traced(HostData::new(data).parallel(parallel), k, None) {
        Ok((x, _)) => x,
        // Host passes cannot fail; should one, sorting still gives the exact answer.
        Err(_) => crate::select::sort_choose::cpu::select(data, k, parallel),
    }
}

/// The element of rank `k` (`< data.len()`) and what the search did; `transform` forces the
/// transform of the sums (`None`: [`Transform::for_range`]'s choice).
///
/// ```
/// use kselect::select::cutting_plane::{select_host, HostData, Transform};
/// let mut data: Vec<f64> = (0..100_000).map(|i| (i as f64 * 0.618).fract()).collect();
/// data[7] = 1e300;
/// let (x, trace) = select_host(HostData::new(&data), 50_000, None).unwrap();
/// assert_eq!(x, kselect::select(&data, 50_000).unwrap());
/// assert_eq!(trace.transform, Some(Transform::SignLog));
/// ```
pub fn select_host<T: Element>(
    data: HostData<'_, T>,
    k: usize,
    transform: Option<Transform>,
) -> Result<(T, Trace)> {
    select_traced(data, k, transform)
}

/// [`select_host`].
fn select_traced<T: Element>(
    data: HostData<'_, T>,
    k: usize,
    transform: Option<Transform>,
) -> Result<(T, Trace)> {
    let plan = Plan {
        finish_at: FINISH,
        finish_fraction: 64,
        transform,
    };
    hybrid::select(data, k, plan)
}

impl<T: Element> Data for HostData<'_, T> {
    type Elem = T;

    fn len(&self) -> usize {
        self.data.len()
    }

    fn census(&self) -> Result<Census<T::Key>> {
        Ok(finite_census(self.data, self.parallel))
    }

    fn reduce(&self, y: f64, frame: &Frame) -> Result<Reduction> {
        let frame = *frame;
        let parts = map_chunks(self.data, self.parallel, move |chunk| {
            match frame.transform {
                // One loop per transform, so the identity's loop stays free of calls.
                Transform::Identity => reduce_chunk(chunk, y, |v| (v - frame.center) * frame.scale),
                Transform::SignLog => reduce_chunk(chunk, y, |v| frame.value(v)),
            }
        });
        Ok(parts
            .into_iter()
            .fold(Reduction::default(), |a, b| Reduction {
                lt: a.lt + b.lt,
                le: a.le + b.le,
                below: a.below + b.below,
                above: a.above + b.above,
            }))
    }
}

/// The reduction of one chunk at `y`, `value` mapping a finite `f64` into the frame.
#[inline(always)]
fn reduce_chunk<T: Element>(chunk: &[T], y: f64, value: impl Fn(f64) -> f64) -> Reduction {
    // Independent lanes: no long chain of dependent float additions.
    /// Independent accumulators.
    const LANES: usize = 4;
    let mut lt = [0u64; LANES];
    let mut le = [0u64; LANES];
    let mut below = [0f64; LANES];
    let mut above = [0f64; LANES];
    let mut step = |lane: usize, x: T| {
        let v = x.to_f64();
        let fin = v.is_finite();
        let f = if fin { value(v) } else { 0.0 };
        let lower = fin & (v < y);
        lt[lane] += lower as u64;
        le[lane] += (fin & (v <= y)) as u64;
        below[lane] += if lower { f } else { 0.0 };
        above[lane] += if fin & (v > y) { f } else { 0.0 };
    };
    let mut groups = chunk.chunks_exact(LANES);
    for group in &mut groups {
        for (lane, &x) in group.iter().enumerate() {
            step(lane, x);
        }
    }
    for &x in groups.remainder() {
        step(0, x);
    }
    Reduction {
        lt: lt.iter().sum(),
        le: le.iter().sum(),
        below: below.iter().sum(),
        above: above.iter().sum(),
    }
}

impl<T: Element> Exact for HostData<'_, T> {
    fn between(&self, lo: f64, hi: f64, _below: usize, r: usize, _count: usize) -> Result<T> {
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
        let rank = r;
        let r = r.min(keys.len().saturating_sub(1));
        match keys.get_mut(..) {
            Some(k) if !k.is_empty() => Ok(T::from_key(*k.select_nth_unstable(r).1)),
            _ => Err(CuttingPlaneError::RankOutsideBracket { rank, count: 0 }.into()),
        }
    }

    fn at(&self, y: f64, below: usize, r: usize, count: usize) -> Result<T> {
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
        let (Some((min, n_min)), Some((max, n_max))) = (min, max) else {
            return Err(CuttingPlaneError::NoValueAtMinimiser { y }.into());
        };
        if r < n_min {
            return Ok(T::from_key(min));
        }
        if r >= count.saturating_sub(n_max) {
            return Ok(T::from_key(max));
        }
        // Three or more distinct keys share this f64: select among them.
        self.between(
            super::problem::next_down(y),
            super::problem::next_up(y),
            below,
            r,
            count,
        )
    }
}

/// Unit tests against the sort reference.
#[cfg(test)]
mod tests {
    use super::*;
    use crate::select::host::testing::matches_sort_on_adversarial_inputs;

    matches_sort_on_adversarial_inputs!(super::select);

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
}
