//! Helpers shared by the CPU selection algorithms: chunked (optionally parallel) passes, a
//! small deterministic PRNG, key bounds of the element types, and exact selection among a
//! small set of candidate keys.

use crate::random::SplitMix64;
use crate::select::census::Census;
use rayon::prelude::*;

use crate::element::{DType, Element, RadixKey};
use crate::select::PARALLEL_THRESHOLD;

/// Whether a pass over `n` values runs on several threads.
#[inline]
pub(crate) fn use_parallel(parallel: bool, n: usize) -> bool {
    parallel && n >= PARALLEL_THRESHOLD && rayon::current_num_threads() > 1
}

/// The chunk length of a parallel pass over `n` values: a few chunks per thread, never tiny.
pub(crate) fn chunk_len(n: usize) -> usize {
    let threads = rayon::current_num_threads().max(1);
    n.div_ceil(threads * 4).max(1 << 15)
}

/// Runs `f` on chunks of `data` (several threads when `parallel` and `data` is long, one call
/// on the whole slice otherwise) and returns the per-chunk results in chunk order.
pub(crate) fn map_chunks<T, R, F>(data: &[T], parallel: bool, f: F) -> Vec<R>
where
    T: Sync,
    R: Send,
    F: Fn(&[T]) -> R + Sync + Send,
{
    if use_parallel(parallel, data.len()) {
        data.par_chunks(chunk_len(data.len())).map(f).collect()
    } else {
        vec![f(data)]
    }
}

/// Runs `f` on matching pieces of `out` and `input`, where `out_unit` items of `out` go with
/// `in_unit` items of `input` (several threads when `input` is long, one call on the whole
/// otherwise): a conversion of one slice into another.
pub(crate) fn zip_chunks<A, B, F>(out: &mut [A], out_unit: usize, input: &[B], in_unit: usize, f: F)
where
    A: Send,
    B: Sync,
    F: Fn(&mut [A], &[B]) + Sync + Send,
{
    let units = input.len().div_ceil(in_unit);
    if use_parallel(true, units) {
        let c = chunk_len(units);
        out.par_chunks_mut(c * out_unit)
            .zip(input.par_chunks(c * in_unit))
            .for_each(|(o, i)| f(o, i));
    } else {
        f(out, input)
    }
}

/// The bucket of histogram `hist` holding rank `k` (in bucket order) and the number of
/// candidates in the buckets before it.
pub(crate) fn locate(hist: &[usize], k: usize) -> (usize, usize) {
    let mut before = 0;
    for (b, &c) in hist.iter().enumerate() {
        if k < before + c {
            return (b, before);
        }
        before += c;
    }
    unreachable!("rank {k} beyond the {before} candidates")
}

/// A sample of about `s` elements of `data` as keys widened or narrowed into `W` (a `u32` or
/// `u64`): runs of `run` consecutive elements (a cache line, so the gather reads little
/// memory), one run at a random run-aligned offset in each of `s / run` equal strides, in
/// position order. The gather is bound by memory latency; with `parallel`, two or more threads
/// keep more cache misses in flight. (The positions are the same either way: run `i` draws the
/// `i`-th number of one SplitMix64 stream.)
pub(crate) fn sample_runs<T: Element, W: Element>(
    data: &[T],
    s: usize,
    run: usize,
    seed: u64,
    parallel: bool,
) -> Vec<W> {
    let n = data.len();
    let run = run.clamp(1, n.max(1));
    let runs = (s / run).clamp(1, n / run);
    let stride = n / runs;
    let fill = |first: usize, out: &mut [W]| {
        for (j, dst) in out.chunks_exact_mut(run).enumerate() {
            let i = (first + j) as u64;
            let mut rng = SplitMix64::new(seed.wrapping_add(i.wrapping_mul(SplitMix64::GAMMA)));
            let start = (first + j) * stride + rng.below(stride / run) * run;
            for (d, &x) in dst.iter_mut().zip(&data[start..start + run]) {
                *d = W::from_key(W::Key::from_u64(x.to_key().to_u64()));
            }
        }
    };
    let mut out = vec![W::default(); runs * run];
    const RUNS_PER_TASK: usize = 256;
    if parallel && runs >= 4 * RUNS_PER_TASK && rayon::current_num_threads() > 1 {
        out.par_chunks_mut(RUNS_PER_TASK * run)
            .enumerate()
            .for_each(|(t, part)| fill(t * RUNS_PER_TASK, part));
    } else {
        fill(0, &mut out);
    }
    out
}

