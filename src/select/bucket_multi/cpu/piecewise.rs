//! The projection of bucketMultiSelect: a piecewise-linear map of values onto buckets of about
//! equal population, fitted to a sample.
//!
//! Blanchard et al. (2016, §2.1) cut the range into intervals of a kernel density estimate and
//! give each interval its share of the buckets, so that every bucket receives about `n / B`
//! values. Here the intervals are [`CELLS`] equal-width *cells* between two extreme sample
//! quantiles (a value's cell is one multiplication), and cell `c` gets `m_c` buckets in
//! proportion to the sample values that fall into it (a value's bucket in its cell is one more
//! multiplication). The cells' tables have [`CELLS`] entries, so the AVX2 pass holds each in
//! one register.
//!
//! The arithmetic runs in a *coordinate*: the value itself for floats, the integer offset by
//! half its range (`i32`/`i64` as they are, `u32`/`u64` minus `2^31`/`2^63`) for integers,
//! rounded to `f32` for 32-bit types and to `f64` for 64-bit ones. Every step (rounding to the
//! coordinate, subtraction, multiplication by a positive number, clamping, truncation) is
//! monotone, so the bucket is non-decreasing in the key and every bucket holds a contiguous range
//! of keys ([`Piecewise::key_range`], found by bisection). NaN has a bucket of its own, the last.
//! Values below or above the fitted range fall into the first or last bucket of the cells:
//! exactness never depends on the sample, only the buckets' sizes do.

use crate::element::{DType, Element, RadixKey};
use crate::select::host::{max_number_key, min_number_key};

/// Cells of the projection (its pieces): 8, one AVX2 register per table.
pub(crate) const CELLS: usize = 8;

/// The fitted range leaves out this fraction (`1 / TRIM`) of the sample at either end.
const TRIM: usize = 1024;

/// The sample is evenly spread when no cell holds more than this many times its share.
const LINEAR: f64 = 2.5;

/// The floating-point type of a projection's arithmetic (`f32` or `f64`).
pub(crate) trait Real: Copy + PartialOrd + Send + Sync + std::fmt::Debug + 'static {
    /// Zero.
    const ZERO: Self;
    /// The value nearest `v`.
    fn of(v: f64) -> Self;
    /// As `f64` (exact).
    fn wide(self) -> f64;
    /// `self - other`, rounded.
    fn sub(self, other: Self) -> Self;
    /// `self * other`, rounded.
    fn mul(self, other: Self) -> Self;
    /// Clamps to `[0, hi]` (no NaN ever reaches it) and truncates.
    fn index(self, hi: Self) -> usize;

    /// `p` itself when `Self` is `f32` (the vector passes' type).
    fn as_f32(p: &Piecewise<Self>) -> Option<&Piecewise<f32>>;
}

/// `Real` for a float type.
macro_rules! real {
    ($t:ty, $as_f32:expr) => {
        impl Real for $t {
            const ZERO: Self = 0.0;
            #[inline(always)]
            fn of(v: f64) -> Self {
                v as $t
            }
            #[inline(always)]
            fn wide(self) -> f64 {
                self as f64
            }
            #[inline(always)]
            fn sub(self, other: Self) -> Self {
                self - other
            }
            #[inline(always)]
            fn mul(self, other: Self) -> Self {
                self * other
            }
            #[inline(always)]
            fn index(self, hi: Self) -> usize {
                // `max` then `min`, as the vector pass does; truncation towards zero.
                let t = if self > 0.0 { self } else { 0.0 };
                let t = if t < hi { t } else { hi };
                debug_assert!((0.0..(1u64 << 32) as $t).contains(&hi));
                // SAFETY: `t` is a number in `[0, hi]` (NaN fails `> 0.0` and becomes 0), and
                // `hi` (a cell or bucket index) is below `2^32`, so `t` truncates into `u32`.
                unsafe { t.to_int_unchecked::<u32>() as usize }
            }
            fn as_f32(p: &Piecewise<Self>) -> Option<&Piecewise<f32>> {
                $as_f32(p)
            }
        }
    };
}
real!(f32, Some);
real!(f64, |_| None);

/// The coordinate of a (non-NaN) value, rounded to `F`: for floats the value itself, or (when
/// `by_key`) the key offset by half its range as a signed integer — the integer's own value
/// for `i32`/`i64`, minus `2^31`/`2^63` for `u32`/`u64`, which is what integers always use.
/// Both orders agree with the keys'.
#[inline(always)]
pub(crate) fn coordinate<T: Element, F: Real>(x: T, by_key: bool) -> F {
    if T::DTYPE.is_float() && !by_key {
        return F::of(x.to_f64());
    }
    let key = x.to_key().to_u64();
    match T::DTYPE {
        DType::F32 | DType::I32 | DType::U32 => F::of(((key as u32 ^ (1 << 31)) as i32) as f64),
        _ => F::of((key ^ (1 << 63)) as i64 as f64),
    }
}

