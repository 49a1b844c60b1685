//! Floyd–Rivest selection in one pass: pivots from a sample bracket the ranks.
//!
//! A deterministic sample of `s = max(n^(2/3), n / 64)` keys (runs of one cache line at random
//! offsets in equal strides, cheap to gather) gives two pivot keys `lo <= hi` that bracket the
//! requested ranks with high probability (three standard deviations of the sample rank on
//! either side); the pivots are selected in the sample by this same algorithm, recursively.
//! One pass over the data (parallel chunks) then counts the values `< lo` and `<= hi` and
//! copies those in `[lo, hi]` — branch-free in blocks of 32, a block is compacted only when it
//! holds a hit — so the counts tell which of five parts (`< lo`, `== lo`, between, `== hi`,
//! `> hi`) holds each rank, and the ranks between the pivots are selected in the small copy.
//! If many values equal a pivot (the copy outgrows four times its expected size), a chunk is
//! rescanned with four counts and copies only the values strictly between, so duplicates cost
//! no workspace. When the bracket misses a rank, the same step runs again on the known side
//! with a wider bracket; after two misses the bracket is the whole known key interval, so the
//! result is always exact and the number of passes small. Nearby ranks share one pass.
//!
//! The pass compares values with the element type's own `<`, which vectorizes; that agrees
//! with key order because the pivots are numbers (NaN values compare false and count above
//! both pivots, where their key is). Only when a float pivot is a zero (`-0.0 == +0.0` as
//! values) does the pass compare keys instead.
//!
//! Workspace: the sample (`max(n^(2/3), n / 64)` keys) and the bracket copy, expected
//! `O(n / sqrt(s))` values (about `0.3 %` of `n` for large `n`) and at most `n` in the worst
//! case (data the sample misrepresents). Inputs shorter than [`SMALL`] are selected on a copy of
//! their keys (`n` keys).

use crate::element::{DType, Element, RadixKey};
use crate::select::cpu::util::{
    key_pred, key_succ, map_chunks, max_number_key, min_number_key, sample_runs,
};
use crate::select::quick_multiselect::multiselect_keys;

/// Inputs shorter than this are selected on a copy of their keys.
pub(crate) const SMALL: usize = 1 << 12;

/// Ranks further apart than `n / CLUSTER_GAP` get brackets (passes) of their own.
const CLUSTER_GAP: usize = 256;

/// With more groups of nearby ranks than this, one bracket spans all ranks (one pass and a
/// larger copy instead of many passes).
const MAX_CLUSTERS: usize = 16;

/// The bracket's half-width in standard deviations of the sample rank, on the first attempt.
const SIGMAS: f64 = 3.0;

/// Seed of the sampling positions.
const SEED: u64 = 0x5EED_F10D;

/// The element of rank `k` (`k < data.len()`).
pub(crate) fn select<T: Element>(data: &[T], k: usize, parallel: bool) -> T {
    multiselect(data, &[k], parallel)[0]
}

/// The elements of `ranks` (each `< data.len()`, any order, repeats allowed), in the order given.
pub(crate) fn multiselect<T: Element>(data: &[T], ranks: &[usize], parallel: bool) -> Vec<T> {
    multiselect_counting_nans(data, ranks, parallel).0
}

/// [`multiselect`], and the number of NaNs of `data`, counted by the selection's own pass over
/// the data (so a caller needs no separate scan for its NaN policy).
pub(crate) fn multiselect_counting_nans<T: Element>(
    data: &[T],
    ranks: &[usize],
    parallel: bool,
) -> (Vec<T>, usize) {
    let mut unique = ranks.to_vec();
    unique.sort_unstable();
    unique.dedup();
    let (found, nans) = if T::Key::BITS == 32 {
        select_sorted::<T, u32>(data, &unique, parallel)
    } else {
        select_sorted::<T, u64>(data, &unique, parallel)
    };
    let values = ranks
        .iter()
        .map(|k| T::from_key(found[unique.binary_search(k).expect("requested rank")]))
        .collect();
    (values, nans)
}

