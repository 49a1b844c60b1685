//! Introselect: the standard library's `select_nth_unstable` on a copy of the keys. CPU only.

pub(crate) mod cpu;

use crate::element::Element;
use crate::error::Result;
use crate::select::algorithm::{each_rank, Algorithm, Backends, Selection};

/// Introselect.
pub(crate) struct Introselect;

impl Selection for Introselect {
    const BACKENDS: Backends = Backends::CpuOnly;

    fn cpu<T: Element>(
        _: Algorithm,
        data: &[T],
        ranks: &[usize],
        parallel: bool,
    ) -> Result<(Vec<T>, Option<usize>)> {
        Ok(each_rank(cpu::select, data, ranks, parallel))
    }
}
