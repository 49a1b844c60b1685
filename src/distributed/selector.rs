//! [`DistributedSelector`]: exact multiselection and quantiles of data spread over the ranks
//! of a communicator.

use std::cell::OnceCell;

use serde::Serialize;

use crate::device::DeviceBuffer;
use crate::element::{Element, RadixKey};
use crate::error::{Error, Result};
use crate::select::quantile::{self, Term};
use crate::select::selector::given_ranks;
use crate::select::{NanPolicy, QuantileMethod};

use super::bucket::{self, BucketRun, Finish, SKETCH_FROM};
use super::communicator::Communicator;
use super::device_shard::DeviceShard;
use super::link::Link;
use super::model;
use super::setup::{agree, omits_nan};
use super::shard::{HostShard, Shard};
use super::sort_choose;
use super::traffic::Traffic;

/// The distributed algorithms, by the names of Blanchard, Fu & Knoth (2024).
///
/// ```
/// use kselect::distributed::DistributedAlgorithm;
/// let a: DistributedAlgorithm = "dibms".parse().unwrap();
/// assert_eq!(a, DistributedAlgorithm::Dibms);
/// assert_eq!(DistributedAlgorithm::DistributedBms.name(), "distributed-bms");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum DistributedAlgorithm {
    /// Local sorts merged up a binary tree to the root, which reads the ranks off.
    SortChoose,
    /// Phase 1 of bucketMultiSelect on every rank, then the active buckets' elements gathered
    /// and sorted at the root.
    DistributedBms,
    /// Phase 1, then the active buckets refined where the data lies: only counts, bucket
    /// definitions and extremes move, until the active buckets hold fewer elements than one
    /// more pass's counts, which the root then gathers and sorts.
    Dibms,
    /// The one of DistributedBMS and DIBMS with the smaller expected traffic
    /// ([`model::expected_values`](super::model::expected_values)); DIBMS on one rank.
    #[default]
    Auto,
}

impl DistributedAlgorithm {
    /// Every algorithm, `Auto` last.
    pub const ALL: [DistributedAlgorithm; 4] = [
        DistributedAlgorithm::SortChoose,
        DistributedAlgorithm::DistributedBms,
        DistributedAlgorithm::Dibms,
        DistributedAlgorithm::Auto,
    ];

    /// The name the CLI and reports use.
    ///
    /// ```
    /// assert_eq!(kselect::distributed::DistributedAlgorithm::SortChoose.name(), "sort-choose");
    /// ```
    pub fn name(self) -> &'static str {
        match self {
            DistributedAlgorithm::SortChoose => "sort-choose",
            DistributedAlgorithm::DistributedBms => "distributed-bms",
            DistributedAlgorithm::Dibms => "dibms",
            DistributedAlgorithm::Auto => "auto",
        }
    }

    pub(crate) fn code(self) -> u64 {
        self as u64
    }

    pub(crate) fn from_code(code: u64) -> Result<Self> {
        Self::ALL
            .into_iter()
            .find(|a| a.code() == code)
            .ok_or_else(|| Error::Communication(format!("unknown algorithm code {code}")))
    }
}

crate::names::named!(
    DistributedAlgorithm,
    "distributed algorithm",
    DistributedAlgorithm::ALL,
    "dbms" => DistributedAlgorithm::DistributedBms,
);

/// Which ranks get the results.
///
/// ```
/// use kselect::distributed::Delivery;
/// assert_eq!(Delivery::default(), Delivery::AllRanks);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum Delivery {
    /// Every rank (one more broadcast of the values).
    #[default]
    AllRanks,
    /// The root only; the other ranks get `None`.
    RootOnly,
}

/// What a distributed call did, as seen from one rank.
///
/// ```
/// use kselect::distributed::{DistributedSelector, SingleProcess};
/// let out = DistributedSelector::new(&SingleProcess).median(&[3.0, 1.0, 2.0]).unwrap();
/// assert_eq!(out.values, Some(2.0));
/// assert_eq!(out.report.ranks, 1);
/// assert_eq!(out.report.traffic.total().messages, 0); // nobody to talk to
/// ```
#[derive(Clone, Copy, Debug, Serialize)]
pub struct DistributedReport {
    /// The algorithm that ran (never `Auto`).
    pub algorithm: DistributedAlgorithm,
    /// The number of ranks.
    pub ranks: usize,
    /// The number of values the ranks refer to, over all ranks (NaNs left out under `Omit`).
    pub values: u64,
    /// Passes over the data (bucket counts); 0 for sort&choose.
    pub passes: usize,
    /// What this rank sent.
    pub traffic: Traffic,
}

