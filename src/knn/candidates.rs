//! [`Candidates`]: a query's `k` best reference points, kept while the points stream by.

use crate::element::Element;
use crate::knn::metric::Metric;

/// The `k` smallest rank keys offered so far, ties to the lower index, kept by a buffer of up
/// to `2k` entries that is cut back to the best `k` when it fills. Points must be offered in
/// ascending index order: then a point whose key equals the current `k`-th cannot enter (an
/// earlier point of that key wins the tie), so one comparison turns most points away.
pub(super) struct Candidates {
    k: usize,
    capacity: usize,
    /// The order key of each entry's rank key, and its index.
    entries: Vec<(u64, usize)>,
    /// Entries must order below this key to enter (`u64::MAX`, NaN's key, admits all but NaN
    /// until the first cut; NaN enters while fewer than `k` are kept).
    bound: u64,
}

impl Candidates {
    /// An empty set for the `k` best (`k >= 1`).
    pub(super) fn new(k: usize) -> Candidates {
        let capacity = 2 * k;
        Candidates {
            k,
            capacity,
            entries: Vec::with_capacity(capacity),
            bound: u64::MAX,
        }
    }

    /// Forgets every entry.
    pub(super) fn clear(&mut self) {
        self.entries.clear();
        self.bound = u64::MAX;
    }

    /// The rank key of the `k`-th entry kept at the last cut: a point whose rank key is at
    /// least this one cannot enter. `None` before the first cut (or where the `k`-th key is
    /// NaN), while any point may.
    pub(super) fn bound(&self) -> Option<f64> {
        (self.bound != u64::MAX).then(|| f64::from_key(self.bound))
    }

    /// Offers the point `index` of rank key `key` (indices ascending from call to call).
    #[inline]
    pub(super) fn offer(&mut self, key: f64, index: usize) {
        let order = order_key(key);
        if order < self.bound || (self.bound == u64::MAX && self.entries.len() < self.k) {
            self.entries.push((order, index));
            if self.entries.len() == self.capacity {
                self.cut();
            }
        }
    }

    /// Keeps the best `k` entries and tightens the bound to the `k`-th key.
    fn cut(&mut self) {
        let k = self.k;
        if self.entries.len() >= k {
            self.entries.select_nth_unstable(k - 1);
            self.entries.truncate(k);
            self.bound = self.entries[k - 1].0;
            // select_nth_unstable leaves the k-th at k - 1 with no larger entry before it.
            debug_assert!(self.entries.iter().all(|e| e.0 <= self.bound));
        }
    }

    /// Writes the best `k` (at least `k` were offered), nearest first, as canonical values
    /// of `metric` and indices.
    pub(super) fn finish(&mut self, values: &mut [f64], indices: &mut [usize], metric: Metric) {
        self.cut();
        self.entries.sort_unstable();
        debug_assert_eq!(self.entries.len(), self.k);
        for ((value, index), &(order, i)) in values.iter_mut().zip(indices).zip(&self.entries) {
            *value = metric.value_of_key(f64::from_key(order));
            *index = i;
        }
    }
}

/// The order of a rank key: the crate's float key (NaN after `+inf`), `-0.0` counted as `0.0`.
#[inline]
pub(super) fn order_key(key: f64) -> u64 {
    (key + 0.0).to_key()
}
