//! The copying pass with AVX-512 for 32-bit types: a vector test of the wanted buckets'
//! bitmap, and the wanted values packed by a vector compress.
//!
//! The buckets of 16 values come from the AVX2 projection (the same operations as the counting
//! pass, so the same buckets). When every wanted bucket lies below [`REGISTERS`], the bitmap's
//! first 128 words sit in 8 registers, four two-register permutes fetch each lane's word, and a
//! shift tests its bit; otherwise a gather fetches the words from memory (the bitmap of 32768
//! buckets is 4 KiB, in the first-level cache), about half as fast. The lanes whose bucket is wanted are compressed,
//! with their buckets, into a small staging area, branch-free (the position advances by the
//! mask's population), and the staged values are put in their buckets' places from there. A
//! scalar test per value instead (`multi_pass.rs`) costs about twice as much as the registers'.

/// Buckets whose bitmap fits in registers: 4096 bits, 8 registers of 16 words.
pub(crate) const REGISTERS: usize = 4096;

/// One bit per bucket: whether it is wanted (at least [`REGISTERS`] bits).
pub(crate) struct Bitmap {
    /// The bits, 32 a word.
    words: Vec<u32>,
    /// Whether every wanted bucket is below [`REGISTERS`] (the registers' test serves).
    in_registers: bool,
}

impl Bitmap {
    /// The bitmap of the buckets `wanted` flags (one flag a bucket, in bucket order).
    pub(crate) fn of(wanted: impl ExactSizeIterator<Item = bool>) -> Bitmap {
        let mut words = vec![0u32; wanted.len().max(REGISTERS).div_ceil(32)];
        let mut in_registers = true;
        for (b, wanted) in wanted.enumerate() {
            words[b / 32] |= (wanted as u32) << (b % 32);
            in_registers &= !wanted || b < REGISTERS;
        }
        Bitmap {
            words,
            in_registers,
        }
    }

    /// Whether every wanted bucket lies below [`REGISTERS`].
    pub(crate) fn in_registers(&self) -> bool {
        self.in_registers
    }

    /// Whether bucket `b` is wanted.
    pub(crate) fn get(&self, b: usize) -> bool {
        self.words
            .get(b / 32)
            .is_some_and(|w| w >> (b % 32) & 1 != 0)
    }
}

/// Whether the CPU has what [`extract`] and [`count_keep`] need (AVX2, AVX-512F and POPCNT).
#[cfg(target_arch = "x86_64")]
pub(crate) fn supported() -> bool {
    std::arch::is_x86_feature_detected!("avx2")
        && std::arch::is_x86_feature_detected!("avx512f")
        && std::arch::is_x86_feature_detected!("popcnt")
}

#[cfg(target_arch = "x86_64")]
pub(crate) use vector::{count_keep, extract};

/// The intrinsics.
#[cfg(target_arch = "x86_64")]
mod vector {
    use std::arch::x86_64::*;

    use super::{Bitmap, REGISTERS};
    use crate::element::Element;
    use crate::select::bucket_multi::cpu::multi_pass::avx2::{
        add_counts, buckets8, tables, Tables,
    };
    use crate::select::bucket_multi::cpu::multi_pass::{key_as, kind, Kind};
    use crate::select::bucket_multi::cpu::piecewise::Piecewise;

    /// Values staged before they are put in place.
    const STAGE: usize = 1024;

    /// Lanes of a register.
    const LANES: usize = 16;

    /// Values ahead of the current ones that are prefetched.
    const PREFETCH: usize = 512;

    /// `super::super::multi_pass::extract` for 32-bit types `T` and `W` with the bitmap
    /// `bits` of the buckets with a slot: their keys go to `out` at `at[slot]`, which advances.
    ///
    /// # Safety
    /// The CPU must support AVX2, AVX-512F and POPCNT ([`super::supported`]); `T` and `W` must
    /// be 32-bit types; `of_bucket` must have an entry for every bucket of `p`, and `bits` must
    /// mark exactly the buckets with a slot.
    #[target_feature(enable = "avx2,avx512f,popcnt")]
    pub(crate) unsafe fn extract<T: Element, W: Element>(
        p: &Piecewise<f32>,
        chunk: &[T],
        of_bucket: &[u32],
        bits: &Bitmap,
        at: &mut [usize],
        out: &mut [W],
    ) {
        assert!(32 * bits.words.len() >= p.buckets());
        if bits.in_registers {
            extract_with::<T, W, Registers>(p, chunk, of_bucket, bits, at, out);
        } else {
            extract_with::<T, W, Gathered>(p, chunk, of_bucket, bits, at, out);
        }
    }

