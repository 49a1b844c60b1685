//! The order of top-k and hard thresholding as one unsigned key per value: the larger the key,
//! the earlier the value is taken; equal keys are ties (the lower index goes first).

use crate::element::{DType, Element, RadixKey};
use crate::select::batch::spans::KeyOrder;

/// The priority of `x` under `order`: a key of the element type's width whose descending order
/// (ties by index) is the order values are taken in.
///
/// - `Largest`: the element's key (NaN has the largest; with `nan_low`, the smallest: 0, which
///   no number's key is, since the key 0 would be a float with every bit set, a NaN).
/// - `Smallest`: the complement of the element's key (NaN, the largest key, becomes 0).
/// - `LargestMagnitude`: see [`magnitude`].
#[inline(always)]
pub(crate) fn priority<T: Element>(x: T, order: KeyOrder) -> T::Key {
    match order {
        KeyOrder::Largest { nan_low } => {
            if nan_low && x.is_nan() {
                T::Key::MIN
            } else {
                x.to_key()
            }
        }
        KeyOrder::Smallest => T::Key::from_u64(!x.to_key().to_u64()),
        KeyOrder::LargestMagnitude { nan_low } => magnitude(x, nan_low),
    }
}

/// A key that orders values by magnitude: `|x|` for floats (`-0.0` and `+0.0` equal), the
/// `unsigned_abs` of signed integers (so `i32::MIN` has the largest magnitude), the value of
/// unsigned ones. A NaN gets the largest key, or with `nan_low` the key 0 (below every
/// number's: the magnitude key of a float is the key of a non-negative float, which has the sign
/// bit set).
#[inline(always)]
pub(crate) fn magnitude<T: Element>(x: T, nan_low: bool) -> T::Key {
    let bits = T::Key::BITS;
    let sign = 1u64 << (bits - 1);
    let mask = u64::MAX >> (64 - bits);
    let key = x.to_key().to_u64();
    let m = match T::DTYPE {
        DType::F32 | DType::F64 => {
            if x.is_nan() {
                return if nan_low { T::Key::MIN } else { T::Key::MAX };
            }
            // A positive float's key is its bits with the sign bit set; a negative one's, all
            // its bits flipped: flipping them back gives the key of its absolute value.
            if key & sign != 0 {
                key
            } else {
                !key & mask
            }
        }
        DType::I32 | DType::I64 => {
            // The two's complement bits of the value, then its unsigned absolute value.
            let v = key ^ sign;
            if v & sign != 0 {
                v.wrapping_neg() & mask
            } else {
                v
            }
        }
        DType::U32 | DType::U64 => key,
    };
    T::Key::from_u64(m)
}

/// The position among `priorities` (in index order) of the last value in the order taken: the
/// smallest priority, the highest index among equal ones. `None` when empty.
pub(crate) fn last_taken<K: Ord + Copy>(priorities: impl IntoIterator<Item = K>) -> Option<usize> {
    let mut best: Option<(K, usize)> = None;
    for (i, p) in priorities.into_iter().enumerate() {
        if best.is_none_or(|(b, _)| p <= b) {
            best = Some((p, i));
        }
    }
    best.map(|(_, i)| i)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mags<T: Element>(values: &[T]) -> Vec<T::Key> {
        values.iter().map(|&x| magnitude(x, false)).collect()
    }

    #[test]
    fn float_magnitudes_order_like_abs() {
        let v = [
            -0.0f32,
            0.0,
            1e-45,
            -1e-45,
            -1.0,
            1.0,
            -2.5,
            f32::MAX,
            f32::NEG_INFINITY,
        ];
        let m = mags(&v);
        assert_eq!(m[0], m[1]);
        assert_eq!(m[2], m[3]);
        assert_eq!(m[4], m[5]);
        assert!(m[1] < m[2] && m[3] < m[4] && m[5] < m[6] && m[6] < m[7] && m[7] < m[8]);
        assert_eq!(m[8], f32::INFINITY.to_key());
        assert_eq!(magnitude(f32::NAN, false), u32::MAX);
        assert_eq!(magnitude(-f64::NAN, true), 0);
        assert!(magnitude(0.0f64, true) > 0);
        assert_eq!(magnitude(-3.0f64, false), 3.0f64.to_key());
    }

    #[test]
    fn integer_magnitudes_are_unsigned_abs() {
        assert_eq!(
            mags(&[i32::MIN, -1, 0, 7, i32::MAX]),
            vec![1 << 31, 1, 0, 7, (1 << 31) - 1]
        );
        assert_eq!(
            mags(&[i64::MIN, -5, 5, i64::MAX]),
            vec![1 << 63, 5, 5, (1 << 63) - 1]
        );
        assert_eq!(mags(&[u32::MAX, 3]), vec![u32::MAX, 3]);
        assert_eq!(mags(&[u64::MAX, 0]), vec![u64::MAX, 0]);
    }

    #[test]
    fn priorities_follow_the_order() {
        let largest = KeyOrder::Largest { nan_low: false };
        let omit = KeyOrder::Largest { nan_low: true };
        assert!(priority(f64::NAN, largest) > priority(f64::INFINITY, largest));
        assert!(priority(f64::NAN, omit) < priority(f64::NEG_INFINITY, omit));
        assert!(priority(-1i32, KeyOrder::Smallest) > priority(0i32, KeyOrder::Smallest));
        assert!(priority(f32::NAN, KeyOrder::Smallest) < priority(f32::MAX, KeyOrder::Smallest));
        assert_eq!(priority(f32::NAN, KeyOrder::Smallest), 0);
        assert!(priority(-0.0f32, KeyOrder::Smallest) > priority(0.0f32, KeyOrder::Smallest));
    }

    #[test]
    fn the_last_taken_is_the_smallest_priority_at_the_highest_index() {
        assert_eq!(last_taken([5u32, 3, 9, 3, 4]), Some(3));
        assert_eq!(last_taken([1u64]), Some(0));
        assert_eq!(last_taken(Vec::<u32>::new()), None);
    }
}
