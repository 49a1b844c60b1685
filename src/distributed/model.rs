//! Expected communication, by the formulas of Blanchard, Fu & Knoth (2024), Table 2 and
//! Section III: values (the paper's "communications") sent between the ranks and the root.
//!
//! With `q` ranks, `n` values spread evenly, `m` order statistics, `B` buckets and `P = m`
//! pivot intervals after the first pass:
//!
//! | phase | subroutine | DistributedBMS | DIBMS (per pass of phase 2) |
//! |---|---|---|---|
//! | 1 | Create | `50(q-1) + 1024` | same |
//! | 1 | Assign | `B(q-1)` | same |
//! | 1 | Reduce | `2m(q-1)` | same |
//! | 2 | Create | `(m/B)(n/q)(q-1)` | `4P(q-1)` |
//! | 2 | Assign | 0 | `B(q-1)` |
//! | 2 | Reduce | 0 | `3m(q-1) + m` |
//!
//! DIBMS makes `log_{B/m} n` passes of phase 2 in expectation. Sort&choose's merge tree moves
//! `n/2` values at each of its `ceil(log2 q)` levels.

use super::{DistributedAlgorithm, Phase};

/// Table 2's expected values for one subroutine, summed over the ranks, with `n` values on
/// `q` ranks, `m` order statistics and `b` buckets: DIBMS's for one pass of phase 2, and
/// DistributedBMS's phase 2 under [`Phase::Gather`]. Phases the table has no line for
/// (the setup, sort&choose's merge, the results) give 0.
///
/// ```
/// use kselect::distributed::{model::expected_phase, Phase};
/// // Phase 1's bucket counts from 3 remote ranks with 8192 buckets.
/// assert_eq!(expected_phase(Phase::AssignSampled, 1 << 20, 101, 4, 8192), 3.0 * 8192.0);
/// ```
pub fn expected_phase(phase: Phase, n: u64, m: usize, q: usize, b: usize) -> f64 {
    let (n, m, q, b) = (n as f64, m as f64, q as f64, b as f64);
    let remote = q - 1.0;
    match phase {
        Phase::CreateSampled => 50.0 * remote + 1024.0,
        Phase::AssignSampled | Phase::AssignRefine => b * remote,
        Phase::ReduceSampled => 2.0 * m * remote,
        Phase::Gather => m / b * n / q * remote,
        Phase::CreateRefine => 4.0 * m * remote,
        Phase::ReduceRefine => 3.0 * m * remote + m,
        Phase::Setup | Phase::Merge | Phase::Results => 0.0,
    }
}

/// The expected number of DIBMS's phase-2 passes, `log_{B/m} n` (at least 1).
///
/// ```
/// let p = kselect::distributed::model::expected_passes(1 << 26, 101, 8192);
/// assert!((p - 4.1).abs() < 0.05);
/// ```
pub fn expected_passes(n: u64, m: usize, b: usize) -> f64 {
    let ratio = b as f64 / m.max(1) as f64;
    if ratio <= 1.0 {
        return f64::INFINITY;
    }
    ((n.max(2) as f64).ln() / ratio.ln()).max(1.0)
}

/// The paper's expected values sent by a whole run, summed over the ranks.
///
/// ```
/// use kselect::distributed::{model::expected_values, DistributedAlgorithm};
/// let dibms = expected_values(DistributedAlgorithm::Dibms, 1 << 28, 101, 4, 8192);
/// let dbms = expected_values(DistributedAlgorithm::DistributedBms, 1 << 28, 101, 4, 8192);
/// let sort = expected_values(DistributedAlgorithm::SortChoose, 1 << 28, 101, 4, 8192);
/// assert!(dibms < dbms && dbms < sort);
/// ```
pub fn expected_values(
    algorithm: DistributedAlgorithm,
    n: u64,
    m: usize,
    q: usize,
    b: usize,
) -> f64 {
    let phase = |p| expected_phase(p, n, m, q, b);
    let phase1 =
        phase(Phase::CreateSampled) + phase(Phase::AssignSampled) + phase(Phase::ReduceSampled);
    match algorithm {
        DistributedAlgorithm::SortChoose => {
            let levels = (q.max(1) as f64).log2().ceil();
            n as f64 / 2.0 * levels
        }
        DistributedAlgorithm::DistributedBms => phase1 + phase(Phase::Gather),
        DistributedAlgorithm::Dibms | DistributedAlgorithm::Auto => {
            let pass = phase(Phase::CreateRefine)
                + phase(Phase::AssignRefine)
                + phase(Phase::ReduceRefine);
            phase1 + expected_passes(n, m, b) * pass
        }
    }
}
