//! The result and the options of top-k.

/// Which values top-k takes first.
///
/// ```
/// use kselect::{Selector, TopKOrder};
/// let top = Selector::new().top_k(&[3, 1, 2], 1, TopKOrder::Smallest).unwrap();
/// assert_eq!(top.values(), &[1]);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum TopKOrder {
    /// The largest values (NaN after `+inf` under `NanPolicy::Last`, so taken first).
    #[default]
    Largest,
    /// The smallest values (NaN taken last under `NanPolicy::Last`).
    Smallest,
}

/// How top-k orders and returns its results: the largest (the default) or smallest values,
/// sorted by value or in ascending index order (the default).
///
/// Sorted output is in the order values are taken (descending for the largest, ascending for
/// the smallest), ties by the lower index; unsorted output is in ascending index order. Both
/// are deterministic. A [`TopKOrder`] converts into the options with unsorted output.
///
/// ```
/// use kselect::{Selector, TopKOptions, TopKOrder};
/// let data = [5, 9, 1, 9, 7];
/// let sel = Selector::new();
/// let by_index = sel.top_k(&data, 3, TopKOptions::largest()).unwrap();
/// assert_eq!(by_index.indices(), &[1, 3, 4]);
/// let sorted = sel.top_k(&data, 3, TopKOptions::smallest().sorted(true)).unwrap();
/// assert_eq!((sorted.values(), sorted.indices()), (&[1, 5, 7][..], &[2, 0, 4][..]));
/// assert_eq!(TopKOptions::from(TopKOrder::Smallest), TopKOptions::smallest());
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct TopKOptions {
    /// Largest or smallest first.
    pub order: TopKOrder,
    /// Sorted by value (ties by index) rather than by index.
    pub sorted: bool,
}

impl TopKOptions {
    /// The largest values, in index order.
    ///
    /// ```
    /// assert_eq!(kselect::TopKOptions::largest(), kselect::TopKOptions::default());
    /// ```
    pub fn largest() -> Self {
        TopKOptions {
            order: TopKOrder::Largest,
            sorted: false,
        }
    }

    /// The smallest values, in index order.
    ///
    /// ```
    /// let o = kselect::TopKOptions::smallest();
    /// assert_eq!(o.order, kselect::TopKOrder::Smallest);
    /// ```
    pub fn smallest() -> Self {
        TopKOptions {
            order: TopKOrder::Smallest,
            sorted: false,
        }
    }

    /// Sorted by value (`true`) or in ascending index order (`false`).
    ///
    /// ```
    /// assert!(kselect::TopKOptions::largest().sorted(true).sorted);
    /// ```
    pub fn sorted(self, sorted: bool) -> Self {
        TopKOptions { sorted, ..self }
    }
}

impl From<TopKOrder> for TopKOptions {
    fn from(order: TopKOrder) -> Self {
        TopKOptions {
            order,
            sorted: false,
        }
    }
}

/// The `k` values taken from each row or segment, with their indices inside it.
///
/// Values and indices are stored row-major: row `r` holds positions `r * k .. (r + 1) * k`.
/// A single array is one row.
///
/// ```
/// use kselect::{Matrix, Selector, TopKOptions};
/// let data = [1, 7, 3, 9, 4, 2];
/// let top = Selector::new()
///     .top_k_rows(Matrix::new(&data, 2, 3), 1, TopKOptions::largest())
///     .unwrap();
/// assert_eq!((top.rows(), top.k()), (2, 1));
/// assert_eq!(top.values(), &[7, 9]);
/// assert_eq!(top.indices(), &[1, 0]);
/// let rows: Vec<_> = top.iter().collect();
/// assert_eq!(rows[1], (&[9][..], &[0][..]));
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct TopK<T> {
    values: Vec<T>,
    indices: Vec<usize>,
    rows: usize,
    k: usize,
}

impl<T> TopK<T> {
    /// Builds the result of `rows` rows of `k` values each (the lengths match).
    pub(crate) fn new(values: Vec<T>, indices: Vec<usize>, rows: usize, k: usize) -> TopK<T> {
        debug_assert_eq!(values.len(), rows * k);
        debug_assert_eq!(indices.len(), rows * k);
        TopK {
            values,
            indices,
            rows,
            k,
        }
    }

    /// The number of rows or segments.
    ///
    /// ```
    /// let top = kselect::Selector::new().top_k(&[1, 2], 1, kselect::TopKOrder::Largest).unwrap();
    /// assert_eq!(top.rows(), 1);
    /// ```
    pub fn rows(&self) -> usize {
        self.rows
    }

    /// The number of values taken from each row or segment.
    ///
    /// ```
    /// let top = kselect::Selector::new().top_k(&[1, 2], 2, kselect::TopKOrder::Largest).unwrap();
    /// assert_eq!(top.k(), 2);
    /// ```
    pub fn k(&self) -> usize {
        self.k
    }

    /// The values and indices of row (or segment) `r`.
    ///
    /// # Panics
    ///
    /// When `r >= self.rows()`.
    ///
    /// ```
    /// use kselect::{Selector, TopKOptions};
    /// let top = Selector::new().top_k(&[0.5, -2.0, 1.5], 2, TopKOptions::largest()).unwrap();
    /// assert_eq!(top.row(0), (&[0.5, 1.5][..], &[0, 2][..]));
    /// ```
    pub fn row(&self, r: usize) -> (&[T], &[usize]) {
        assert!(r < self.rows, "row {r} of a top-k of {} rows", self.rows);
        let range = r * self.k..(r + 1) * self.k;
        (&self.values[range.clone()], &self.indices[range])
    }

    /// Every value, row-major.
    ///
    /// ```
    /// let top = kselect::Selector::new().top_k(&[4, 8], 1, kselect::TopKOrder::Largest).unwrap();
    /// assert_eq!(top.values(), &[8]);
    /// ```
    pub fn values(&self) -> &[T] {
        &self.values
    }

    /// Every index, row-major.
    ///
    /// ```
    /// let top = kselect::Selector::new().top_k(&[4, 8], 1, kselect::TopKOrder::Largest).unwrap();
    /// assert_eq!(top.indices(), &[1]);
    /// ```
    pub fn indices(&self) -> &[usize] {
        &self.indices
    }

    /// The rows' values and indices, in row order.
    ///
    /// ```
    /// use kselect::{Matrix, Selector, TopKOrder};
    /// let top = Selector::new()
    ///     .top_k_rows(Matrix::new(&[3, 1, 2, 0], 2, 2), 1, TopKOrder::Smallest)
    ///     .unwrap();
    /// let firsts: Vec<usize> = top.iter().map(|(_, idx)| idx[0]).collect();
    /// assert_eq!(firsts, vec![1, 1]);
    /// ```
    pub fn iter(&self) -> impl ExactSizeIterator<Item = (&[T], &[usize])> + '_ {
        (0..self.rows).map(move |r| self.row(r))
    }

    /// The values and the indices, row-major.
    ///
    /// ```
    /// let top = kselect::Selector::new().top_k(&[4, 8], 2, kselect::TopKOrder::Largest).unwrap();
    /// assert_eq!(top.into_parts(), (vec![4, 8], vec![0, 1]));
    /// ```
    pub fn into_parts(self) -> (Vec<T>, Vec<usize>) {
        (self.values, self.indices)
    }
}
