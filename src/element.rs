//! Element types and their order-preserving radix keys.
//!
//! Every algorithm orders values through an unsigned key with the same order as the values:
//! integers are offset by their sign bit, floats have all bits flipped when negative and the
//! sign bit set when positive, and NaN (of either sign) maps to the largest key, so NaNs order
//! last. `-0.0` orders just below `+0.0`; as values they are equal. All backends use the same
//! keys, so they return the same bits.

use std::fmt::{Debug, Display};
use std::hash::Hash;

mod sealed {
    pub trait Sealed {}
}

/// The element types kselect selects from.
///
/// ```
/// use kselect::DType;
/// assert_eq!(DType::F32.name(), "f32");
/// assert_eq!(DType::U64.size_bytes(), 8);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DType {
    /// 32-bit float.
    F32,
    /// 64-bit float.
    F64,
    /// 32-bit signed integer.
    I32,
    /// 64-bit signed integer.
    I64,
    /// 32-bit unsigned integer.
    U32,
    /// 64-bit unsigned integer.
    U64,
}

impl DType {
    /// Every element type, in a fixed order.
    ///
    /// ```
    /// assert_eq!(kselect::DType::ALL.len(), 6);
    /// ```
    pub const ALL: [DType; 6] = [
        DType::F32,
        DType::F64,
        DType::I32,
        DType::I64,
        DType::U32,
        DType::U64,
    ];

    /// The Rust name of the type (`"f32"` ...), also the suffix of its CUDA kernels.
    ///
    /// ```
    /// assert_eq!(kselect::DType::I64.name(), "i64");
    /// ```
    pub fn name(self) -> &'static str {
        match self {
            DType::F32 => "f32",
            DType::F64 => "f64",
            DType::I32 => "i32",
            DType::I64 => "i64",
            DType::U32 => "u32",
            DType::U64 => "u64",
        }
    }

    /// Bytes per element.
    ///
    /// ```
    /// assert_eq!(kselect::DType::I32.size_bytes(), 4);
    /// ```
    pub fn size_bytes(self) -> usize {
        match self {
            DType::F32 | DType::I32 | DType::U32 => 4,
            DType::F64 | DType::I64 | DType::U64 => 8,
        }
    }

    /// Whether the type is a float (and so may hold NaN).
    ///
    /// ```
    /// assert!(kselect::DType::F64.is_float());
    /// assert!(!kselect::DType::U32.is_float());
    /// ```
    pub fn is_float(self) -> bool {
        matches!(self, DType::F32 | DType::F64)
    }
}