/// Whether a value is finite (every integer is).
#[inline(always)]
pub(crate) fn finite<T: Element>(x: T) -> bool {
    x.to_f64().is_finite()
}

/// Counts the non-finite values (`±inf`, NaN) and finds the extreme keys of the finite ones
/// (`Key::MAX..Key::MIN` when there is none).
pub(crate) fn finite_census<T: Element>(data: &[T], parallel: bool) -> Census<T::Key> {
    let parts = map_chunks(data, parallel, |chunk| {
        let mut s = Census {
            neg_inf: 0,
            pos_inf: 0,
            nan: 0,
            min: T::Key::MAX,
            max: T::Key::MIN,
        };
        for &x in chunk {
            let f = x.to_f64();
            if f.is_finite() {
                let key = x.to_key();
                s.min = s.min.min(key);
                s.max = s.max.max(key);
            } else if x.is_nan() {
                s.nan += 1;
            } else if f < 0.0 {
                s.neg_inf += 1;
            } else {
                s.pos_inf += 1;
            }
        }
        s
    });
    parts
        .into_iter()
        .reduce(|a, b| Census {
            neg_inf: a.neg_inf + b.neg_inf,
            pos_inf: a.pos_inf + b.pos_inf,
            nan: a.nan + b.nan,
            min: a.min.min(b.min),
            max: a.max.max(b.max),
        })
        .expect("at least one chunk")
}

/// The smallest key of a non-NaN value of `T` (that of `-inf` for floats).
#[inline]
pub(crate) fn min_number_key<T: Element>() -> T::Key {
    match T::DTYPE {
        DType::F32 => T::Key::from_u64(0x007F_FFFF),
        DType::F64 => T::Key::from_u64(0x000F_FFFF_FFFF_FFFF),
        _ => T::Key::MIN,
    }
}

/// The largest key of a non-NaN value of `T` (that of `+inf` for floats).
#[inline]
pub(crate) fn max_number_key<T: Element>() -> T::Key {
    match T::DTYPE {
        DType::F32 => T::Key::from_u64(0xFF80_0000),
        DType::F64 => T::Key::from_u64(0xFFF0_0000_0000_0000),
        _ => T::Key::MAX,
    }
}

/// The key just below `key` (saturating at the smallest key).
#[inline]
pub(crate) fn key_pred<K: RadixKey>(key: K) -> K {
    K::from_u64(key.to_u64().saturating_sub(1))
}

/// The key just above `key` (saturating at the largest key).
#[inline]
pub(crate) fn key_succ<K: RadixKey>(key: K) -> K {
    if key == K::MAX {
        key
    } else {
        K::from_u64(key.to_u64() + 1)
    }
}

/// Values per block of [`collect_where`].
const COLLECT_BLOCK: usize = 32;

/// The keys of the values of `chunk` that satisfy `keep`, in order. Built for rare hits: a
/// block is tested branch-free (vectorizable when `keep` is simple) and only blocks with a hit
/// are compacted, again branch-free.
#[inline]
pub(crate) fn collect_where<V, K, P, F>(chunk: &[V], keep: P, key: F) -> Vec<K>
where
    V: Copy,
    K: Copy + Default,
    P: Fn(V) -> bool,
    F: Fn(V) -> K,
{
    let mut out = Vec::new();
    let mut scratch = [K::default(); COLLECT_BLOCK];
    let mut blocks = chunk.chunks_exact(COLLECT_BLOCK);
    for block in &mut blocks {
        let mut any = 0u32;
        for &x in block {
            any |= keep(x) as u32;
        }
        if any != 0 {
            // `j` never exceeds the index of the value being written.
            let mut j = 0;
            for &x in block {
                scratch[j & (COLLECT_BLOCK - 1)] = key(x);
                j += keep(x) as usize;
            }
            out.extend_from_slice(&scratch[..j]);
        }
    }
    out.extend(
        blocks
            .remainder()
            .iter()
            .filter(|&&x| keep(x))
            .map(|&x| key(x)),
    );
    out
}

