//! Starting subsets: a small seeded generator, random `k`-subsets of rows, and the enumeration
//! of all `k`-subsets in lexicographic order.
//!
//! Every random start draws from its own generator, seeded from the user's seed, the stage and
//! the start's index (never from a shared stream), so that the results are the same bits
//! whatever the number of threads and the order in which the starts run.

use crate::random::SplitMix64;

/// xoshiro256** (Blackman and Vigna), seeded through SplitMix64.
#[derive(Clone, Debug)]
pub(crate) struct Rng {
    s: [u64; 4],
}

impl Rng {
    /// The generator of stream `(stage, index)` under `seed`.
    pub(crate) fn stream(seed: u64, stage: u64, index: u64) -> Rng {
        let a = SplitMix64::new(seed).next_u64();
        let b = SplitMix64::new(a ^ stage.wrapping_mul(0xD1B5_4A32_D192_ED03)).next_u64();
        let mut words = SplitMix64::new(b ^ index.wrapping_mul(0x8CB9_2BA7_2F3D_8DD7));
        let mut s = [0u64; 4];
        for word in &mut s {
            *word = words.next_u64();
        }
        if s == [0; 4] {
            s[0] = 1;
        }
        Rng { s }
    }

    /// The next 64 random bits.
    pub(crate) fn next_u64(&mut self) -> u64 {
        let result = self.s[1].wrapping_mul(5).rotate_left(7).wrapping_mul(9);
        let t = self.s[1] << 17;
        self.s[2] ^= self.s[0];
        self.s[3] ^= self.s[1];
        self.s[1] ^= self.s[2];
        self.s[0] ^= self.s[3];
        self.s[2] ^= t;
        self.s[3] = self.s[3].rotate_left(45);
        result
    }

    /// A uniform integer in `0..bound` (`bound > 0`), without modulo bias (Lemire's method).
    /// The rejection threshold `2^64 mod bound` is below `bound`, so it is computed (a
    /// division) only for the rare draws whose low word is below `bound`.
    pub(crate) fn below(&mut self, bound: usize) -> usize {
        let bound = bound as u64;
        let mut m = u128::from(self.next_u64()) * u128::from(bound);
        if (m as u64) < bound {
            let threshold = bound.wrapping_neg() % bound;
            while (m as u64) < threshold {
                m = u128::from(self.next_u64()) * u128::from(bound);
            }
        }
        (m >> 64) as usize
    }

    /// `k` distinct values of `0..m` (`k <= m`), by Floyd's algorithm, in the order drawn.
    pub(crate) fn distinct(&mut self, k: usize, m: usize, out: &mut Vec<usize>) {
        out.clear();
        for j in (m - k)..m {
            let t = self.below(j + 1);
            if out.contains(&t) {
                out.push(j);
            } else {
                out.push(t);
            }
        }
    }

    /// A random permutation of `0..m` (Fisher–Yates).
    pub(crate) fn permutation(&mut self, m: usize) -> Vec<usize> {
        let mut perm: Vec<usize> = (0..m).collect();
        for i in (1..m).rev() {
            let j = self.below(i + 1);
            perm.swap(i, j);
        }
        perm
    }

