//! Floyd–Rivest selection: pivots from a sample bracket the ranks, one pass counts and copies.
//! CPU only.

pub(crate) mod cpu;

pub(crate) use cpu::{multiselect, multiselect_counting_nans, SMALL};

use crate::element::Element;
use crate::select::algorithm::{Algorithm, Backends, Found, Selection};

/// Floyd–Rivest.
pub(crate) struct FloydRivest;

impl Selection for FloydRivest {
    const BACKENDS: Backends = Backends::CpuOnly;

    fn cpu<T: Element>(_: Algorithm, data: &[T], ranks: &[usize], parallel: bool) -> Found<T> {
        let (values, nans) = multiselect_counting_nans(data, ranks, parallel);
        Ok((values, Some(nans)))
    }
}
