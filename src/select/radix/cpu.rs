//! MSD radix select on the CPU (Alabi et al.'s radixSelect).
//!
//! The order-preserving keys are examined digit by digit from the most significant end: a
//! histogram of the current digit among the candidates (keys that share the digits fixed so
//! far) tells which digit value holds rank `k`; that digit is fixed and the next one examined,
//! until all `T::Key::BITS` bits are fixed — the key itself. The first digit is 16 bits wide for
//! long inputs (11 otherwise), later digits 11 bits. Histograms are counted in parallel chunks
//! and merged.
//!
//! While every key shares the digits fixed so far, nothing is copied: the next histogram pass
//! re-reads the input (and an input of one repeated key is recognised at once). As soon as a
//! digit drops candidates, they are copied out in one pass that also counts the next digit,
//! and later digits narrow that copy in place. A copy that holds a single repeated key ends
//! the search early (heavy duplicates need no more digits).
//!
//! Workspace: at most `n - 1` keys (the candidate copy; about `n / 2^16` for smooth data) plus
//! the histograms (`2^16` counters per chunk for the first digit).

use rayon::prelude::*;

use crate::element::{Element, RadixKey};
use crate::select::host::{locate, map_chunks, use_parallel};

/// The width of digits after the first.
const DIGIT: u32 = 11;

/// The width of the first digit for long inputs.
const WIDE_DIGIT: u32 = 16;

/// Inputs at least this long get the wide first digit.
const WIDE_FROM: usize = 1 << 20;

/// The element of rank `k` (`k < data.len()`).
pub(crate) fn select<T: Element>(data: &[T], k: usize, parallel: bool) -> T {
    T::from_key(select_in(data, |x| x.to_key(), k, parallel))
}

/// The key of rank `k` among `keys` (`k < keys.len()`); `keys` is not modified.
pub(crate) fn select_keys<K: RadixKey>(keys: &[K], k: usize, parallel: bool) -> K {
    select_in(keys, |x| x, k, parallel)
}

/// Where the candidates are.
enum Candidates<K> {
    /// The keys of the input that have the fixed prefix (not copied).
    Input,
    /// A copy of the candidate keys.
    Copied(Vec<K>),
}

/// Radix select over the keys `key(x)` of `data`.
fn select_in<V, K, F>(data: &[V], key: F, mut k: usize, parallel: bool) -> K
where
    V: Copy + Sync,
    K: RadixKey,
    F: Fn(V) -> K + Sync + Send + Copy,
{
    let n = data.len();
    debug_assert!(k < n);
    let bits = K::BITS;
    let mut width = if n >= WIDE_FROM { WIDE_DIGIT } else { DIGIT }.min(bits);
    let mut shift = bits - width;
    // The digits fixed so far, and how many bits they span.
    let mut prefix = 0u64;
    let mut fixed = 0u32;
    let mut hist = histogram(data, key, None, shift, width, parallel);
    let mut cands: Candidates<K> = Candidates::Input;
    let mut count = n;
    loop {
        let (digit, before) = locate(&hist, k);
        let in_digit = hist[digit];
        k -= before;
        prefix = (prefix << width) | digit as u64;
        fixed += width;
        if fixed == bits {
            return K::from_u64(prefix);
        }
        let matched = Prefix {
            value: prefix,
            shift: bits - fixed,
        };
        width = DIGIT.min(bits - fixed);
        shift = bits - fixed - width;
        if in_digit == n {
            // Every key shares the prefix: all one key (all equal input) needs no more digits.
            let first = key(data[0]);
            if data.iter().all(|&x| key(x) == first) {
                return first;
            }
        }
        cands = match cands {
            Candidates::Input if in_digit == n => {
                hist = histogram(data, key, Some(matched), shift, width, parallel);
                Candidates::Input
            }
            Candidates::Input => {
                let (copy, h) = collect(data, key, matched, shift, width, parallel);
                hist = h;
                Candidates::Copied(copy)
            }
            Candidates::Copied(mut copy) => {
                if in_digit == count {
                    // Every candidate has this digit: nothing to drop.
                    hist = histogram(&copy, |x| x, None, shift, width, parallel);
                } else {
                    hist = narrow(&mut copy, matched, shift, width);
                }
                Candidates::Copied(copy)
            }
        };
        if let Candidates::Copied(copy) = &cands {
            // Candidates that are all one key (heavy duplicates) need no more digits.
            if let Some(&first) = copy.first() {
                if copy.iter().all(|&x| x == first) {
                    return first;
                }
            }
        }
        count = in_digit;
    }
}

