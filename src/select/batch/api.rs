//! The batched operations as methods of [`Selector`]: arguments checked, the backend of the
//! selector's device run, the NaN policy applied.

use crate::device::{CudaDevice, Device, DeviceBuffer};
use crate::element::Element;
use crate::error::{Error, Result};
use crate::select::batch::error::BatchError;
use crate::select::batch::layout::check_ranks;
use crate::select::batch::policy::{check_k, check_selection, check_taken};
use crate::select::batch::spans::{KeyOrder, SpanRanks, Spans};
use crate::select::batch::{
    cuda, hard_threshold_in_place, select_spans, top_k_spans, BatchRank, DeviceThreshold,
    DeviceTopK, Segments, Threshold, TopK, TopKOptions, TopKOrder,
};
use crate::select::input::{Input, Values};
use crate::select::matrix::Matrix;
use crate::select::{NanPolicy, Selector};

/// Batched selection, top-k and hard thresholding (see [`crate::select::batch`] for the
/// semantics they share).
impl Selector {
    /// The element of one rank in every row of a [`Matrix`]: the same rank in every row
    /// (`usize`, [`BatchRank::Same`]) or one per row (a slice, [`BatchRank::Each`]).
    ///
    /// Returns one value per row. Ranks are 0-based ascending; under `NanPolicy::Omit` they
    /// count the row's numbers only.
    ///
    /// ```
    /// use kselect::{Matrix, NanPolicy, Selector};
    /// let data = [3.0, 1.0, 2.0, f64::NAN, 9.0, 8.0];
    /// let sel = Selector::new().nan_policy(NanPolicy::Omit);
    /// assert_eq!(sel.select_rows(Matrix::new(&data, 2, 3), 1).unwrap(), vec![2.0, 9.0]);
    /// assert_eq!(sel.select_rows(Matrix::new(&data, 2, 3), &[2, 0]).unwrap(), vec![3.0, 8.0]);
    /// assert!(sel.select_rows(Matrix::new(&data, 2, 3), 2).is_err()); // row 1 has 2 numbers
    /// ```
    pub fn select_rows<'a, 'r, T: Element>(
        &self,
        matrix: impl Into<Matrix<'a, T>>,
        ranks: impl Into<BatchRank<'r>>,
    ) -> Result<Vec<T>> {
        let matrix = matrix.into();
        let input = self.batch_input(matrix.values(), "batched selection")?;
        ranks
            .into()
            .with_span_ranks(|r| self.select_batch(input, matrix.shape().spans(), r))
    }

    /// The element of one rank in every segment of a flat array (the same rank, or one per
    /// segment). Returns one value per segment.
    ///
    /// ```
    /// use kselect::{Segments, Selector};
    /// let data = [5, 1, 4, 10, 30, 20];
    /// let segments = Segments::new(&[0, 3, 6]);
    /// assert_eq!(Selector::new().select_segments(&data, segments, 0).unwrap(), vec![1, 10]);
    /// let per_segment = Selector::new().select_segments(&data, segments, &[2, 1]).unwrap();
    /// assert_eq!(per_segment, vec![5, 20]);
    /// ```
    pub fn select_segments<'a, 'r, T: Element>(
        &self,
        data: impl Into<Values<'a, T>>,
        segments: Segments<'_>,
        ranks: impl Into<BatchRank<'r>>,
    ) -> Result<Vec<T>> {
        let values = data.into();
        let input = self.batch_input(&values, "batched selection")?;
        ranks
            .into()
            .with_span_ranks(|r| self.select_batch(input, segments.spans(), r))
    }

