//! The MPI communicator (cargo feature `mpi`): rsmpi over the system's Open MPI or MPICH.

use ::mpi::collective::SystemOperation;
use ::mpi::environment::Universe;
use ::mpi::topology::SimpleCommunicator;
use ::mpi::traits::{Communicator as _, CommunicatorCollectives, Destination, Root, Source};
use ::mpi::Threading;

use crate::error::{Error, Result};

use super::communicator::{no_peer, Communicator, ReduceOp};

/// Bytes of one MPI message at most (counts are `int` in MPI).
const CHUNK: usize = 1 << 30;

/// A communicator over MPI: one rank per process, started by `mpirun` (or alone, as a
/// singleton of one rank).
///
/// Only the thread that created it may use it (MPI is initialized for funnelled threading:
/// the local passes use the thread pool, the messages stay on this thread). MPI is finalized
/// when the `Mpi` made by [`Mpi::init`] is dropped.
///
/// ```no_run
/// use kselect::distributed::{DistributedSelector, Mpi};
/// let mpi = Mpi::init().unwrap();
/// let part: Vec<f64> = vec![mpi.rank_index() as f64; 1000];
/// let median = DistributedSelector::new(&mpi).median(&part).unwrap();
/// if mpi.rank_index() == 0 {
///     println!("{:?} after {}", median.values, median.report.traffic);
/// }
/// ```
pub struct Mpi {
    world: SimpleCommunicator,
    _universe: Option<Universe>,
}

impl Mpi {
    /// Initializes MPI and gives its world communicator (an error when MPI was initialized
    /// before in this process).
    pub fn init() -> Result<Mpi> {
        let (universe, _) =
            ::mpi::initialize_with_threading(Threading::Funneled).ok_or_else(|| {
                Error::Communication("MPI was initialized before in this process".into())
            })?;
        Ok(Mpi {
            world: universe.world(),
            _universe: Some(universe),
        })
    }

    /// A communicator over an existing MPI communicator (MPI initialized, and finalized, by
    /// the caller).
    pub fn from_communicator(world: SimpleCommunicator) -> Mpi {
        Mpi {
            world,
            _universe: None,
        }
    }

    /// This process's rank.
    pub fn rank_index(&self) -> usize {
        self.world.rank() as usize
    }

    /// This process's rank among the ranks on its own host (the one to choose a GPU by:
    /// `CudaDevice::new(local_rank % CudaDevice::count()?)`). Collective.
    pub fn local_rank(&self) -> usize {
        self.local_rank_and_size().0
    }

    /// This process's rank among the ranks on its own host, and their number. Collective.
    pub(crate) fn local_rank_and_size(&self) -> (usize, usize) {
        let host = self.world.split_shared(self.world.rank());
        (host.rank() as usize, host.size() as usize)
    }

    /// Waits until every rank gets here.
    pub fn barrier(&self) {
        self.world.barrier();
    }

    fn peer(&self, rank: usize) -> Result<::mpi::topology::Process<'_>> {
        if rank >= self.size() || rank == self.rank() {
            return Err(no_peer(rank));
        }
        Ok(self.world.process_at_rank(rank as i32))
    }
}

impl Communicator for Mpi {
    fn rank(&self) -> usize {
        self.world.rank() as usize
    }

    fn size(&self) -> usize {
        self.world.size() as usize
    }

    fn reduce(&self, values: &mut [u64], op: ReduceOp) -> Result<()> {
        let root = self.world.process_at_rank(0);
        let op = match op {
            ReduceOp::Sum => SystemOperation::sum(),
            ReduceOp::Max => SystemOperation::max(),
        };
        if self.rank() == 0 {
            let mine = values.to_vec();
            root.reduce_into_root(&mine[..], values, op);
        } else {
            root.reduce_into(&values[..], op);
        }
        Ok(())
    }

    fn broadcast(&self, values: &mut Vec<u64>) -> Result<()> {
        let root = self.world.process_at_rank(0);
        let mut len = values.len() as u64;
        root.broadcast_into(&mut len);
        values.resize(len as usize, 0);
        if len > 0 {
            root.broadcast_into(&mut values[..]);
        }
        Ok(())
    }

    fn send(&self, to: usize, bytes: &[u8]) -> Result<()> {
        let peer = self.peer(to)?;
        peer.send(&(bytes.len() as u64));
        for chunk in bytes.chunks(CHUNK) {
            peer.send(chunk);
        }
        Ok(())
    }

    fn receive(&self, from: usize) -> Result<Vec<u8>> {
        let peer = self.peer(from)?;
        let (len, _) = peer.receive::<u64>();
        let mut bytes = vec![0u8; len as usize];
        for chunk in bytes.chunks_mut(CHUNK) {
            peer.receive_into(chunk);
        }
        Ok(bytes)
    }

    fn transport(&self) -> &'static str {
        "mpi"
    }
}