/// The value of `T` nearest the coordinate `c` (the inverse of [`coordinate`], up to rounding;
/// saturating).
pub(crate) fn from_coordinate<T: Element>(c: f64, by_key: bool) -> T {
    let key = match T::DTYPE {
        DType::F32 if !by_key => (c as f32).to_key().to_u64(),
        DType::F64 if !by_key => c.to_key().to_u64(),
        DType::F32 | DType::I32 | DType::U32 => ((c.round() as i32) as u32 ^ (1 << 31)) as u64,
        _ => (c.round() as i64) as u64 ^ (1 << 63),
    };
    T::from_key(T::Key::from_u64(key))
}

/// The piecewise-linear projection of values onto buckets, its arithmetic in `F`.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Piecewise<F: Real> {
    /// The start of the first cell (coordinates below it go to the first bucket).
    pub(crate) lo: F,
    /// Cells per coordinate unit (the reciprocal of a cell's width).
    pub(crate) inv_width: F,
    /// Per cell: its start.
    pub(crate) cell_lo: [F; CELLS],
    /// Per cell: its buckets per coordinate unit.
    pub(crate) cell_scale: [F; CELLS],
    /// Per cell: its number of buckets less one (the largest bucket index within it).
    pub(crate) cell_last: [F; CELLS],
    /// Per cell: its first bucket.
    pub(crate) cell_start: [u32; CELLS],
    /// The bucket of NaN alone: the last one.
    pub(crate) top: usize,
    /// Whether every cell has the same parameters (a single linear map: the sample is
    /// spread evenly enough), so that the cell need not be computed.
    pub(crate) linear: bool,
    /// Whether float coordinates are the keys (spread over many orders of magnitude) rather
    /// than the values.
    pub(crate) by_key: bool,
}

impl<F: Real> Piecewise<F> {
    /// The projection fitted to a sample of the data (NaNs left out), with about `buckets`
    /// buckets in all (at least one per cell). Floats are fitted by value and, unless the
    /// values fill the cells evenly enough for one linear map, by key, and the coordinates
    /// whose cells the sample fills more evenly are kept: values for most data, keys (about
    /// the logarithm) for data spread over many orders of magnitude.
    pub(crate) fn fit<T: Element>(sample: &[T], buckets: usize) -> Piecewise<F> {
        let modes: &[bool] = if T::DTYPE.is_float() {
            &[false, true]
        } else {
            &[true]
        };
        let mut best: Option<(Piecewise<F>, usize)> = None;
        for &by_key in modes {
            let mut coords: Vec<F> = sample
                .iter()
                .filter(|x| !x.is_nan())
                .map(|&x| coordinate(x, by_key))
                .collect();
            let (p, fullest) = Self::fit_coordinates(&mut coords, buckets, by_key);
            let even = p.linear;
            if best.as_ref().is_none_or(|(_, f)| fullest < *f) {
                best = Some((p, fullest));
            }
            if even {
                break;
            }
        }
        best.expect("at least one mode").0
    }