/// Adversarial and random inputs for the unit tests of every CPU algorithm, and the check
/// against the sort reference.
#[cfg(test)]
pub(crate) mod testing {
    use crate::element::Element;
    use crate::random::SplitMix64;
    use crate::select::sort_choose;
    use crate::select::PARALLEL_THRESHOLD;

    /// Test-only conversions to build inputs of every element type.
    pub(crate) trait Gen: Element {
        /// The value nearest `v` (saturating for integers, NaN to 0).
        fn from_f64(v: f64) -> Self;
        /// The element of these random bits (any bit pattern, NaN payloads included).
        fn from_bits(bits: u64) -> Self;
    }

    /// `Gen` for a float type.
    macro_rules! gen_float {
        ($t:ty, $u:ty) => {
            impl Gen for $t {
                fn from_f64(v: f64) -> Self {
                    v as $t
                }
                fn from_bits(bits: u64) -> Self {
                    <$t>::from_bits(bits as $u)
                }
            }
        };
    }
    /// `Gen` for an integer type.
    macro_rules! gen_int {
        ($t:ty) => {
            impl Gen for $t {
                fn from_f64(v: f64) -> Self {
                    v as $t
                }
                fn from_bits(bits: u64) -> Self {
                    bits as $t
                }
            }
        };
    }
    gen_float!(f32, u32);
    gen_float!(f64, u64);
    gen_int!(i32);
    gen_int!(i64);
    gen_int!(u32);
    gen_int!(u64);

    /// Inputs of `n` values that need many levels of a bucket selection: clusters at ever
    /// smaller scales, and 64-bit integers a few apart among huge ones.
    pub(crate) fn many_level_inputs(n: usize) -> (Vec<f64>, Vec<i64>) {
        let nested = (0..n)
            .map(|i| match i % 4 {
                0 => i as f64,
                1 => 1.0 + i as f64 * 1e-9,
                2 => 1.0 + i as f64 * 1e-15,
                _ => 1.0 + (i % 7) as f64 * 2e-16,
            })
            .collect();
        let ints = (0..n as i64)
            .map(|i| match i % 3 {
                0 => i64::MIN + i,
                1 => i64::MAX - i % 5,
                _ => (i % 1000) * 3,
            })
            .collect();
        (nested, ints)
    }

    /// `n` values `g(rng, i)` as `T`, for `i` in `0..n`, drawn from one SplitMix64 stream of
    /// seed `seed`.
    fn drawn<T: Gen>(
        n: usize,
        seed: u64,
        mut g: impl FnMut(&mut SplitMix64, usize) -> f64,
    ) -> Vec<T> {
        let mut rng = SplitMix64::new(seed);
        (0..n).map(|i| T::from_f64(g(&mut rng, i))).collect()
    }

    /// `n` values as `T`: NaN at the indices that are multiples of `period`, `-0.0` just after them,
    /// the others whole numbers in `-spread / 2..spread / 2` drawn from the SplitMix64 stream of
    /// seed `seed`.
    pub(crate) fn nans_and_zeros<T: Gen>(
        n: usize,
        period: usize,
        spread: usize,
        seed: u64,
    ) -> Vec<T> {
        drawn(n, seed, |r, i| match i % period {
            0 => f64::NAN,
            1 => -0.0,
            _ => r.below(spread) as f64 - (spread / 2) as f64,
        })
    }