impl Display for DType {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// An unsigned radix key: `u32` for 32-bit elements, `u64` for 64-bit ones. A key is itself an
/// [`Element`] (its own key), so the GPU passes that run over keys take the element kernels.
///
/// ```
/// use kselect::{Element, RadixKey};
/// assert_eq!(0xABCD_u32.digit(8, 8), 0xAB);
/// assert_eq!(<u64 as RadixKey>::BITS, 64);
/// assert_eq!(<u32 as Element>::DTYPE.name(), "u32");
/// ```
pub trait RadixKey: Element + Ord + Eq + Hash {
    /// Width in bits.
    const BITS: u32;
    /// The largest key (the key of every NaN).
    const MAX: Self;
    /// The smallest key.
    const MIN: Self;
    /// Widens to `u64`.
    fn to_u64(self) -> u64;
    /// Narrows from `u64` (keeps the low bits).
    fn from_u64(v: u64) -> Self;
    /// The `bits`-wide digit starting at bit `shift`.
    #[inline(always)]
    fn digit(self, shift: u32, bits: u32) -> usize {
        ((self.to_u64() >> shift) & ((1u64 << bits) - 1)) as usize
    }
}

impl sealed::Sealed for u32 {}
impl sealed::Sealed for u64 {}
impl sealed::Sealed for i32 {}
impl sealed::Sealed for i64 {}

/// The [`RadixKey`] impl of the unsigned integer `$t`.
macro_rules! radix_key {
    ($t:ty) => {
        impl RadixKey for $t {
            const BITS: u32 = <$t>::BITS;
            const MAX: Self = <$t>::MAX;
            const MIN: Self = 0;
            #[inline(always)]
            fn to_u64(self) -> u64 {
                self as u64
            }
            #[inline(always)]
            fn from_u64(v: u64) -> Self {
                v as $t
            }
        }
    };
}

radix_key!(u32);
radix_key!(u64);

/// A value kselect can select: `f32`, `f64`, `i32`, `i64`, `u32` or `u64`.
///
/// The key of a value orders like the value (NaN last); `from_key(to_key(x))` gives `x` back
/// bit for bit, except that every NaN comes back as the canonical quiet NaN.
///
/// ```
/// use kselect::Element;
/// assert!((-1.5f32).to_key() < 0.0f32.to_key());
/// assert!(f32::INFINITY.to_key() < f32::NAN.to_key());
/// assert!((-0.0f64).to_key() < 0.0f64.to_key());
/// assert_eq!(i32::from_key((-7i32).to_key()), -7);
/// assert!((-5i64).to_key() < 3i64.to_key());
/// ```
pub trait Element:
    sealed::Sealed
    + Copy
    + PartialOrd
    + Debug
    + Display
    + Default
    + Send
    + Sync
    + cudarc::driver::DeviceRepr
    + cudarc::driver::ValidAsZeroBits
    + 'static
{
    /// The key type.
    type Key: RadixKey;
    /// The element type tag.
    const DTYPE: DType;
    /// The order-preserving key.
    fn to_key(self) -> Self::Key;
    /// The value of a key.
    fn from_key(key: Self::Key) -> Self;
    /// Whether the value is NaN (never for integers).
    fn is_nan(self) -> bool;
    /// The value as `f64` (rounded to nearest for 64-bit integers above 2^53).
    fn to_f64(self) -> f64;
    /// NaN for float types, `None` for integers.
    fn nan() -> Option<Self>;
}

/// The [`Element`] impl of `$t` with key `$key`, tag `$dtype` and `nan()` `$nan`: `to_key`,
/// `from_key` and `is_nan` given in `$methods`.
macro_rules! element {
    ($t:ty, $key:ty, $dtype:expr, nan: $nan:expr, { $($methods:tt)* }) => {
        impl Element for $t {
            type Key = $key;
            const DTYPE: DType = $dtype;
            $($methods)*
            #[inline(always)]
            fn to_f64(self) -> f64 {
                self as f64
            }
            fn nan() -> Option<$t> {
                $nan
            }
        }
    };
}

macro_rules! float_element {
    ($t:ty, $key:ty, $dtype:expr) => {
        impl sealed::Sealed for $t {}
        element!($t, $key, $dtype, nan: Some(<$t>::NAN), {
            #[inline(always)]
            fn to_key(self) -> $key {
                const SIGN: $key = 1 << (<$key>::BITS - 1);
                let bits = self.to_bits();
                // All bits flipped for negatives, only the sign bit for positives.
                let flip =
                    (((bits as <$t as FloatBits>::Signed) >> (<$key>::BITS - 1)) as $key) | SIGN;
                if self.is_nan() {
                    <$key>::MAX
                } else {
                    bits ^ flip
                }
            }
            #[inline(always)]
            fn from_key(key: $key) -> $t {
                const SIGN: $key = 1 << (<$key>::BITS - 1);
                if key == <$key>::MAX {
                    // The key of every NaN: give the canonical quiet NaN back.
                    return <$t>::NAN;
                }
                let bits = if key & SIGN != 0 { key ^ SIGN } else { !key };
                <$t>::from_bits(bits)
            }
            #[inline(always)]
            fn is_nan(self) -> bool {
                self != self
            }
        });
    };
}

macro_rules! int_element {
    ($t:ty, $key:ty, $dtype:expr, $offset:expr) => {
        element!($t, $key, $dtype, nan: None, {
            #[inline(always)]
            fn to_key(self) -> $key {
                (self as $key) ^ $offset
            }
            #[inline(always)]
            fn from_key(key: $key) -> $t {
                (key ^ $offset) as $t
            }
            #[inline(always)]
            fn is_nan(self) -> bool {
                false
            }
        });
    };
}

/// The signed integer of a float's width, for the arithmetic shift in `to_key`.
trait FloatBits {
    type Signed;
}
impl FloatBits for f32 {
    type Signed = i32;
}
impl FloatBits for f64 {
    type Signed = i64;
}

float_element!(f32, u32, DType::F32);
float_element!(f64, u64, DType::F64);
int_element!(i32, u32, DType::I32, 1u32 << 31);
int_element!(i64, u64, DType::I64, 1u64 << 63);
int_element!(u32, u32, DType::U32, 0u32);
int_element!(u64, u64, DType::U64, 0u64);

/// Orders two elements as kselect does (by key: NaN last, `-0.0` before `+0.0`).
///
/// ```
/// use std::cmp::Ordering;
/// assert_eq!(kselect::key_cmp(&f64::NAN, &f64::INFINITY), Ordering::Greater);
/// ```
#[inline(always)]
pub fn key_cmp<T: Element>(a: &T, b: &T) -> std::cmp::Ordering {
    a.to_key().cmp(&b.to_key())
}

/// Values a thread of the pool scans at a time in [`first_non_finite`].
const SCAN_CHUNK: usize = 16_384;

/// The index of the first value of `v` that is NaN or infinite (chunks scanned in parallel;
/// integers are always finite).
pub(crate) fn first_non_finite<T: Element>(v: &[T]) -> Option<usize> {
    use rayon::prelude::*;
    v.par_chunks(SCAN_CHUNK)
        .enumerate()
        .filter(|(_, c)| !c.iter().fold(true, |all, v| all & v.to_f64().is_finite()))
        .filter_map(|(i, c)| {
            c.iter()
                .position(|v| !v.to_f64().is_finite())
                .map(|k| i * SCAN_CHUNK + k)
        })
        .min()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_non_finite_value_is_found_across_chunks() {
        let mut v = vec![1.0f32; 3 * SCAN_CHUNK + 5];
        assert_eq!(first_non_finite(&v), None);
        v[3 * SCAN_CHUNK + 2] = f32::NEG_INFINITY;
        v[SCAN_CHUNK + 7] = f32::NAN;
        assert_eq!(first_non_finite(&v), Some(SCAN_CHUNK + 7));
        assert_eq!(first_non_finite(&[3i64, -1]), None);
        assert_eq!(first_non_finite::<f64>(&[]), None);
    }

    fn assert_order<T: Element>(sorted: &[T]) {
        for w in sorted.windows(2) {
            assert!(w[0].to_key() < w[1].to_key(), "{:?} !< {:?}", w[0], w[1]);
        }
        for &x in sorted {
            let back = T::from_key(x.to_key());
            if x.is_nan() {
                assert!(back.is_nan());
            } else {
                assert_eq!(format!("{back:?}"), format!("{x:?}"));
            }
        }
    }

    #[test]
    fn float_keys_order_like_values() {
        assert_order(&[
            f32::NEG_INFINITY,
            -f32::MAX,
            -1.0,
            -f32::MIN_POSITIVE,
            -1e-45,
            -0.0,
            0.0,
            1e-45,
            f32::MIN_POSITIVE,
            1.0,
            f32::MAX,
            f32::INFINITY,
            f32::NAN,
        ]);
        assert_order(&[
            f64::NEG_INFINITY,
            -1e300,
            -5e-324,
            -0.0,
            0.0,
            5e-324,
            1e300,
            f64::INFINITY,
        ]);
        assert_eq!((-f64::NAN).to_key(), u64::MAX);
        assert_eq!(f32::from_key(u32::MAX).to_bits(), f32::NAN.to_bits());
        assert_eq!(f64::from_key(u64::MAX).to_bits(), f64::NAN.to_bits());
    }

    #[test]
    fn int_keys_order_like_values() {
        assert_order(&[i32::MIN, -1, 0, 1, i32::MAX]);
        assert_order(&[i64::MIN, -1, 0, 1, i64::MAX]);
        assert_order(&[0u32, 1, u32::MAX]);
        assert_order(&[0u64, 1, 1 << 53, (1 << 53) + 1, u64::MAX]);
    }
}