/// A fixed prefix: the keys whose bits above `shift` equal `value`.
#[derive(Clone, Copy, Debug)]
struct Prefix {
    /// The prefix's bits.
    value: u64,
    /// Where the prefix ends (bits below are free).
    shift: u32,
}

impl Prefix {
    /// Whether `key` has this prefix.
    #[inline(always)]
    fn matches(self, key: u64) -> bool {
        key >> self.shift == self.value
    }
}

/// The histogram of the digit at `shift` (`width` bits) of the keys (with prefix `only`, when
/// given) of `data`, counted in parallel chunks when allowed.
fn histogram<V, K, F>(
    data: &[V],
    key: F,
    only: Option<Prefix>,
    shift: u32,
    width: u32,
    parallel: bool,
) -> Vec<usize>
where
    V: Copy + Sync,
    K: RadixKey,
    F: Fn(V) -> K + Sync + Send + Copy,
{
    let parts = map_chunks(data, parallel, move |chunk| {
        let mut h = vec![0u32; 1 << width];
        match only {
            None => {
                for &x in chunk {
                    h[key(x).digit(shift, width)] += 1;
                }
            }
            Some(p) => {
                for &x in chunk {
                    let kx = key(x);
                    if p.matches(kx.to_u64()) {
                        h[kx.digit(shift, width)] += 1;
                    }
                }
            }
        }
        h
    });
    merge(parts, width)
}

/// Sums per-chunk histograms.
fn merge(parts: Vec<Vec<u32>>, width: u32) -> Vec<usize> {
    let mut total = vec![0usize; 1 << width];
    for h in parts {
        for (t, c) in total.iter_mut().zip(h) {
            *t += c as usize;
        }
    }
    total
}

/// Copies the keys of `data` with prefix `p` and counts their digit at `shift`.
fn collect<V, K, F>(
    data: &[V],
    key: F,
    p: Prefix,
    shift: u32,
    width: u32,
    parallel: bool,
) -> (Vec<K>, Vec<usize>)
where
    V: Copy + Sync,
    K: RadixKey,
    F: Fn(V) -> K + Sync + Send + Copy,
{
    let parts = map_chunks(data, parallel, move |chunk| {
        let mut h = vec![0u32; 1 << width];
        let mut out = Vec::new();
        for &x in chunk {
            let kx = key(x);
            if p.matches(kx.to_u64()) {
                h[kx.digit(shift, width)] += 1;
                out.push(kx);
            }
        }
        (out, h)
    });
    let (copies, hists): (Vec<Vec<K>>, Vec<Vec<u32>>) = parts.into_iter().unzip();
    let copy = if use_parallel(true, copies.iter().map(Vec::len).sum()) {
        copies.into_par_iter().flatten().collect()
    } else {
        copies.concat()
    };
    (copy, merge(hists, width))
}

/// Keeps the keys of `copy` with prefix `p` (in place) and counts their digit at `shift`.
fn narrow<K: RadixKey>(copy: &mut Vec<K>, p: Prefix, shift: u32, width: u32) -> Vec<usize> {
    let mut h = vec![0usize; 1 << width];
    copy.retain(|kx| {
        let keep = p.matches(kx.to_u64());
        if keep {
            h[kx.digit(shift, width)] += 1;
        }
        keep
    });
    h
}

/// Unit tests against the sort reference.
#[cfg(test)]
mod tests {
    use super::*;
    use crate::select::host::testing::matches_sort_on_adversarial_inputs;

    matches_sort_on_adversarial_inputs!(super::select);

    /// The wide first digit and selection on plain keys.
    #[test]
    fn wide_first_digit_and_keys() {
        let n = WIDE_FROM + 3;
        let keys: Vec<u64> = (0..n as u64)
            .map(|i| i.wrapping_mul(0x9E37_79B9_7F4A_7C15))
            .collect();
        let mut sorted = keys.clone();
        sorted.sort_unstable();
        for k in [0, 1, n / 2, n - 1] {
            assert_eq!(select_keys(&keys, k, true), sorted[k]);
        }
    }
}
