//! SampleSelect (Ribizel & Anzt 2020) on the CPU.
//!
//! Each level draws an evenly spread sample of the candidates' keys, sorts it and picks up to
//! [`SPLITTERS`] splitters at equal sample ranks (duplicates removed). Every candidate is put
//! into one of `2m + 1` buckets by a branch-free search over the sorted splitters (the paper's
//! implicit search tree, laid out as a sorted array of 128 keys): the open range between two
//! neighbouring splitters, or the *equality bucket* of one splitter (the paper's answer to
//! repeated values). The search stores each candidate's bucket as a one-byte oracle while the
//! buckets are counted (parallel chunks, merged). If rank `k` falls into an equality bucket the
//! splitter is the answer; otherwise the oracles select the candidates of its range bucket,
//! which become the next level. A range bucket never holds a splitter, so every level shrinks
//! the candidates, and inputs made of few distinct values end in an equality bucket at once.
//! Levels of at most [`FINISH`] candidates are selected directly on their keys.
//!
//! Workspace: the oracles (`n` bytes on the first level) and the candidate keys of each next
//! level (expected `n / m`, at most `n` keys), plus the sample (about 2 000 keys).

use rayon::prelude::*;

use crate::element::{Element, RadixKey};
use crate::random::SplitMix64;
use crate::select::approximate::{closest_splitter, exact, Approximate};
use crate::select::host::{chunk_len, locate, map_chunks, use_parallel};

/// The most splitters per level (`2 · 127 + 1` buckets fit a byte).
const SPLITTERS: usize = 127;

/// The splitter array's length: splitters padded with the largest key.
const TREE: usize = 128;

/// Sample keys per splitter.
const OVERSAMPLE: usize = 16;

/// Levels with at most this many candidates are selected directly on their keys.
pub(crate) const FINISH: usize = 4096;

/// Seed of the sampling positions.
const SEED: u64 = 0x5A3F_1E5E;

/// The element of rank `k` (`k < data.len()`).
pub(crate) fn select<T: Element>(data: &[T], k: usize, parallel: bool) -> T {
    let mut outcome = level(data, |x: T| x.to_key(), k, parallel, SEED);
    let mut round = 1u64;
    loop {
        match outcome {
            Outcome::Found(key) => return T::from_key(key),
            Outcome::Next(cands, k) => {
                outcome = level(&cands, |x| x, k, parallel, SEED.wrapping_add(round));
                round += 1;
            }
        }
    }
}

/// The result of one level.
enum Outcome<K> {
    /// The key of the rank.
    Found(K),
    /// The candidates of the next level and the rank among them.
    Next(Vec<K>, usize),
}

/// The bucket counts of one level: `2m + 1` used entries of a byte's range.
type Hist = [usize; 2 * SPLITTERS + 1];

/// One level's classification of its candidates.
struct Classified<K> {
    /// The sorted splitters, padded with `K::MAX`.
    tree: [K; TREE],
    /// How many splitters there are.
    m: usize,
    /// Per chunk: the oracles and the bucket counts.
    parts: Vec<(Vec<u8>, Hist)>,
    /// The bucket counts of all chunks.
    hist: Hist,
    /// The chunk length (the whole input when not parallel).
    len: usize,
    /// Whether chunks run on several threads.
    par: bool,
}

/// Draws the splitters of `data` (more than [`FINISH`] values) and puts every value into its
/// bucket: the oracles and the bucket counts.
fn classify<V, K, F>(data: &[V], key: F, parallel: bool, seed: u64) -> Classified<K>
where
    V: Copy + Sync,
    K: RadixKey,
    F: Fn(V) -> K + Sync + Send + Copy,
{
    let n = data.len();
    let (tree, m) = splitters(data, key, seed);
    let par = use_parallel(parallel, n);
    let len = if par { chunk_len(n) } else { n };
    let classify_chunk = |chunk: &[V]| {
        let mut oracles = vec![0u8; chunk.len()];
        let mut hist = [0usize; 2 * SPLITTERS + 1];
        classify_all(&tree, m, chunk, key, &mut oracles);
        for &o in &oracles {
            hist[o as usize] += 1;
        }
        (oracles, hist)
    };
    let parts: Vec<(Vec<u8>, Hist)> = if par {
        data.par_chunks(len).map(classify_chunk).collect()
    } else {
        vec![classify_chunk(data)]
    };
    let mut hist = [0usize; 2 * SPLITTERS + 1];
    for (_, h) in &parts {
        for (t, c) in hist.iter_mut().zip(h) {
            *t += c;
        }
    }
    Classified {
        tree,
        m,
        parts,
        hist,
        len,
        par,
    }
}

