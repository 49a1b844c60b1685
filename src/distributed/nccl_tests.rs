//! The NCCL communicator: a clear error without the library, and on the GPUs present (one
//! makes a group of one) the words moved and the quantiles of every algorithm equal to one
//! process's. The GPU tests skip without a GPU or without NCCL, unless `KSELECT_REQUIRE_GPU=1`
//! and `KSELECT_REQUIRE_NCCL=1`.

use crate::device::{CudaDevice, DeviceBuffer};
use crate::error::Error;
use crate::select::host::testing::inputs;
use crate::select::QuantileMethod;

use super::*;

fn library_present() -> bool {
    // SAFETY: only tries to load the shared library.
    let present = unsafe { cudarc::nccl::sys::is_culib_present() };
    crate::device::cuda::tests::library_present(present, "KSELECT_REQUIRE_NCCL", "libnccl")
}

#[test]
fn without_the_library_nccl_is_a_clear_error() {
    if library_present() {
        return;
    }
    for result in [
        NcclId::new().map(|_| ()),
        Nccl::on_each_gpu(&[], |_| ()).map(|_| ()),
    ] {
        match result {
            Err(Error::Communication(m)) => assert!(m.contains("NCCL library"), "{m}"),
            other => panic!("{other:?}"),
        }
    }
}

/// The GPU tests one at a time: NCCL groups made at once by several tests' threads on the same
/// GPUs can wait on one another for ever.
static ONE_GROUP_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// The GPUs of this machine when NCCL can run on them, and the right to make groups on them
/// until the guard drops.
fn gpus() -> Option<(Vec<CudaDevice>, std::sync::MutexGuard<'static, ()>)> {
    let first = crate::device::cuda::tests::gpu()?;
    if !library_present() {
        eprintln!("skipped (no NCCL library)");
        return None;
    }
    let guard = ONE_GROUP_AT_A_TIME
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    let count = CudaDevice::count().unwrap();
    let gpus = std::iter::once(Ok(first))
        .chain((1..count).map(CudaDevice::new))
        .collect::<crate::error::Result<_>>()
        .unwrap();
    Some((gpus, guard))
}

#[test]
fn a_group_of_one_gpu_moves_words_like_any_communicator() {
    let Some((gpus, _one_at_a_time)) = gpus() else {
        return;
    };
    let nccl = Nccl::single(&gpus[0]).unwrap();
    assert_eq!((nccl.rank(), nccl.size(), nccl.transport()), (0, 1, "nccl"));
    let mut words = vec![3, u64::MAX, 0];
    nccl.reduce(&mut words, ReduceOp::Sum).unwrap();
    nccl.reduce(&mut words, ReduceOp::Max).unwrap();
    assert_eq!(words, vec![3, u64::MAX, 0]);
    nccl.reduce(&mut [], ReduceOp::Sum).unwrap();
    let mut long: Vec<u64> = (0..100_000).map(|i| i * 31).collect();
    let copy = long.clone();
    nccl.broadcast(&mut long).unwrap();
    assert_eq!(long, copy);
    let mut empty = Vec::new();
    nccl.broadcast(&mut empty).unwrap();
    assert!(empty.is_empty());
    assert!(matches!(nccl.send(0, &[1]), Err(Error::Communication(_))));
    assert!(matches!(nccl.receive(1), Err(Error::Communication(_))));
    // An id survives its trip through bytes.
    let id = NcclId::new().unwrap();
    assert_eq!(NcclId::from_bytes(id.to_bytes()).to_bytes(), id.to_bytes());
    // A GPU given twice is refused before NCCL sees it.
    let twice = [gpus[0].clone(), gpus[0].clone()];
    assert!(matches!(
        Nccl::on_each_gpu(&twice, |_| ()),
        Err(Error::Distributed(DistributedError::GpuTwice { gpu })) if gpu == gpus[0].ordinal()
    ));
}

#[test]
fn every_algorithm_over_nccl_gives_one_process_quantiles() {
    let Some((gpus, _one_at_a_time)) = gpus() else {
        return;
    };
    let probs: Vec<f64> = (0..=40).map(|i| i as f64 / 40.0).collect();
    let q = gpus.len();
    // Every input, split two ways, under every algorithm, in one group (a group costs about
    // a second to make): uneven parts, rank r holding a share growing with r (rank 0 empty
    // with 2 GPUs or more); skewed parts, rank 0 holding 90 %, the last none (3 GPUs or more).
    let cases = |n: usize| {
        let growing: Vec<usize> = (0..=q).map(|r| n * r * r / (q * q)).collect();
        let skewed: Vec<usize> = (0..=q)
            .map(|r| match r {
                0 => 0,
                _ if r == q || (q >= 3 && r == q - 1) => n,
                _ => n * 9 / 10 + (n - n * 9 / 10) * (r - 1) / q.saturating_sub(2).max(1),
            })
            .collect();
        [growing, skewed]
            .into_iter()
            .flat_map(|c| DistributedAlgorithm::ALL.map(|a| (c.clone(), a)))
            .collect::<Vec<_>>()
    };
    let inputs: Vec<(&str, Vec<f32>)> = inputs::<f32>(30_001, 77)
        .into_iter()
        .filter(|(_, data)| !data.iter().any(|v| v.is_nan()))
        .collect();
    let got = Nccl::on_each_gpu(&gpus, |nccl| {
        let mut outs = Vec::new();
        for (_, data) in &inputs {
            for (cuts, algorithm) in cases(data.len()) {
                let part = &data[cuts[nccl.rank()]..cuts[nccl.rank() + 1]];
                let out = DeviceBuffer::from_host_on(nccl.device(), part).and_then(|buffer| {
                    DistributedSelector::new(nccl)
                        .algorithm(algorithm)
                        .quantiles_device(&buffer, &probs, QuantileMethod::Weibull)
                });
                outs.push(out);
            }
        }
        outs
    })
    .unwrap();
    for (rank, outs) in got.into_iter().enumerate() {
        let mut outs = outs.into_iter();
        for (name, data) in &inputs {
            let expected = crate::select::quantiles(data, &probs, QuantileMethod::Weibull).unwrap();
            for (cuts, algorithm) in cases(data.len()) {
                let out = outs.next().unwrap().unwrap();
                // Bits, so that the NaN of infinities' interpolation compares equal.
                let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
                assert_eq!(
                    bits(out.values.as_deref().unwrap()),
                    bits(&expected),
                    "{name} {algorithm} on {q} GPU(s), parts {cuts:?}, rank {rank}"
                );
                assert_eq!(out.report.ranks, q);
            }
        }
    }
}