/// The keys of the sorted, unique `ranks`, and the number of NaNs; the sample is held as `W`
/// (the unsigned integer of the key's width), so that its pivots are selected by this same
/// algorithm.
fn select_sorted<T: Element, W: Element>(
    data: &[T],
    ranks: &[usize],
    parallel: bool,
) -> (Vec<T::Key>, usize) {
    let n = data.len();
    if n < SMALL {
        let nans = data.iter().filter(|x| x.is_nan()).count();
        let mut keys: Vec<T::Key> = data.iter().map(|x| x.to_key()).collect();
        return (multiselect_keys(&mut keys, ranks, false), nans);
    }
    let mut clusters = Vec::new();
    let mut start = 0;
    while start < ranks.len() {
        let mut end = start + 1;
        while end < ranks.len() && ranks[end] - ranks[end - 1] <= n / CLUSTER_GAP {
            end += 1;
        }
        clusters.push(&ranks[start..end]);
        start = end;
    }
    if clusters.len() > MAX_CLUSTERS {
        clusters = vec![ranks];
    }
    let mut search = Search::<T, W>::new(data, parallel);
    let keys: Vec<T::Key> = clusters.into_iter().flat_map(|c| search.solve(c)).collect();
    let nans = match search.nans {
        Some(nans) => nans,
        None => data.iter().filter(|x| x.is_nan()).count(),
    };
    (keys, nans)
}

/// The counts of one pass around the pivots `lo <= hi`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Counts {
    /// Values `< lo`.
    lt_lo: usize,
    /// Values `<= lo`.
    le_lo: usize,
    /// Values `< hi`.
    lt_hi: usize,
    /// Values `<= hi`.
    le_hi: usize,
    /// NaN values (counted above both pivots).
    nans: usize,
}

/// Ranks that a pass left outside its bracket, with what is known about their keys.
struct Task {
    /// Every answer key is `>= low`.
    low: u64,
    /// Every answer key is `<= high`.
    high: u64,
    /// The number of keys `< low`.
    below: usize,
    /// The number of keys `<= high`.
    upto: usize,
    /// The ranks (sorted, unique, all in `below..upto`).
    ranks: Vec<usize>,
    /// How many brackets have missed these ranks already.
    attempt: u32,
}

/// One selection over `data`: the input and its sample (keys as `W`).
struct Search<'a, T: Element, W: Element> {
    /// The input.
    data: &'a [T],
    /// Whether passes may use several threads.
    parallel: bool,
    /// The sample's keys (drawn on first use).
    sample: Option<Vec<W>>,
    /// The NaNs of the input, once a pass has counted them.
    nans: Option<usize>,
}

impl<'a, T: Element, W: Element> Search<'a, T, W> {
    /// A search over `data` (`data.len() >= SMALL`).
    fn new(data: &'a [T], parallel: bool) -> Self {
        Search {
            data,
            parallel,
            sample: None,
            nans: None,
        }
    }

    /// The sample size for `n` values: `max(n^(2/3), n / 64)`.
    fn sample_size(n: usize) -> usize {
        ((n as f64).powf(2.0 / 3.0) as usize)
            .max(n / 64)
            .clamp(64, n)
    }

    /// The keys of `ranks` (sorted, unique, close together), in order.
    fn solve(&mut self, ranks: &[usize]) -> Vec<T::Key> {
        let n = self.data.len();
        let mut answers: Vec<(usize, T::Key)> = Vec::with_capacity(ranks.len());
        let mut tasks = vec![Task {
            low: T::Key::MIN.to_u64(),
            high: T::Key::MAX.to_u64(),
            below: 0,
            upto: n,
            ranks: ranks.to_vec(),
            attempt: 0,
        }];
        while let Some(task) = tasks.pop() {
            self.step(task, &mut answers, &mut tasks);
        }
        answers.sort_unstable_by_key(|&(k, _)| k);
        answers.into_iter().map(|(_, key)| key).collect()
    }