/// One level of SampleSelect over the keys `key(x)` of `data`.
fn level<V, K, F>(data: &[V], key: F, k: usize, parallel: bool, seed: u64) -> Outcome<K>
where
    V: Copy + Sync,
    K: RadixKey,
    F: Fn(V) -> K + Sync + Send + Copy,
{
    if data.len() <= FINISH {
        let mut keys: Vec<K> = data.iter().map(|&x| key(x)).collect();
        return Outcome::Found(*keys.select_nth_unstable(k).1);
    }
    let c = classify(data, key, parallel, seed);
    let (bucket, before) = locate(&c.hist, k);
    if bucket % 2 == 1 {
        return Outcome::Found(c.tree[bucket / 2]);
    }
    let wanted = bucket as u8;
    let extract = |(chunk, (oracles, _)): (&[V], &(Vec<u8>, Hist))| {
        chunk
            .iter()
            .zip(oracles)
            .filter(|&(_, &o)| o == wanted)
            .map(|(&x, _)| key(x))
            .collect::<Vec<K>>()
    };
    let pieces: Vec<Vec<K>> = if c.par {
        data.par_chunks(c.len)
            .zip(c.parts.par_iter())
            .map(extract)
            .collect()
    } else {
        vec![extract((data, &c.parts[0]))]
    };
    Outcome::Next(pieces.concat(), k - before)
}

/// The first level over `data` (more than [`FINISH`] values), as approximate selection uses
/// it: the sorted splitters' keys and the counts of the `2m + 1` buckets (bucket `2j + 1` holds
/// the values equal to splitter `j`, bucket `2j` those strictly between splitters `j - 1` and
/// `j`).
pub(crate) fn first_level<T: Element>(data: &[T], parallel: bool) -> (Vec<T::Key>, Vec<usize>) {
    let c = classify(data, |x: T| x.to_key(), parallel, SEED);
    (c.tree[..c.m].to_vec(), c.hist[..2 * c.m + 1].to_vec())
}

/// Approximate selection of rank `k` (`k < len <= data.len()`, `len` the number of values
/// ranks refer to): the first level's splitter whose rank range is closest to `k`, and that
/// range. Inputs of at most [`FINISH`] values, and inputs whose splitters all lie beyond `len`
/// (NaNs left out), are selected exactly.
pub(crate) fn approximate<T: Element>(
    data: &[T],
    k: usize,
    len: usize,
    parallel: bool,
) -> Approximate<T> {
    if data.len() > FINISH {
        let (splitters, counts) = first_level(data, parallel);
        let counts: Vec<u64> = counts.iter().map(|&c| c as u64).collect();
        if let Some((j, lo, hi)) = closest_splitter(&counts, splitters.len(), k, len) {
            return exact(T::from_key(splitters[j]), k, lo, hi);
        }
    }
    let value = select(data, k, parallel);
    let key = value.to_key();
    let counts = map_chunks(data, parallel, |chunk| {
        chunk.iter().fold((0usize, 0usize), |(below, equal), x| {
            let kx = x.to_key();
            (below + (kx < key) as usize, equal + (kx == key) as usize)
        })
    });
    let (below, equal) = counts
        .iter()
        .fold((0, 0), |(b, e), &(cb, ce)| (b + cb, e + ce));
    exact(value, k, below, below + equal)
}

/// The sorted, deduplicated splitters padded to [`TREE`] keys with `K::MAX`, and how many
/// there are (at least one).
fn splitters<V, K, F>(data: &[V], key: F, seed: u64) -> ([K; TREE], usize)
where
    V: Copy,
    K: RadixKey,
    F: Fn(V) -> K,
{
    let n = data.len();
    let s = (SPLITTERS * OVERSAMPLE).min(n);
    let stride = n / s;
    let mut rng = SplitMix64::new(seed);
    let mut sample: Vec<K> = (0..s)
        .map(|i| key(data[i * stride + rng.below(stride)]))
        .collect();
    sample.sort_unstable();
    let mut tree = [K::MAX; TREE];
    let mut m = 0;
    for i in 0..SPLITTERS {
        let splitter = sample[(i + 1) * s / (SPLITTERS + 1)];
        if m == 0 || tree[m - 1] != splitter {
            tree[m] = splitter;
            m += 1;
        }
    }
    (tree, m)
}

