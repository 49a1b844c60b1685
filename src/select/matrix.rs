//! [`Matrix`]: a row-major matrix the batched operations, the regressions and kNN read, in host
//! memory or on a CUDA device.

use std::borrow::Cow;

use ndarray::{ArrayBase, ArrayView2, Data, Ix2};

use crate::element::Element;
use crate::error::Result;
use crate::select::batch::Rows;
use crate::select::input::Values;

/// `rows` rows of `cols` values each, row `r` starting at `r * stride` of its values (`stride`
/// is `cols` unless [`with_stride`](Matrix::with_stride) says otherwise): a slice, a vector or
/// a [`DeviceBuffer`](crate::DeviceBuffer) with its shape, or a 2-D ndarray.
///
/// Every method that reads a matrix takes `impl Into<Matrix>`: the batched selections and
/// top-k of [`Selector`](crate::Selector) (one result per row), the regressions
/// ([`Lts::fit`](crate::Lts::fit), [`Lms::fit`](crate::Lms::fit): one row per observation) and
/// kNN ([`Points`](crate::knn::Points): one row per point). The shape is checked against the
/// data where the matrix is read. An ndarray whose rows are not contiguous and one after
/// another (a transposed or column-sliced view) is copied once, row by row.
///
/// ```
/// use kselect::{Matrix, Selector};
/// use ndarray::array;
///
/// let sel = Selector::new();
/// let data = [3.0, 1.0, 2.0, 9.0, 8.0, 7.0];
/// assert_eq!(sel.select_rows(Matrix::new(&data, 2, 3), 0)?, vec![1.0, 7.0]);
/// // Two rows of two, their starts three values apart.
/// let padded = Matrix::new(&data, 2, 2).with_stride(3);
/// assert_eq!((padded.rows(), padded.cols(), padded.stride()), (2, 2, 3));
/// assert_eq!(sel.select_rows(padded, 1)?, vec![3.0, 9.0]);
/// let a = array![[4, 2], [1, 3]];
/// assert_eq!(sel.select_rows(&a, 0)?, vec![2, 1]);
/// assert_eq!(sel.select_rows(a.t(), 0)?, vec![1, 2]); // the columns of `a`
/// # Ok::<(), kselect::Error>(())
/// ```
///
/// On a GPU, a buffer already on the device:
///
/// ```no_run
/// use kselect::{Device, DeviceBuffer, Matrix, Selector, TopKOrder};
/// let device = Device::cuda(0)?;
/// let buf = DeviceBuffer::from_host(&device, &[1i32, 5, 5, 0, 9, 9])?;
/// let top = Selector::on(device).top_k_rows(Matrix::new(&buf, 2, 3), 1, TopKOrder::Largest)?;
/// assert_eq!(top.indices(), &[1, 1]);
/// # Ok::<(), kselect::Error>(())
/// ```
pub struct Matrix<'a, T: Element> {
    values: Values<'a, T>,
    shape: Rows,
}

impl<'a, T: Element> Matrix<'a, T> {
    /// The `rows x cols` matrix stored row after row in `data` (stride `cols`).
    ///
    /// ```
    /// let m = kselect::Matrix::new(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0], 3, 2);
    /// assert_eq!((m.rows(), m.cols(), m.stride()), (3, 2, 2));
    /// ```
    pub fn new(data: impl Into<Values<'a, T>>, rows: usize, cols: usize) -> Matrix<'a, T> {
        Matrix {
            values: data.into(),
            shape: Rows::new(rows, cols),
        }
    }

    /// The same matrix with its rows' starts `stride` values apart (`stride >= cols`, checked
    /// where the matrix is read).
    ///
    /// ```
    /// let m = kselect::Matrix::new(&[0u32; 8], 2, 3).with_stride(4);
    /// assert_eq!(m.stride(), 4);
    /// ```
    pub fn with_stride(self, stride: usize) -> Matrix<'a, T> {
        Matrix {
            shape: self.shape.with_stride(stride),
            ..self
        }
    }

    /// The number of rows.
    ///
    /// ```
    /// assert_eq!(kselect::Matrix::new(&[0i64; 6], 2, 3).rows(), 2);
    /// ```
    pub fn rows(&self) -> usize {
        self.shape.rows()
    }

    /// The number of columns (values in a row).
    ///
    /// ```
    /// assert_eq!(kselect::Matrix::new(&[0i64; 6], 2, 3).cols(), 3);
    /// ```
    pub fn cols(&self) -> usize {
        self.shape.cols()
    }

