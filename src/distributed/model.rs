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
/// (the setup, phase 1's prediction, sort&choose's merge, the results) give 0.
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
        Phase::Setup | Phase::PredictSampled | Phase::Merge | Phase::Results => 0.0,
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

/// What a counted run says about runs on more ranks, for a model of how an algorithm scales
/// past the machines at hand.
///
/// From every rank's [`Traffic`] of one run on `q` ranks it keeps, per phase, what each rank
/// other than the root sent up and what the root sent each other rank. On `Q` ranks holding
/// the same `n` values, the sample and the gathered candidates of each rank shrink as `q / Q`
/// (each holds `n / Q` values), sort&choose's merge moves `n / 2` values at each of
/// `ceil(log2 Q)` levels, and the rest a rank sends (counts, bucket definitions, extremes) does
/// not change: the number of passes depends on the data and the buckets, not on the ranks.
///
/// ```
/// use kselect::distributed::model::Scaling;
/// use kselect::distributed::{Flow, Phase, Traffic};
/// let mut root = Traffic::default();
/// root.record(Phase::AssignSampled, Flow::default());
/// root.record(Phase::ReduceSampled, Flow { messages: 1, values: 101, bytes: 816 });
/// let mut other = Traffic::default();
/// other.record(Phase::AssignSampled, Flow { messages: 1, values: 8192, bytes: 65544 });
/// let s = Scaling::from_counted(&[root, other], 1 << 20).unwrap();
/// assert_eq!(s.values(2), 8192.0 + 101.0);
/// assert_eq!(s.values(5), 4.0 * (8192.0 + 101.0));
/// ```
#[derive(Clone, Debug, serde::Serialize)]
pub struct Scaling {
    ranks: usize,
    n: u64,
    /// Per phase: values, bytes and messages a non-root rank sent (mean over those ranks).
    up: Vec<[f64; 3]>,
    /// Per phase: values, bytes and messages the root sent each other rank.
    down: Vec<[f64; 3]>,
}

impl Scaling {
    /// The scaling of a run from its ranks' traffic (rank 0 the root; at least 2 ranks).
    pub fn from_counted(per_rank: &[super::Traffic], n: u64) -> Option<Scaling> {
        let q = per_rank.len();
        if q < 2 {
            return None;
        }
        let flow = |t: &super::Traffic, p: Phase| {
            let f = t.phase(p);
            [f.values as f64, f.bytes as f64, f.messages as f64]
        };
        let up = Phase::ALL
            .iter()
            .map(|&p| {
                let mut sum = [0.0; 3];
                for t in &per_rank[1..] {
                    for (s, v) in sum.iter_mut().zip(flow(t, p)) {
                        *s += v / (q - 1) as f64;
                    }
                }
                sum
            })
            .collect();
        let down = Phase::ALL
            .iter()
            .map(|&p| flow(&per_rank[0], p).map(|v| v / (q - 1) as f64))
            .collect();
        Some(Scaling {
            ranks: q,
            n,
            up,
            down,
        })
    }

    /// How what a rank sends up in `phase` scales from the counted run to `q` ranks.
    fn share(&self, phase: Phase, q: usize) -> f64 {
        match phase {
            Phase::CreateSampled | Phase::Gather => self.ranks as f64 / q as f64,
            _ => 1.0,
        }
    }

    /// The values all ranks send on `q` ranks.
    pub fn values(&self, q: usize) -> f64 {
        let remote = q.saturating_sub(1) as f64;
        Phase::ALL
            .iter()
            .enumerate()
            .map(|(i, &p)| {
                if p == Phase::Merge {
                    return merge_values(self.n, q, self.up[i][0] > 0.0);
                }
                (self.up[i][0] * self.share(p, q) + self.down[i][0]) * remote
            })
            .sum()
    }

    /// A model of the time the messages take on `q` ranks, in seconds: every collective a
    /// binary tree of `ceil(log2 q)` rounds, each costing `latency` plus its bytes over
    /// `bytes_per_second`; a gather's bytes all cross the root's link; the merge tree's levels
    /// carry `n / 2^(levels - l)` values each.
    pub fn seconds(&self, q: usize, latency: f64, bytes_per_second: f64) -> f64 {
        let rounds = (q.max(1) as f64).log2().ceil();
        let remote = q.saturating_sub(1) as f64;
        Phase::ALL
            .iter()
            .enumerate()
            .map(|(i, &p)| {
                let (up, down) = (self.up[i], self.down[i]);
                match p {
                    Phase::Merge if up[0] > 0.0 => {
                        let bytes_per_value = up[1] / up[0].max(1.0);
                        rounds * latency + self.n as f64 * bytes_per_value / bytes_per_second
                    }
                    Phase::CreateSampled | Phase::Gather | Phase::Setup => {
                        // Gathers: every rank's bytes through the root's link.
                        let gathered = up[1] * self.share(p, q) * remote;
                        up[2] * rounds * latency
                            + gathered / bytes_per_second
                            + down[2]
                                * rounds
                                * (latency + down[1] / down[2].max(1.0) / bytes_per_second)
                    }
                    _ => {
                        let msgs = up[2] + down[2];
                        let bytes = up[1] + down[1];
                        msgs * rounds * latency + rounds * bytes / bytes_per_second
                    }
                }
            })
            .sum()
    }
}

/// Sort&choose's merge tree: `n / 2` values at each of `ceil(log2 q)` levels.
fn merge_values(n: u64, q: usize, merged: bool) -> f64 {
    if !merged {
        return 0.0;
    }
    n as f64 / 2.0 * (q.max(1) as f64).log2().ceil()
}
