//! Introselect: the standard library's `select_nth_unstable` on a copy of the keys. CPU only.

pub(crate) mod cpu;

selection! {
    /// Introselect.
    Introselect: CpuOnly,
    cpu: each_rank(cpu::select)
}
