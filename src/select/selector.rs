//! [`Selector`]: the device, algorithm and NaN policy of a selection.

use crate::device::cuda::kernels::reduce::NanCount;
use crate::device::cuda::MemoryNeed;
use crate::device::{Device, DeviceBuffer};
use crate::element::Element;
use crate::error::{Error, Result};
use crate::select::algorithm::{cuda_workspace, run_cpu, run_cuda, Query};
use crate::select::input::{Input, Values};
use crate::select::nan::{self, NanScan, RankSpace};
use crate::select::{
    bucket_multi, cpu, cuda, median, quantile, sample, Algorithm, Approximate, ApproximateQuantile,
    NanPolicy, QuantileMethod,
};

/// Chooses the device, the algorithm and the NaN policy of selections.
///
/// Every method returns exactly what the sort-based reference returns, whatever the device and
/// algorithm. The input is never modified.
///
/// ```
/// use kselect::{Algorithm, Device, NanPolicy, Selector};
/// let sel = Selector::on(Device::Cpu)
///     .algorithm(Algorithm::Radix)
///     .nan_policy(NanPolicy::Omit);
/// let data = [3.5f32, f32::NAN, -1.0, 2.0];
/// assert_eq!(sel.select(&data, 0).unwrap(), -1.0);
/// assert_eq!(sel.select_largest(&data, 0).unwrap(), 3.5);
/// assert_eq!(sel.multiselect(&data, &[2, 1]).unwrap(), vec![3.5, 2.0]);
/// ```
#[derive(Clone, Debug)]
pub struct Selector {
    device: Device,
    algorithm: Algorithm,
    nan_policy: NanPolicy,
    parallel: bool,
}

impl Default for Selector {
    fn default() -> Self {
        Selector::new()
    }
}

impl Selector {
    /// A CPU selector with the automatic algorithm, `NanPolicy::Error`, and threads for large
    /// inputs.
    ///
    /// ```
    /// assert_eq!(kselect::Selector::new().select(&[2, 1], 0).unwrap(), 1);
    /// ```
    pub fn new() -> Self {
        Selector::on(Device::Cpu)
    }

    /// A selector on `device`.
    ///
    /// ```
    /// let sel = kselect::Selector::on(kselect::Device::Cpu);
    /// assert_eq!(sel.device().backend_name(), "cpu");
    /// ```
    pub fn on(device: Device) -> Self {
        Selector {
            device,
            algorithm: Algorithm::Auto,
            nan_policy: NanPolicy::Error,
            parallel: true,
        }
    }

    /// A selector on [`Device::auto`]: CUDA device 0 when there is one, the CPU otherwise.
    ///
    /// ```
    /// let sel = kselect::Selector::auto();
    /// assert_eq!(sel.select(&[3u64, 1, 2], 1).unwrap(), 2);
    /// ```
    pub fn auto() -> Self {
        Selector::on(Device::auto())
    }

    /// Uses `algorithm` (checked against the device when a selection runs).
    ///
    /// ```
    /// use kselect::{Algorithm, Selector};
    /// let sel = Selector::new().algorithm(Algorithm::Bucket);
    /// assert_eq!(sel.select(&[9.0, 7.0, 8.0], 2).unwrap(), 9.0);
    /// ```
    pub fn algorithm(mut self, algorithm: Algorithm) -> Self {
        self.algorithm = algorithm;
        self
    }

    /// Uses `policy` for NaN values.
    ///
    /// ```
    /// use kselect::{NanPolicy, Selector};
    /// let sel = Selector::new().nan_policy(NanPolicy::Omit);
    /// assert_eq!(sel.median(&[f64::NAN, 1.0, 2.0, 3.0]).unwrap(), 2.0);
    /// ```
    pub fn nan_policy(mut self, policy: NanPolicy) -> Self {
        self.nan_policy = policy;
        self
    }