/// The results of a distributed call on one rank, and its report.
#[derive(Clone, Debug)]
pub struct Distributed<V> {
    /// The results (`None` on the other ranks under [`Delivery::RootOnly`]).
    pub values: Option<V>,
    /// What the call did.
    pub report: DistributedReport,
}

/// Exact order statistics of data spread over the ranks of a [`Communicator`]: each rank
/// passes its own part (any length, empty included), and the results are those of the
/// single-process call on all parts concatenated in rank order — the same bits.
///
/// Every rank makes the same calls in the same order (they are collective). The root's
/// arguments (ranks, probabilities, method) are the ones used; the other ranks' are not read.
/// An error on any rank (bad input, a failed local pass) makes every rank return an error:
/// the failing rank its own, the others [`Error::RankFailed`] naming it.
///
/// ```
/// use kselect::distributed::{DistributedAlgorithm, DistributedSelector, SingleProcess};
/// use kselect::QuantileMethod;
/// let data: Vec<f64> = (0..1000).map(|i| ((i * 7919) % 1000) as f64).collect();
/// let sel = DistributedSelector::new(&SingleProcess).algorithm(DistributedAlgorithm::Dibms);
/// let q = sel.quantiles(&data, &[0.0, 0.5, 1.0], QuantileMethod::Linear).unwrap();
/// assert_eq!(q.values, Some(vec![0.0, 499.5, 999.0]));
/// assert_eq!(sel.multiselect(&data, &[10, 990]).unwrap().values, Some(vec![10.0, 990.0]));
/// ```
#[derive(Clone, Copy)]
pub struct DistributedSelector<'c> {
    comm: &'c dyn Communicator,
    algorithm: DistributedAlgorithm,
    nan_policy: NanPolicy,
    buckets: usize,
    delivery: Delivery,
    seed: u64,
    parallel: bool,
    sketch_from: u64,
}

/// The paper's number of buckets, `B = 2^13`.
pub const DEFAULT_BUCKETS: usize = 1 << 13;

impl<'c> DistributedSelector<'c> {
    /// A selector over `comm`: algorithm `Auto`, NaN policy `Error`, 8192 buckets, results on
    /// every rank, local passes on the thread pool.
    ///
    /// ```
    /// use kselect::distributed::{DistributedSelector, SingleProcess};
    /// let s = DistributedSelector::new(&SingleProcess);
    /// assert_eq!(s.select(&[5u32, 1, 3], 1).unwrap().values, Some(3));
    /// ```
    pub fn new(comm: &'c dyn Communicator) -> Self {
        DistributedSelector {
            comm,
            algorithm: DistributedAlgorithm::Auto,
            nan_policy: NanPolicy::Error,
            buckets: DEFAULT_BUCKETS,
            delivery: Delivery::AllRanks,
            seed: 0x5EED,
            parallel: true,
            sketch_from: SKETCH_FROM,
        }
    }

    /// The algorithm (the root's choice is the one that runs).
    ///
    /// ```
    /// use kselect::distributed::{DistributedAlgorithm, DistributedSelector, SingleProcess};
    /// let s = DistributedSelector::new(&SingleProcess).algorithm(DistributedAlgorithm::SortChoose);
    /// assert_eq!(s.select(&[2.0, 1.0], 0).unwrap().report.algorithm.name(), "sort-choose");
    /// ```
    pub fn algorithm(mut self, algorithm: DistributedAlgorithm) -> Self {
        self.algorithm = algorithm;
        self
    }

