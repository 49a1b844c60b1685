//! A group of ranks as threads of one process, joined by channels: the test bench of the
//! distributed algorithms without MPI.

use std::sync::mpsc::{channel, Receiver, Sender};

use crate::error::{Error, Result};

use super::communicator::{Communicator, ReduceOp};
use super::shard::{bytes_to_keys, keys_to_bytes};

/// One rank of a thread group.
pub(crate) struct ThreadRank {
    rank: usize,
    to: Vec<Option<Sender<Vec<u8>>>>,
    from: Vec<Option<Receiver<Vec<u8>>>>,
}

/// The ranks of a group of `size`, one per thread (each is `Send`).
pub(crate) fn group(size: usize) -> Vec<ThreadRank> {
    let mut ranks: Vec<ThreadRank> = (0..size)
        .map(|rank| ThreadRank {
            rank,
            to: (0..size).map(|_| None).collect(),
            from: (0..size).map(|_| None).collect(),
        })
        .collect();
    for from in 0..size {
        for to in (0..size).filter(|&to| to != from) {
            let (s, r) = channel();
            ranks[from].to[to] = Some(s);
            ranks[to].from[from] = Some(r);
        }
    }
    ranks
}

/// Runs `f` on every rank of a group of `size`, each on its own thread; the results in rank
/// order.
pub(crate) fn run<R: Send>(size: usize, f: impl Fn(&ThreadRank) -> R + Sync) -> Vec<R> {
    let ranks = group(size);
    std::thread::scope(|s| {
        let handles: Vec<_> = ranks
            .into_iter()
            .map(|r| {
                let f = &f;
                s.spawn(move || f(&r))
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("a rank panicked"))
            .collect()
    })
}

fn lost() -> Error {
    Error::Communication("a thread of the group is gone".into())
}

impl Communicator for ThreadRank {
    fn rank(&self) -> usize {
        self.rank
    }

    fn size(&self) -> usize {
        self.to.len()
    }

    fn reduce(&self, values: &mut [u64], op: ReduceOp) -> Result<()> {
        if self.rank != 0 {
            return self.send(0, &keys_to_bytes::<u64>(values));
        }
        for from in 1..self.size() {
            let other = bytes_to_keys::<u64>(&self.receive(from)?);
            op.combine(values, &other);
        }
        Ok(())
    }

    fn broadcast(&self, values: &mut Vec<u64>) -> Result<()> {
        if self.rank == 0 {
            for to in 1..self.size() {
                self.send(to, &keys_to_bytes::<u64>(values))?;
            }
        } else {
            *values = bytes_to_keys::<u64>(&self.receive(0)?);
        }
        Ok(())
    }

    fn send(&self, to: usize, bytes: &[u8]) -> Result<()> {
        let s = self.to.get(to).and_then(Option::as_ref).ok_or_else(lost)?;
        s.send(bytes.to_vec()).map_err(|_| lost())
    }

    fn receive(&self, from: usize) -> Result<Vec<u8>> {
        let r = self
            .from
            .get(from)
            .and_then(Option::as_ref)
            .ok_or_else(lost)?;
        r.recv().map_err(|_| lost())
    }

    fn transport(&self) -> &'static str {
        "threads"
    }
}