    /// The projection fitted to a sample's coordinates (any order; reordered here), and the
    /// sample count of its fullest cell.
    fn fit_coordinates(sample: &mut [F], buckets: usize, by_key: bool) -> (Piecewise<F>, usize) {
        let (lo, hi) = trimmed_range(sample);
        let (lo, hi) = (lo.wide(), hi.wide());
        // Half-scale arithmetic keeps `hi - lo` finite; a zero or unscalable width becomes 1.
        let width = hi / CELLS as f64 - lo / CELLS as f64;
        let width = if width > 0.0 && (1.0 / width).is_finite() {
            width
        } else {
            1.0
        };
        let inv_width = F::of(1.0 / width);
        let lo = F::of(lo);
        let last_cell = F::of((CELLS - 1) as f64);
        let mut mass = [0usize; CELLS];
        for &v in sample.iter() {
            mass[v.sub(lo).mul(inv_width).index(last_cell)] += 1;
        }
        let total = sample.len().max(1) as f64;
        // Evenly spread data (no cell holds more than `LINEAR` times its share) gets one
        // linear map: cheaper, and its buckets are about as even.
        let linear = mass
            .iter()
            .all(|&m| m as f64 <= LINEAR * total / CELLS as f64);
        let mut cell_lo = [F::ZERO; CELLS];
        let mut cell_scale = [F::ZERO; CELLS];
        let mut cell_last = [F::ZERO; CELLS];
        let mut cell_start = [0u32; CELLS];
        let mut start = 0usize;
        for c in 0..CELLS {
            if linear {
                // Every cell: all the buckets, over the whole range.
                let m = buckets.max(1);
                cell_lo[c] = lo;
                cell_scale[c] = F::of(m as f64 / (width * CELLS as f64));
                cell_last[c] = F::of((m - 1) as f64);
                start = m;
                continue;
            }
            let m = ((mass[c] as f64 * buckets as f64 / total).round() as usize).max(1);
            cell_lo[c] = F::of(lo.wide() + c as f64 * width);
            // Positive and finite: `m / width` is at most `buckets / width`, and `1 / width`
            // is finite.
            cell_scale[c] = F::of(m as f64 / width);
            cell_last[c] = F::of((m - 1) as f64);
            cell_start[c] = start as u32;
            start += m;
        }
        let p = Piecewise {
            lo,
            inv_width,
            cell_lo,
            cell_scale,
            cell_last,
            cell_start,
            top: start,
            linear,
            by_key,
        };
        (p, mass.iter().copied().max().unwrap_or(0))
    }

    /// The number of buckets, NaN's included.
    pub(crate) fn buckets(&self) -> usize {
        self.top + 1
    }

    /// The bucket of `x`: non-decreasing in `x`'s key.
    ///
    /// The cell is clamped to the cells and the bucket within it to the cell's buckets, so the
    /// cells' buckets never overlap, however the arithmetic rounds.
    #[inline(always)]
    pub(crate) fn bucket<T: Element>(&self, x: T) -> usize {
        if x.is_nan() {
            return self.top;
        }
        let v: F = coordinate(x, self.by_key);
        // At most `CELLS - 1` (the mask lets the compiler see it).
        let c = v
            .sub(self.lo)
            .mul(self.inv_width)
            .index(F::of((CELLS - 1) as f64))
            & (CELLS - 1);
        let u = v
            .sub(self.cell_lo[c])
            .mul(self.cell_scale[c])
            .index(self.cell_last[c]);
        self.cell_start[c] as usize + u
    }

    /// The coordinates bucket `b` (not NaN's) nominally spans: `[start, end)` of its cell's
    /// linear piece (the first and the last bucket also receive the coordinates below and
    /// above the fitted range).
    pub(crate) fn coordinate_range(&self, b: usize) -> (f64, f64) {
        let cell = if self.linear {
            0
        } else {
            self.cell_start
                .iter()
                .rposition(|&s| s as usize <= b)
                .expect("bucket 0 starts the first cell")
        };
        let width = 1.0 / self.cell_scale[cell].wide();
        let start = self.cell_lo[cell].wide() + (b - self.cell_start[cell] as usize) as f64 * width;
        (start, start + width)
    }

    /// The smallest and the largest key of `T` in bucket `b`, or `None` when no key maps to
    /// it. Bisection over the keys, as the bucket is monotone in the key (float keys that no
    /// value has — below `-inf`'s, between `+inf`'s and NaN's — count as the first and the
    /// NaN bucket).
    pub(crate) fn key_range<T: Element>(&self, b: usize) -> Option<(T::Key, T::Key)> {
        let (min_num, max_num) = (
            min_number_key::<T>().to_u64(),
            max_number_key::<T>().to_u64(),
        );
        // The smallest key whose bucket is at least `b`, or `None` when there is none.
        let first_at_least = |b: usize| -> Option<u64> {
            let max = T::Key::MAX.to_u64();
            let at = |k: u64| {
                if k < min_num {
                    0
                } else if k > max_num {
                    self.top
                } else {
                    self.bucket(T::from_key(T::Key::from_u64(k)))
                }
            };
            if at(max) < b {
                return None;
            }
            let (mut lo, mut hi) = (0u64, max);
            while lo < hi {
                let mid = lo + (hi - lo) / 2;
                if at(mid) >= b {
                    hi = mid;
                } else {
                    lo = mid + 1;
                }
            }
            Some(lo)
        };
        if b == self.top {
            // NaN's bucket: every NaN has the largest key.
            return Some((T::Key::MAX, T::Key::MAX));
        }
        // Keys below `-inf`'s or above `+inf`'s are no value's: the range is clamped to the
        // numbers' keys.
        let first = first_at_least(b)?.max(min_num);
        let last = match first_at_least(b + 1) {
            Some(0) => return None,
            Some(next) => next - 1,
            None => T::Key::MAX.to_u64(),
        }
        .min(max_num);
        (first <= last).then(|| (T::Key::from_u64(first), T::Key::from_u64(last)))
    }
}

