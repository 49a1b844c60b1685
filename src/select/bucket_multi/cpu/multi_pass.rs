//! The two passes of bucketMultiSelect over the data: counting the values per bucket, and
//! copying the keys of the buckets that hold requested ranks.
//!
//! For 32-bit types on a CPU with AVX2, the buckets are computed eight values at a time, the
//! projection's tables in registers. The counting pass takes the buckets of 16 values from
//! the registers, two at a time (no round trip through memory), and adds one to each
//! counter. The copying pass works in blocks of [`BLOCK`] values: their buckets are stored,
//! then a scalar loop marks the block's values whose bucket is wanted and copies those (few)
//! keys to their bucket's place; with AVX-512 the test and the copy are vector operations
//! instead ([`avx512`]). The scalar and the vector forms run the same `f32` operations in the
//! same order, so they give the same buckets.

use crate::element::{DType, Element, RadixKey};
#[cfg(target_arch = "x86_64")]
use crate::select::bucket_multi::cpu::avx512;
use crate::select::bucket_multi::cpu::avx512::Bitmap;
use crate::select::bucket_multi::cpu::piecewise::{Piecewise, Real};

/// Values per block.
const BLOCK: usize = 64;

/// Adds the number of values of `chunk` in each bucket of `p` to `counts` (`p.buckets()`
/// entries).
pub(crate) fn count<T: Element, F: Real>(p: &Piecewise<F>, chunk: &[T], counts: &mut [u32]) {
    debug_assert_eq!(counts.len(), p.buckets());
    #[cfg(target_arch = "x86_64")]
    if let Some(p32) = F::as_f32(p) {
        if T::Key::BITS == 32 && std::arch::is_x86_feature_detected!("avx2") {
            // SAFETY: the CPU supports AVX2 (detected just above) and `T` is a 32-bit type.
            unsafe { avx2::count(p32, chunk, counts) };
            return;
        }
    }
    for &x in chunk {
        counts[p.bucket(x)] += 1;
    }
}

/// Adds the number of values of `chunk` in each bucket of `p` to `counts` (zero on entry, as
/// [`count`]) and returns, in input order, the values whose bucket is marked (`marked`, one
/// flag a bucket): the count and the copy in one pass.
pub(crate) fn count_keep<T: Element, F: Real>(
    p: &Piecewise<F>,
    chunk: &[T],
    marked: &[bool],
    counts: &mut [u32],
) -> Vec<T> {
    debug_assert_eq!(counts.len(), p.buckets());
    debug_assert_eq!(marked.len(), p.buckets());
    #[cfg(target_arch = "x86_64")]
    if let Some(p32) = F::as_f32(p) {
        if T::Key::BITS == 32 && std::arch::is_x86_feature_detected!("avx2") {
            let bits = Bitmap::of(marked.iter().copied());
            // The fused pass takes the vector test only with the bitmap in registers (the
            // gathered test measured slower than the staging loop here).
            if bits.in_registers() && avx512::supported() {
                // The marked buckets' share of the buckets, and a little.
                let share = 1.25 * marked.iter().filter(|&&m| m).count() as f64
                    / marked.len().max(1) as f64;
                // SAFETY: the CPU supports AVX2, AVX-512F and POPCNT (detected just above), `T`
                // is a 32-bit type, `counts` has an entry for every bucket (asserted by the
                // callee), and `bits` covers every bucket.
                return unsafe { avx512::count_keep(p32, chunk, &bits, share, counts) };
            }
            // SAFETY: the CPU supports AVX2 (detected just above), `T` is a 32-bit type, and
            // `counts` and `marked` have an entry for every bucket (asserted by the callee).
            return unsafe { avx2::count_keep(p32, chunk, marked, counts) };
        }
    }
    let mut kept = Vec::new();
    for &x in chunk {
        let b = p.bucket(x);
        counts[b] += 1;
        if marked[b] {
            kept.push(x);
        }
    }
    kept
}