/// The bucket of every key of `chunk`: `2j` for the open range above `j` splitters, `2j - 1`
/// for the equality bucket of splitter `j - 1`. Eight keys descend the tree side by side.
fn classify_all<V, K, F>(tree: &[K; TREE], m: usize, chunk: &[V], key: F, out: &mut [u8])
where
    V: Copy,
    K: RadixKey,
    F: Fn(V) -> K,
{
    /// Keys that descend the tree side by side.
    const LANES: usize = 8;
    let mut groups = chunk.chunks_exact(LANES);
    let mut outs = out.chunks_exact_mut(LANES);
    for (group, dst) in (&mut groups).zip(&mut outs) {
        let keys: [K; LANES] = std::array::from_fn(|j| key(group[j]));
        let mut at = [0usize; LANES];
        let mut step = TREE / 2;
        while step > 0 {
            for j in 0..LANES {
                at[j] += (tree[at[j] + step - 1] <= keys[j]) as usize * step;
            }
            step /= 2;
        }
        for j in 0..LANES {
            dst[j] = bucket_of(tree, m, at[j], keys[j]);
        }
    }
    for (x, o) in groups.remainder().iter().zip(outs.into_remainder()) {
        let kx = key(*x);
        let at = tree.partition_point(|&s| s <= kx);
        *o = bucket_of(tree, m, at, kx);
    }
}

/// The bucket of key `x` that has `at` padded splitters `<= x`.
#[inline(always)]
fn bucket_of<K: RadixKey>(tree: &[K; TREE], m: usize, at: usize, x: K) -> u8 {
    // Padding keys (`K::MAX`) count only for `x == K::MAX`; they are no splitters.
    let j = at.min(m);
    let equal = j > 0 && tree[j - 1] == x;
    (2 * j - equal as usize) as u8
}

/// Unit tests against the sort reference.
#[cfg(test)]
mod tests {
    use super::*;
    use crate::select::host::testing::matches_sort_on_adversarial_inputs;

    matches_sort_on_adversarial_inputs!(super::select);

    /// The approximate result's range is the value's range in the sorted data, and its error
    /// stays within the bound of one level.
    #[test]
    fn approximate_ranges_match_a_sort() {
        let mut rng = SplitMix64::new(7);
        for (n, distinct) in [
            (100_000usize, 1usize << 40),
            (50_000, 7),
            (300_000, 1000),
            (3000, 50),
        ] {
            let data: Vec<u64> = (0..n).map(|_| rng.below(distinct) as u64).collect();
            let mut sorted = data.clone();
            sorted.sort_unstable();
            for k in [0, 1, n / 3, n / 2, n - 2, n - 1] {
                for parallel in [false, true] {
                    let a = approximate(&data, k, n, parallel);
                    let lo = sorted.partition_point(|&x| x < a.value);
                    let hi = sorted.partition_point(|&x| x <= a.value);
                    assert_eq!((a.rank_lo, a.rank_hi, a.k), (lo, hi, k), "n={n} k={k}");
                    assert!(a.rank_error() <= n / 64, "n={n} k={k}: {a:?}");
                    if n <= FINISH {
                        assert!(a.is_exact());
                    }
                }
            }
        }
    }

    /// The first level's counts add up and its equality buckets hold their splitter's copies.
    #[test]
    fn first_level_counts_add_up() {
        let data: Vec<i32> = (0..20_000).map(|i| (i * 7919) % 301 - 150).collect();
        let (splitters, counts) = first_level(&data, true);
        assert_eq!(counts.len(), 2 * splitters.len() + 1);
        assert_eq!(counts.iter().sum::<usize>(), data.len());
        for (j, &s) in splitters.iter().enumerate() {
            let copies = data.iter().filter(|x| x.to_key() == s).count();
            assert_eq!(counts[2 * j + 1], copies);
        }
    }

    /// The bucket numbering: ranges and equality buckets in key order, padding ignored.
    #[test]
    fn buckets_are_ordered() {
        let mut tree = [u32::MAX; TREE];
        tree[..3].copy_from_slice(&[10, 20, u32::MAX]);
        let keys = [0u32, 10, 15, 20, 25, u32::MAX - 1, u32::MAX, 5, 10];
        let mut out = [0u8; 9];
        classify_all(&tree, 3, &keys, |x| x, &mut out);
        assert_eq!(out, [0, 1, 2, 3, 4, 4, 5, 0, 1]);
    }
}
