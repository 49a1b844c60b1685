//! Introselect: the standard library's `select_nth_unstable` on a copy of the keys.

use crate::element::Element;

/// The element of rank `k` (`k < data.len()`); `data` is not modified (a copy of its keys is
/// partitioned, `n` keys of workspace).
pub(crate) fn select<T: Element>(data: &[T], k: usize, _parallel: bool) -> T {
    let mut keys: Vec<T::Key> = data.iter().map(|x| x.to_key()).collect();
    let (_, kth, _) = keys.select_nth_unstable(k);
    T::from_key(*kth)
}