/// Where the copy pass puts the keys of the wanted buckets: per bucket its slot (`NONE` for
/// buckets not copied), per slot the position of its first key in the chunk's copy.
pub(crate) struct Slots<'a> {
    /// Per bucket: its slot, or [`Slots::NONE`].
    pub(crate) of_bucket: &'a [u32],
    /// Per slot: where its keys start in the copy.
    pub(crate) start: Vec<usize>,
    /// The number of keys copied (the copy's length).
    pub(crate) total: usize,
    /// The buckets with a slot as a bitmap (covering every bucket), for the vector test of
    /// the AVX-512 pass, or `None` for the scalar test.
    pub(crate) bits: Option<&'a Bitmap>,
}

impl Slots<'_> {
    /// The slot of a bucket that is not copied.
    pub(crate) const NONE: u32 = u32::MAX;
}

/// The keys (as `W`, the unsigned integer of the key's width) of the values of `chunk` whose
/// bucket has a slot, grouped by slot (input order within a slot); `slots` must match the
/// chunk's counts (from the count pass over the same chunk).
pub(crate) fn extract<T: Element, W: Element, F: Real>(
    p: &Piecewise<F>,
    chunk: &[T],
    slots: Slots<'_>,
) -> Vec<W> {
    let mut out = vec![W::default(); slots.total];
    let mut at = slots.start;
    #[cfg(target_arch = "x86_64")]
    if let Some(p32) = F::as_f32(p) {
        if T::Key::BITS == 32 && std::arch::is_x86_feature_detected!("avx2") {
            // The vector test drops NaNs: only for copies without NaN's bucket.
            let nan_copied = slots.of_bucket[p.top] != Slots::NONE;
            if let Some(bits) = slots.bits.filter(|_| !nan_copied && avx512::supported()) {
                // SAFETY: the CPU supports AVX2, AVX-512F and POPCNT (detected just above),
                // `T` and `W` are 32-bit types, `bits` marks the buckets with a slot, and
                // NaN's bucket has none.
                unsafe { avx512::extract(p32, chunk, slots.of_bucket, bits, &mut at, &mut out) };
                return out;
            }
            // SAFETY: the CPU supports AVX2 (detected just above) and `T` is a 32-bit type.
            unsafe { avx2::extract(p32, chunk, slots.of_bucket, &mut at, &mut out) };
            return out;
        }
    }
    for &x in chunk {
        let slot = slots.of_bucket[p.bucket(x)];
        if slot != Slots::NONE {
            out[at[slot as usize]] = key_as::<T, W>(x);
            at[slot as usize] += 1;
        }
    }
    out
}

/// The key of `x` as the unsigned integer `W` of the key's width.
#[inline(always)]
pub(super) fn key_as<T: Element, W: Element>(x: T) -> W {
    W::from_key(W::Key::from_u64(x.to_key().to_u64()))
}

/// How a 32-bit type's bits become its coordinate and its key in the vector pass.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Kind {
    /// `f32`: the value; the key flips the bits (all of a negative, the sign of a positive).
    Float,
    /// `i32`: the integer; the key flips the sign bit.
    Signed,
    /// `u32`: the integer minus `2^31`; the key is the integer.
    Unsigned,
}

/// The kind of the 32-bit type `T`.
pub(super) fn kind<T: Element>() -> Kind {
    match T::DTYPE {
        DType::F32 => Kind::Float,
        DType::I32 => Kind::Signed,
        _ => Kind::Unsigned,
    }
}

/// The AVX2 forms of the passes, for 32-bit types. (The functions are `unsafe fn`s with the
/// `avx2` feature; their bodies call the intrinsics directly.)
#[cfg(target_arch = "x86_64")]
pub(super) mod avx2 {
    use std::arch::x86_64::*;

    use super::{key_as, kind, Kind, Slots, BLOCK};
    use crate::element::Element;
    use crate::select::bucket_multi::cpu::piecewise::{Piecewise, CELLS};

    /// Values ahead of the current block that are prefetched.
    const PREFETCH: usize = 8 * BLOCK;

    /// Wanted keys staged before they are put in place.
    const STAGE: usize = 8 * BLOCK;