    /// One bracket and one pass for `task`: answers what it can, queues the misses.
    fn step(&mut self, task: Task, answers: &mut Vec<(usize, T::Key)>, tasks: &mut Vec<Task>) {
        let max_num = max_number_key::<T>().to_u64();
        if task.low > max_num || task.low == task.high {
            // Only NaN keys (all equal to `Key::MAX`) lie above the largest number key.
            let key = if task.low > max_num {
                T::Key::MAX
            } else {
                T::Key::from_u64(task.low)
            };
            answers.extend(task.ranks.iter().map(|&k| (k, key)));
            return;
        }
        let (lo, hi, expected) = self.bracket(&task);
        let (lo, hi) = sanitize::<T>(lo, hi);
        let (counts, mut buffer) = pass(self.data, lo, hi, expected, self.parallel);
        self.nans = Some(counts.nans);
        let mut below = Vec::new();
        let mut above = Vec::new();
        let mut inside = Vec::new();
        for &k in &task.ranks {
            if k < counts.lt_lo {
                below.push(k);
            } else if k < counts.le_lo {
                answers.push((k, lo));
            } else if k < counts.lt_hi {
                inside.push(k - counts.le_lo);
            } else if k < counts.le_hi {
                answers.push((k, hi));
            } else if hi.to_u64() == max_num {
                answers.push((k, T::Key::MAX));
            } else {
                above.push(k);
            }
        }
        if !inside.is_empty() {
            let keys = multiselect_keys(&mut buffer, &inside, false);
            answers.extend(
                inside
                    .iter()
                    .zip(keys)
                    .map(|(&r, key)| (r + counts.le_lo, key)),
            );
        }
        if !below.is_empty() {
            tasks.push(Task {
                low: task.low,
                high: key_pred(lo).to_u64(),
                below: task.below,
                upto: counts.lt_lo,
                ranks: below,
                attempt: task.attempt + 1,
            });
        }
        if !above.is_empty() {
            tasks.push(Task {
                low: key_succ(hi).to_u64(),
                high: task.high,
                below: counts.le_hi,
                upto: task.upto,
                ranks: above,
                attempt: task.attempt + 1,
            });
        }
    }

    /// Pivot keys bracketing the ranks of `task` with high probability (the whole known
    /// interval after two misses), selected from the sample by this same algorithm.
    fn bracket(&mut self, task: &Task) -> (T::Key, T::Key, f64) {
        let (low, high) = (T::Key::from_u64(task.low), T::Key::from_u64(task.high));
        let whole = (low, high, 1.0);
        if task.attempt >= 2 {
            return whole;
        }
        let (data, parallel) = (self.data, self.parallel);
        let sample = self.sample.get_or_insert_with(|| {
            let run = (64 / std::mem::size_of::<T>()).max(1);
            sample_runs(data, Self::sample_size(data.len()), run, SEED)
        });
        let window: Vec<W>;
        let pool: &[W] = if task.attempt == 0 {
            sample
        } else {
            let inside = |w: &W| (task.low..=task.high).contains(&w.to_key().to_u64());
            window = sample.iter().copied().filter(inside).collect();
            &window
        };
        let s = pool.len();
        let m = task.upto - task.below;
        if s < 16 || m == 0 {
            return whole;
        }
        let spread = SIGMAS * (1u32 << (2 * task.attempt)) as f64;
        let position = |k: usize| -> (f64, f64) {
            let p = ((k - task.below) as f64 + 0.5) / m as f64;
            let sd = (s as f64 * p * (1.0 - p)).sqrt();
            (p * s as f64, spread * sd + 1.0)
        };
        let (centre_lo, width_lo) = position(task.ranks[0]);
        let (centre_hi, width_hi) = position(task.ranks[task.ranks.len() - 1]);
        let r_lo = centre_lo - width_lo;
        let r_hi = centre_hi + width_hi;
        let mut wanted = Vec::with_capacity(2);
        if r_lo >= 0.0 {
            wanted.push(r_lo as usize);
        }
        if r_hi < s as f64 {
            wanted.push((r_hi as usize).max(r_lo.max(0.0) as usize));
        }
        let picked: Vec<T::Key> = multiselect(pool, &wanted, parallel)
            .into_iter()
            .map(|w| T::Key::from_u64(w.to_key().to_u64()))
            .collect();
        let lo = if r_lo >= 0.0 { picked[0] } else { low };
        let hi = if r_hi < s as f64 {
            picked[picked.len() - 1]
        } else {
            high
        };
        let lo = lo.max(low);
        let expected = (r_hi.min(s as f64) - r_lo.max(0.0) + 1.0) / s as f64 * m as f64
            / self.data.len() as f64;
        (lo, hi.min(high).max(lo), expected)
    }
}

