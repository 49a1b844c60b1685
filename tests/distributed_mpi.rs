//! Distributed selection over MPI: run by `cargo test --features mpi` as one rank, and by
//! `.ci/run` under `mpirun -np 2`, `3` and `4`. Every rank builds the same data, takes its
//! part, and checks the distributed answer against the single-process one on the whole data,
//! bit for bit. A failed check panics, which ends the whole job with a failure.

use kselect::distributed::{
    all_succeeded, Communicator, Delivery, DistributedAlgorithm, DistributedSelector, Mpi, Nccl,
};
use kselect::{Element, Error, NanPolicy, QuantileMethod, Selector};

/// A small deterministic generator (each rank draws the same numbers).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// The inputs every type is tried on, made from `f64`s.
fn corpus(n: usize, seed: u64) -> Vec<(&'static str, Vec<f64>)> {
    let mut r = Rng(seed);
    let mut out = vec![
        (
            "uniform",
            (0..n)
                .map(|_| r.below(1 << 40) as f64 / 1e6 - 5e5)
                .collect(),
        ),
        ("equal", vec![7.0; n]),
        ("two_values", (0..n).map(|_| r.below(2) as f64).collect()),
        (
            "sixteen",
            (0..n).map(|_| r.below(16) as f64 * 3.0 - 20.0).collect(),
        ),
        ("sorted", (0..n).map(|i| i as f64).collect()),
        ("reversed", (0..n).rev().map(|i| i as f64 * 2.0).collect()),
    ];
    // Alabi et al.'s bucket killer: powers of two, and the rest packed near the smallest.
    out.push((
        "bucket_killer",
        (0..n)
            .map(|i| {
                if i < 65 {
                    (i as f64 - 32.0).exp2()
                } else {
                    2f64.powi(-32) * (1.0 + (i % 1000) as f64 * 1e-9)
                }
            })
            .collect(),
    ));
    out.push((
        "zeros_and_infinities",
        (0..n)
            .map(|_| match r.below(6) {
                0 => -0.0,
                1 => 0.0,
                2 => f64::INFINITY,
                3 => f64::NEG_INFINITY,
                _ => r.below(9) as f64 - 4.0,
            })
            .collect(),
    ));
    out.push((
        "some_nan",
        (0..n)
            .map(|_| {
                if r.below(5) == 0 {
                    f64::NAN
                } else {
                    r.below(100) as f64
                }
            })
            .collect(),
    ));
    out
}

/// The part sizes of `n` values over `q` ranks by name.
fn split(name: &str, n: usize, q: usize) -> Vec<usize> {
    let mut sizes = vec![0; q];
    match name {
        "even" => (0..q).for_each(|r| sizes[r] = n * (r + 1) / q - n * r / q),
        "uneven" => {
            for (r, s) in sizes.iter_mut().enumerate() {
                *s = n / (2 << r);
            }
            sizes[q - 1] += n - sizes.iter().sum::<usize>();
        }
        "skewed" => {
            // One rank holds 90 %, the last none (with 3 ranks or more), the others the rest.
            let rest = if q >= 3 { q - 2 } else { q - 1 };
            sizes[0] = if rest == 0 { n } else { n * 9 / 10 };
            for s in sizes.iter_mut().skip(1).take(rest) {
                *s = (n - n * 9 / 10) / rest;
            }
            sizes[0] += n - sizes.iter().sum::<usize>();
        }
        "root_empty" => {
            for s in sizes.iter_mut().skip(1) {
                *s = n / (q - 1).max(1);
            }
            sizes[q - 1] += n - sizes.iter().sum::<usize>();
        }
        _ => sizes[q / 2] = n,
    }
    sizes
}

fn my_part<T: Copy>(data: &[T], sizes: &[usize], rank: usize) -> Vec<T> {
    let start: usize = sizes[..rank].iter().sum();
    data[start..start + sizes[rank]].to_vec()
}

trait FromF64: Element {
    fn make(v: f64) -> Self;
}
macro_rules! from_f64 {
    ($($t:ty),*) => {$(impl FromF64 for $t { fn make(v: f64) -> Self { v as $t } })*};
}
from_f64!(f32, f64, i32, i64, u32, u64);

fn check_type<T: FromF64>(mpi: &Mpi, n: usize) -> usize {
    let (q, rank) = (mpi.size(), mpi.rank());
    let mut checked = 0;
    for (name, values) in corpus(n, 5) {
        let data: Vec<T> = values.iter().map(|&v| T::make(v)).collect();
        for policy in [NanPolicy::Error, NanPolicy::Omit, NanPolicy::Last] {
            let len = data
                .iter()
                .filter(|v| !(policy == NanPolicy::Omit && v.is_nan()))
                .count();
            let mut r = Rng(len as u64);
            let mut ranks: Vec<usize> = (0..9)
                .map(|_| r.below(len.max(1) as u64) as usize)
                .collect();
            ranks.extend([0, len.saturating_sub(1)]);
            let expected = Selector::new()
                .nan_policy(policy)
                .multiselect(&data, &ranks);
            let probs = [0.0, 0.01, 0.5, 0.75, 1.0];
            let expected_q =
                Selector::new()
                    .nan_policy(policy)
                    .quantiles(&data, &probs, QuantileMethod::Hazen);
            for split_name in ["even", "uneven", "skewed", "root_empty", "one_holds_all"] {
                let part = my_part(&data, &split(split_name, n, q), rank);
                for algorithm in DistributedAlgorithm::ALL {
                    let what = format!(
                        "{} {name} {policy:?} {split_name} {algorithm} q={q} rank {rank}",
                        T::DTYPE
                    );
                    let sel = DistributedSelector::new(mpi)
                        .algorithm(algorithm)
                        .nan_policy(policy)
                        .buckets(64);
                    match (&expected, sel.multiselect(&part, &ranks)) {
                        (Ok(e), Ok(g)) => {
                            let g = g.values.expect("results on every rank");
                            let keys = |v: &[T]| v.iter().map(|x| x.to_key()).collect::<Vec<_>>();
                            assert_eq!(keys(&g), keys(e), "{what}");
                        }
                        (Err(e), Err(g)) => assert_eq!(e.to_string(), g.to_string(), "{what}"),
                        (e, g) => panic!("{what}: {e:?} against {g:?}"),
                    }
                    match (
                        &expected_q,
                        sel.quantiles(&part, &probs, QuantileMethod::Hazen),
                    ) {
                        (Ok(e), Ok(g)) => {
                            let bits =
                                |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
                            assert_eq!(bits(&g.values.unwrap()), bits(e), "{what} quantiles");
                        }
                        (Err(e), Err(g)) => assert_eq!(e.to_string(), g.to_string(), "{what}"),
                        (e, g) => panic!("{what} quantiles: {e:?} against {g:?}"),
                    }
                    checked += 1;
                }
            }
        }
    }
    checked
}