    /// Appends the values of `block` whose bucket (in `buckets`) is wanted to `staged` from
    /// position `pos` on, branch-free: every value is written, the position advances for
    /// wanted ones only. Returns the new position.
    ///
    /// # Safety
    /// Every bucket must be below `wanted.len()`; `pos + BLOCK <= staged.len()`.
    #[inline(never)]
    unsafe fn stage<T: Copy>(
        buckets: &[u32; BLOCK],
        block: &[T],
        wanted: &[u8],
        staged: &mut [T],
        pos: usize,
    ) -> usize {
        let window = &mut staged[pos..pos + BLOCK];
        // `n` is at most the index of the value being written, so below `BLOCK`.
        let mut n = 0;
        for (&b, &x) in buckets.iter().zip(block) {
            window[n & (BLOCK - 1)] = x;
            n += *wanted.get_unchecked(b as usize) as usize;
        }
        pos + n
    }

    /// Puts staged values' keys in their buckets' places.
    fn place<T: Element, W: Element>(
        p: &Piecewise<f32>,
        staged: &[T],
        of_bucket: &[u32],
        at: &mut [usize],
        out: &mut [W],
    ) {
        for &x in staged {
            let slot = of_bucket[p.bucket(x)] as usize;
            out[at[slot]] = key_as::<T, W>(x);
            at[slot] += 1;
        }
    }

    /// The projection's constants and tables in registers.
    pub(in crate::select::bucket_multi::cpu) struct Tables {
        /// The first cell's start.
        lo: __m256,
        /// Cells per unit.
        inv_width: __m256,
        /// The last cell's index, as a float.
        last_cell: __m256,
        /// Per cell: its start.
        cell_lo: __m256,
        /// Per cell: buckets per unit.
        cell_scale: __m256,
        /// Per cell: its largest bucket index within it.
        cell_last: __m256,
        /// Per cell: its first bucket.
        cell_start: __m256i,
        /// NaN's bucket.
        top: __m256i,
    }

    /// The registers of `p`.
    ///
    /// # Safety
    /// The CPU must support AVX2.
    #[target_feature(enable = "avx2")]
    pub(in crate::select::bucket_multi::cpu) unsafe fn tables(p: &Piecewise<f32>) -> Tables {
        const _: () = assert!(CELLS == 8, "one register per table");
        Tables {
            lo: _mm256_set1_ps(p.lo),
            inv_width: _mm256_set1_ps(p.inv_width),
            last_cell: _mm256_set1_ps((CELLS - 1) as f32),
            cell_lo: _mm256_loadu_ps(p.cell_lo.as_ptr()),
            cell_scale: _mm256_loadu_ps(p.cell_scale.as_ptr()),
            cell_last: _mm256_loadu_ps(p.cell_last.as_ptr()),
            cell_start: _mm256_loadu_si256(p.cell_start.as_ptr() as *const __m256i),
            top: _mm256_set1_epi32(p.top as i32),
        }
    }

