//! [`Points`]: a set of points, row-major, borrowed or owned.

use std::borrow::Cow;

use crate::element::first_non_finite;
use crate::error::{Error, Result};
use crate::knn::{KnnError, KnnFloat, PointSet};
use crate::select::Matrix;

/// `rows` points of `dim` coordinates each, stored row-major (point `i` at
/// `i * dim .. (i + 1) * dim`); borrowed from the caller where it can be, owned otherwise.
///
/// The kNN searches and estimators take their points as any [`Matrix`] (one point a row: a
/// slice with its shape, a 2-D ndarray, or `Points`), and hold them as `Points`.
///
/// ```
/// use kselect::knn::Points;
/// use kselect::Matrix;
/// use ndarray::array;
/// let p = Points::new(&[0.0f64, 1.0, 2.0, 3.0, 4.0, 5.0], 2)?;
/// assert_eq!((p.rows(), p.dim()), (3, 2));
/// assert_eq!(p.row(1), &[2.0, 3.0]);
/// let a = array![[1.0f32, 2.0], [3.0, 4.0]];
/// assert_eq!(Points::try_from(Matrix::from(&a))?.row(1), &[3.0, 4.0]);
/// // The columns of `a` as points.
/// assert_eq!(Points::try_from(Matrix::from(a.t()))?.row(1), &[2.0, 4.0]);
/// # Ok::<(), kselect::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct Points<'a, T: Clone> {
    data: Cow<'a, [T]>,
    rows: usize,
    dim: usize,
}

impl<'a, T: KnnFloat> Points<'a, T> {
    /// The points of a row-major slice of `dim` coordinates each. An error when `dim` is 0 or
    /// does not divide the length.
    ///
    /// ```
    /// use kselect::knn::Points;
    /// assert!(Points::new(&[1.0f32, 2.0, 3.0], 2).is_err());
    /// assert_eq!(Points::new(&[1.0f32, 2.0, 3.0], 3)?.rows(), 1);
    /// # Ok::<(), kselect::Error>(())
    /// ```
    pub fn new(data: &'a [T], dim: usize) -> Result<Points<'a, T>> {
        let rows = shape(data.len(), dim)?;
        Ok(Points {
            data: Cow::Borrowed(data),
            rows,
            dim,
        })
    }

    /// [`Points::new`] of an owned vector.
    ///
    /// ```
    /// let p = kselect::knn::Points::from_vec(vec![1.0f64; 6], 3)?;
    /// assert_eq!(p.rows(), 2);
    /// # Ok::<(), kselect::Error>(())
    /// ```
    pub fn from_vec(data: Vec<T>, dim: usize) -> Result<Points<'static, T>> {
        let rows = shape(data.len(), dim)?;
        Ok(Points {
            data: Cow::Owned(data),
            rows,
            dim,
        })
    }

    /// The number of points.
    ///
    /// ```
    /// assert_eq!(kselect::knn::Points::new(&[1.0f32; 8], 4)?.rows(), 2);
    /// # Ok::<(), kselect::Error>(())
    /// ```
    pub fn rows(&self) -> usize {
        self.rows
    }

    /// The number of coordinates of each point.
    ///
    /// ```
    /// assert_eq!(kselect::knn::Points::new(&[1.0f32; 8], 4)?.dim(), 4);
    /// # Ok::<(), kselect::Error>(())
    /// ```
    pub fn dim(&self) -> usize {
        self.dim
    }

    /// Whether there are no points.
    ///
    /// ```
    /// assert!(kselect::knn::Points::<f64>::new(&[], 3)?.is_empty());
    /// # Ok::<(), kselect::Error>(())
    /// ```
    pub fn is_empty(&self) -> bool {
        self.rows == 0
    }

    /// The coordinates of point `i`.
    ///
    /// # Panics
    ///
    /// When `i >= self.rows()`.
    ///
    /// ```
    /// assert_eq!(kselect::knn::Points::new(&[1.0f32, 2.0], 1)?.row(1), &[2.0]);
    /// # Ok::<(), kselect::Error>(())
    /// ```
    pub fn row(&self, i: usize) -> &[T] {
        assert!(i < self.rows, "point {i} of a set of {}", self.rows);
        &self.data[i * self.dim..(i + 1) * self.dim]
    }

    /// Every coordinate, row-major.
    ///
    /// ```
    /// assert_eq!(kselect::knn::Points::new(&[1.0f32, 2.0], 1)?.as_slice(), &[1.0, 2.0]);
    /// # Ok::<(), kselect::Error>(())
    /// ```
    pub fn as_slice(&self) -> &[T] {
        &self.data
    }

    /// The same points, owned.
    ///
    /// ```
    /// let v = vec![1.0f64, 2.0];
    /// let owned = kselect::knn::Points::new(&v, 2)?.into_owned();
    /// drop(v);
    /// assert_eq!(owned.rows(), 1);
    /// # Ok::<(), kselect::Error>(())
    /// ```
    pub fn into_owned(self) -> Points<'static, T> {
        Points {
            data: Cow::Owned(self.data.into_owned()),
            rows: self.rows,
            dim: self.dim,
        }
    }

    /// A view of the points `range` (a slice of rows).
    pub(crate) fn slice_rows(&self, range: std::ops::Range<usize>) -> Points<'_, T> {
        Points {
            data: Cow::Borrowed(&self.data[range.start * self.dim..range.end * self.dim]),
            rows: range.len(),
            dim: self.dim,
        }
    }

    /// An error naming the first coordinate that is not finite, `what` naming the set
    /// (e.g. "reference point", "query").
    pub(crate) fn check_finite(&self, set: PointSet) -> Result<()> {
        match first_non_finite(&self.data) {
            None => Ok(()),
            Some(at) => Err(KnnError::NonFiniteCoordinate {
                set,
                row: at / self.dim,
                column: at % self.dim,
                value: self.data[at].to_f64(),
            }
            .into()),
        }
    }
}

impl<'a, T: KnnFloat> TryFrom<Matrix<'a, T>> for Points<'a, T> {
    type Error = Error;

    /// The rows of `matrix` as points: borrowed where they are contiguous in host memory,
    /// copied otherwise. An error when the matrix's shape does not fit its data.
    fn try_from(matrix: Matrix<'a, T>) -> Result<Points<'a, T>> {
        let (rows, dim) = (matrix.rows(), matrix.cols());
        let data = matrix.into_host_rows()?;
        Ok(Points { data, rows, dim })
    }
}

impl<'a, T: KnnFloat> From<Points<'a, T>> for Matrix<'a, T> {
    fn from(points: Points<'a, T>) -> Matrix<'a, T> {
        Matrix::from_host(points.data, points.rows, points.dim)
    }
}

/// The number of rows of `len` values of `dim` coordinates each.
fn shape(len: usize, dim: usize) -> Result<usize> {
    if dim == 0 {
        return Err(KnnError::NoCoordinate { set: None }.into());
    }
    if !len.is_multiple_of(dim) {
        return Err(KnnError::Ragged { len, dim }.into());
    }
    Ok(len / dim)
}
