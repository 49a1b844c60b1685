//! The few vector operations the solvers share: inner products and norms accumulated in
//! `f64`, and updates in the signal's type.

use crate::recovery::Real;

/// `sum a_i b_i`, accumulated in `f64`.
pub(crate) fn dot<T: Real>(a: &[T], b: &[T]) -> f64 {
    a.iter()
        .zip(b)
        .map(|(&x, &y)| x.as_f64() * y.as_f64())
        .sum()
}

/// `|a|^2`, accumulated in `f64`.
pub(crate) fn norm2<T: Real>(a: &[T]) -> f64 {
    a.iter().map(|&x| x.as_f64() * x.as_f64()).sum()
}

/// `sum over i in support of a_i b_i`.
pub(crate) fn dot_on<T: Real>(support: &[usize], a: &[T], b: &[T]) -> f64 {
    support.iter().map(|&i| a[i].as_f64() * b[i].as_f64()).sum()
}

/// `y = a + s b`.
pub(crate) fn add_scaled<T: Real>(a: &[T], s: f64, b: &[T], y: &mut [T]) {
    let s = T::of(s);
    for ((y, &a), &b) in y.iter_mut().zip(a).zip(b) {
        *y = a + s * b;
    }
}

/// `y = y + s b`.
pub(crate) fn axpy<T: Real>(s: f64, b: &[T], y: &mut [T]) {
    let s = T::of(s);
    for (y, &b) in y.iter_mut().zip(b) {
        *y += s * b;
    }
}

/// `out = v` on `support`, zero elsewhere.
pub(crate) fn restrict<T: Real>(v: &[T], support: &[usize], out: &mut [T]) {
    out.iter_mut().for_each(|o| *o = T::zero());
    for &i in support {
        out[i] = v[i];
    }
}

/// `r = y - a`.
pub(crate) fn difference<T: Real>(y: &[T], a: &[T], r: &mut [T]) {
    for ((r, &y), &a) in r.iter_mut().zip(y).zip(a) {
        *r = y - a;
    }
}

/// The union of two ascending index sets, ascending.
pub(crate) fn union(a: &[usize], b: &[usize]) -> Vec<usize> {
    let mut out = Vec::with_capacity(a.len() + b.len());
    let (mut i, mut j) = (0, 0);
    while i < a.len() || j < b.len() {
        let next = match (a.get(i), b.get(j)) {
            (Some(&x), Some(&y)) if x == y => {
                i += 1;
                j += 1;
                x
            }
            (Some(&x), Some(&y)) if x < y => {
                i += 1;
                x
            }
            (Some(_), Some(&y)) => {
                j += 1;
                y
            }
            (Some(&x), None) => {
                i += 1;
                x
            }
            (None, Some(&y)) => {
                j += 1;
                y
            }
            (None, None) => unreachable!("the loop runs while one set has entries"),
        };
        out.push(next);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unions_are_ascending_and_distinct() {
        assert_eq!(union(&[1, 3, 5], &[2, 3, 9]), vec![1, 2, 3, 5, 9]);
        assert_eq!(union(&[], &[4]), vec![4]);
        assert_eq!(union(&[0, 1], &[]), vec![0, 1]);
    }

    #[test]
    fn products_accumulate_in_double() {
        let a = [1.0f32, 2.0, 3.0];
        assert_eq!(dot(&a, &a), 14.0);
        assert_eq!(norm2(&a), 14.0);
        assert_eq!(dot_on(&[0, 2], &a, &a), 10.0);
        let mut y = [0.0f32; 3];
        add_scaled(&a, 2.0, &a, &mut y);
        assert_eq!(y, [3.0, 6.0, 9.0]);
        axpy(-1.0, &a, &mut y);
        assert_eq!(y, [2.0, 4.0, 6.0]);
        restrict(&a, &[1], &mut y);
        assert_eq!(y, [0.0, 2.0, 0.0]);
        difference(&a, &a, &mut y);
        assert_eq!(y, [0.0; 3]);
    }
}