    /// The buckets and the keys of the 8 values at `ptr` (a 32-bit type of `kind`), by the
    /// same operations as [`Piecewise::bucket`]; with `NAN` false, NaN lanes get any bucket
    /// (for a caller that drops NaNs itself).
    ///
    /// # Safety
    /// The CPU must support AVX2; `ptr` must point to 8 readable values of a 32-bit element
    /// type of kind `kind`.
    #[inline]
    #[target_feature(enable = "avx2")]
    pub(in crate::select::bucket_multi::cpu) unsafe fn buckets8<
        const LINEAR: bool,
        const BY_KEY: bool,
        const NAN: bool,
    >(
        t: &Tables,
        ptr: *const u32,
        kind: Kind,
    ) -> (__m256i, __m256i) {
        let sign = _mm256_set1_epi32(i32::MIN);
        let bits = _mm256_loadu_si256(ptr as *const __m256i);
        let (coord, key, nan) = match kind {
            Kind::Float => {
                let x = _mm256_castsi256_ps(bits);
                let flip = _mm256_or_si256(_mm256_srai_epi32::<31>(bits), sign);
                let key = _mm256_xor_si256(bits, flip);
                let coord = if BY_KEY {
                    _mm256_cvtepi32_ps(_mm256_xor_si256(key, sign))
                } else {
                    x
                };
                if NAN {
                    let nan = _mm256_castps_si256(_mm256_cmp_ps::<_CMP_UNORD_Q>(x, x));
                    (coord, _mm256_or_si256(key, nan), Some(nan))
                } else {
                    (coord, key, None)
                }
            }
            Kind::Signed => (_mm256_cvtepi32_ps(bits), _mm256_xor_si256(bits, sign), None),
            Kind::Unsigned => (_mm256_cvtepi32_ps(_mm256_xor_si256(bits, sign)), bits, None),
        };
        let zero = _mm256_setzero_ps();
        let (cell_lo, scale, last, start) = if LINEAR {
            // Every cell has the same entries (the first lanes).
            (t.cell_lo, t.cell_scale, t.cell_last, t.cell_start)
        } else {
            let t_cell = _mm256_mul_ps(_mm256_sub_ps(coord, t.lo), t.inv_width);
            let t_cell = _mm256_min_ps(_mm256_max_ps(t_cell, zero), t.last_cell);
            let cell = _mm256_cvttps_epi32(t_cell);
            (
                _mm256_permutevar8x32_ps(t.cell_lo, cell),
                _mm256_permutevar8x32_ps(t.cell_scale, cell),
                _mm256_permutevar8x32_ps(t.cell_last, cell),
                _mm256_permutevar8x32_epi32(t.cell_start, cell),
            )
        };
        let u = _mm256_mul_ps(_mm256_sub_ps(coord, cell_lo), scale);
        let u = _mm256_min_ps(_mm256_max_ps(u, zero), last);
        let bucket = _mm256_add_epi32(start, _mm256_cvttps_epi32(u));
        let bucket = match nan {
            Some(nan) => _mm256_blendv_epi8(bucket, t.top, nan),
            None => bucket,
        };
        (bucket, key)
    }

    /// The buckets of the `BLOCK` values of `block` into `buckets`, 8 at a time.
    ///
    /// # Safety
    /// The CPU must support AVX2; `block` must hold `BLOCK` values of a 32-bit element type of
    /// kind `kind`.
    #[inline]
    #[target_feature(enable = "avx2")]
    unsafe fn block_buckets<T, const LINEAR: bool, const BY_KEY: bool>(
        t: &Tables,
        block: &[T],
        kind: Kind,
        buckets: &mut [u32; BLOCK],
    ) {
        for j in 0..BLOCK / 8 {
            // The block holds `BLOCK` 32-bit values, 8 from `8 j` on; `buckets` has room for 8
            // from `8 j` on.
            let (b, _) =
                buckets8::<LINEAR, BY_KEY, true>(t, block.as_ptr().add(8 * j) as *const u32, kind);
            _mm256_storeu_si256(buckets.as_mut_ptr().add(8 * j) as *mut __m256i, b);
        }
    }

    /// [`super::count`] for a 32-bit type `T`.
    ///
    /// # Safety
    /// The CPU must support AVX2 and `T` must be a 32-bit type.
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn count<T: Element>(p: &Piecewise<f32>, chunk: &[T], counts: &mut [u32]) {
        match (p.linear, p.by_key) {
            (true, false) => count_by::<T, true, false>(p, chunk, counts),
            (true, true) => count_by::<T, true, true>(p, chunk, counts),
            (false, false) => count_by::<T, false, false>(p, chunk, counts),
            (false, true) => count_by::<T, false, true>(p, chunk, counts),
        }
    }

