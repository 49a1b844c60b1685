//! PLACEHOLDER (CUDA dispatch, being written).
use crate::device::DeviceBuffer;
use crate::element::Element;
use crate::error::{Error, Result};
use crate::select::nan::NanScan;
use crate::select::Algorithm;

pub(crate) fn auto_algorithm<T: Element>(_n: usize, _ranks: usize) -> Algorithm {
    Algorithm::Radix
}
pub(crate) fn nan_scan<T: Element>(_buf: &DeviceBuffer<T>) -> Result<NanScan> {
    Err(Error::CudaUnavailable("not yet".into()))
}
pub(crate) fn multiselect<T: Element>(_a: Algorithm, _buf: &DeviceBuffer<T>, _r: &[usize]) -> Result<Vec<T>> {
    Err(Error::CudaUnavailable("not yet".into()))
}