    /// What NaNs do, counted over all ranks (see [`NanPolicy`]).
    ///
    /// ```
    /// use kselect::distributed::{DistributedSelector, SingleProcess};
    /// use kselect::NanPolicy;
    /// let s = DistributedSelector::new(&SingleProcess).nan_policy(NanPolicy::Omit);
    /// assert_eq!(s.median(&[f64::NAN, 4.0, 1.0]).unwrap().values, Some(1.0));
    /// ```
    pub fn nan_policy(mut self, policy: NanPolicy) -> Self {
        self.nan_policy = policy;
        self
    }

    /// Buckets a pass (at least 4; the paper's 8192 by default).
    ///
    /// ```
    /// use kselect::distributed::{DistributedSelector, SingleProcess};
    /// let s = DistributedSelector::new(&SingleProcess).buckets(64);
    /// assert_eq!(s.select(&[9i64, -2, 7], 2).unwrap().values, Some(9));
    /// ```
    pub fn buckets(mut self, buckets: usize) -> Self {
        self.buckets = buckets.max(4);
        self
    }

    /// Which ranks get the results.
    ///
    /// ```
    /// use kselect::distributed::{Delivery, DistributedSelector, SingleProcess};
    /// let s = DistributedSelector::new(&SingleProcess).delivery(Delivery::RootOnly);
    /// assert_eq!(s.select(&[1.0f32], 0).unwrap().values, Some(1.0)); // rank 0 is the root
    /// ```
    pub fn delivery(mut self, delivery: Delivery) -> Self {
        self.delivery = delivery;
        self
    }

    /// The seed of the sample (results never depend on it; the number of passes may).
    ///
    /// ```
    /// use kselect::distributed::{DistributedSelector, SingleProcess};
    /// let s = DistributedSelector::new(&SingleProcess).seed(7);
    /// assert_eq!(s.select(&[3u64, 2, 1], 0).unwrap().values, Some(1));
    /// ```
    pub fn seed(mut self, seed: u64) -> Self {
        self.seed = seed;
        self
    }

    /// Whether the local passes use the thread pool (default `true`).
    ///
    /// ```
    /// use kselect::distributed::{DistributedSelector, SingleProcess};
    /// let s = DistributedSelector::new(&SingleProcess).parallel(false);
    /// assert_eq!(s.select(&[3, 2, 1], 2).unwrap().values, Some(3));
    /// ```
    pub fn parallel(mut self, parallel: bool) -> Self {
        self.parallel = parallel;
        self
    }

    /// The values a rank holds on average from which the first pass is sketched (the tests'
    /// way to sketch short inputs).
    #[cfg(test)]
    pub(crate) fn sketch_from(mut self, values_per_rank: u64) -> Self {
        self.sketch_from = values_per_rank;
        self
    }

    /// The elements of global ranks `ranks` (0-based, ascending order, any order and repeats)
    /// of the concatenation of every rank's `local`.
    ///
    /// ```
    /// use kselect::distributed::{DistributedSelector, SingleProcess};
    /// let out = DistributedSelector::new(&SingleProcess).multiselect(&[4, 1, 3, 2], &[3, 0]);
    /// assert_eq!(out.unwrap().values, Some(vec![4, 1]));
    /// ```
    pub fn multiselect<T: Element>(
        &self,
        local: &[T],
        ranks: &[usize],
    ) -> Result<Distributed<Vec<T>>> {
        self.multiselect_in(&mut HostShard::new(local, self.parallel), ranks)
    }

    /// [`multiselect`](Self::multiselect) of data in the memory of this rank's GPU: the local
    /// passes run there (each rank may use its own GPU, or ranks may share one).
    ///
    /// ```no_run
    /// use kselect::distributed::{DistributedSelector, SingleProcess};
    /// use kselect::{CudaDevice, DeviceBuffer};
    /// let gpu = CudaDevice::new(0).unwrap();
    /// let part = DeviceBuffer::from_host_on(&gpu, &[4.0f32, 1.0, 3.0]).unwrap();
    /// let out = DistributedSelector::new(&SingleProcess).multiselect_device(&part, &[0]).unwrap();
    /// assert_eq!(out.values, Some(vec![1.0]));
    /// ```
    pub fn multiselect_device<T: Element>(
        &self,
        local: &DeviceBuffer<T>,
        ranks: &[usize],
    ) -> Result<Distributed<Vec<T>>> {
        self.multiselect_in(&mut DeviceShard::new(local), ranks)
    }