/// The coordinates `1 / TRIM` of the way in from either end of `sample` (its extremes when it
/// is short); `(0, 0)` for an empty sample.
fn trimmed_range<F: Real>(sample: &mut [F]) -> (F, F) {
    let s = sample.len();
    if s == 0 {
        return (F::ZERO, F::ZERO);
    }
    let t = s / TRIM;
    let order = |a: &F, b: &F| a.partial_cmp(b).expect("coordinates are numbers");
    let (_, &mut lo, above) = sample.select_nth_unstable_by(t, order);
    // The largest but `t` is among the values above the smallest `t + 1` (or is the `t + 1`-th
    // smallest itself when there are no more).
    let hi = if s - 1 - t > t {
        *above.select_nth_unstable_by(s - 2 - 2 * t, order).1
    } else {
        lo
    };
    (lo, hi)
}

/// Unit tests of the projection.
#[cfg(test)]
mod tests {
    use super::*;
    use crate::random::SplitMix64;
    use crate::select::host::testing::{inputs, Gen};

    /// A projection of `data`, fitted to every eighth value.
    fn fitted<T: Element, F: Real>(data: &[T], buckets: usize) -> Piecewise<F> {
        let sample: Vec<T> = data.iter().step_by(8).copied().collect();
        Piecewise::fit(&sample, buckets)
    }

    /// Buckets are monotone in the key and every value lies in its bucket's key range.
    fn check<T: Gen, F: Real>() {
        for (name, data) in inputs::<T>(3000, 17) {
            let p: Piecewise<F> = fitted(&data, 200);
            let mut keys: Vec<T::Key> = data.iter().map(|x| x.to_key()).collect();
            keys.extend([min_number_key::<T>(), max_number_key::<T>(), T::Key::MAX]);
            keys.sort_unstable();
            let mut last = 0;
            for &k in &keys {
                let x = T::from_key(k);
                let b = p.bucket(x);
                assert!(
                    b >= last && b < p.buckets(),
                    "{name}: not monotone at {x:?}"
                );
                last = b;
                let (lo, hi) = p.key_range::<T>(b).expect("a key maps here");
                assert!(lo <= k && k <= hi, "{name}: {x:?} outside bucket {b}");
            }
        }
    }

    /// Every element type, every adversarial input.
    #[test]
    fn buckets_are_monotone_key_ranges() {
        check::<f32, f32>();
        check::<f64, f64>();
        check::<i32, f32>();
        check::<i64, f64>();
        check::<u32, f32>();
        check::<u64, f64>();
    }

    /// Smooth data fills the buckets about equally; a constant sample still projects.
    #[test]
    fn buckets_follow_the_sample() {
        let mut rng = SplitMix64::new(5);
        let normal: Vec<f32> = (0..200_000)
            .map(|_| {
                let (u1, u2) = (1.0 - rng.next_u64() as f64 / 2f64.powi(64), rng.below(1000));
                ((-2.0 * u1.ln()).sqrt() * (u2 as f64 * 0.006283).cos()) as f32
            })
            .collect();
        let p: Piecewise<f32> = fitted(&normal, 1000);
        let mut counts = vec![0usize; p.buckets()];
        for &x in &normal {
            counts[p.bucket(x)] += 1;
        }
        let largest = counts[1..p.top - 1].iter().max().unwrap();
        assert!(
            *largest < 4 * normal.len() / 1000,
            "largest bucket {largest}"
        );
        // Spread over many orders of magnitude: fitted by key.
        let wide: Vec<f64> = (0..10_000).map(|i| 1.5f64.powi(i % 1000 - 500)).collect();
        let p: Piecewise<f64> = fitted(&wide, 1000);
        assert!(p.by_key);
        let mut counts = vec![0usize; p.buckets()];
        for &x in &wide {
            counts[p.bucket(x)] += 1;
        }
        let largest = counts[1..p.top - 1].iter().max().unwrap();
        assert!(*largest < 4 * wide.len() / 1000, "largest bucket {largest}");
        let p: Piecewise<f64> = fitted(&[5.0f64; 100], 64);
        assert_eq!(p.bucket(5.0), p.bucket(5.0 + 1e-9));
        assert_eq!(p.bucket(f64::NAN), p.top);
        assert_eq!(p.key_range::<f64>(p.top), Some((u64::MAX, u64::MAX)));
    }
}