    /// Allows (the default) or forbids several CPU threads.
    ///
    /// ```
    /// let sel = kselect::Selector::new().parallel(false);
    /// assert_eq!(sel.select(&[1, 2, 3], 2).unwrap(), 3);
    /// ```
    pub fn parallel(mut self, parallel: bool) -> Self {
        self.parallel = parallel;
        self
    }

    /// The device selections run on.
    ///
    /// ```
    /// assert!(!kselect::Selector::new().device().is_cuda());
    /// ```
    pub fn device(&self) -> &Device {
        &self.device
    }

    /// The NaN policy.
    pub(crate) fn nan_policy_choice(&self) -> NanPolicy {
        self.nan_policy
    }

    /// Whether several CPU threads are allowed.
    pub(crate) fn allows_threads(&self) -> bool {
        self.parallel
    }

    /// The algorithm asked for (possibly `Auto`).
    ///
    /// ```
    /// assert_eq!(kselect::Selector::new().algorithm_choice(), kselect::Algorithm::Auto);
    /// ```
    pub fn algorithm_choice(&self) -> Algorithm {
        self.algorithm
    }

    /// The algorithm that runs for `n` values of type `T` and `ranks` ranks on this device
    /// (what `Auto` resolves to).
    ///
    /// ```
    /// use kselect::{Algorithm, Selector};
    /// let sel = Selector::new().algorithm(Algorithm::Radix);
    /// assert_eq!(sel.resolved_algorithm::<f32>(1000, 1).unwrap(), Algorithm::Radix);
    /// ```
    pub fn resolved_algorithm<T: Element>(&self, n: usize, ranks: usize) -> Result<Algorithm> {
        let available = match &self.device {
            Device::Cpu => Algorithm::cpu_algorithms(),
            Device::Cuda(_) => Algorithm::cuda_algorithms(),
        };
        if !available.contains(&self.algorithm) {
            return Err(self.algorithm.unsupported_on(self.device.backend_name()));
        }
        Ok(match (&self.device, self.algorithm) {
            (Device::Cpu, Algorithm::Auto) => cpu::auto_algorithm::<T>(n, ranks),
            (Device::Cuda(_), Algorithm::Auto) => {
                cuda::auto_algorithm(n, cuda::RankSpread::even(ranks))
            }
            (_, chosen) => chosen,
        })
    }

    /// The algorithm that runs for `n` values of type `T` and these `ranks` (any order,
    /// repeats allowed) on this device: what `Auto` resolves to, from the ranks' number and
    /// spread. [`Selector::resolved_algorithm`] assumes distinct ranks spread evenly.
    ///
    /// ```
    /// use kselect::{Algorithm, Selector};
    /// let sel = Selector::new();
    /// let auto = sel.resolved_algorithm_for_ranks::<f64>(1 << 20, &[10, 500_000]).unwrap();
    /// assert_eq!(auto, sel.resolved_algorithm::<f64>(1 << 20, 2).unwrap());
    /// ```
    pub fn resolved_algorithm_for_ranks<T: Element>(
        &self,
        n: usize,
        ranks: &[usize],
    ) -> Result<Algorithm> {
        match (&self.device, self.algorithm) {
            (Device::Cuda(_), Algorithm::Auto) => {
                self.resolved_algorithm::<T>(n, ranks.len())?;
                Ok(cuda::auto_algorithm(n, cuda::RankSpread::of(n, ranks)))
            }
            _ => self.resolved_algorithm::<T>(n, ranks.len()),
        }
    }