    /// The first `k` values of [`permutation(m)`](Rng::permutation), from the same draws, without
    /// the array of `m` values and its random swaps: the draws are kept (4 bytes each) and the
    /// swaps replayed backwards for the `k` positions alone, whose places are marked in a bitset
    /// (`m / 8` bytes, cache-resident where the permutation's array is not).
    pub(crate) fn permutation_prefix(&mut self, m: usize, k: usize) -> Vec<usize> {
        let k = k.min(m);
        if m <= 2 * k || u32::try_from(m).is_err() {
            let mut perm = self.permutation(m);
            perm.truncate(k);
            return perm;
        }
        // draws[i] = the j of the swap of i (Fisher–Yates runs i downwards).
        let mut draws = vec![0u32; m];
        for i in (1..m).rev() {
            draws[i] = self.below(i + 1) as u32;
        }
        // Backwards through the swaps, `owner[q]` is the place whose value ends at position q;
        // the values start as the identity, so the last places are the values.
        let mut marked = vec![0u64; m.div_ceil(64)];
        let mut owner: Vec<usize> = (0..k).collect();
        // place -> q, only for the (few) marked places.
        let mut target = std::collections::HashMap::with_capacity(2 * k);
        for q in 0..k {
            marked[q / 64] |= 1 << (q % 64);
            target.insert(q, q);
        }
        let is_marked = |marked: &[u64], i: usize| marked[i / 64] >> (i % 64) & 1 == 1;
        for (i, &j) in draws.iter().enumerate().skip(1) {
            let j = j as usize;
            let (mi, mj) = (is_marked(&marked, i), is_marked(&marked, j));
            if i == j || !(mi || mj) {
                continue;
            }
            let qi = target.remove(&i);
            let qj = target.remove(&j);
            marked[i / 64] &= !(1 << (i % 64));
            marked[j / 64] &= !(1 << (j % 64));
            if let Some(q) = qi {
                owner[q] = j;
                target.insert(j, q);
                marked[j / 64] |= 1 << (j % 64);
            }
            if let Some(q) = qj {
                owner[q] = i;
                target.insert(i, q);
                marked[i / 64] |= 1 << (i % 64);
            }
        }
        owner
    }
}

/// The settings a search of LMS or FAST-LTS runs with: the coverage `h`, `nsamp` random
/// starts under `seed`, every start when there are at most `max(nsamp, exhaustive_limit)`
/// (see [`Starts`]).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Search {
    pub h: usize,
    pub nsamp: usize,
    pub seed: u64,
    pub exhaustive_limit: u64,
}

/// The starts of a search with `nsamp` random starts on `n` rows and `p` coefficients: every
/// `p`-subset (`exhaustive`) when there are at most `max(nsamp, exhaustive_limit)`, else
/// `nsamp` random ones.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Starts {
    /// How many.
    pub count: u64,
    /// Whether they are every `p`-subset.
    pub exhaustive: bool,
}

impl Starts {
    /// The starts of `nsamp` random ones on `n` rows and `p` coefficients (see [`Starts`]).
    pub fn of(n: usize, p: usize, nsamp: usize, exhaustive_limit: u64) -> Starts {
        let total = binomial(n, p);
        let exhaustive = total <= exhaustive_limit.max(nsamp as u64);
        Starts {
            count: if exhaustive { total } else { nsamp as u64 },
            exhaustive,
        }
    }
}

/// The binomial coefficient `C(n, k)`, saturated at `u64::MAX`.
pub(crate) fn binomial(n: usize, k: usize) -> u64 {
    if k > n {
        return 0;
    }
    let k = k.min(n - k);
    let mut c: u128 = 1;
    for i in 0..k {
        // c * (n - i) / (i + 1) is exact at every step (it is C(n, i + 1) * ...).
        c = c * (n - i) as u128 / (i + 1) as u128;
        if c > u128::from(u64::MAX) {
            return u64::MAX;
        }
    }
    c as u64
}

/// The `k`-subset of `0..n` of lexicographic rank `rank` (0-based; `rank < C(n, k)`), into `out`.
pub(crate) fn unrank_combination(mut rank: u64, n: usize, k: usize, out: &mut Vec<usize>) {
    out.clear();
    let mut next = 0;
    for slot in 0..k {
        // The smallest element x >= next such that the subsets starting with x cover `rank`.
        let mut x = next;
        loop {
            let count = binomial(n - x - 1, k - slot - 1);
            if rank < count {
                break;
            }
            rank -= count;
            x += 1;
        }
        out.push(x);
        next = x + 1;
    }
}

