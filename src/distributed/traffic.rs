//! Communication accounting: the messages, values and bytes each rank sends, phase by phase.
//!
//! Traffic is counted on the model of Blanchard, Fu & Knoth (2024): a star with the root at
//! its centre, where a *communication* is one value sent between a rank and the root.
//!
//! * a reduction toward the root of `L` values: every other rank sends one message of `L`;
//! * a broadcast of `L` values: the root sends `q - 1` messages of `L`;
//! * a gather: every other rank sends one message of its own values;
//! * a message between two ranks (the merge tree of sort&choose): one message.
//!
//! This is what the algorithm asks the network to carry, whatever tree the transport uses
//! inside. `values` counts the payload (words of counts, keys, bucket definitions, or data
//! elements); `bytes` is what was sent, the status word each message carries included.

use std::fmt;

use serde::Serialize;

/// The steps of distributed selection that traffic is counted under: the subroutines of the
/// paper's Table 2 and the steps of the other algorithms.
///
/// ```
/// use kselect::distributed::Phase;
/// assert_eq!(Phase::AssignRefine.name(), "phase2_assign");
/// assert_eq!(Phase::ALL.len(), 11);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
pub enum Phase {
    /// Sizes, NaN counts and the local minimum and maximum of every rank, and the global size
    /// sent back (the paper counts the extremes in phase 1's Create). In a bucket-based run
    /// that leaves no value out, every rank's size and 1024 keys drawn at random instead, and
    /// the global size and the first pass's buckets sent back: phase 1's Create is then part
    /// of the setup.
    Setup,
    /// Phase 1, Create Buckets: the samples, and the pivots sent back (a run that leaves NaNs
    /// out; see [`Setup`](Self::Setup) for the others).
    CreateSampled,
    /// Phase 1, before the count: every rank's estimate of its bucket counts from a part of
    /// its data, and the buckets whose keys the count copies sent back (not in the paper:
    /// it spares the reduction a second pass over the data).
    PredictSampled,
    /// Phase 1, Assign Buckets: the bucket counts.
    AssignSampled,
    /// Phase 1, Reduce: the active buckets sent to the ranks.
    ReduceSampled,
    /// Phase 2, Create Buckets: the extremes of the active buckets and the new bucket
    /// definitions.
    CreateRefine,
    /// Phase 2, Assign Buckets: the bucket counts.
    AssignRefine,
    /// Phase 2, Reduce: the active buckets sent to the ranks.
    ReduceRefine,
    /// DistributedBMS's phase 2: the active buckets' elements gathered at the root.
    Gather,
    /// Sort&choose: sorted data merged up a binary tree.
    Merge,
    /// The selected values sent to every rank.
    Results,
}

impl Phase {
    /// Every phase, in the order of the algorithms.
    pub const ALL: [Phase; 11] = [
        Phase::Setup,
        Phase::CreateSampled,
        Phase::PredictSampled,
        Phase::AssignSampled,
        Phase::ReduceSampled,
        Phase::CreateRefine,
        Phase::AssignRefine,
        Phase::ReduceRefine,
        Phase::Gather,
        Phase::Merge,
        Phase::Results,
    ];

    /// The phase's name in reports.
    ///
    /// ```
    /// assert_eq!(kselect::distributed::Phase::Setup.name(), "setup");
    /// ```
    pub fn name(self) -> &'static str {
        match self {
            Phase::Setup => "setup",
            Phase::CreateSampled => "phase1_create",
            Phase::PredictSampled => "phase1_predict",
            Phase::AssignSampled => "phase1_assign",
            Phase::ReduceSampled => "phase1_reduce",
            Phase::CreateRefine => "phase2_create",
            Phase::AssignRefine => "phase2_assign",
            Phase::ReduceRefine => "phase2_reduce",
            Phase::Gather => "gather",
            Phase::Merge => "merge",
            Phase::Results => "results",
        }
    }

    fn index(self) -> usize {
        self as usize
    }
}

