//! quickMultiSelect (Blanchard et al. 2016): one quickselect recursion shared by many ranks.
//! CPU only.

pub(crate) mod cpu;

pub(crate) use cpu::multiselect_keys;

use crate::element::Element;
use crate::select::algorithm::{Algorithm, Backends, Found, Selection};

/// quickMultiSelect.
pub(crate) struct QuickMultiselect;

impl Selection for QuickMultiselect {
    const BACKENDS: Backends = Backends::CpuOnly;

    fn cpu<T: Element>(_: Algorithm, data: &[T], ranks: &[usize], parallel: bool) -> Found<T> {
        Ok((cpu::multiselect(data, ranks, parallel), None))
    }
}