/// Advances `comb` (a `k`-subset of `0..n`, increasing) to the next one in lexicographic order;
/// false after the last.
pub(crate) fn next_combination(comb: &mut [usize], n: usize) -> bool {
    let k = comb.len();
    let mut i = k;
    while i > 0 {
        i -= 1;
        if comb[i] < n - k + i {
            comb[i] += 1;
            for j in i + 1..k {
                comb[j] = comb[j - 1] + 1;
            }
            return true;
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn binomials() {
        assert_eq!(binomial(21, 4), 5985);
        assert_eq!(binomial(75, 4), 1_215_450);
        assert_eq!(binomial(5, 0), 1);
        assert_eq!(binomial(3, 4), 0);
        assert_eq!(binomial(1000, 500), u64::MAX);
    }

    #[test]
    fn unrank_matches_enumeration() {
        let (n, k) = (9, 4);
        let mut comb: Vec<usize> = (0..k).collect();
        let mut out = Vec::new();
        let mut rank = 0;
        loop {
            unrank_combination(rank, n, k, &mut out);
            assert_eq!(out, comb, "rank {rank}");
            rank += 1;
            if !next_combination(&mut comb, n) {
                break;
            }
        }
        assert_eq!(rank, binomial(n, k));
    }

    #[test]
    fn streams_are_reproducible_and_distinct() {
        let mut a = Rng::stream(42, 0, 7);
        let mut b = Rng::stream(42, 0, 7);
        let mut c = Rng::stream(42, 0, 8);
        let xa: Vec<u64> = (0..4).map(|_| a.next_u64()).collect();
        let xb: Vec<u64> = (0..4).map(|_| b.next_u64()).collect();
        let xc: Vec<u64> = (0..4).map(|_| c.next_u64()).collect();
        assert_eq!(xa, xb);
        assert_ne!(xa, xc);
    }

    #[test]
    fn below_draws_as_lemires_method_with_its_threshold_always_computed() {
        // Bounds near 2^63 reject almost half the draws; small ones almost never.
        let bounds = [1, 2, 3, 7, 1000, 1 << 40, (1 << 63) + 1, u64::MAX / 3 * 2];
        for (s, &bound) in bounds.iter().enumerate() {
            let mut fast = Rng::stream(9, 4, s as u64);
            let mut plain = fast.clone();
            for _ in 0..2000 {
                let threshold = bound.wrapping_neg() % bound;
                let want = loop {
                    let m = u128::from(plain.next_u64()) * u128::from(bound);
                    if (m as u64) >= threshold {
                        break (m >> 64) as usize;
                    }
                };
                assert_eq!(fast.below(bound as usize), want, "bound {bound}");
            }
        }
    }

    #[test]
    fn distinct_draws() {
        let mut rng = Rng::stream(1, 2, 3);
        let mut out = Vec::new();
        let mut counts = [0usize; 10];
        for _ in 0..2000 {
            rng.distinct(3, 10, &mut out);
            let mut sorted = out.clone();
            sorted.sort_unstable();
            sorted.dedup();
            assert_eq!(sorted.len(), 3);
            for &v in &out {
                counts[v] += 1;
            }
        }
        // 600 expected per value.
        assert!(
            counts.iter().all(|&c| (450..750).contains(&c)),
            "{counts:?}"
        );
        let perm = rng.permutation(50);
        let mut sorted = perm.clone();
        sorted.sort_unstable();
        assert_eq!(sorted, (0..50).collect::<Vec<_>>());
    }

    #[test]
    fn permutation_prefix_is_the_permutations_start() {
        for (m, k) in [
            (1, 1),
            (5, 2),
            (100, 7),
            (1000, 300),
            (4099, 1500),
            (100_000, 1500),
        ] {
            for seed in 0..4 {
                let full = Rng::stream(seed, 2, 0).permutation(m);
                let prefix = Rng::stream(seed, 2, 0).permutation_prefix(m, k);
                assert_eq!(prefix, full[..k.min(m)], "m {m} k {k} seed {seed}");
            }
        }
    }
}