/// A sketched first pass over NCCL: the GPUs copy the predicted buckets' keys during the count
/// and reduce the copy; the values are one process's.
#[test]
fn a_sketched_first_pass_over_nccl_gives_one_process_values() {
    let Some((gpus, _one_at_a_time)) = gpus() else {
        return;
    };
    let mut rng = crate::random::SplitMix64::new(5);
    let n = 1 << 20;
    let data: Vec<f32> = (0..n).map(|_| (rng.next_u64() >> 40) as f32).collect();
    let ranks = [0, n / 3, n / 2, n - 1];
    let expected = crate::select::Selector::new()
        .multiselect(&data, &ranks)
        .unwrap();
    let q = gpus.len();
    let got = Nccl::on_each_gpu(&gpus, |nccl| {
        let r = nccl.rank();
        let buffer = DeviceBuffer::from_host_on(nccl.device(), &data[n * r / q..n * (r + 1) / q])?;
        DistributedSelector::new(nccl)
            .algorithm(DistributedAlgorithm::Dibms)
            .sketch_from(0)
            .multiselect_device(&buffer, &ranks)
    })
    .unwrap();
    for (rank, out) in got.into_iter().enumerate() {
        let out = out.unwrap();
        assert_eq!(out.values.as_deref(), Some(&expected[..]), "rank {rank}");
        if q > 1 {
            assert!(out.report.traffic.phase(Phase::PredictSampled).messages > 0);
        }
    }
}

/// The communicator's own operations on every GPU: gathers, broadcasts, reductions and
/// messages to the root of every length, from empty through one transfer and its boundary to
/// several transfers and past the kept staging buffers; every rank's bytes arrive whole and in
/// rank order.
#[test]
fn messages_of_every_length_cross_the_group() {
    let Some((gpus, _one_at_a_time)) = gpus() else {
        return;
    };
    let word = 8;
    let first = super::nccl::FIRST_WORDS;
    let lengths = [
        0,
        5,
        word * (first - 2),
        word * (first - 1) + 1,
        word * 3 * first + 3,
        word * super::nccl_staging::KEPT_WORDS + 9,
    ];
    // Rank r's bytes in round `round`: each rank a different length in each round.
    let bytes = |rank: usize, round: usize| -> Vec<u8> {
        let len = lengths[(round + rank) % lengths.len()];
        (0..len)
            .map(|i| (i * 131 + rank * 7 + round) as u8)
            .collect()
    };
    let q = gpus.len();
    let got = Nccl::on_each_gpu(&gpus, |nccl| -> crate::error::Result<()> {
        let rank = nccl.rank();
        for (round, &len) in lengths.iter().enumerate() {
            let all = nccl.gather(&bytes(rank, round))?;
            let expected: Vec<Vec<u8>> = match rank {
                0 => (0..q).map(|r| bytes(r, round)).collect(),
                _ => Vec::new(),
            };
            assert_eq!(all, expected, "gather, round {round}, rank {rank}");
            let root_words: Vec<u64> = (0..len as u64 / 8).map(|i| i * 3 + 1).collect();
            let mut words = if rank == 0 {
                root_words.clone()
            } else {
                vec![7]
            };
            nccl.broadcast(&mut words)?;
            assert_eq!(words, root_words, "broadcast, round {round}, rank {rank}");
            let mut sums = vec![rank as u64 + 1; len / 8 + 1];
            nccl.reduce(&mut sums, ReduceOp::Sum)?;
            let total = match rank {
                0 => (q * (q + 1) / 2) as u64,
                _ => rank as u64 + 1,
            };
            assert!(sums.iter().all(|&s| s == total), "reduce, round {round}");
            if rank == 0 {
                for from in 1..q {
                    assert_eq!(nccl.receive(from)?, bytes(from, round), "from {from}");
                }
            } else {
                nccl.send(0, &bytes(rank, round))?;
            }
        }
        Ok(())
    })
    .unwrap();
    for outcome in got {
        outcome.unwrap();
    }
}