    /// The elements of the same `ranks` (any order, repeats allowed) in every row, row-major:
    /// row `r`'s values at `r * ranks.len() ..`, in the order of the ranks.
    ///
    /// ```
    /// use kselect::{Matrix, Selector};
    /// let data = [4, 2, 3, 1, 8, 6, 7, 5];
    /// let v = Selector::new().multiselect_rows(Matrix::new(&data, 2, 4), &[3, 0, 0]).unwrap();
    /// assert_eq!(v, vec![4, 1, 1, 8, 5, 5]);
    /// ```
    pub fn multiselect_rows<'a, T: Element>(
        &self,
        matrix: impl Into<Matrix<'a, T>>,
        ranks: &[usize],
    ) -> Result<Vec<T>> {
        let matrix = matrix.into();
        let input = self.batch_input(matrix.values(), "batched selection")?;
        self.select_batch(input, matrix.shape().spans(), SpanRanks::Same(ranks))
    }

    /// The elements of the same `ranks` in every segment, segment-major (as
    /// [`multiselect_rows`](Selector::multiselect_rows)); every segment must be longer than the
    /// highest rank.
    ///
    /// ```
    /// use kselect::{Segments, Selector};
    /// let data = [2.5, 0.5, 1.5, -1.0, -3.0];
    /// let v = Selector::new()
    ///     .multiselect_segments(&data, Segments::new(&[0, 3, 5]), &[1, 0])
    ///     .unwrap();
    /// assert_eq!(v, vec![1.5, 0.5, -1.0, -3.0]);
    /// ```
    pub fn multiselect_segments<'a, T: Element>(
        &self,
        data: impl Into<Values<'a, T>>,
        segments: Segments<'_>,
        ranks: &[usize],
    ) -> Result<Vec<T>> {
        let values = data.into();
        let input = self.batch_input(&values, "batched selection")?;
        self.select_batch(input, segments.spans(), SpanRanks::Same(ranks))
    }

    /// The `k` largest (or smallest) values of `data` with their indices, `k` from 1 to the
    /// number of values; ties go to the lower index. `options` is a [`TopKOptions`] or a
    /// [`TopKOrder`] (unsorted output: ascending index order).
    ///
    /// ```
    /// use kselect::{NanPolicy, Selector, TopKOptions};
    /// let data = [0.5, f32::NAN, 3.0, -1.0, 3.0];
    /// let sel = Selector::new().nan_policy(NanPolicy::Last);
    /// let top = sel.top_k(&data, 2, TopKOptions::largest().sorted(true)).unwrap();
    /// assert!(top.values()[0].is_nan()); // NaN after +inf, as torch.topk
    /// assert_eq!(top.indices(), &[1, 2]);
    /// let omit = Selector::new().nan_policy(NanPolicy::Omit);
    /// let top = omit.top_k(&data, 3, TopKOptions::largest().sorted(true)).unwrap();
    /// assert_eq!((top.values(), top.indices()), (&[3.0, 3.0, 0.5][..], &[2, 4, 0][..]));
    /// assert!(Selector::new().top_k(&data, 1, TopKOptions::largest()).is_err()); // NaN
    /// ```
    pub fn top_k<T: Element>(
        &self,
        data: &[T],
        k: usize,
        options: impl Into<TopKOptions>,
    ) -> Result<TopK<T>> {
        self.top_k_batch(Input::Host(data), one_span(data.len()), k, options.into())
    }

    /// The `k` largest (or smallest) values of every row with their column indices; every row
    /// holds at least `k` values.
    ///
    /// ```
    /// use kselect::{Matrix, Selector, TopKOrder};
    /// let data = [1, 5, 5, 0, 9, 9, 2, 0];
    /// let sel = Selector::new();
    /// let top = sel.top_k_rows(Matrix::new(&data, 2, 4), 2, TopKOrder::Largest).unwrap();
    /// assert_eq!(top.row(0), (&[5, 5][..], &[1, 2][..]));
    /// assert_eq!(top.row(1), (&[9, 9][..], &[0, 1][..]));
    /// ```
    pub fn top_k_rows<'a, T: Element>(
        &self,
        matrix: impl Into<Matrix<'a, T>>,
        k: usize,
        options: impl Into<TopKOptions>,
    ) -> Result<TopK<T>> {
        let matrix = matrix.into();
        let input = self.batch_input(matrix.values(), "top-k")?;
        self.top_k_batch(input, matrix.shape().spans(), k, options.into())
    }

    /// The `k` largest (or smallest) values of every segment with their indices inside it;
    /// every segment holds at least `k` values (under `NanPolicy::Omit`, `k` numbers).
    ///
    /// ```
    /// use kselect::{Segments, Selector, TopKOptions};
    /// let data = [7, 3, 8, 1, 2];
    /// let top = Selector::new()
    ///     .top_k_segments(&data, Segments::new(&[0, 3, 5]), 1, TopKOptions::smallest())
    ///     .unwrap();
    /// assert_eq!((top.values(), top.indices()), (&[3, 1][..], &[1, 0][..]));
    /// ```
    pub fn top_k_segments<T: Element>(
        &self,
        data: &[T],
        segments: Segments<'_>,
        k: usize,
        options: impl Into<TopKOptions>,
    ) -> Result<TopK<T>> {
        self.top_k_batch(Input::Host(data), segments.spans(), k, options.into())
    }

    /// Hard thresholding `H_k`, in place: keeps the `k` entries of largest magnitude (ties by
    /// the lower index), sets every other entry to zero, and returns the support and the
    /// threshold ([`Threshold`]). `k` is 1 to `data.len()`.
    ///
    /// NaN: under `Error` an error; under `Last` NaN has the largest magnitude; under `Omit` a
    /// NaN is never kept (it is zeroed), and fewer than `k` numbers is an error. On any error
    /// `data` is left as it was.
    ///
    /// ```
    /// use kselect::Selector;
    /// let mut x = vec![3i32, -5, 0, i32::MIN, 5, 1];
    /// let t = Selector::new().hard_threshold(&mut x, 3).unwrap();
    /// assert_eq!(x, vec![0, -5, 0, i32::MIN, 5, 0]);
    /// assert_eq!(t.support, vec![1, 3, 4]);
    /// assert_eq!((t.index, t.value), (4, 5)); // |-5| = |5|: the higher index is the last kept
    /// ```
    pub fn hard_threshold<T: Element>(&self, data: &mut [T], k: usize) -> Result<Threshold<T>> {
        let threshold = self.threshold_of(Input::Host(data), k)?;
        zero_outside(data, &threshold.support);
        Ok(threshold)
    }

    /// The support and the threshold of [`hard_threshold`](Selector::hard_threshold), without
    /// modifying `data`.
    ///
    /// ```
    /// use kselect::{NanPolicy, Selector};
    /// let x = [0.5, f64::NAN, -2.0, 1.0];
    /// let t = Selector::new().nan_policy(NanPolicy::Omit).threshold(&x, 2).unwrap();
    /// assert_eq!(t.support, vec![2, 3]);
    /// assert_eq!((t.index, t.value), (3, 1.0));
    /// let last = Selector::new().nan_policy(NanPolicy::Last).threshold(&x, 2).unwrap();
    /// assert_eq!(last.support, vec![1, 2]);
    /// ```
    pub fn threshold<T: Element>(&self, data: &[T], k: usize) -> Result<Threshold<T>> {
        self.threshold_of(Input::Host(data), k)
    }

    /// [`top_k`](Selector::top_k) of a device-resident buffer, with the results left on the
    /// device ([`DeviceTopK`]).
    ///
    /// ```no_run
    /// use kselect::{Device, DeviceBuffer, Selector, TopKOptions};
    /// let device = Device::cuda(0)?;
    /// let buf = DeviceBuffer::from_host(&device, &[0.5f32, 3.0, -1.0, 3.0])?;
    /// let top = Selector::on(device).top_k_device(&buf, 2, TopKOptions::largest())?;
    /// assert_eq!(top.indices().to_host()?, vec![1, 3]);
    /// # Ok::<(), kselect::Error>(())
    /// ```
    pub fn top_k_device<T: Element>(
        &self,
        buf: &DeviceBuffer<T>,
        k: usize,
        options: impl Into<TopKOptions>,
    ) -> Result<DeviceTopK<T>> {
        self.device_for(buf, "top-k")?;
        self.top_k_on_device(buf, one_span(buf.len()), k, options.into())
    }

    /// [`top_k_rows`](Selector::top_k_rows) with the results left on the selector's device
    /// ([`DeviceTopK`]); a matrix in host memory is copied there first.
    ///
    /// ```no_run
    /// use kselect::{Device, DeviceBuffer, Matrix, Selector, TopKOrder};
    /// let device = Device::cuda(0)?;
    /// let buf = DeviceBuffer::from_host(&device, &[1i32, 5, 5, 0, 9, 9])?;
    /// let sel = Selector::on(device);
    /// let top = sel.top_k_rows_device(Matrix::new(&buf, 2, 3), 1, TopKOrder::Largest)?;
    /// assert_eq!(top.to_host()?.indices(), &[1, 1]);
    /// # Ok::<(), kselect::Error>(())
    /// ```
    pub fn top_k_rows_device<'a, T: Element>(
        &self,
        matrix: impl Into<Matrix<'a, T>>,
        k: usize,
        options: impl Into<TopKOptions>,
    ) -> Result<DeviceTopK<T>> {
        let matrix = matrix.into();
        let uploaded;
        let buf = match matrix.values().input() {
            Input::Device(buf) => self.device_for(buf, "top-k").map(|_| buf)?,
            Input::Host(data) => {
                let Device::Cuda(dev) = self.device() else {
                    return Err(cpu_selector_error("top-k"));
                };
                uploaded = DeviceBuffer::from_host_on(dev, data)?;
                &uploaded
            }
        };
        self.top_k_on_device(buf, matrix.shape().spans(), k, options.into())
    }

    /// [`top_k_segments`](Selector::top_k_segments) of a device-resident buffer, with the
    /// results left on the device ([`DeviceTopK`]).
    ///
    /// ```no_run
    /// use kselect::{Device, DeviceBuffer, Segments, Selector, TopKOrder};
    /// let device = Device::cuda(0)?;
    /// let buf = DeviceBuffer::from_host(&device, &[7u64, 3, 8, 1, 2])?;
    /// let sel = Selector::on(device);
    /// let segments = Segments::new(&[0, 3, 5]);
    /// let top = sel.top_k_segments_device(&buf, segments, 1, TopKOrder::Smallest)?;
    /// assert_eq!(top.values().to_host()?, vec![3, 1]);
    /// # Ok::<(), kselect::Error>(())
    /// ```
    pub fn top_k_segments_device<T: Element>(
        &self,
        buf: &DeviceBuffer<T>,
        segments: Segments<'_>,
        k: usize,
        options: impl Into<TopKOptions>,
    ) -> Result<DeviceTopK<T>> {
        self.device_for(buf, "top-k")?;
        self.top_k_on_device(buf, segments.spans(), k, options.into())
    }

    /// [`hard_threshold`](Selector::hard_threshold) of a device-resident buffer, in place on
    /// its device. The kept entries' values are read back to find the threshold (a few copies
    /// of the ranges that hold them, or the whole buffer when they are spread out).
    ///
    /// ```no_run
    /// use kselect::{Device, DeviceBuffer, Selector};
    /// let device = Device::cuda(0)?;
    /// let mut buf = DeviceBuffer::from_host(&device, &[0.5f64, -3.0, 2.0, -0.25])?;
    /// let t = Selector::on(device).hard_threshold_device(&mut buf, 2)?;
    /// assert_eq!(buf.to_host()?, vec![0.0, -3.0, 2.0, 0.0]);
    /// assert_eq!((t.index(), t.value()), (2, 2.0));
    /// assert_eq!(t.support().to_host()?, vec![1, 2]);
    /// # Ok::<(), kselect::Error>(())
    /// ```
    pub fn hard_threshold_device<T: Element>(
        &self,
        buf: &mut DeviceBuffer<T>,
        k: usize,
    ) -> Result<DeviceThreshold<T>> {
        self.device_for(buf, "hard thresholding")?;
        let spans = one_span(buf.len());
        check_k(&spans, k)?;
        // The backend applies the NaN policy before it modifies the buffer.
        hard_threshold_in_place(self, buf, k)
    }

    /// [`threshold`](Selector::threshold) of a device-resident buffer, which is not modified;
    /// the support stays on the device ([`DeviceThreshold`]).
    ///
    /// ```no_run
    /// use kselect::{Device, DeviceBuffer, Selector};
    /// let device = Device::cuda(0)?;
    /// let buf = DeviceBuffer::from_host(&device, &[1i32, -7, 3, 7])?;
    /// let t = Selector::on(device).threshold_device(&buf, 2)?.to_host()?;
    /// assert_eq!((t.support, t.index, t.value), (vec![1, 3], 3, 7));
    /// # Ok::<(), kselect::Error>(())
    /// ```
    pub fn threshold_device<T: Element>(
        &self,
        buf: &DeviceBuffer<T>,
        k: usize,
    ) -> Result<DeviceThreshold<T>> {
        let dev = self.device_for(buf, "hard thresholding")?;
        check_k(&one_span(buf.len()), k)?;
        cuda::threshold(dev, Input::Device(buf), k, self.nan_policy_choice())
    }

    /// Checks the batch, selects on the selector's device and applies the NaN policy.
    fn select_batch<T: Element>(
        &self,
        input: Input<'_, T>,
        spans: Spans<'_>,
        ranks: SpanRanks<'_>,
    ) -> Result<Vec<T>> {
        spans.check(input.len())?;
        check_ranks(&spans, &ranks)?;
        if spans.count() == 0 {
            return Ok(Vec::new());
        }
        let selection = select_spans(self, input, spans, ranks)?;
        check_selection(
            self.nan_policy_choice(),
            input,
            &spans,
            &ranks,
            &selection.nan_counts,
        )?;
        Ok(selection.values)
    }

    /// Checks the batch and `k`, takes on the selector's device and applies the NaN policy.
    fn top_k_batch<T: Element>(
        &self,
        input: Input<'_, T>,
        spans: Spans<'_>,
        k: usize,
        options: TopKOptions,
    ) -> Result<TopK<T>> {
        spans.check(input.len())?;
        check_k(&spans, k)?;
        let count = spans.count();
        if count == 0 {
            return Ok(TopK::new(Vec::new(), Vec::new(), 0, k));
        }
        let policy = self.nan_policy_choice();
        let order = key_order(options.order, policy);
        let taken = top_k_spans(self, input, spans, k, order, options.sorted)?;
        check_taken(policy, input, &spans, k, &taken.nan_counts)?;
        Ok(TopK::new(taken.values, taken.indices, count, k))
    }

    /// [`top_k_batch`](Self::top_k_batch) of a device buffer, with the results left there.
    fn top_k_on_device<T: Element>(
        &self,
        buf: &DeviceBuffer<T>,
        spans: Spans<'_>,
        k: usize,
        options: TopKOptions,
    ) -> Result<DeviceTopK<T>> {
        let Device::Cuda(dev) = self.device() else {
            return Err(cpu_selector_error("top-k"));
        };
        let input = Input::Device(buf);
        spans.check(input.len())?;
        check_k(&spans, k)?;
        let policy = self.nan_policy_choice();
        let taken = crate::select::batch::cuda::top_k_spans_on_device(
            dev,
            input,
            spans,
            k,
            key_order(options.order, policy),
            options.sorted,
        )?;
        check_taken(policy, input, &spans, k, &taken.nan_counts)?;
        Ok(DeviceTopK::new(
            taken.values,
            taken.indices,
            spans.count(),
            k,
        ))
    }

    /// The support and threshold of the `k` entries of largest magnitude of `input`.
    fn threshold_of<T: Element>(&self, input: Input<'_, T>, k: usize) -> Result<Threshold<T>> {
        let spans = one_span(input.len());
        check_k(&spans, k)?;
        let policy = self.nan_policy_choice();
        if let Device::Cuda(dev) = self.device() {
            return cuda::threshold(dev, input, k, policy)?.to_host();
        }
        let nan_low = policy == NanPolicy::Omit;
        let order = KeyOrder::LargestMagnitude { nan_low };
        let taken = top_k_spans(self, input, spans, k, order, false)?;
        check_taken(policy, input, &spans, k, &taken.nan_counts)?;
        Ok(Threshold::of(taken.indices, &taken.values, nan_low))
    }

    /// Checks that a device buffer can be read by this selector: a CUDA selector of the
    /// buffer's device.
    /// The values of a batched operation `what`: those on a device only for a selector on
    /// that device ([`Selector::device_for`]).
    fn batch_input<'v, T: Element>(
        &self,
        values: &'v Values<'_, T>,
        what: &'static str,
    ) -> Result<Input<'v, T>> {
        if let Some(buf) = values.device_buffer() {
            self.device_for(buf, what)?;
        }
        Ok(values.input())
    }

    fn device_for<T: Element>(
        &self,
        buf: &DeviceBuffer<T>,
        what: &'static str,
    ) -> Result<&CudaDevice> {
        match self.device() {
            Device::Cpu => Err(cpu_selector_error(what)),
            Device::Cuda(dev) if dev.ordinal() != buf.device().ordinal() => {
                Err(BatchError::OtherDevice {
                    what,
                    buffer: buf.device().ordinal(),
                    selector: dev.ordinal(),
                }
                .into())
            }
            Device::Cuda(dev) => Ok(dev),
        }
    }
}