    pub(crate) fn multiselect_in<T: Element>(
        &self,
        shard: &mut dyn Shard<T>,
        ranks: &[usize],
    ) -> Result<Distributed<Vec<T>>> {
        self.run(shard, given_ranks(ranks), &|keys| keys)
            .map(|(words, report)| Distributed {
                values: words.map(|w| {
                    w.into_iter()
                        .map(|k| T::from_key(T::Key::from_u64(k)))
                        .collect()
                }),
                report,
            })
    }

    /// The element of global rank `k`.
    ///
    /// ```
    /// use kselect::distributed::{DistributedSelector, SingleProcess};
    /// let out = DistributedSelector::new(&SingleProcess).select(&[0.5, -1.0], 0).unwrap();
    /// assert_eq!(out.values, Some(-1.0));
    /// ```
    pub fn select<T: Element>(&self, local: &[T], k: usize) -> Result<Distributed<T>> {
        let out = self.multiselect(local, &[k])?;
        Ok(Distributed {
            values: out.values.map(|v| v[0]),
            report: out.report,
        })
    }

    /// The lower median (rank `(n - 1) / 2`), as [`crate::median`].
    ///
    /// ```
    /// use kselect::distributed::{DistributedSelector, SingleProcess};
    /// let out = DistributedSelector::new(&SingleProcess).median(&[4, 1, 3, 2]).unwrap();
    /// assert_eq!(out.values, Some(2));
    /// ```
    pub fn median<T: Element>(&self, local: &[T]) -> Result<Distributed<T>> {
        self.median_in(&mut HostShard::new(local, self.parallel))
    }

    /// [`median`](Self::median) of data on this rank's GPU.
    ///
    /// ```no_run
    /// use kselect::distributed::{DistributedSelector, SingleProcess};
    /// use kselect::{CudaDevice, DeviceBuffer};
    /// let part = DeviceBuffer::from_host_on(&CudaDevice::new(0).unwrap(), &[2u32, 9, 4]).unwrap();
    /// let out = DistributedSelector::new(&SingleProcess).median_device(&part).unwrap();
    /// assert_eq!(out.values, Some(4));
    /// ```
    pub fn median_device<T: Element>(&self, local: &DeviceBuffer<T>) -> Result<Distributed<T>> {
        self.median_in(&mut DeviceShard::new(local))
    }

    fn median_in<T: Element>(&self, shard: &mut dyn Shard<T>) -> Result<Distributed<T>> {
        self.run(shard, |len| Ok(vec![(len - 1) / 2]), &|keys| keys)
            .map(|(words, report)| Distributed {
                values: words.map(|w| T::from_key(T::Key::from_u64(w[0]))),
                report,
            })
    }

    /// Quantiles by `method`, equal to `numpy.quantile` of the concatenated data (see
    /// [`crate::select::quantile`] for the exact conventions).
    ///
    /// ```
    /// use kselect::distributed::{DistributedSelector, SingleProcess};
    /// use kselect::QuantileMethod;
    /// let s = DistributedSelector::new(&SingleProcess);
    /// let q = s.quantiles(&[10, 20, 30, 40], &[0.25, 0.5], QuantileMethod::Hazen).unwrap();
    /// assert_eq!(q.values, Some(vec![15.0, 25.0]));
    /// ```
    pub fn quantiles<T: Element>(
        &self,
        local: &[T],
        probs: &[f64],
        method: QuantileMethod,
    ) -> Result<Distributed<Vec<f64>>> {
        self.quantiles_in(&mut HostShard::new(local, self.parallel), probs, method)
    }

    /// [`quantiles`](Self::quantiles) of data on this rank's GPU.
    ///
    /// ```no_run
    /// use kselect::distributed::{DistributedSelector, SingleProcess};
    /// use kselect::{CudaDevice, DeviceBuffer, QuantileMethod};
    /// let part = DeviceBuffer::from_host_on(&CudaDevice::new(0).unwrap(), &[1.0, 2.0]).unwrap();
    /// let s = DistributedSelector::new(&SingleProcess);
    /// let q = s.quantiles_device(&part, &[0.5], QuantileMethod::Linear).unwrap();
    /// assert_eq!(q.values, Some(vec![1.5]));
    /// ```
    pub fn quantiles_device<T: Element>(
        &self,
        local: &DeviceBuffer<T>,
        probs: &[f64],
        method: QuantileMethod,
    ) -> Result<Distributed<Vec<f64>>> {
        self.quantiles_in(&mut DeviceShard::new(local), probs, method)
    }