/// Keeps the pivot keys on numbers (the keys of NaN lie above the largest number key, and every
/// NaN has the largest key of all, so nothing is lost): the interval only grows, so the bracket
/// stays valid.
fn sanitize<T: Element>(lo: T::Key, hi: T::Key) -> (T::Key, T::Key) {
    let (min_num, max_num) = (min_number_key::<T>(), max_number_key::<T>());
    let lo = lo.clamp(min_num, max_num);
    (lo, hi.clamp(lo, max_num))
}

/// Whether comparing values with the element type's own `<` agrees with key order around the
/// pivot keys: always for integers; for floats unless a pivot is a zero (`-0.0 == +0.0` as
/// values). Pivots are never NaN (see [`sanitize`]); NaN values compare false with everything,
/// which counts them above both pivots, where their key is.
fn values_compare_as_keys<T: Element>(lo: T::Key, hi: T::Key) -> bool {
    if !matches!(T::DTYPE, DType::F32 | DType::F64) {
        return true;
    }
    let plus_zero = T::Key::from_u64(1 << (T::Key::BITS - 1));
    let minus_zero = key_pred(plus_zero);
    ![lo, hi].iter().any(|&k| k == plus_zero || k == minus_zero)
}

/// One pass: the counts around the pivot keys `lo <= hi` and the keys strictly between them
/// (several threads when `parallel` and the input is long). The values are compared as values
/// (vectorizes well) when that agrees with key order, and by key otherwise. `expected` is the
/// fraction of the values the bracket is expected to hold.
fn pass<T: Element>(
    data: &[T],
    lo: T::Key,
    hi: T::Key,
    expected: f64,
    parallel: bool,
) -> (Counts, Vec<T::Key>) {
    if values_compare_as_keys::<T>(lo, hi) {
        let (lo, hi) = (T::from_key(lo), T::from_key(hi));
        pass_by(data, |x| x, lo, hi, expected, parallel)
    } else {
        pass_by(data, |x: T| x.to_key(), lo, hi, expected, parallel)
    }
}

/// [`pass`] comparing `by(x)` with the pivots `lo <= hi` (as `by` maps them).
fn pass_by<T, P, F>(
    data: &[T],
    by: F,
    lo: P,
    hi: P,
    expected: f64,
    parallel: bool,
) -> (Counts, Vec<T::Key>)
where
    T: Element,
    P: PartialOrd + Copy + Sync,
    F: Fn(T) -> P + Sync + Send + Copy,
{
    let parts = map_chunks(data, parallel, |chunk| {
        let cap = (4.0 * expected * chunk.len() as f64) as usize + 4 * BLOCK;
        let found = if lo != hi {
            scan_inclusive(chunk, by, lo, hi, cap)
        } else {
            None
        };
        found.unwrap_or_else(|| scan_exclusive(chunk, by, lo, hi))
    });
    if parts.len() == 1 {
        return parts.into_iter().next().expect("one part");
    }
    let total: usize = parts.iter().map(|(_, b)| b.len()).sum();
    let mut counts = Counts::default();
    let mut buffer = Vec::with_capacity(total);
    for (c, b) in parts {
        counts.lt_lo += c.lt_lo;
        counts.le_lo += c.le_lo;
        counts.lt_hi += c.lt_hi;
        counts.le_hi += c.le_hi;
        counts.nans += c.nans;
        buffer.extend_from_slice(&b);
    }
    (counts, buffer)
}

/// Values per block of a scan: counts are branch-free, and a block is looked at again only
/// when it holds a value inside the bracket.
const BLOCK: usize = 32;

