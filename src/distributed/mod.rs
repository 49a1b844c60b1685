//! Exact order statistics of data spread over several processes or GPUs.
//!
//! Each rank of a [`Communicator`] holds its own part of the data; a [`DistributedSelector`]
//! finds elements of global ranks and quantiles of all parts together — the same bits as the
//! single-process call on the parts concatenated in rank order — while moving as little data
//! as it can. The three algorithms of Blanchard, Fu & Knoth (2024) are here by name:
//!
//! * [`DistributedAlgorithm::SortChoose`]: local sorts merged up a tree to the root;
//! * [`DistributedAlgorithm::DistributedBms`]: the first phase of bucketMultiSelect on every
//!   rank, then the elements of the active buckets gathered and sorted at the root;
//! * [`DistributedAlgorithm::Dibms`]: the first phase, then the active buckets refined where
//!   they lie, so that only counts, bucket definitions and extremes move; it stops when every
//!   wanted rank lies in a bucket whose smallest and largest elements are equal, which proves
//!   its value (repeated values included; no heuristic), or gathers the active buckets'
//!   elements at the root once they are fewer than one more pass's counts would send.
//!
//! Each rank's part is a host slice ([`DistributedSelector::quantiles`]) or a buffer on its GPU
//! ([`DistributedSelector::quantiles_device`]; ranks may have a GPU each or share one): the
//! local passes then run as kernels, with every key's bucket computed exactly as on the host,
//! so CPU and GPU ranks can work together.
//!
//! Communicators: [`SingleProcess`] (one rank), [`Mpi`] (the `mpi` feature, over the
//! system's MPI), [`Nccl`] (a rank per GPU, in one process or under MPI). Every algorithm
//! counts what each rank sends ([`Traffic`]) on the paper's model, and [`model`] has the
//! paper's expected figures to compare with, and a model of how a counted run scales to
//! more ranks ([`model::Scaling`]).
//!
//! ```
//! use kselect::distributed::{DistributedAlgorithm, DistributedSelector, SingleProcess};
//! use kselect::QuantileMethod;
//!
//! // Under `mpirun -np 4`, each process would pass its own part and `Mpi::world()`.
//! let part: Vec<f32> = (0..10_000).map(|i| ((i * 7919) % 10_000) as f32).collect();
//! let sel = DistributedSelector::new(&SingleProcess).algorithm(DistributedAlgorithm::Dibms);
//! let out = sel.quantiles(&part, &[0.01, 0.5, 0.99], QuantileMethod::Linear).unwrap();
//! assert_eq!(out.values.unwrap(), kselect::quantiles(&part, &[0.01, 0.5, 0.99], QuantileMethod::Linear).unwrap());
//! println!("{} passes, {}", out.report.passes, out.report.traffic);
//! ```

mod bucket;
mod communicator;
mod device_shard;
mod error;
mod link;
pub mod model;
#[cfg(feature = "mpi")]
mod mpi;
mod nccl;
mod nccl_staging;
#[cfg(test)]
mod nccl_tests;
mod plan;
mod search;
mod selector;
mod setup;
mod shard;
mod sort_choose;
#[cfg(test)]
mod tests;
#[cfg(test)]
mod threads;
mod traffic;

pub use communicator::{Communicator, ReduceOp, SingleProcess};
pub use error::DistributedError;
#[cfg(feature = "mpi")]
pub use mpi::Mpi;
pub use nccl::{Nccl, NcclId, NCCL_ID_BYTES};
pub use selector::{
    all_succeeded, same_on_every_rank, Delivery, Distributed, DistributedAlgorithm,
    DistributedReport, DistributedSelector, DEFAULT_BUCKETS,
};
pub use traffic::{Flow, Phase, Traffic};