fn failures_reach_every_rank(mpi: &Mpi) {
    let (q, rank) = (mpi.size(), mpi.rank());
    let last = q - 1;
    let mine = if rank == last {
        Err(Error::InvalidArgument("cannot read my part".into()))
    } else {
        Ok(())
    };
    match all_succeeded(mpi, mine) {
        Err(Error::InvalidArgument(m)) if rank == last => assert_eq!(m, "cannot read my part"),
        Err(Error::RankFailed {
            rank: failed,
            message,
        }) if rank != last => {
            assert_eq!(failed, last);
            assert!(message.contains("cannot read my part"));
        }
        other => panic!("rank {rank} of {q}: {other:?}"),
    }
}

fn root_only(mpi: &Mpi) {
    let data: Vec<i64> = (0..10_000).map(|i| (i * 7919) % 10_000 - 5000).collect();
    let part = my_part(&data, &split("even", data.len(), mpi.size()), mpi.rank());
    let sel = DistributedSelector::new(mpi).delivery(Delivery::RootOnly);
    let out = sel.multiselect(&part, &[0, 9_999]).unwrap();
    if mpi.rank() == 0 {
        assert_eq!(out.values, Some(vec![-5000, 4999]));
        let all = sel.gather_traffic(&out.report).unwrap().unwrap();
        assert_eq!(all.len(), mpi.size());
    } else {
        assert_eq!(out.values, None);
        assert!(sel.gather_traffic(&out.report).unwrap().is_none());
    }
}

/// NCCL over MPI: every rank on its own GPU gives the single-process quantiles; a host with
/// more ranks than GPUs, or none, or no NCCL library, is an error on every rank (no hang).
/// Returns whether NCCL ran.
fn nccl_over_mpi(mpi: &Mpi) -> bool {
    let nccl = match Nccl::over_mpi(mpi) {
        Ok(nccl) => nccl,
        Err(e) => {
            let gpus = kselect::CudaDevice::count().unwrap_or(0);
            let required = std::env::var("KSELECT_REQUIRE_NCCL").as_deref() == Ok("1");
            assert!(
                !required || mpi.size() > gpus,
                "rank {}: NCCL was required: {e}",
                mpi.rank()
            );
            if mpi.size() > gpus && gpus > 0 {
                assert!(e.to_string().contains("GPU"), "{e}");
            }
            return false;
        }
    };
    assert_eq!((nccl.rank(), nccl.size()), (mpi.rank(), mpi.size()));
    let data: Vec<f32> = (0..200_003)
        .map(|i| ((i as u64 * 2_654_435_761) % 100_000) as f32 / 7.0)
        .collect();
    let probs: Vec<f64> = (0..=100).map(|i| i as f64 / 100.0).collect();
    let expected = kselect::quantiles(&data, &probs, QuantileMethod::Linear).unwrap();
    for split_name in ["uneven", "skewed", "root_empty"] {
        let part = my_part(
            &data,
            &split(split_name, data.len(), mpi.size()),
            mpi.rank(),
        );
        let buffer = kselect::DeviceBuffer::from_host_on(nccl.device(), &part).unwrap();
        for algorithm in [
            DistributedAlgorithm::SortChoose,
            DistributedAlgorithm::DistributedBms,
            DistributedAlgorithm::Dibms,
        ] {
            let out = DistributedSelector::new(&nccl)
                .algorithm(algorithm)
                .quantiles_device(&buffer, &probs, QuantileMethod::Linear)
                .unwrap();
            assert_eq!(
                out.values.unwrap(),
                expected,
                "{algorithm} over NCCL, {split_name} parts"
            );
        }
    }
    true
}

fn main() {
    let mpi = Mpi::init().expect("MPI initializes");
    let mut checked = 0;
    checked += check_type::<f32>(&mpi, 600);
    checked += check_type::<f64>(&mpi, 600);
    checked += check_type::<i32>(&mpi, 400);
    checked += check_type::<i64>(&mpi, 400);
    checked += check_type::<u32>(&mpi, 400);
    checked += check_type::<u64>(&mpi, 400);
    failures_reach_every_rank(&mpi);
    root_only(&mpi);
    let nccl = nccl_over_mpi(&mpi);
    mpi.barrier();
    if mpi.rank() == 0 {
        println!(
            "distributed_mpi: {checked} cases on {} rank(s), NCCL {}: ok",
            mpi.size(),
            if nccl { "too" } else { "not available" }
        );
    }
}