/// The error for a device buffer given to a CPU selector.
pub(super) fn cpu_selector_error(what: &'static str) -> Error {
    BatchError::DeviceBufferOnCpu { what }.into()
}

/// The key order of a top-k: NaN below every number when NaNs are omitted.
fn key_order(order: TopKOrder, policy: NanPolicy) -> KeyOrder {
    match order {
        TopKOrder::Largest => KeyOrder::Largest {
            nan_low: policy == NanPolicy::Omit,
        },
        TopKOrder::Smallest => KeyOrder::Smallest,
    }
}

/// A whole array of `n` values as one span.
fn one_span(n: usize) -> Spans<'static> {
    Spans::Rows {
        rows: 1,
        cols: n,
        stride: n,
    }
}

/// Sets every entry of `data` outside `support` (ascending indices) to zero.
fn zero_outside<T: Element>(data: &mut [T], support: &[usize]) {
    let mut start = 0;
    for &i in support {
        data[start..i].fill(T::default());
        start = i + 1;
    }
    data[start..].fill(T::default());
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zeroing_keeps_exactly_the_support() {
        let mut x = [1, 2, 3, 4, 5, 6];
        zero_outside(&mut x, &[1, 2, 5]);
        assert_eq!(x, [0, 2, 3, 0, 0, 6]);
        let mut y = [-1.5f32, 2.0];
        zero_outside(&mut y, &[]);
        assert_eq!(y, [0.0, 0.0]);
        assert!(y.iter().all(|v| v.is_sign_positive()));
    }

    #[test]
    fn a_failed_threshold_leaves_the_data_alone() {
        let mut x = [1.0, f64::NAN, 3.0];
        assert!(Selector::new().hard_threshold(&mut x, 1).is_err());
        assert!(x[1].is_nan() && x[0] == 1.0 && x[2] == 3.0);
        let omit = Selector::new().nan_policy(NanPolicy::Omit);
        assert!(omit.hard_threshold(&mut x, 3).is_err());
        assert_eq!(x[2], 3.0);
        let t = omit.hard_threshold(&mut x, 2).unwrap();
        assert_eq!(t.support, vec![0, 2]);
        assert_eq!(x, [1.0, 0.0, 3.0]);
    }
}