    /// The most device memory, in bytes, that a selection of `ranks` (any order, repeats
    /// allowed) from `n` values of type `T` takes on this selector's device besides its input:
    /// the workspace of the algorithm it resolves to, and of those that algorithm hands ranks
    /// to, and the NaN count. `0` on the CPU, whose algorithms work in host memory.
    ///
    /// Device buffers come from the device's memory pool, which keeps what a call frees for the
    /// next: [`CudaDevice::reserve`](crate::CudaDevice::reserve) maps this much once, before
    /// the first call (and fails there when the device lacks the room). An input on the host
    /// is copied to the device first: add `n` values for it. Quantiles read two ranks a
    /// probability where they interpolate.
    ///
    /// ```
    /// use kselect::{Algorithm, Selector};
    /// assert_eq!(Selector::new().workspace_bytes::<f32>(1 << 20, &[10]).unwrap(), 0);
    /// assert!(Selector::new().workspace_bytes::<f32>(10, &[10]).is_err());
    /// ```
    ///
    /// ```no_run
    /// use kselect::{Device, DeviceBuffer, Selector};
    /// let device = Device::cuda(0)?;
    /// let sel = Selector::on(device.clone());
    /// let ranks: Vec<usize> = (0..=100).map(|p| p * ((1 << 26) - 1) / 100).collect();
    /// let bytes = sel.workspace_bytes::<f32>(1 << 26, &ranks)?;
    /// if let Device::Cuda(gpu) = &device {
    ///     gpu.reserve(bytes)?;
    /// }
    /// let data = DeviceBuffer::from_host(&device, &vec![1.0f32; 1 << 26])?;
    /// let percentiles = sel.multiselect(&data, &ranks)?;
    /// # Ok::<(), kselect::Error>(())
    /// ```
    pub fn workspace_bytes<T: Element>(&self, n: usize, ranks: &[usize]) -> Result<usize> {
        let algorithm = self.resolved_algorithm_for_ranks::<T>(n, ranks)?;
        if n == 0 {
            return Err(Error::EmptyInput);
        }
        given_ranks(ranks)(n)?;
        let Device::Cuda(dev) = &self.device else {
            return Ok(0);
        };
        if ranks.is_empty() {
            return Ok(0);
        }
        let need = cuda_workspace::<T>(algorithm, &Query { dev, n, ranks })?;
        Ok(need.or(MemoryNeed::of::<NanCount>(1)).total())
    }

