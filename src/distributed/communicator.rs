//! The communicator: the few collective operations distributed selection needs, written once
//! against a trait and implemented over MPI, over NCCL and within one process.
//!
//! Rank 0 is the root. Every operation is collective over the ranks it names: all ranks of a
//! [`Communicator::reduce`] or [`Communicator::broadcast`] call it in the same order, and a
//! [`Communicator::send`] is matched by the receiving rank's [`Communicator::receive`].

use crate::error::{Error, Result};

/// How [`Communicator::reduce`] combines the ranks' values, element by element.
///
/// ```
/// use kselect::distributed::{Communicator, ReduceOp, SingleProcess};
/// let mut v = [3, 1];
/// SingleProcess.reduce(&mut v, ReduceOp::Max).unwrap();
/// assert_eq!(v, [3, 1]); // one rank: its own values
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ReduceOp {
    /// The sum (wrapping on overflow; counts never come near it).
    Sum,
    /// The largest value.
    Max,
}

impl ReduceOp {
    /// Combines `other` into `acc` element by element.
    ///
    /// ```
    /// use kselect::distributed::ReduceOp;
    /// let mut acc = [1, 5];
    /// ReduceOp::Sum.combine(&mut acc, &[2, 2]);
    /// assert_eq!(acc, [3, 7]);
    /// ```
    pub fn combine(self, acc: &mut [u64], other: &[u64]) {
        for (a, &b) in acc.iter_mut().zip(other) {
            *a = match self {
                ReduceOp::Sum => a.wrapping_add(b),
                ReduceOp::Max => (*a).max(b),
            };
        }
    }
}

/// A group of ranks that selection runs over: one process per rank under MPI, one GPU per rank
/// under NCCL, or a single rank.
///
/// Implementations move bytes and `u64` words; what they mean, and how much of it is counted
/// as traffic, is the business of the selection code above them.
///
/// ```
/// use kselect::distributed::{Communicator, SingleProcess};
/// let comm = SingleProcess;
/// assert_eq!((comm.rank(), comm.size()), (0, 1));
/// let mut words = vec![7, 8];
/// comm.broadcast(&mut words).unwrap();
/// assert_eq!(words, vec![7, 8]);
/// ```
pub trait Communicator {
    /// This rank, `0..size()`; rank 0 is the root.
    fn rank(&self) -> usize;

    /// The number of ranks.
    fn size(&self) -> usize;

    /// Combines `values` of every rank by `op` into the root's `values`. Every rank passes the
    /// same length; the other ranks' `values` are left as they were.
    fn reduce(&self, values: &mut [u64], op: ReduceOp) -> Result<()>;

    /// Gives every rank the root's `values` (any length; the other ranks' vectors are
    /// replaced).
    fn broadcast(&self, values: &mut Vec<u64>) -> Result<()>;

    /// Sends `bytes` to rank `to` (any length).
    fn send(&self, to: usize, bytes: &[u8]) -> Result<()>;

    /// Receives what rank `from` sent with [`Communicator::send`].
    fn receive(&self, from: usize) -> Result<Vec<u8>>;

    /// Gathers every rank's `bytes` (any length) at the root: the root gets them in rank
    /// order, its own first; the other ranks get an empty vector. Collective over every rank.
    /// By default each rank sends to the root, which receives rank by rank; a transport that
    /// can post the receives together overrides it.
    ///
    /// ```
    /// use kselect::distributed::{Communicator, SingleProcess};
    /// assert_eq!(SingleProcess.gather(&[1, 2]).unwrap(), vec![vec![1, 2]]);
    /// ```
    fn gather(&self, bytes: &[u8]) -> Result<Vec<Vec<u8>>> {
        if self.rank() != 0 {
            self.send(0, bytes)?;
            return Ok(Vec::new());
        }
        let mut all = Vec::with_capacity(self.size());
        all.push(bytes.to_vec());
        for from in 1..self.size() {
            all.push(self.receive(from)?);
        }
        Ok(all)
    }

    /// A short name of the transport for reports: `"mpi"`, `"nccl"`, `"single"`.
    fn transport(&self) -> &'static str;
}

/// The communicator of one rank alone: no transport, nothing moves.
///
/// For P = 1 and for tests of the selection code without MPI. A send to itself is refused
/// (selection never sends to its own rank).
///
/// ```
/// use kselect::distributed::{Communicator, SingleProcess};
/// assert!(SingleProcess.send(0, &[1, 2]).is_err());
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SingleProcess;

impl Communicator for SingleProcess {
    fn rank(&self) -> usize {
        0
    }

    fn size(&self) -> usize {
        1
    }

    fn reduce(&self, _values: &mut [u64], _op: ReduceOp) -> Result<()> {
        Ok(())
    }

    fn broadcast(&self, _values: &mut Vec<u64>) -> Result<()> {
        Ok(())
    }

    fn send(&self, to: usize, _bytes: &[u8]) -> Result<()> {
        Err(no_peer(to))
    }

    fn receive(&self, from: usize) -> Result<Vec<u8>> {
        Err(no_peer(from))
    }

    fn transport(&self) -> &'static str {
        "single"
    }
}

/// The error of a message to or from a rank that the communicator does not have.
pub(crate) fn no_peer(rank: usize) -> Error {
    Error::Communication(format!(
        "a single-process communicator has no rank {rank} to exchange messages with"
    ))
}