    /// [`count`], the cells computed or not (`LINEAR`: every cell is the same), floats'
    /// coordinates their keys or their values (`BY_KEY`).
    ///
    /// # Safety
    /// The CPU must support AVX2 and `T` must be a 32-bit type.
    #[target_feature(enable = "avx2")]
    unsafe fn count_by<T: Element, const LINEAR: bool, const BY_KEY: bool>(
        p: &Piecewise<f32>,
        chunk: &[T],
        counts: &mut [u32],
    ) {
        assert_eq!(counts.len(), p.buckets());
        let t = tables(p);
        let kind = kind::<T>();
        let counters = counts.as_mut_ptr();
        let mut pairs = chunk.chunks_exact(16);
        for pair in &mut pairs {
            // A few blocks ahead (the prefetch never faults, in or out of the chunk).
            _mm_prefetch::<_MM_HINT_T0>(pair.as_ptr().wrapping_add(PREFETCH) as *const i8);
            // The pair holds 16 32-bit values, 8 from 0 and 8 from 8 on.
            let ptr = pair.as_ptr() as *const u32;
            let (low, _) = buckets8::<LINEAR, BY_KEY, true>(&t, ptr, kind);
            let (high, _) = buckets8::<LINEAR, BY_KEY, true>(&t, ptr.add(8), kind);
            // Every bucket is below `p.buckets()`, the length of `counts`.
            add_counts(counters, low);
            add_counts(counters, high);
        }
        for &x in pairs.remainder() {
            counts[p.bucket(x)] += 1;
        }
    }

    /// Adds one to the counter of each of the 8 buckets of `b`, taken from the register 64
    /// bits at a time (no round trip through memory).
    ///
    /// # Safety
    /// The CPU must support AVX2; `counters` must have an entry for every bucket of `b`.
    #[inline]
    #[target_feature(enable = "avx2")]
    pub(in crate::select::bucket_multi::cpu) unsafe fn add_counts(counters: *mut u32, b: __m256i) {
        let low = _mm256_castsi256_si128(b);
        let high = _mm256_extracti128_si256::<1>(b);
        for two in [
            _mm_cvtsi128_si64(low) as u64,
            _mm_extract_epi64::<1>(low) as u64,
            _mm_cvtsi128_si64(high) as u64,
            _mm_extract_epi64::<1>(high) as u64,
        ] {
            *counters.add(two as u32 as usize) += 1;
            *counters.add((two >> 32) as usize) += 1;
        }
    }

    /// [`super::count_keep`] for a 32-bit type `T`.
    ///
    /// # Safety
    /// The CPU must support AVX2 and `T` must be a 32-bit type.
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn count_keep<T: Element>(
        p: &Piecewise<f32>,
        chunk: &[T],
        marked: &[bool],
        counts: &mut [u32],
    ) -> Vec<T> {
        match (p.linear, p.by_key) {
            (true, false) => count_keep_by::<T, true, false>(p, chunk, marked, counts),
            (true, true) => count_keep_by::<T, true, true>(p, chunk, marked, counts),
            (false, false) => count_keep_by::<T, false, false>(p, chunk, marked, counts),
            (false, true) => count_keep_by::<T, false, true>(p, chunk, marked, counts),
        }
    }