    /// The element of 0-based rank `k` in ascending order.
    ///
    /// ```
    /// let sel = kselect::Selector::new();
    /// assert_eq!(sel.select(&[10i64, -3, 7], 0).unwrap(), -3);
    /// assert!(sel.select(&[10i64, -3, 7], 3).is_err());
    /// ```
    pub fn select<'a, T: Element>(&self, data: impl Into<Values<'a, T>>, k: usize) -> Result<T> {
        Ok(self.multiselect(data, &[k])?[0])
    }

    /// The `k`-th largest element (`k = 0` is the maximum).
    ///
    /// ```
    /// assert_eq!(kselect::Selector::new().select_largest(&[1, 5, 3], 1).unwrap(), 3);
    /// ```
    pub fn select_largest<'a, T: Element>(
        &self,
        data: impl Into<Values<'a, T>>,
        k: usize,
    ) -> Result<T> {
        let ranks_of = |len: usize| largest_to_rank(k, len).map(|r| vec![r]);
        Ok(self.run(&data.into().input(), ranks_of)?[0])
    }

    /// The lower median: the element of rank `(n - 1) / 2`, a value of the data.
    ///
    /// For `numpy.median` (the mean of the two middle values when `n` is even) use
    /// [`median_mean`](Selector::median_mean).
    ///
    /// ```
    /// assert_eq!(kselect::Selector::new().median(&[5, 3, 1, 4]).unwrap(), 3);
    /// ```
    pub fn median<'a, T: Element>(&self, data: impl Into<Values<'a, T>>) -> Result<T> {
        let ranks_of = |len: usize| Ok(vec![(len - 1) / 2]);
        Ok(self.run(&data.into().input(), ranks_of)?[0])
    }

    /// The median as `numpy.median` defines it: the middle value when `n` is odd, the mean of
    /// the two middle values when it is even, as an `f64`.
    ///
    /// The two middle values are selected together (one multiselection on the selector's
    /// device, by its algorithm) and their mean is computed as numpy computes it for their
    /// type (in `f32` for `f32` data, in `f64` after conversion for integers), so the result
    /// equals numpy's bit for bit. Under the NaN policies `Omit` it is `numpy.nanmedian`
    /// (all-NaN data: [`Error::EmptyInput`]), under `Last` `numpy.median` (NaN when any value
    /// is NaN), under `Error` an error for data holding NaN.
    ///
    /// Infinities follow IEEE arithmetic as in numpy: `[x, inf]` gives `inf`, `[-inf, inf]`
    /// NaN. The one difference from numpy: where the two middle values are finite and their
    /// sum overflows, numpy returns `±inf`, kselect the finite mean `a / 2 + b / 2`. The
    /// [`median`](mod@crate::select::median) module has the details.
    ///
    /// ```
    /// use kselect::{NanPolicy, Selector};
    /// let sel = Selector::new();
    /// assert_eq!(sel.median_mean(&[5, 3, 1, 4]).unwrap(), 3.5);
    /// assert_eq!(sel.median_mean(&[f32::INFINITY, -10.0, 4.0]).unwrap(), 4.0);
    /// assert!(sel.median_mean(&[f64::NEG_INFINITY, f64::INFINITY]).unwrap().is_nan());
    /// assert_eq!(sel.median_mean(&[1e308, 1.5e308]).unwrap(), 1.25e308); // numpy: inf
    /// let omit = sel.clone().nan_policy(NanPolicy::Omit);
    /// assert_eq!(omit.median_mean(&[f32::INFINITY, f32::NAN, f32::NAN]).unwrap(), f64::INFINITY);
    /// ```
    pub fn median_mean<'a, T: Element>(&self, data: impl Into<Values<'a, T>>) -> Result<f64> {
        self.median_mean_of(&data.into().input())
    }

    /// The elements of `ranks`, in the order given (any order, repeats allowed).
    ///
    /// ```
    /// let v = kselect::Selector::new().multiselect(&[3.0, 1.0, 2.0], &[2, 0]).unwrap();
    /// assert_eq!(v, vec![3.0, 1.0]);
    /// ```
    pub fn multiselect<'a, T: Element>(
        &self,
        data: impl Into<Values<'a, T>>,
        ranks: &[usize],
    ) -> Result<Vec<T>> {
        self.run(&data.into().input(), given_ranks(ranks))
    }

    /// The quantile `q` by `method`, equal to `numpy.quantile(data, [q], method=...)`.
    ///
    /// ```
    /// use kselect::{QuantileMethod, Selector};
    /// let q = Selector::new().quantile(&[1.0, 2.0, 3.0, 4.0], 0.5, QuantileMethod::Lower).unwrap();
    /// assert_eq!(q, 2.0);
    /// ```
    pub fn quantile<'a, T: Element>(
        &self,
        data: impl Into<Values<'a, T>>,
        q: f64,
        method: QuantileMethod,
    ) -> Result<f64> {
        Ok(self.quantiles(data, &[q], method)?[0])
    }

    /// Quantiles `qs` by `method`, equal to `numpy.quantile(data, qs, method=...)`.
    ///
    /// ```
    /// use kselect::{QuantileMethod, Selector};
    /// let q = Selector::new()
    ///     .quantiles(&[10, 20, 30, 40], &[0.5, 1.0], QuantileMethod::Linear)
    ///     .unwrap();
    /// assert_eq!(q, vec![25.0, 40.0]);
    /// ```
    pub fn quantiles<'a, T: Element>(
        &self,
        data: impl Into<Values<'a, T>>,
        qs: &[f64],
        method: QuantileMethod,
    ) -> Result<Vec<f64>> {
        self.quantiles_of(&data.into().input(), qs, method)
    }

    /// An approximate element of rank `k`: one level of SampleSelect (Ribizel & Anzt) and the
    /// splitter whose rank range is closest to `k`, with that exact range.
    ///
    /// Reads the data once (plus a sort of a small sample) instead of the several passes of an
    /// exact selection. The rank error ([`Approximate::rank_error`]) is known exactly and is
    /// bounded as [`approximate`](crate::select::approximate) explains (about `n / 128` values
    /// at most, with high probability); inputs of at most a few thousand values give the exact
    /// element. The NaN policy applies as for [`select`](Selector::select); the selector's
    /// algorithm does not (this is always SampleSelect's first level).
    ///
    /// ```
    /// use kselect::Selector;
    /// let data: Vec<f64> = (0..200_000).map(|i| ((i * 7919) % 200_000) as f64).collect();
    /// let a = Selector::new().select_approximate(&data, 100_000).unwrap();
    /// assert_eq!(a.rank_lo, a.value as usize); // value v has rank v here
    /// assert!(a.rank_error() <= 200_000 / 64);
    /// assert!(Selector::new().select_approximate(&data, 200_000).is_err());
    /// ```
    pub fn select_approximate<'a, T: Element>(
        &self,
        data: impl Into<Values<'a, T>>,
        k: usize,
    ) -> Result<Approximate<T>> {
        self.approximate_of(&data.into().input(), k)
    }

    /// Approximate quantiles `qs` by `method`, with bounds that hold for certain, from one
    /// counting pass over the data.
    ///
    /// For each probability: an estimate of numpy's quantile, values `lower` and `upper` of the
    /// data's type between which the order statistics the exact quantile is read from lie, and
    /// the exact numbers of values below `lower` and at most `upper` — so the estimate's rank
    /// error is at most [`ApproximateQuantile::rank_error_bound`]. [`ApproximateQuantile`]
    /// states exactly what is guaranteed. The pass is bucketMultiSelect's counting pass (a
    /// sample fits the buckets; no values are copied), about the cost of two or three sums over
    /// the data for any number of probabilities (a little more for thousands, which get finer
    /// buckets); the bound is typically `n / 4096` ranks, less with thousands of probabilities.
    ///
    /// The NaN policy applies as for [`quantiles`](Selector::quantiles) (under `Error` the
    /// pass's own NaN count decides). This runs on the CPU whatever the selector's device (the
    /// data are in host memory) and with its own algorithm whatever the selector's; there is
    /// no device-resident form.
    ///
    /// ```
    /// use kselect::{QuantileMethod, Selector};
    /// let data: Vec<f32> = (0..100_000).map(|i| (i % 1000) as f32).collect();
    /// let qs = [0.0, 0.25, 0.5, 0.99, 1.0];
    /// let approx = Selector::new()
    ///     .quantiles_approximate(&data, &qs, QuantileMethod::Linear)
    ///     .unwrap();
    /// let exact = Selector::new().quantiles(&data, &qs, QuantileMethod::Linear).unwrap();
    /// for (a, e) in approx.iter().zip(exact) {
    ///     assert!(a.lower as f64 <= e && e <= a.upper as f64);
    ///     assert!(a.rank_lo <= a.rank_hi && a.rank_hi <= data.len());
    /// }
    /// assert!(Selector::new().quantiles_approximate(&data, &[1.5], QuantileMethod::Linear).is_err());
    /// ```
    pub fn quantiles_approximate<T: Element>(
        &self,
        data: &[T],
        qs: &[f64],
        method: QuantileMethod,
    ) -> Result<Vec<ApproximateQuantile<T>>> {
        let n = data.len();
        let floats = T::DTYPE.is_float();
        let source = Input::Host(data);
        let len = if floats && self.nan_policy == NanPolicy::Omit {
            RankSpace::new(n, self.scan(&source)?, NanPolicy::Omit)?.len
        } else if n == 0 {
            return Err(Error::EmptyInput);
        } else {
            n
        };
        let terms = quantile::plan(len, qs, method)?;
        let ranks: Vec<usize> = terms.iter().flat_map(|t| [t.lower, t.upper]).collect();
        let (brackets, nans) = bucket_multi::cpu::estimate::brackets(data, &ranks, self.parallel);
        if floats && self.nan_policy == NanPolicy::Error && nans > 0 {
            RankSpace::new(n, self.scan(&source)?, NanPolicy::Error)?;
        }
        Ok(terms
            .iter()
            .zip(qs)
            .zip(brackets.chunks_exact(2))
            .map(|((t, &q), pair)| {
                let (i, j) = (&pair[0], &pair[1]);
                ApproximateQuantile {
                    q,
                    value: t.evaluate_as(i.estimate, j.estimate),
                    lower: i.lower,
                    upper: j.upper,
                    rank_lo: i.below,
                    rank_hi: j.upto,
                }
            })
            .collect())
    }

    /// The two middle values by [`Selector::run`], then their mean; under `Last` NaN when the
    /// input holds a NaN (known from the selection's own count where it made one, else from a
    /// scan), as `numpy.median` checks for one.
    fn median_mean_of<T: Element>(&self, source: &Input<'_, T>) -> Result<f64> {
        let ranks_of = |len: usize| Ok(median::middle_ranks(len).to_vec());
        let (values, counted) = self.run_counting_nans(source, ranks_of)?;
        let (lower, upper) = (values[0], values[1]);
        if T::DTYPE.is_float() && self.nan_policy == NanPolicy::Last && !upper.is_nan() {
            let nans = match counted {
                Some(count) => count,
                None => self.scan(source)?.count,
            };
            if nans > 0 {
                return Ok(f64::NAN);
            }
        }
        Ok(median::middle_mean(lower, upper))
    }

    fn quantiles_of<T: Element>(
        &self,
        source: &Input<'_, T>,
        qs: &[f64],
        method: QuantileMethod,
    ) -> Result<Vec<f64>> {
        let mut terms = Vec::new();
        let ranks_of = |len: usize| -> Result<Vec<usize>> {
            terms = quantile::plan(len, qs, method)?;
            Ok(terms.iter().flat_map(|t| [t.lower, t.upper]).collect())
        };
        let values = self.run(source, ranks_of)?;
        Ok(terms
            .iter()
            .zip(values.chunks_exact(2))
            .map(|(t, pair)| t.evaluate_as(pair[0], pair[1]))
            .collect())
    }

    /// Applies the NaN policy and runs the algorithm for the ranks `ranks_of` gives (and checks)
    /// for the number of values the ranks refer to.
    ///
    /// Under `Omit` that number is known only once the NaNs are counted, so a scan comes first.
    /// Under `Error` and `Last` (and for integers) ranks refer to all `n` values: the selection
    /// runs at once — NaNs order last by key, so ranks below the NaNs are unaffected and ranks
    /// among them give NaN — and under `Error` the NaNs are counted afterwards, by the
    /// algorithm's own pass where it counts them, else by a scan.
    fn run<T: Element>(
        &self,
        source: &Input<'_, T>,
        ranks_of: impl FnOnce(usize) -> Result<Vec<usize>>,
    ) -> Result<Vec<T>> {
        Ok(self.run_counting_nans(source, ranks_of)?.0)
    }

    /// [`Selector::run`], and the number of NaNs in the input when the algorithm counted them
    /// on the way (as [`Selector::execute`] reports it).
    fn run_counting_nans<T: Element>(
        &self,
        source: &Input<'_, T>,
        ranks_of: impl FnOnce(usize) -> Result<Vec<usize>>,
    ) -> Result<(Vec<T>, Option<usize>)> {
        let n = source.len();
        let floats = T::DTYPE.is_float();
        if floats && self.nan_policy == NanPolicy::Omit {
            let space = RankSpace::new(n, self.scan(source)?, NanPolicy::Omit)?;
            let ranks = ranks_of(space.len)?;
            return self.execute(source, &ranks);
        }
        if n == 0 {
            return Err(Error::EmptyInput);
        }
        let ranks = ranks_of(n)?;
        let (values, counted) = self.execute(source, &ranks)?;
        if floats && self.nan_policy == NanPolicy::Error && counted != Some(0) {
            RankSpace::new(n, self.scan(source)?, NanPolicy::Error)?;
        }
        Ok((values, counted))
    }

    /// Approximate selection with the NaN policy applied as in [`Selector::run`]: ranks refer
    /// to the numbers under `Omit` (a scan first), to all values otherwise, and NaNs are
    /// refused afterwards under `Error`.
    fn approximate_of<T: Element>(
        &self,
        source: &Input<'_, T>,
        k: usize,
    ) -> Result<Approximate<T>> {
        let n = source.len();
        let floats = T::DTYPE.is_float();
        let len = if floats && self.nan_policy == NanPolicy::Omit {
            RankSpace::new(n, self.scan(source)?, NanPolicy::Omit)?.len
        } else if n == 0 {
            return Err(Error::EmptyInput);
        } else {
            n
        };
        if k >= len {
            return Err(Error::RankOutOfRange { k, n: len });
        }
        let (approximate, counted) = match (source, &self.device) {
            (Input::Host(data), Device::Cpu) => {
                (sample::cpu::approximate(data, k, len, self.parallel), None)
            }
            (Input::Host(data), Device::Cuda(dev)) => {
                let buf = DeviceBuffer::from_host_on(dev, data)?;
                let (a, nans) = sample::cuda::approximate(&buf, k, len)?;
                (a, Some(nans))
            }
            (Input::Device(buf), Device::Cuda(_)) => {
                let (a, nans) = sample::cuda::approximate(buf, k, len)?;
                (a, Some(nans))
            }
            (Input::Device(buf), Device::Cpu) => {
                let host = buf.to_host()?;
                (sample::cpu::approximate(&host, k, len, self.parallel), None)
            }
        };
        if floats && self.nan_policy == NanPolicy::Error && counted != Some(0) {
            RankSpace::new(n, self.scan(source)?, NanPolicy::Error)?;
        }
        Ok(approximate)
    }

    /// Counts the NaNs of the input (floats only), where the input is.
    fn scan<T: Element>(&self, source: &Input<'_, T>) -> Result<NanScan> {
        match source {
            Input::Host(data) => Ok(nan::scan_host(data, self.parallel)),
            Input::Device(buf) => cuda::nan_scan(buf),
        }
    }

    /// The elements of `ranks` (all `< n`) by the resolved algorithm on this device, and the
    /// NaN count when the algorithm counted it on the way.
    fn execute<T: Element>(
        &self,
        source: &Input<'_, T>,
        ranks: &[usize],
    ) -> Result<(Vec<T>, Option<usize>)> {
        let algorithm = self.resolved_algorithm_for_ranks::<T>(source.len(), ranks)?;
        if ranks.is_empty() {
            return Ok((Vec::new(), None));
        }
        Ok(match (source, &self.device) {
            (Input::Host(data), Device::Cpu) => run_cpu(algorithm, data, ranks, self.parallel)?,
            (Input::Host(data), Device::Cuda(dev)) => {
                let buf = DeviceBuffer::from_host_on(dev, data)?;
                run_cuda(algorithm, &buf, ranks)?
            }
            (Input::Device(buf), Device::Cuda(_)) => run_cuda(algorithm, buf, ranks)?,
            (Input::Device(buf), Device::Cpu) => {
                let host = buf.to_host()?;
                run_cpu(algorithm, &host, ranks, self.parallel)?
            }
        })
    }
}

/// Ranks given by the caller, checked against the number of values they refer to.
pub(crate) fn given_ranks(ranks: &[usize]) -> impl Fn(usize) -> Result<Vec<usize>> + '_ {
    move |len| {
        if let Some(&k) = ranks.iter().find(|&&k| k >= len) {
            return Err(Error::RankOutOfRange { k, n: len });
        }
        Ok(ranks.to_vec())
    }
}

/// The ascending rank of the `k`-th largest of `len` values.
fn largest_to_rank(k: usize, len: usize) -> Result<usize> {
    if k < len {
        Ok(len - 1 - k)
    } else {
        Err(Error::RankOutOfRange { k, n: len })
    }
}