    /// [`extract`] with the test `X` of `bits`.
    ///
    /// # Safety
    /// As [`extract`]; `X` must be able to test `bits`.
    #[target_feature(enable = "avx2,avx512f,popcnt")]
    unsafe fn extract_with<T: Element, W: Element, X: Test>(
        p: &Piecewise<f32>,
        chunk: &[T],
        of_bucket: &[u32],
        bits: &Bitmap,
        at: &mut [usize],
        out: &mut [W],
    ) {
        match (p.linear, p.by_key) {
            (true, false) => extract_by::<T, W, X, true, false>(p, chunk, of_bucket, bits, at, out),
            (true, true) => extract_by::<T, W, X, true, true>(p, chunk, of_bucket, bits, at, out),
            (false, false) => {
                extract_by::<T, W, X, false, false>(p, chunk, of_bucket, bits, at, out)
            }
            (false, true) => extract_by::<T, W, X, false, true>(p, chunk, of_bucket, bits, at, out),
        }
    }

    /// [`extract`], the cells computed or not (`LINEAR`), floats' coordinates their keys or
    /// their values (`BY_KEY`).
    ///
    /// # Safety
    /// As [`extract`].
    #[target_feature(enable = "avx2,avx512f,popcnt")]
    unsafe fn extract_by<
        T: Element,
        W: Element,
        X: Test,
        const LINEAR: bool,
        const BY_KEY: bool,
    >(
        p: &Piecewise<f32>,
        chunk: &[T],
        of_bucket: &[u32],
        bits: &Bitmap,
        at: &mut [usize],
        out: &mut [W],
    ) {
        assert_eq!(of_bucket.len(), p.buckets());
        assert_eq!(std::mem::size_of::<T>(), 4);
        let t = tables(p);
        let kind = kind::<T>();
        let test = X::of(bits);
        // Staged values and their buckets (a register's room beyond `STAGE`: every store
        // writes 16 lanes).
        let mut values = vec![T::default(); STAGE + LANES];
        let mut buckets = vec![0u32; STAGE + LANES];
        let mut pos = 0usize;
        let mut groups = chunk.chunks_exact(LANES);
        for group in &mut groups {
            // A few groups ahead (the prefetch never faults, in or out of the chunk).
            _mm_prefetch::<_MM_HINT_T0>(group.as_ptr().wrapping_add(PREFETCH) as *const i8);
            let ptr = group.as_ptr() as *const u32;
            // The group holds 16 32-bit values.
            let b = buckets16::<LINEAR, BY_KEY>(&t, ptr, kind);
            // Every bucket is one of `p`'s (NaN lanes' too).
            let keep = test.mask(b);
            let x = _mm512_loadu_si512(ptr as *const _);
            // `pos <= STAGE`, so both stores of 16 lanes stay in the staging areas.
            _mm512_storeu_si512(
                values.as_mut_ptr().add(pos) as *mut _,
                _mm512_maskz_compress_epi32(keep, x),
            );
            _mm512_storeu_si512(
                buckets.as_mut_ptr().add(pos) as *mut _,
                _mm512_maskz_compress_epi32(keep, b),
            );
            pos += keep.count_ones() as usize;
            if pos > STAGE - LANES {
                place(&values[..pos], &buckets[..pos], of_bucket, at, out);
                pos = 0;
            }
        }
        place(&values[..pos], &buckets[..pos], of_bucket, at, out);
        for &x in groups.remainder() {
            let slot = of_bucket[p.bucket(x)];
            if slot != super::super::multi_pass::Slots::NONE {
                out[at[slot as usize]] = key_as::<T, W>(x);
                at[slot as usize] += 1;
            }
        }
    }

    /// `super::super::multi_pass::count_keep` for a 32-bit type `T` with the bitmap `bits` of
    /// the marked buckets: adds the counts of `chunk`'s buckets to `counts` and returns the
    /// values of the marked buckets in input order.
    ///
    /// # Safety
    /// The CPU must support AVX2, AVX-512F and POPCNT ([`super::supported`]); `T` must be a
    /// 32-bit type; `counts` must have an entry for every bucket of `p`.
    #[target_feature(enable = "avx2,avx512f,popcnt")]
    pub(crate) unsafe fn count_keep<T: Element>(
        p: &Piecewise<f32>,
        chunk: &[T],
        bits: &Bitmap,
        share: f64,
        counts: &mut [u32],
    ) -> Vec<T> {
        assert!(32 * bits.words.len() >= p.buckets());
        if bits.in_registers {
            count_keep_with::<T, Registers>(p, chunk, bits, share, counts)
        } else {
            count_keep_with::<T, Gathered>(p, chunk, bits, share, counts)
        }
    }

