//! SplitMix64, the generator of the benchmarks' test data. A benchmark includes it with
//! `#[path = "common/splitmix.rs"] mod splitmix;`.

/// The next number of the SplitMix64 stream whose state is `state`: a fast, seedable generator
/// for test data.
pub fn next(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// `n` values generated in parallel, in chunks of `2^16`: value `i` is `value(&mut state, i)`,
/// `state` the stream of its chunk `c`, seeded `seed ^ c * 0x9E37_79B9` (the same values on any
/// number of threads).
// Not every benchmark generates its data so.
#[allow(dead_code)]
pub fn generate<T: Clone + Default + Send>(
    n: usize,
    seed: u64,
    value: impl Fn(&mut u64, usize) -> T + Sync,
) -> Vec<T> {
    use rayon::prelude::*;
    let mut data = vec![T::default(); n];
    data.par_chunks_mut(1 << 16)
        .enumerate()
        .for_each(|(c, chunk)| {
            let mut s = seed ^ (c as u64).wrapping_mul(0x9E37_79B9);
            for (j, x) in chunk.iter_mut().enumerate() {
                *x = value(&mut s, c * (1 << 16) + j);
            }
        });
    data
}
