//! The values a selection reads: host memory or a CUDA device buffer.

use crate::device::DeviceBuffer;
use crate::element::Element;

/// The values a selection reads: host memory or a CUDA device buffer.
#[derive(Clone, Copy)]
pub(crate) enum Input<'a, T: Element> {
    /// Values in host memory.
    Host(&'a [T]),
    /// Values already on a CUDA device.
    Device(&'a DeviceBuffer<T>),
}

impl<T: Element> Input<'_, T> {
    /// The number of values.
    pub(crate) fn len(&self) -> usize {
        match self {
            Input::Host(data) => data.len(),
            Input::Device(buf) => buf.len(),
        }
    }
}