    fn quantiles_in<T: Element>(
        &self,
        shard: &mut dyn Shard<T>,
        probs: &[f64],
        method: QuantileMethod,
    ) -> Result<Distributed<Vec<f64>>> {
        let terms: OnceCell<Vec<Term>> = OnceCell::new();
        let ranks_of = |len: usize| {
            let planned = quantile::plan(len, probs, method)?;
            let ranks = planned.iter().flat_map(|t| [t.lower, t.upper]).collect();
            let _ = terms.set(planned);
            Ok(ranks)
        };
        let evaluate = |keys: Vec<u64>| -> Vec<u64> {
            let value = |k: u64| T::from_key(T::Key::from_u64(k));
            terms
                .get()
                .map(|t| {
                    t.iter()
                        .zip(keys.chunks_exact(2))
                        .map(|(t, k)| t.evaluate_as(value(k[0]), value(k[1])).to_bits())
                        .collect()
                })
                .unwrap_or_default()
        };
        self.run(shard, ranks_of, &evaluate)
            .map(|(words, report)| Distributed {
                values: words.map(|w| w.into_iter().map(f64::from_bits).collect()),
                report,
            })
    }

    /// Every rank's traffic of a call, at the root (`None` on the other ranks). Collective;
    /// what it sends is not counted.
    ///
    /// ```
    /// use kselect::distributed::{DistributedSelector, SingleProcess};
    /// let s = DistributedSelector::new(&SingleProcess);
    /// let out = s.median(&[1.0, 2.0]).unwrap();
    /// assert_eq!(s.gather_traffic(&out.report).unwrap().unwrap().len(), 1);
    /// ```
    pub fn gather_traffic(&self, report: &DistributedReport) -> Result<Option<Vec<Traffic>>> {
        use super::shard::{bytes_to_keys, keys_to_bytes};
        let comm = self.comm;
        let mine = keys_to_bytes::<u64>(&report.traffic.to_words());
        if comm.rank() != 0 {
            comm.send(0, &mine)?;
            return Ok(None);
        }
        let mut all = vec![report.traffic];
        for from in 1..comm.size() {
            all.push(Traffic::from_words(&bytes_to_keys::<u64>(
                &comm.receive(from)?,
            )));
        }
        Ok(Some(all))
    }

    /// Setup, the algorithm, and the results: the payload on the ranks that get results.
    fn run<T: Element>(
        &self,
        shard: &mut dyn Shard<T>,
        ranks_of: impl Fn(usize) -> Result<Vec<usize>>,
        results: &dyn Fn(Vec<u64>) -> Vec<u64>,
    ) -> Result<(Option<Vec<u64>>, DistributedReport)> {
        let mut link = Link::new(self.comm);
        let choose = |n: u64, m: usize| self.resolve(n, m);
        let root_only = self.delivery == Delivery::RootOnly;
        // Under `RootOnly` the root keeps its payload and broadcasts only that it is done.
        let kept: OnceCell<Vec<u64>> = OnceCell::new();
        let delivered = |keys: Vec<u64>| {
            let payload = results(keys);
            if !root_only {
                return payload;
            }
            let _ = kept.set(payload);
            Vec::new()
        };
        let omit_nan = omits_nan::<T>(self.nan_policy);
        let opts = BucketRun {
            buckets: self.buckets,
            seed: self.seed,
            omit_nan,
            refuse_nans: T::DTYPE.is_float() && self.nan_policy == NanPolicy::Error,
            finish: Finish::Iterate,
            sketch_from: self.sketch_from,
            results: &delivered,
        };
        let finish = |algorithm| BucketRun {
            finish: match algorithm {
                DistributedAlgorithm::DistributedBms => Finish::Gather,
                _ => Finish::Iterate,
            },
            ..opts
        };
        // A run that leaves no value out needs no statistics before its first count: the
        // setup draws the sample (see `bucket::open`).
        let opened = match !omit_nan && self.algorithm != DistributedAlgorithm::SortChoose {
            true => bucket::open(&mut link, shard, &choose, &ranks_of, &opts)?,
            false => None,
        };
        let (algorithm, n, words, passes) = match opened {
            Some(opened) => {
                let (algorithm, n) = (opened.algorithm, opened.n);
                let (words, passes) =
                    bucket::run_opened(&mut link, shard, opened, &finish(algorithm))?;
                (algorithm, n, words, passes)
            }
            None => {
                let (agreed, ranks) = agree(&mut link, shard, self.nan_policy, &choose, ranks_of)?;
                let (words, passes) = match agreed.algorithm {
                    DistributedAlgorithm::SortChoose => {
                        let words =
                            sort_choose::run(&mut link, shard, ranks, omit_nan, &delivered)?;
                        (words, 0)
                    }
                    algorithm => bucket::run(&mut link, shard, &agreed, ranks, &finish(algorithm))?,
                };
                (agreed.algorithm, agreed.n, words, passes)
            }
        };
        let values = if root_only {
            kept.into_inner()
        } else {
            Some(words)
        };
        let report = DistributedReport {
            algorithm,
            ranks: link.size(),
            values: n,
            passes,
            traffic: link.traffic(),
        };
        Ok((values, report))
    }