    /// [`count_keep`], the cells computed or not (`LINEAR`), floats' coordinates their keys or
    /// their values (`BY_KEY`). Every value is counted and written to the copy's next place,
    /// which advances for the values of marked buckets only (no branch).
    ///
    /// # Safety
    /// As [`count_keep`].
    #[target_feature(enable = "avx2")]
    unsafe fn count_keep_by<T: Element, const LINEAR: bool, const BY_KEY: bool>(
        p: &Piecewise<f32>,
        chunk: &[T],
        marked: &[bool],
        counts: &mut [u32],
    ) -> Vec<T> {
        assert_eq!(counts.len(), p.buckets());
        assert_eq!(marked.len(), p.buckets());
        let wanted: Vec<u8> = marked.iter().map(|&m| m as u8).collect();
        let t = tables(p);
        let kind = kind::<T>();
        let mut buckets = [0u32; BLOCK];
        // Room for the expected share (the marked buckets' share of the buckets) and a little.
        let share = wanted.iter().filter(|&&w| w != 0).count() as f64 / wanted.len().max(1) as f64;
        let mut kept: Vec<T> =
            vec![T::default(); (chunk.len() as f64 * share * 1.25) as usize + BLOCK];
        let mut pos = 0usize;
        let mut blocks = chunk.chunks_exact(BLOCK);
        for block in &mut blocks {
            _mm_prefetch::<_MM_HINT_T0>(block.as_ptr().wrapping_add(PREFETCH) as *const i8);
            block_buckets::<T, LINEAR, BY_KEY>(&t, block, kind, &mut buckets);
            if pos + BLOCK > kept.len() {
                kept.resize((2 * kept.len()).max(pos + BLOCK), T::default());
            }
            let window = &mut kept[pos..pos + BLOCK];
            // `n` is at most the index of the value being written, so below `BLOCK`.
            let mut n = 0;
            for (&b, &x) in buckets.iter().zip(block) {
                // Every bucket is below `p.buckets()`, the length of `counts` and `wanted`.
                *counts.get_unchecked_mut(b as usize) += 1;
                *window.get_unchecked_mut(n & (BLOCK - 1)) = x;
                n += *wanted.get_unchecked(b as usize) as usize;
            }
            pos += n;
        }
        kept.truncate(pos);
        for &x in blocks.remainder() {
            let b = p.bucket(x);
            counts[b] += 1;
            if marked[b] {
                kept.push(x);
            }
        }
        kept
    }

    /// [`super::extract`] for a 32-bit type `T`: the keys of buckets with a slot go to `out`
    /// at `at[slot]`, which advances.
    ///
    /// # Safety
    /// The CPU must support AVX2, `T` and `W` must be 32-bit types, and `of_bucket` must have
    /// an entry for every bucket of `p`.
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn extract<T: Element, W: Element>(
        p: &Piecewise<f32>,
        chunk: &[T],
        of_bucket: &[u32],
        at: &mut [usize],
        out: &mut [W],
    ) {
        match (p.linear, p.by_key) {
            (true, false) => extract_by::<T, W, true, false>(p, chunk, of_bucket, at, out),
            (true, true) => extract_by::<T, W, true, true>(p, chunk, of_bucket, at, out),
            (false, false) => extract_by::<T, W, false, false>(p, chunk, of_bucket, at, out),
            (false, true) => extract_by::<T, W, false, true>(p, chunk, of_bucket, at, out),
        }
    }

    /// [`extract`], the cells computed or not (`LINEAR`: every cell is the same), floats'
    /// coordinates their keys or their values (`BY_KEY`).
    ///
    /// # Safety
    /// As [`extract`].
    #[target_feature(enable = "avx2")]
    unsafe fn extract_by<T: Element, W: Element, const LINEAR: bool, const BY_KEY: bool>(
        p: &Piecewise<f32>,
        chunk: &[T],
        of_bucket: &[u32],
        at: &mut [usize],
        out: &mut [W],
    ) {
        assert_eq!(of_bucket.len(), p.buckets());
        let t = tables(p);
        let kind = kind::<T>();
        let mut buckets = [0u32; BLOCK];
        // Per bucket: whether it is wanted.
        let wanted: Vec<u8> = of_bucket
            .iter()
            .map(|&s| (s != Slots::NONE) as u8)
            .collect();
        // Values of wanted buckets, waiting to be put in place.
        let mut staged = vec![T::default(); STAGE];
        let mut pos = 0usize;
        let mut blocks = chunk.chunks_exact(BLOCK);
        for block in &mut blocks {
            block_buckets::<T, LINEAR, BY_KEY>(&t, block, kind, &mut buckets);
            // Every bucket is below `p.buckets()`, the length of `wanted`.
            pos = stage(&buckets, block, &wanted, &mut staged, pos);
            if pos > STAGE - BLOCK {
                place(p, &staged[..pos], of_bucket, at, out);
                pos = 0;
            }
        }
        place(p, &staged[..pos], of_bucket, at, out);
        for &x in blocks.remainder() {
            let slot = of_bucket[p.bucket(x)];
            if slot != Slots::NONE {
                out[at[slot as usize]] = key_as::<T, W>(x);
                at[slot as usize] += 1;
            }
        }
    }
}

