//! sort&choose on the CPU.

use rayon::prelude::*;

use crate::element::Element;
use crate::select::PARALLEL_THRESHOLD;

/// The keys of `data`, sorted ascending.
pub(crate) fn sorted_keys<T: Element>(data: &[T], parallel: bool) -> Vec<T::Key> {
    if parallel && data.len() >= PARALLEL_THRESHOLD {
        let mut keys: Vec<T::Key> = data.par_iter().map(|x| x.to_key()).collect();
        keys.par_sort_unstable();
        keys
    } else {
        let mut keys: Vec<T::Key> = data.iter().map(|x| x.to_key()).collect();
        keys.sort_unstable();
        keys
    }
}

/// The element of rank `k` by sorting (`k < data.len()`).
pub(crate) fn select<T: Element>(data: &[T], k: usize, parallel: bool) -> T {
    T::from_key(sorted_keys(data, parallel)[k])
}

/// The elements of `ranks` by one sort.
pub(crate) fn multiselect<T: Element>(data: &[T], ranks: &[usize], parallel: bool) -> Vec<T> {
    let keys = sorted_keys(data, parallel);
    ranks.iter().map(|&k| T::from_key(keys[k])).collect()
}