    /// The named adversarial inputs of length `n` (`n >= 1`).
    pub(crate) fn inputs<T: Gen>(n: usize, seed: u64) -> Vec<(&'static str, Vec<T>)> {
        let mut rng = SplitMix64::new(seed);
        let mut unit = move || (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
        let mut out: Vec<(&'static str, Vec<T>)> = Vec::new();
        let f = |v: f64| T::from_f64(v);
        out.push(("uniform", (0..n).map(|_| f(unit() * 2e6 - 1e6)).collect()));
        out.push(("unit", (0..n).map(|_| f(unit())).collect()));
        let mut rng2 = SplitMix64::new(seed ^ 77);
        out.push((
            "bits",
            (0..n).map(|_| T::from_bits(rng2.next_u64())).collect(),
        ));
        out.push(("equal", vec![f(42.0); n]));
        out.push((
            "sorted",
            (0..n).map(|i| f(i as f64 - (n / 3) as f64)).collect(),
        ));
        out.push((
            "reversed",
            (0..n).rev().map(|i| f(i as f64 * 3.0)).collect(),
        ));
        for (name, d) in [
            ("distinct2", 2usize),
            ("distinct16", 16),
            ("distinct1024", 1024),
        ] {
            let values = drawn(n, seed ^ d as u64, |r, _| r.below(d) as f64 * 7.0 - 20.0);
            out.push((name, values));
        }
        let outliers = drawn(n, seed ^ 5, |r, i| match i % 97 {
            0 => 1e300,
            1 => -1e300,
            _ => r.below(1000) as f64,
        });
        out.push(("outliers", outliers));
        let denormals = drawn(n, seed ^ 6, |r, _| r.below(9) as f64 * 5e-324 - 2e-323);
        out.push(("denormals", denormals));
        if T::DTYPE.is_float() {
            let step = f32::from_bits(1) as f64;
            let denormals32 = drawn(n, seed ^ 7, |r, _| (r.below(9) as f64 - 4.0) * step);
            out.push(("denormals32", denormals32));
        }
        let infinities = drawn(n, seed ^ 8, |r, _| match r.below(5) {
            0 => f64::INFINITY,
            1 => f64::NEG_INFINITY,
            _ => r.below(100) as f64 - 50.0,
        });
        out.push(("infinities", infinities));
        let zeros = drawn(n, seed ^ 9, |r, _| match r.below(3) {
            0 => -0.0,
            1 => 0.0,
            _ => r.below(3) as f64 - 1.0,
        });
        out.push(("zeros", zeros));
        // Alabi et al.'s bucket killer: 2^p for p in -32..=32, the rest near 2^-32.
        out.push((
            "bucket_killer",
            (0..n)
                .map(|i| {
                    if i < 65 {
                        f((i as f64 - 32.0).exp2())
                    } else {
                        f(2f64.powi(-32) * (1.0 + (i % 1000) as f64 * 1e-9))
                    }
                })
                .collect(),
        ));
        if let Some(nan) = T::nan() {
            out.push(("all_nan", vec![nan; n]));
            let mut r = SplitMix64::new(seed ^ 10);
            out.push((
                "some_nan",
                (0..n)
                    .map(|_| match r.below(4) {
                        0 => nan,
                        1 => T::from_bits(r.next_u64() | 0x7FF0_0000_0000_0000 | 0xFFFF_FFFF),
                        2 => f(f64::INFINITY),
                        _ => f(r.below(10) as f64 - 5.0),
                    })
                    .collect(),
            ));
        }
        out
    }

    /// The ranks checked for an input of length `n`, the most telling first.
    fn ranks(n: usize, rng: &mut SplitMix64) -> Vec<usize> {
        let mut ks = vec![n / 2, 0, n - 1, (n - 1) / 2, n / 3];
        ks.extend((0..3).map(|_| rng.below(n)));
        let mut seen = std::collections::HashSet::new();
        ks.retain(|k| seen.insert(*k));
        ks
    }

    /// Whether two elements are the same bits (every NaN equal).
    fn same<T: Element>(a: T, b: T) -> bool {
        a.to_key() == b.to_key() && (a.is_nan() || format!("{a:?}") == format!("{b:?}"))
    }

    /// Checks `select` against sort&choose for one type on the inputs named in `only` (all
    /// when empty) of the given lengths, at `ranks_per_input` ranks each.
    fn check_type<T: Gen>(
        select: &dyn Fn(&[T], usize, bool) -> T,
        sizes: &[usize],
        only: &[&str],
        ranks_per_input: usize,
        parallel: bool,
    ) {
        let mut rng = SplitMix64::new(99);
        for &n in sizes {
            for (name, data) in inputs::<T>(n, n as u64) {
                if !only.is_empty() && !only.contains(&name) {
                    continue;
                }
                let copy = data.clone();
                let keys = sort_choose::cpu::sorted_keys(&data, false);
                let mut ks = ranks(n, &mut rng);
                ks.truncate(ranks_per_input);
                for k in ks {
                    let got = select(&data, k, parallel);
                    let want = T::from_key(keys[k]);
                    assert!(
                        same(got, want),
                        "{} {name} n={n} k={k} parallel={parallel}: got {got:?}, want {want:?}",
                        T::DTYPE
                    );
                }
                assert!(
                    data.iter()
                        .zip(&copy)
                        .all(|(a, b)| a.to_key() == b.to_key()),
                    "input modified"
                );
            }
        }
    }

    /// A single-rank CPU selection function, generic over the element type.
    pub(crate) trait Algo {
        /// The element of rank `k` of `data`.
        fn select<T: Element>(&self, data: &[T], k: usize, parallel: bool) -> T;
    }

    /// Checks one type: every input at the boundary lengths, a few at 100 000, and (when
    /// `big`) a few with threads above the parallel threshold.
    fn check_generic<T: Gen, A: Algo>(a: &A, big: bool) {
        let f = |d: &[T], k: usize, p: bool| a.select(d, k, p);
        check_type(&f, &[1, 2, 3, 255, 256, 257, 1000], &[], 8, true);
        let few = [
            "uniform",
            "bits",
            "distinct2",
            "bucket_killer",
            "some_nan",
            "zeros",
        ];
        check_type(&f, &[100_000], &few, 3, false);
        if big {
            let few = ["uniform", "distinct16", "bucket_killer", "some_nan"];
            check_type(&f, &[PARALLEL_THRESHOLD + 1234], &few, 2, true);
        }
    }

    /// Checks a selection function against sort&choose on all six element types, every
    /// adversarial input and the boundary lengths (and a parallel-sized input when `big`).
    pub(crate) fn check_all<A: Algo>(a: A, big: bool) {
        check_generic::<f32, A>(&a, big);
        check_generic::<f64, A>(&a, big);
        check_generic::<i32, A>(&a, big);
        check_generic::<i64, A>(&a, big);
        check_generic::<u32, A>(&a, big);
        check_generic::<u64, A>(&a, big);
    }

    /// Emits the test `matches_sort_on_adversarial_inputs`: the generic single-rank function
    /// `$select` (`fn<T: Element>(&[T], usize, bool) -> T`) against sort&choose by
    /// [`check_all`], threads included. Given `multiselect $multiselect`, the multiselection
    /// `$multiselect` (`fn<T: Element>(&[T], &[usize], bool) -> Vec<T>`) of one rank, declared
    /// as `select_one`.
    macro_rules! matches_sort_on_adversarial_inputs {
        ($select:path) => {
            /// Every type, adversarial input and boundary length agrees with sort&choose.
            #[test]
            fn matches_sort_on_adversarial_inputs() {
                struct Subject;
                impl $crate::select::host::testing::Algo for Subject {
                    fn select<T: $crate::element::Element>(
                        &self,
                        data: &[T],
                        k: usize,
                        parallel: bool,
                    ) -> T {
                        $select(data, k, parallel)
                    }
                }
                $crate::select::host::testing::check_all(Subject, true);
            }
        };
        (multiselect $multiselect:path) => {
            /// The multiselection of one rank.
            fn select_one<T: $crate::element::Element>(data: &[T], k: usize, parallel: bool) -> T {
                $multiselect(data, &[k], parallel)[0]
            }

            $crate::select::host::testing::matches_sort_on_adversarial_inputs!(select_one);
        };
    }
    pub(crate) use matches_sort_on_adversarial_inputs;
}