    /// The algorithm for `n` values and `m` ranks wanted, `Auto` resolved.
    fn resolve(&self, n: u64, m: usize) -> DistributedAlgorithm {
        if self.algorithm != DistributedAlgorithm::Auto {
            return self.algorithm;
        }
        let q = self.comm.size();
        if q == 1 {
            // Nothing moves either way; DIBMS's passes over the candidates cost less than
            // sorting them.
            return DistributedAlgorithm::Dibms;
        }
        let dbms =
            model::expected_values(DistributedAlgorithm::DistributedBms, n, m, q, self.buckets);
        let dibms = model::expected_values(DistributedAlgorithm::Dibms, n, m, q, self.buckets);
        if dbms < dibms {
            DistributedAlgorithm::DistributedBms
        } else {
            DistributedAlgorithm::Dibms
        }
    }
}

/// `outcome` on every rank when it is `Ok` on every rank; otherwise an error on every rank:
/// the failing ranks their own, the others [`Error::RankFailed`] naming the lowest failing
/// rank. Collective: for steps before selection that may fail on some ranks only (reading a
/// part of a file).
///
/// ```
/// use kselect::distributed::{all_succeeded, SingleProcess};
/// assert_eq!(all_succeeded(&SingleProcess, Ok::<_, kselect::Error>(5)).unwrap(), 5);
/// assert!(all_succeeded(&SingleProcess, Err::<u8, _>(kselect::Error::EmptyInput)).is_err());
/// ```
pub fn all_succeeded<T>(comm: &dyn Communicator, outcome: Result<T>) -> Result<T> {
    let mut link = Link::new(comm);
    let value = link.local(outcome);
    let ok = value.as_ref().map(|_| Vec::new());
    link.up(
        super::traffic::Phase::Setup,
        ok,
        0,
        super::communicator::ReduceOp::Max,
    )?;
    link.down(super::traffic::Phase::Setup, Ok(Vec::new()))?;
    value.ok_or_else(|| Error::Communication("a failure went unreported".into()))
}

/// Whether every rank passed the same `value` (collective; every rank gets the answer).
///
/// ```
/// use kselect::distributed::{same_on_every_rank, SingleProcess};
/// assert!(same_on_every_rank(&SingleProcess, 42).unwrap());
/// ```
pub fn same_on_every_rank(comm: &dyn Communicator, value: u64) -> Result<bool> {
    use super::communicator::ReduceOp;
    use super::traffic::Phase;
    let mut link = Link::new(comm);
    let heard = link.up(Phase::Setup, Some(vec![value, !value]), 2, ReduceOp::Max)?;
    let decision = Ok(heard.map_or(vec![], |e| vec![(e[0] == !e[1]) as u64]));
    Ok(link.down(Phase::Setup, decision)? == [1])
}