    /// How many values apart the rows start.
    ///
    /// ```
    /// assert_eq!(kselect::Matrix::new(&[0i64; 6], 2, 3).stride(), 3);
    /// ```
    pub fn stride(&self) -> usize {
        self.shape.stride()
    }

    /// The values the matrix reads.
    pub(crate) fn values(&self) -> &Values<'a, T> {
        &self.values
    }

    /// The values the matrix reads, by value.
    pub(crate) fn into_values(self) -> Values<'a, T> {
        self.values
    }

    /// The matrix's shape.
    pub(crate) fn shape(&self) -> Rows {
        self.shape
    }

    /// A matrix of `rows x cols` host values, borrowed or owned.
    pub(crate) fn from_host(data: Cow<'a, [T]>, rows: usize, cols: usize) -> Matrix<'a, T> {
        Matrix {
            values: Values::from_cow(data),
            shape: Rows::new(rows, cols),
        }
    }

    /// The rows in host memory, one after another: borrowed when they are, copied together
    /// when the stride leaves gaps, read back when they are on a device. An error when the
    /// shape does not fit the data.
    pub(crate) fn into_host_rows(self) -> Result<Cow<'a, [T]>> {
        let (rows, cols, stride) = (self.rows(), self.cols(), self.stride());
        let shape = self.shape;
        let data = self.values.into_host()?;
        shape.spans().check(data.len())?;
        let contiguous = stride == cols || rows <= 1;
        Ok(match data {
            Cow::Borrowed(data) if contiguous => Cow::Borrowed(&data[..rows * cols]),
            Cow::Owned(mut data) if contiguous => {
                data.truncate(rows * cols);
                Cow::Owned(data)
            }
            data => Cow::Owned(packed_rows(&data, rows, cols, stride)),
        })
    }
}

/// The `rows` rows of `cols` values, `stride` apart in `data`, one after another.
fn packed_rows<T: Copy>(data: &[T], rows: usize, cols: usize, stride: usize) -> Vec<T> {
    (0..rows)
        .flat_map(|r| &data[r * stride..r * stride + cols])
        .copied()
        .collect()
}

impl<'a, T: Element> From<ArrayView2<'a, T>> for Matrix<'a, T> {
    fn from(view: ArrayView2<'a, T>) -> Self {
        let (rows, cols) = view.dim();
        let values = match view.to_slice() {
            Some(data) => Values::from(data),
            None => Values::from_vec(view.iter().copied().collect()),
        };
        Matrix {
            values,
            shape: Rows::new(rows, cols),
        }
    }
}

impl<'a, T: Element, S: Data<Elem = T>> From<&'a ArrayBase<S, Ix2>> for Matrix<'a, T> {
    fn from(array: &'a ArrayBase<S, Ix2>) -> Self {
        Matrix::from(array.view())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::{array, s};

    #[test]
    fn host_rows_are_the_rows_without_their_gaps() {
        let data = [1, 2, 0, 3, 4, 0, 5, 6];
        let m = Matrix::new(&data, 3, 2).with_stride(3);
        assert_eq!(m.into_host_rows().unwrap().as_ref(), &[1, 2, 3, 4, 5, 6]);
        let contiguous = Matrix::new(&data[..6], 3, 2);
        assert_eq!(
            contiguous.into_host_rows().unwrap().as_ref(),
            &[1, 2, 0, 3, 4, 0]
        );
        assert!(
            Matrix::new(&data, 3, 3).into_host_rows().is_err(),
            "9 values needed, 8 given"
        );
        assert!(Matrix::new(&data, 2, 3)
            .with_stride(2)
            .into_host_rows()
            .is_err());
    }

    #[test]
    fn ndarrays_give_their_logical_rows() {
        let a = array![[1.0f32, 2.0, 3.0], [4.0, 5.0, 6.0]];
        let m = Matrix::from(&a);
        assert_eq!((m.rows(), m.cols(), m.stride()), (2, 3, 3));
        assert_eq!(
            m.into_host_rows().unwrap().as_ref(),
            &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0]
        );
        let t = Matrix::from(a.t());
        assert_eq!((t.rows(), t.cols()), (3, 2));
        assert_eq!(
            t.into_host_rows().unwrap().as_ref(),
            &[1.0, 4.0, 2.0, 5.0, 3.0, 6.0]
        );
        let columns = Matrix::from(a.slice(s![.., 1..]));
        assert_eq!(
            columns.into_host_rows().unwrap().as_ref(),
            &[2.0, 3.0, 5.0, 6.0]
        );
    }
}