    /// [`count_keep`] with the test `X` of `bits`.
    ///
    /// # Safety
    /// As [`count_keep`]; `X` must be able to test `bits`.
    #[target_feature(enable = "avx2,avx512f,popcnt")]
    unsafe fn count_keep_with<T: Element, X: Test>(
        p: &Piecewise<f32>,
        chunk: &[T],
        bits: &Bitmap,
        share: f64,
        counts: &mut [u32],
    ) -> Vec<T> {
        match (p.linear, p.by_key) {
            (true, false) => count_keep_by::<T, X, true, false>(p, chunk, bits, share, counts),
            (true, true) => count_keep_by::<T, X, true, true>(p, chunk, bits, share, counts),
            (false, false) => count_keep_by::<T, X, false, false>(p, chunk, bits, share, counts),
            (false, true) => count_keep_by::<T, X, false, true>(p, chunk, bits, share, counts),
        }
    }

    /// [`count_keep`], the cells computed or not (`LINEAR`), floats' coordinates their keys or
    /// their values (`BY_KEY`); the copy starts with room for `share` of the chunk.
    ///
    /// # Safety
    /// As [`count_keep`].
    #[target_feature(enable = "avx2,avx512f,popcnt")]
    unsafe fn count_keep_by<T: Element, X: Test, const LINEAR: bool, const BY_KEY: bool>(
        p: &Piecewise<f32>,
        chunk: &[T],
        bits: &Bitmap,
        share: f64,
        counts: &mut [u32],
    ) -> Vec<T> {
        assert_eq!(counts.len(), p.buckets());
        assert_eq!(std::mem::size_of::<T>(), 4);
        let t = tables(p);
        let kind = kind::<T>();
        let test = X::of(bits);
        let counters = counts.as_mut_ptr();
        let mut kept: Vec<T> = vec![T::default(); (chunk.len() as f64 * share) as usize + LANES];
        let mut pos = 0usize;
        let mut groups = chunk.chunks_exact(LANES);
        for group in &mut groups {
            _mm_prefetch::<_MM_HINT_T0>(group.as_ptr().wrapping_add(PREFETCH) as *const i8);
            // The group holds 16 32-bit values.
            let ptr = group.as_ptr() as *const u32;
            let (low, _) = buckets8::<LINEAR, BY_KEY, true>(&t, ptr, kind);
            let (high, _) = buckets8::<LINEAR, BY_KEY, true>(&t, ptr.add(8), kind);
            // Every bucket is below `p.buckets()`, the length of `counts`.
            add_counts(counters, low);
            add_counts(counters, high);
            let b = _mm512_inserti64x4::<1>(_mm512_castsi256_si512(low), high);
            // Every bucket is one of `p`'s.
            let keep = test.mask(b);
            if pos + LANES > kept.len() {
                kept.resize(2 * kept.len(), T::default());
            }
            // `pos + 16 <= kept.len()`: the store of 16 lanes stays in the copy.
            _mm512_storeu_si512(
                kept.as_mut_ptr().add(pos) as *mut _,
                _mm512_maskz_compress_epi32(keep, _mm512_loadu_si512(ptr as *const _)),
            );
            pos += keep.count_ones() as usize;
        }
        kept.truncate(pos);
        for &x in groups.remainder() {
            let b = p.bucket(x);
            counts[b] += 1;
            if bits.get(b) {
                kept.push(x);
            }
        }
        kept
    }

    /// The buckets of the 16 values at `ptr`, as the AVX2 pass computes them, but for NaNs:
    /// their lanes get any bucket (NaN's bucket is never copied; [`place`] drops them).
    ///
    /// # Safety
    /// The CPU must support AVX2 and AVX-512F; `ptr` must point to 16 readable values of a
    /// 32-bit element type of kind `kind`.
    #[inline]
    #[target_feature(enable = "avx2,avx512f")]
    unsafe fn buckets16<const LINEAR: bool, const BY_KEY: bool>(
        t: &Tables,
        ptr: *const u32,
        kind: Kind,
    ) -> __m512i {
        let (low, _) = buckets8::<LINEAR, BY_KEY, false>(t, ptr, kind);
        let (high, _) = buckets8::<LINEAR, BY_KEY, false>(t, ptr.add(8), kind);
        _mm512_inserti64x4::<1>(_mm512_castsi256_si512(low), high)
    }