/// Messages, values and bytes sent.
///
/// ```
/// use kselect::distributed::Flow;
/// let f = Flow { messages: 2, values: 10, bytes: 96 };
/// assert_eq!(f + f, Flow { messages: 4, values: 20, bytes: 192 });
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Flow {
    /// Messages sent.
    pub messages: u64,
    /// Values sent (the paper's "communications"): words or data elements, status words not
    /// included.
    pub values: u64,
    /// Bytes sent, status words included.
    pub bytes: u64,
}

impl std::ops::Add for Flow {
    type Output = Flow;
    fn add(self, o: Flow) -> Flow {
        Flow {
            messages: self.messages + o.messages,
            values: self.values + o.values,
            bytes: self.bytes + o.bytes,
        }
    }
}

impl std::ops::AddAssign for Flow {
    fn add_assign(&mut self, o: Flow) {
        *self = *self + o;
    }
}

/// What one rank (or, summed, a whole job) sent, phase by phase.
///
/// ```
/// use kselect::distributed::{Flow, Phase, Traffic};
/// let mut t = Traffic::default();
/// t.record(Phase::AssignSampled, Flow { messages: 1, values: 8192, bytes: 65544 });
/// assert_eq!(t.phase(Phase::AssignSampled).values, 8192);
/// assert_eq!(t.total().messages, 1);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Traffic {
    phases: [Flow; Phase::ALL.len()],
}

impl Traffic {
    /// Adds `flow` to `phase`.
    pub fn record(&mut self, phase: Phase, flow: Flow) {
        self.phases[phase.index()] += flow;
    }

    /// What was sent in `phase`.
    pub fn phase(&self, phase: Phase) -> Flow {
        self.phases[phase.index()]
    }

    /// What was sent in all phases.
    pub fn total(&self) -> Flow {
        self.phases.iter().fold(Flow::default(), |a, &f| a + f)
    }

    /// The sum of two traffics, phase by phase.
    ///
    /// ```
    /// use kselect::distributed::{Flow, Phase, Traffic};
    /// let mut a = Traffic::default();
    /// a.record(Phase::Merge, Flow { messages: 1, values: 4, bytes: 24 });
    /// assert_eq!(a.sum(&a).phase(Phase::Merge).values, 8);
    /// ```
    pub fn sum(&self, other: &Traffic) -> Traffic {
        let mut out = *self;
        for p in Phase::ALL {
            out.record(p, other.phase(p));
        }
        out
    }

    /// The phases with any traffic, in order.
    ///
    /// ```
    /// use kselect::distributed::{Phase, Traffic};
    /// assert_eq!(Traffic::default().phases().count(), 0);
    /// ```
    pub fn phases(&self) -> impl Iterator<Item = (Phase, Flow)> + '_ {
        Phase::ALL
            .into_iter()
            .map(|p| (p, self.phase(p)))
            .filter(|(_, f)| *f != Flow::default())
    }

    /// Three words per phase (messages, values, bytes), to send between ranks.
    pub(crate) fn to_words(self) -> Vec<u64> {
        self.phases
            .iter()
            .flat_map(|f| [f.messages, f.values, f.bytes])
            .collect()
    }

    /// The inverse of [`Traffic::to_words`].
    pub(crate) fn from_words(words: &[u64]) -> Traffic {
        let mut t = Traffic::default();
        for (f, w) in t.phases.iter_mut().zip(words.chunks_exact(3)) {
            *f = Flow {
                messages: w[0],
                values: w[1],
                bytes: w[2],
            };
        }
        t
    }
}

impl Serialize for Traffic {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut map = s.serialize_map(None)?;
        for (p, f) in self.phases() {
            map.serialize_entry(p.name(), &f)?;
        }
        map.serialize_entry("total", &self.total())?;
        map.end()
    }
}

impl fmt::Display for Traffic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let t = self.total();
        write!(
            f,
            "{} messages, {} values, {} bytes",
            t.messages, t.values, t.bytes
        )
    }
}
