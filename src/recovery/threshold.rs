//! `H_k`'s support: the `k` entries of largest magnitude, by the crate's exact top-k.

use crate::error::Result;
use crate::recovery::Real;
use crate::select::Selector;

/// The indices of the `k` entries of `v` of largest magnitude, ascending; equal magnitudes go
/// to the lower index. All indices when `k >= v.len()`, none when `k = 0`. `v` must be free
/// of NaN (the solvers stop before a non-finite iterate reaches it).
pub(crate) fn largest<T: Real>(selector: &Selector, v: &[T], k: usize) -> Result<Vec<usize>> {
    if k == 0 {
        return Ok(Vec::new());
    }
    if k >= v.len() {
        return Ok((0..v.len()).collect());
    }
    Ok(selector.threshold(v, k)?.support)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ties_go_to_the_lower_index() {
        let s = Selector::new();
        let v = [1.0f64, -3.0, 3.0, 0.5, -3.0];
        assert_eq!(largest(&s, &v, 2).unwrap(), vec![1, 2]);
        assert_eq!(largest(&s, &v, 0).unwrap(), Vec::<usize>::new());
        assert_eq!(largest(&s, &v, 5).unwrap(), vec![0, 1, 2, 3, 4]);
        assert_eq!(largest(&s, &v, 9).unwrap(), vec![0, 1, 2, 3, 4]);
        assert_eq!(largest(&s, &v, 3).unwrap(), vec![1, 2, 4]);
        let zeros = [0.0f32; 4];
        assert_eq!(largest(&s, &zeros, 2).unwrap(), vec![0, 1]);
    }
}