    /// The vector test of a bitmap of buckets.
    trait Test: Copy {
        /// The test of `bits` (valid while `bits` lives).
        ///
        /// # Safety
        /// The CPU must support AVX-512F.
        unsafe fn of(bits: &Bitmap) -> Self;

        /// The lanes of `b` whose bucket is marked.
        ///
        /// # Safety
        /// The CPU must support AVX-512F; every bucket of `b` must be one the bitmap covers.
        unsafe fn mask(self, b: __m512i) -> __mmask16;
    }

    /// A bitmap of [`REGISTERS`] buckets in 8 registers of 16 words (passed by value, so
    /// that the loops keep them in registers).
    #[derive(Clone, Copy)]
    struct Registers([__m512i; 8]);

    impl Test for Registers {
        #[inline]
        #[target_feature(enable = "avx512f")]
        unsafe fn of(bits: &Bitmap) -> Registers {
            assert!(bits.in_registers && bits.words.len() >= 8 * LANES);
            // `bits.words` holds at least 128 words, 16 from `16 i` on.
            Registers(std::array::from_fn(|i| {
                _mm512_loadu_si512(bits.words.as_ptr().add(LANES * i) as *const _)
            }))
        }

        #[inline]
        #[target_feature(enable = "avx512f")]
        unsafe fn mask(self, b: __m512i) -> __mmask16 {
            const _: () = assert!(REGISTERS == 32 * 128, "eight registers of 16 words");
            let words = &self.0;
            let word = _mm512_srli_epi32::<5>(b);
            // Bits 0–4 of the word's index pick among two registers' 32 words, bits 5–6 the
            // pair.
            let w0 = _mm512_permutex2var_epi32(words[0], word, words[1]);
            let w1 = _mm512_permutex2var_epi32(words[2], word, words[3]);
            let w2 = _mm512_permutex2var_epi32(words[4], word, words[5]);
            let w3 = _mm512_permutex2var_epi32(words[6], word, words[7]);
            let odd = _mm512_test_epi32_mask(word, _mm512_set1_epi32(32));
            let high = _mm512_test_epi32_mask(word, _mm512_set1_epi32(64));
            let low_pair = _mm512_mask_mov_epi32(w0, odd, w1);
            let high_pair = _mm512_mask_mov_epi32(w2, odd, w3);
            let w = _mm512_mask_mov_epi32(low_pair, high, high_pair);
            let bit = _mm512_srlv_epi32(w, _mm512_and_si512(b, _mm512_set1_epi32(31)));
            // Buckets beyond the registers' bits are never wanted.
            let inside = _mm512_cmplt_epu32_mask(b, _mm512_set1_epi32(REGISTERS as i32));
            _mm512_mask_test_epi32_mask(inside, bit, _mm512_set1_epi32(1))
        }
    }

    /// A bitmap in memory (its first word), its words gathered.
    #[derive(Clone, Copy)]
    struct Gathered(*const u32);

    impl Test for Gathered {
        #[inline]
        #[target_feature(enable = "avx512f")]
        unsafe fn of(bits: &Bitmap) -> Gathered {
            Gathered(bits.words.as_ptr())
        }

        #[inline]
        #[target_feature(enable = "avx512f")]
        unsafe fn mask(self, b: __m512i) -> __mmask16 {
            let word = _mm512_srli_epi32::<5>(b);
            // Every word index is within the bitmap (the caller's buckets are covered), which
            // lives while the test does.
            let w = _mm512_i32gather_epi32::<4>(word, self.0 as *const i32);
            let bit = _mm512_srlv_epi32(w, _mm512_and_si512(b, _mm512_set1_epi32(31)));
            _mm512_test_epi32_mask(bit, _mm512_set1_epi32(1))
        }
    }

    /// Puts staged values' keys in their buckets' places, NaNs left out.
    fn place<T: Element, W: Element>(
        values: &[T],
        buckets: &[u32],
        of_bucket: &[u32],
        at: &mut [usize],
        out: &mut [W],
    ) {
        for (&x, &b) in values.iter().zip(buckets) {
            if x.is_nan() {
                continue;
            }
            let slot = of_bucket[b as usize] as usize;
            out[at[slot]] = key_as::<T, W>(x);
            at[slot] += 1;
        }
    }
}