/// The fast scan of one chunk: counts `< lo` and `<= hi` (two comparisons a value) and copies
/// the values in `[lo, hi]`, then sorts out those equal to a pivot from the (small) copy.
/// `None` when more than `cap` values would be copied (many values equal to a pivot).
fn scan_inclusive<T, P, F>(
    chunk: &[T],
    by: F,
    lo: P,
    hi: P,
    cap: usize,
) -> Option<(Counts, Vec<T::Key>)>
where
    T: Element,
    P: PartialOrd + Copy,
    F: Fn(T) -> P + Copy,
{
    let mut values: Vec<T> = Vec::new();
    let mut scratch = [T::default(); BLOCK];
    let mut blocks = chunk.chunks_exact(BLOCK);
    let (mut lt_lo, mut le_hi, mut nans) = (0usize, 0usize, 0usize);
    for block in &mut blocks {
        let (mut below, mut upto, mut nan, mut any) = (0u32, 0u32, 0u32, 0u32);
        for &x in block {
            let p = by(x);
            let is_below = p < lo;
            let is_upto = p <= hi;
            below += is_below as u32;
            upto += is_upto as u32;
            nan += x.is_nan() as u32;
            any |= (!is_below & is_upto) as u32;
        }
        lt_lo += below as usize;
        le_hi += upto as usize;
        nans += nan as usize;
        if any != 0 {
            // Branch-free compaction: every value is written, the slot advances only for
            // values in the bracket (`j` never exceeds the index of the value being written).
            let mut j = 0;
            for &x in block {
                let p = by(x);
                scratch[j & (BLOCK - 1)] = x;
                j += ((p >= lo) & (p <= hi)) as usize;
            }
            values.extend_from_slice(&scratch[..j]);
            if values.len() > cap {
                return None;
            }
        }
    }
    for &x in blocks.remainder() {
        let p = by(x);
        lt_lo += (p < lo) as usize;
        le_hi += (p <= hi) as usize;
        nans += x.is_nan() as usize;
        if (p >= lo) & (p <= hi) {
            values.push(x);
        }
    }
    // Split the copy into the values equal to a pivot (counted) and those strictly between.
    let (mut eq_lo, mut eq_hi) = (0, 0);
    let mut buffer = Vec::with_capacity(values.len());
    for x in values {
        let p = by(x);
        eq_lo += (p == lo) as usize;
        eq_hi += (p == hi) as usize;
        if (p != lo) & (p != hi) {
            buffer.push(x.to_key());
        }
    }
    let counts = Counts {
        lt_lo,
        le_lo: lt_lo + eq_lo,
        lt_hi: le_hi - eq_hi,
        le_hi,
        nans,
    };
    Some((counts, buffer))
}

/// The robust scan of one chunk: four counts a value (`< lo`, `<= lo`, `< hi`, `<= hi`) and
/// copies of the keys strictly between the pivots only, so that values equal to a pivot cost
/// no workspace.
fn scan_exclusive<T, P, F>(chunk: &[T], by: F, lo: P, hi: P) -> (Counts, Vec<T::Key>)
where
    T: Element,
    P: PartialOrd + Copy,
    F: Fn(T) -> P + Copy,
{
    let mut counts = Counts::default();
    let mut values: Vec<T> = Vec::new();
    let mut scratch = [T::default(); BLOCK];
    let mut blocks = chunk.chunks_exact(BLOCK);
    for block in &mut blocks {
        let (mut lt_lo, mut le_lo, mut lt_hi, mut le_hi, mut nan, mut any) =
            (0u32, 0u32, 0u32, 0u32, 0u32, false);
        for &x in block {
            let p = by(x);
            lt_lo += (p < lo) as u32;
            le_lo += (p <= lo) as u32;
            lt_hi += (p < hi) as u32;
            le_hi += (p <= hi) as u32;
            nan += x.is_nan() as u32;
            any |= (p > lo) & (p < hi);
        }
        counts.nans += nan as usize;
        counts.lt_lo += lt_lo as usize;
        counts.le_lo += le_lo as usize;
        counts.lt_hi += lt_hi as usize;
        counts.le_hi += le_hi as usize;
        if any {
            let mut j = 0;
            for &x in block {
                let p = by(x);
                scratch[j & (BLOCK - 1)] = x;
                j += ((p > lo) & (p < hi)) as usize;
            }
            values.extend_from_slice(&scratch[..j]);
        }
    }
    for &x in blocks.remainder() {
        let p = by(x);
        counts.lt_lo += (p < lo) as usize;
        counts.le_lo += (p <= lo) as usize;
        counts.lt_hi += (p < hi) as usize;
        counts.le_hi += (p <= hi) as usize;
        counts.nans += x.is_nan() as usize;
        if (p > lo) & (p < hi) {
            values.push(x);
        }
    }
    (counts, values.into_iter().map(|x| x.to_key()).collect())
}

