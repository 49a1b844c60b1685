//! The result of hard thresholding, and how it is read from the entries kept.

use crate::element::Element;
use crate::select::batch::priority::{last_taken, magnitude};

/// What hard thresholding keeps: the `k` entries of largest magnitude (ties by lower index).
///
/// The threshold is the kept entry of smallest magnitude — of the highest index among kept
/// entries of that magnitude, the last in the order entries are taken. It is given by its index
/// and its value (with its sign, so that magnitudes no value of the type can hold, such as
/// that of `i32::MIN`, need no other type). Every entry not kept has a magnitude at most the
/// threshold's (equal ones at higher indices).
///
/// ```
/// use kselect::Selector;
/// let x = [1, -7, 3, 7, -3, 0];
/// let t = Selector::new().threshold(&x, 3).unwrap();
/// assert_eq!(t.support, vec![1, 2, 3]); // -7, 3, 7 (3 before -3: the lower index)
/// assert_eq!((t.index, t.value), (2, 3));
/// assert_eq!(t.k(), 3);
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct Threshold<T> {
    /// The indices of the entries kept, ascending.
    pub support: Vec<usize>,
    /// The index of the threshold entry.
    pub index: usize,
    /// The value of the threshold entry (as stored: its sign included).
    pub value: T,
}

impl<T> Threshold<T> {
    /// The number of entries kept.
    ///
    /// ```
    /// let t = kselect::Selector::new().threshold(&[1.0, -2.0], 1).unwrap();
    /// assert_eq!(t.k(), 1);
    /// ```
    pub fn k(&self) -> usize {
        self.support.len()
    }
}

impl<T: Element> Threshold<T> {
    /// The threshold of the kept entries: `support` (ascending, not empty) and their `values`.
    pub(crate) fn of(support: Vec<usize>, values: &[T], nan_low: bool) -> Threshold<T> {
        let last = last_taken(values.iter().map(|&x| magnitude(x, nan_low)))
            .expect("at least one entry is kept");
        Threshold {
            index: support[last],
            value: values[last],
            support,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_threshold_is_the_last_kept_in_magnitude_order() {
        let t = Threshold::of(vec![0, 3, 5, 8], &[-4i32, 2, -2, i32::MIN], false);
        assert_eq!((t.index, t.value), (5, -2));
        let t = Threshold::of(vec![1, 2], &[f64::NAN, 1.0], false);
        assert_eq!((t.index, t.value), (2, 1.0));
        let t = Threshold::of(vec![1, 2], &[-0.0f32, 0.0], false);
        assert_eq!(t.index, 2);
        assert_eq!(t.value.to_bits(), 0.0f32.to_bits());
        let t = Threshold::of(vec![4], &[7u64], false);
        assert_eq!((t.index, t.value, t.k()), (4, 7, 1));
    }
}