/// Unit tests: the vector and the scalar forms agree.
#[cfg(test)]
mod tests {
    use super::*;
    use crate::select::host::testing::{inputs, Gen};

    /// Counts and copies equal the scalar projection's, on every adversarial input, with
    /// few buckets and with more than a bitmap in registers holds.
    fn check<T: Gen, W: Element, F: Real>() {
        for (name, data) in inputs::<T>(5000, 21) {
            let sample: Vec<T> = data.iter().step_by(5).copied().collect();
            for buckets in [300, 6000] {
                let p = Piecewise::<F>::fit(&sample, buckets);
                check_passes::<T, W, F>(&p, &data, name);
            }
        }
    }

    /// The passes of `p` over `data` against the scalar projection.
    fn check_passes<T: Gen, W: Element, F: Real>(p: &Piecewise<F>, data: &[T], name: &str) {
        let mut counts = vec![0u32; p.buckets()];
        count(p, data, &mut counts);
        let mut want = vec![0u32; p.buckets()];
        for &x in data {
            want[p.bucket(x)] += 1;
        }
        assert_eq!(counts, want, "{} {name}", T::DTYPE);
        // The fused pass keeps the values of every third bucket, in input order.
        let marked: Vec<bool> = (0..p.buckets()).map(|b| b % 3 == 0).collect();
        let mut fused = vec![0u32; p.buckets()];
        let kept: Vec<T::Key> = count_keep(p, data, &marked, &mut fused)
            .into_iter()
            .map(|x| x.to_key())
            .collect();
        let want_kept: Vec<T::Key> = data
            .iter()
            .filter(|&&x| marked[p.bucket(x)])
            .map(|x| x.to_key())
            .collect();
        assert_eq!(fused, want, "{} {name}", T::DTYPE);
        assert_eq!(kept, want_kept, "{} {name}", T::DTYPE);
        // Every third bucket gets a slot, in reverse bucket order: NaN's bucket among them or
        // not, and only those a bitmap in registers holds.
        for (nan, below) in [(true, usize::MAX), (false, usize::MAX), (false, 4096)] {
            let picked: Vec<usize> = (0..p.buckets())
                .filter(|&b| b % 3 == 0 && (nan || b != p.top) && b < below)
                .rev()
                .collect();
            check_copy::<T, W, F>(p, data, &want, &picked, name);
        }
    }

    /// The copy of the `picked` buckets (slots in that order) by the scalar test of the
    /// wanted buckets and by the bitmap's equals the scalar projection's; `counts` are the
    /// buckets' counts.
    fn check_copy<T: Gen, W: Element, F: Real>(
        p: &Piecewise<F>,
        data: &[T],
        counts: &[u32],
        picked: &[usize],
        name: &str,
    ) {
        let mut of_bucket = vec![Slots::NONE; p.buckets()];
        let mut start = Vec::new();
        let mut total = 0;
        for (slot, &b) in picked.iter().enumerate() {
            of_bucket[b] = slot as u32;
            start.push(total);
            total += counts[b] as usize;
        }
        let mut of_each: Vec<Vec<W>> = vec![Vec::new(); p.buckets()];
        for &x in data {
            of_each[p.bucket(x)].push(key_as::<T, W>(x));
        }
        let want: Vec<W> = picked.iter().flat_map(|&b| of_each[b].clone()).collect();
        let bits = Bitmap::of(of_bucket.iter().map(|&s| s != Slots::NONE));
        for bits in [None, Some(&bits)] {
            let slots = Slots {
                of_bucket: &of_bucket,
                start: start.clone(),
                total,
                bits,
            };
            let got: Vec<W> = extract(p, data, slots);
            assert_eq!(got, want, "{} {name}", T::DTYPE);
        }
    }

    /// Every element type.
    #[test]
    fn passes_match_the_scalar_projection() {
        check::<f32, u32, f32>();
        check::<i32, u32, f32>();
        check::<u32, u32, f32>();
        check::<f64, u64, f64>();
        check::<i64, u64, f64>();
        check::<u64, u64, f64>();
    }
}