/// Unit tests against the sort reference.
#[cfg(test)]
mod tests {
    use super::*;
    use crate::select::cpu::util::testing::{check_all, inputs, Algo};
    use crate::select::cpu::util::SplitMix64;
    use crate::select::sort_choose;

    /// Floyd–Rivest as a test subject.
    struct Fr;
    impl Algo for Fr {
        /// Runs the algorithm.
        fn select<T: Element>(&self, data: &[T], k: usize, parallel: bool) -> T {
            select(data, k, parallel)
        }
    }

    /// Every type, adversarial input and boundary length agrees with sort&choose.
    #[test]
    fn matches_sort_on_adversarial_inputs() {
        check_all(Fr, true);
    }

    /// Several ranks at once (repeats, neighbours, extremes) agree with sort&choose.
    #[test]
    fn multiselect_matches_sort() {
        let mut rng = SplitMix64::new(4);
        for n in [SMALL - 1, SMALL, 50_000] {
            for (name, data) in inputs::<f32>(n, 11) {
                let keys = sort_choose::cpu::sorted_keys(&data, false);
                let mut ranks: Vec<usize> = (0..5).map(|_| rng.below(n)).collect();
                ranks.extend([0, n - 1, n / 2, n / 2 + 1, n / 2]);
                let got = multiselect(&data, &ranks, true);
                for (&k, g) in ranks.iter().zip(got) {
                    assert_eq!(g.to_key(), keys[k], "{name} n={n} k={k}");
                }
            }
        }
    }

    /// The fast and the robust scan agree, by value and by key, with or without a cap overflow.
    #[test]
    fn scans_agree() {
        let mut rng = SplitMix64::new(8);
        let data: Vec<f32> = (0..5000)
            .map(|i| match i % 7 {
                0 => -0.0,
                1 => 0.0,
                2 => f32::NAN,
                _ => rng.below(40) as f32 - 20.0,
            })
            .collect();
        let pivots = [
            (-3.0f32, 5.0f32),
            (-0.0, 0.0),
            (0.0, 7.0),
            (2.0, 2.0),
            (-20.0, 19.0),
        ];
        for (lo, hi) in pivots {
            let (lo_key, hi_key) = (lo.to_key(), hi.to_key());
            let by_key = |x: f32| x.to_key();
            let (want, mut want_keys) = scan_exclusive(&data, by_key, lo_key, hi_key);
            want_keys.sort_unstable();
            for cap in [0, data.len()] {
                if let Some((got, mut keys)) = scan_inclusive(&data, by_key, lo_key, hi_key, cap) {
                    keys.sort_unstable();
                    assert_eq!((got, &keys), (want, &want_keys), "{lo} {hi} cap {cap}");
                }
            }
            let (got, mut keys) = pass(&data, lo_key, hi_key, 0.01, false);
            keys.sort_unstable();
            assert_eq!((got, keys), (want, want_keys.clone()), "{lo} {hi}");
            let below = data.iter().filter(|x| x.to_key() < lo_key).count();
            assert_eq!(want.lt_lo, below);
        }
    }

    /// A sample that misrepresents the data still gives exact results.
    #[test]
    fn misses_are_recovered() {
        // Data whose sample misrepresents it: the sampled positions hold small values.
        let n = 1 << 15;
        let stride = n / Search::<u32, u32>::sample_size(n);
        let data: Vec<u32> = (0..n as u32)
            .map(|i| {
                if (i as usize) % stride == 0 {
                    i
                } else {
                    u32::MAX - i
                }
            })
            .collect();
        let keys = sort_choose::cpu::sorted_keys(&data, false);
        for k in [0, 1, n / 2, n - 1] {
            assert_eq!(select(&data, k, false), keys[k]);
        }
    }
}
