//! The distributed algorithms on groups of 1 to 4 ranks (threads), against the single-process
//! answer on the concatenated data: the same bits for every algorithm, element type, NaN
//! policy, adversarial input and split of the data.

use crate::element::Element;
use crate::error::Error;
use crate::random::SplitMix64;
use crate::select::host::testing::{inputs, Gen};
use crate::select::{NanPolicy, QuantileMethod, Selector};

use super::threads::run;
use super::*;

/// The ways to cut `n` values into `q` parts: even, uneven, one part empty, one holding all.
fn splits(n: usize, q: usize) -> Vec<(&'static str, Vec<usize>)> {
    let mut out = vec![(
        "even",
        (0..q)
            .map(|r| n * (r + 1) / q - n * r / q)
            .collect::<Vec<_>>(),
    )];
    if q > 1 {
        let mut uneven: Vec<usize> = (0..q).map(|r| n / (2 << r.min(20))).collect();
        uneven[q - 1] += n - uneven.iter().sum::<usize>();
        out.push(("uneven", uneven));
        let mut empty_first = vec![n / (q - 1); q];
        empty_first[0] = 0;
        empty_first[q - 1] += n - empty_first.iter().sum::<usize>();
        out.push(("root_empty", empty_first));
        let mut one = vec![0; q];
        one[q / 2] = n;
        out.push(("one_holds_all", one));
    }
    out
}

fn parts<T: Copy>(data: &[T], sizes: &[usize]) -> Vec<Vec<T>> {
    let mut at = 0;
    sizes
        .iter()
        .map(|&s| {
            let p = data[at..at + s].to_vec();
            at += s;
            p
        })
        .collect()
}

fn same_bits<T: Element>(a: &[T], b: &[T]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x.to_key() == y.to_key())
}

const ALGORITHMS: [DistributedAlgorithm; 4] = DistributedAlgorithm::ALL;

/// The bucket-based algorithms.
const BUCKETED: [DistributedAlgorithm; 2] = [
    DistributedAlgorithm::Dibms,
    DistributedAlgorithm::DistributedBms,
];

/// Every algorithm on every rank count, split and policy gives the reference's elements.
fn check_type<T: Gen>(n: usize, seed: u64) {
    let mut rng = SplitMix64::new(seed);
    for (name, data) in inputs::<T>(n, seed) {
        for policy in [NanPolicy::Error, NanPolicy::Omit, NanPolicy::Last] {
            let reference = Selector::new().nan_policy(policy);
            let len = match policy {
                NanPolicy::Omit => data.iter().filter(|v| !v.is_nan()).count(),
                _ => data.len(),
            };
            let mut ranks: Vec<usize> = (0..12).map(|_| rng.below(len.max(1))).collect();
            ranks.extend([0, len.saturating_sub(1), len / 2]);
            let expected = reference.multiselect(&data, &ranks);
            for q in 1..=4 {
                for (split, sizes) in splits(data.len(), q) {
                    let shards = parts(&data, &sizes);
                    for algorithm in ALGORITHMS {
                        let got = run(q, |comm| {
                            DistributedSelector::new(comm)
                                .algorithm(algorithm)
                                .nan_policy(policy)
                                .buckets(64)
                                .multiselect(&shards[comm.rank()], &ranks)
                        });
                        let what = format!("{name} {policy:?} q={q} {split} {algorithm}");
                        for (r, g) in got.into_iter().enumerate() {
                            match (&expected, g) {
                                (Ok(e), Ok(g)) => {
                                    let g = g.values.unwrap();
                                    assert!(same_bits(e, &g), "{what} rank {r}: {g:?} != {e:?}");
                                }
                                (Err(e), Err(g)) => {
                                    assert_eq!(e.to_string(), g.to_string(), "{what} rank {r}")
                                }
                                (e, g) => panic!("{what} rank {r}: {e:?} against {g:?}"),
                            }
                        }
                    }
                }
            }
        }
    }
}

#[test]
fn every_type_input_split_and_policy_matches_one_process() {
    check_type::<f32>(700, 1);
    check_type::<f64>(700, 2);
    check_type::<i32>(500, 3);
    check_type::<i64>(500, 4);
    check_type::<u32>(500, 5);
    check_type::<u64>(500, 6);
}

#[test]
fn larger_inputs_take_several_passes_and_stay_exact() {
    let mut rng = SplitMix64::new(11);
    let n = 200_000;
    let data: Vec<f64> = (0..n)
        .map(|_| (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64)
        .collect();
    let ranks: Vec<usize> = (0..=100).map(|i| i * (n - 1) / 100).collect();
    let expected = crate::select::multiselect(&data, &ranks).unwrap();
    for q in [2, 3, 4] {
        let shards = parts(&data, &splits(n, q)[0].1);
        for algorithm in ALGORITHMS {
            let got = run(q, |comm| {
                DistributedSelector::new(comm)
                    .algorithm(algorithm)
                    .buckets(512)
                    .multiselect(&shards[comm.rank()], &ranks)
                    .unwrap()
            });
            for g in &got {
                assert_eq!(g.values.as_ref().unwrap(), &expected, "q={q} {algorithm}");
            }
            if algorithm == DistributedAlgorithm::Dibms {
                assert!(got[0].report.passes >= 2, "{:?}", got[0].report);
                // The last active buckets, holding fewer values than one more pass's counts,
                // were gathered at the root rather than refined.
                let gathered = got[1].report.traffic.phase(Phase::Gather);
                assert!(
                    gathered.messages == 1 && gathered.values > 0,
                    "{gathered:?}"
                );
                assert!(gathered.values <= 512 * (q as u64 - 1), "{gathered:?}");
            }
        }
    }
}

/// Buckets whose extremes show one value each settle their ranks where they are: DIBMS gathers
/// nothing when the last pass's extremes leave no bucket of two values, however few the kept
/// values.
#[test]
fn repeated_values_settle_without_a_gather() {
    let mut rng = SplitMix64::new(12);
    // 10,000 values of 50 distinct ones: the 21 ranks' buckets keep about 4,200 values, fewer
    // than a gather may take (4,096 buckets from each of 2 ranks).
    let n = 10_000;
    let data: Vec<f64> = (0..n).map(|_| rng.below(50) as f64 * 0.25).collect();
    let ranks: Vec<usize> = (0..=20).map(|i| i * (n - 1) / 20).collect();
    let expected = crate::select::multiselect(&data, &ranks).unwrap();
    let q = 3;
    let shards = parts(&data, &splits(n, q)[0].1);
    let got = run(q, |comm| {
        DistributedSelector::new(comm)
            .algorithm(DistributedAlgorithm::Dibms)
            .buckets(4096)
            .multiselect(&shards[comm.rank()], &ranks)
            .unwrap()
    });
    for g in &got {
        assert_eq!(g.values.as_ref().unwrap(), &expected);
        assert_eq!(
            g.report.traffic.phase(Phase::Gather).messages,
            0,
            "{:?}",
            g.report
        );
    }
}

#[test]
fn quantiles_match_numpy_conventions_for_every_method() {
    let mut rng = SplitMix64::new(21);
    let data: Vec<f32> = (0..5000)
        .map(|_| (rng.below(3000) as f32 - 1500.0) / 7.0)
        .collect();
    let probs = [0.0, 0.001, 0.1, 0.25, 1.0 / 3.0, 0.5, 0.9, 0.999, 1.0];
    for method in QuantileMethod::ALL {
        let expected = crate::select::quantiles(&data, &probs, method).unwrap();
        for q in 1..=4 {
            let shards = parts(&data, &splits(data.len(), q)[1.min(q - 1)].1);
            for algorithm in ALGORITHMS {
                let got = run(q, |comm| {
                    DistributedSelector::new(comm)
                        .algorithm(algorithm)
                        .buckets(128)
                        .quantiles(&shards[comm.rank()], &probs, method)
                        .unwrap()
                });
                for g in got {
                    let g = g.values.unwrap();
                    let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
                    assert_eq!(bits(&g), bits(&expected), "{method} q={q} {algorithm}");
                }
            }
        }
    }
}

#[test]
fn errors_reach_every_rank() {
    let data = [1.0, f64::NAN, 3.0, f64::NAN, 5.0, 6.0];
    let shards = parts(&data, &[2, 0, 4]);
    for algorithm in ALGORITHMS {
        let got = run(3, |comm| {
            DistributedSelector::new(comm)
                .algorithm(algorithm)
                .median(&shards[comm.rank()])
        });
        for g in got {
            match g {
                Err(Error::NanInInput {
                    count: 2,
                    first_index: 1,
                }) => {}
                other => panic!("{algorithm}: {other:?}"),
            }
        }
        // A rank out of range and NaNs: the NaNs are reported, as one process does.
        let got = run(3, |comm| {
            DistributedSelector::new(comm)
                .algorithm(algorithm)
                .multiselect(&shards[comm.rank()], &[6])
        });
        for g in got {
            assert!(
                matches!(g, Err(Error::NanInInput { count: 2, .. })),
                "{g:?}"
            );
        }
        let got = run(3, |comm| {
            let sel = DistributedSelector::new(comm)
                .algorithm(algorithm)
                .nan_policy(NanPolicy::Omit);
            sel.multiselect(&shards[comm.rank()], &[4])
        });
        for g in got {
            assert!(
                matches!(g, Err(Error::RankOutOfRange { k: 4, n: 4 })),
                "{g:?}"
            );
        }
        let empty: [Vec<f64>; 2] = [vec![], vec![]];
        let got = run(2, |comm| {
            DistributedSelector::new(comm).median(&empty[comm.rank()])
        });
        assert!(got.iter().all(|g| matches!(g, Err(Error::EmptyInput))));
        let numbers = [vec![1.0], vec![2.0]];
        let got = run(2, |comm| {
            DistributedSelector::new(comm).quantiles(
                &numbers[comm.rank()],
                &[1.5],
                QuantileMethod::Linear,
            )
        });
        assert!(got
            .iter()
            .all(|g| matches!(g, Err(Error::InvalidProbability { .. }))));
    }
}

/// Values a first pass's sample likely misses (a few far below and far above the rest, and
/// NaNs ordered last) fall in its buckets outside the bins, and the extreme ranks stay exact;
/// refused NaNs found by the first count are reported with the first one's index.
#[test]
fn extremes_the_sample_misses_stay_exact() {
    let n = 300_000;
    let mut rng = SplitMix64::new(31);
    let mut data: Vec<f64> = (0..n).map(|_| rng.below(1 << 20) as f64).collect();
    let rare = [
        (17, -1e300),
        (n / 2, f64::NEG_INFINITY),
        (n - 5, 1e300),
        (1000, f64::INFINITY),
        (n / 3, f64::NAN),
        (2 * n / 3, f64::NAN),
    ];
    for (i, v) in rare {
        data[i] = v;
    }
    let ranks = [0, 1, 2, n / 2, n - 4, n - 3, n - 2, n - 1];
    let last = Selector::new().nan_policy(NanPolicy::Last);
    let expected = last.multiselect(&data, &ranks).unwrap();
    for q in 1..=4 {
        let shards = parts(&data, &splits(n, q)[0].1);
        for algorithm in BUCKETED {
            let got = run(q, |comm| {
                DistributedSelector::new(comm)
                    .algorithm(algorithm)
                    .nan_policy(NanPolicy::Last)
                    .multiselect(&shards[comm.rank()], &ranks)
                    .unwrap()
            });
            for g in got {
                let g = g.values.unwrap();
                assert!(same_bits(&expected, &g), "q={q} {algorithm}: {g:?}");
            }
            let got = run(q, |comm| {
                DistributedSelector::new(comm)
                    .algorithm(algorithm)
                    .multiselect(&shards[comm.rank()], &ranks)
            });
            for g in got {
                let e = Error::NanInInput {
                    count: 2,
                    first_index: n / 3,
                };
                assert_eq!(g.unwrap_err().to_string(), e.to_string(), "q={q}");
            }
        }
    }
}

#[test]
fn a_failing_rank_fails_every_rank_without_a_hang() {
    for q in 2..=4 {
        let got = run(q, |comm| {
            let mine = if comm.rank() == q - 1 {
                Err(Error::InvalidArgument("cannot read my part".into()))
            } else {
                Ok(vec![1.0f64, 2.0])
            };
            all_succeeded(comm, mine)
        });
        for (r, g) in got.into_iter().enumerate() {
            match g {
                Err(Error::InvalidArgument(m)) if r == q - 1 => {
                    assert_eq!(m, "cannot read my part")
                }
                Err(Error::RankFailed { rank, message }) if r != q - 1 => {
                    assert_eq!(rank, q - 1);
                    assert!(message.contains("cannot read my part"));
                }
                other => panic!("q={q} rank {r}: {other:?}"),
            }
        }
        let got = run(q, |comm| all_succeeded(comm, Ok::<_, Error>(comm.rank())));
        assert_eq!(
            got.into_iter().map(|g| g.unwrap()).collect::<Vec<_>>(),
            (0..q).collect::<Vec<_>>()
        );
    }
}

#[test]
fn results_on_the_root_only() {
    let data: Vec<u32> = (0..1000).rev().collect();
    let shards = parts(&data, &[300, 300, 400]);
    for algorithm in ALGORITHMS {
        let got = run(3, |comm| {
            DistributedSelector::new(comm)
                .algorithm(algorithm)
                .delivery(Delivery::RootOnly)
                .multiselect(&shards[comm.rank()], &[0, 999, 500])
                .unwrap()
        });
        assert_eq!(got[0].values, Some(vec![0, 999, 500]), "{algorithm}");
        assert!(got[1..].iter().all(|g| g.values.is_none()));
    }
}

#[test]
fn traffic_follows_the_papers_formulas() {
    use super::model::expected_phase;
    let n = 1 << 20;
    let (m, b) = (101, 8192);
    let mut rng = SplitMix64::new(3);
    let data: Vec<f32> = (0..n)
        .map(|_| (rng.next_u64() >> 40) as f32 / (1u64 << 24) as f32)
        .collect();
    let probs: Vec<f64> = (0..m).map(|i| i as f64 / (m - 1) as f64).collect();
    for q in [2, 4] {
        let shards = parts(&data, &splits(n, q)[0].1);
        for algorithm in BUCKETED {
            let totals = run(q, |comm| {
                let sel = DistributedSelector::new(comm).algorithm(algorithm);
                let out = sel
                    .quantiles(&shards[comm.rank()], &probs, QuantileMethod::Lower)
                    .unwrap();
                let all = sel.gather_traffic(&out.report).unwrap();
                (
                    out.report,
                    all.map(|t| t.iter().fold(Traffic::default(), |a, t| a.sum(t))),
                )
            });
            let (report, total) = (totals[0].0, totals[0].1.unwrap());
            let expect = |p| expected_phase(p, n as u64, m, q, b);
            let got = |p: Phase| total.phase(p).values as f64;
            let what = format!("q={q} {algorithm} {report:?}");
            // Phase 1: sizes, sample and pivots in the setup, near equations (1) and (3),
            // 50(q-1) + 1024(1 - n_0/n) (Table 2 rounds the sample up to 1024), except that
            // every other rank sends all its 1024 draws: it cannot know its share of the
            // sample before the sizes meet.
            let create = got(Phase::Setup) + got(Phase::CreateSampled);
            let remote = (q - 1) as f64;
            let drawn = expect(Phase::CreateSampled) + 1024.0 * (remote - 1.0);
            assert!(
                create <= drawn && create >= drawn - 50.0 * remote,
                "{what} {create} {drawn}"
            );
            // Counts: at most B(q-1) (the first pass's bins round their buckets to powers of
            // two), at least three quarters of it.
            let counts = got(Phase::AssignSampled);
            let most = expect(Phase::AssignSampled);
            assert!(counts <= most && counts >= 0.75 * most, "{what}");
            assert!(
                got(Phase::ReduceSampled) <= expect(Phase::ReduceSampled),
                "{what}"
            );
            if algorithm == DistributedAlgorithm::Dibms {
                let passes = (report.passes - 1) as f64;
                assert!(
                    got(Phase::AssignRefine) <= passes * expect(Phase::AssignRefine),
                    "{what}"
                );
                assert!(
                    got(Phase::ReduceRefine) <= passes * expect(Phase::ReduceRefine),
                    "{what}"
                );
                // Extremes (2 per active bucket) and new intervals (3 per bucket) against
                // the paper's 4P per pass, where the paper has no extremes but sends a slope.
                let create2 = got(Phase::CreateRefine);
                assert!(
                    create2
                        <= (passes + 1.0) * 1.25 * expect(Phase::CreateRefine)
                            + passes * (q - 1) as f64,
                    "{what}"
                );
                assert!(
                    report.passes as f64
                        <= super::model::expected_passes(n as u64, m, b).ceil() + 2.0,
                    "{what}"
                );
            } else {
                // The gather: (m/B)(n/q)(q-1) expected for even data, within sampling error.
                let ratio = got(Phase::Gather) / expect(Phase::Gather);
                assert!((0.5..=2.0).contains(&ratio), "{what}: gather ratio {ratio}");
            }
        }
    }
}

#[test]
fn ranks_agree_on_a_value_or_see_they_differ() {
    assert_eq!(
        run(3, |comm| same_on_every_rank(comm, 7).unwrap()),
        vec![true; 3]
    );
    let got = run(3, |comm| {
        same_on_every_rank(comm, comm.rank() as u64 / 2).unwrap()
    });
    assert_eq!(got, vec![false; 3]);
}

/// The GPU's local passes against the host's: the same sketches, counts, extremes and kept
/// keys for the same plans (the bucket of a key is the same function on both; a part this
/// short is one chunk on the host, so both sketch the same places). The first pass copies the
/// keys of some buckets: all the active ones (the reduction reads the copy), or not (it reads
/// the data). The first pass's plan is binned, from a sample of the data, the second one of
/// intervals over every value, the third one over the second's active buckets. Skips without
/// a GPU.
fn device_passes_match_host<T: Gen>(n: usize, seed: u64) {
    use super::device_shard::DeviceShard;
    use super::plan::{BinnedSpec, BucketPlan, IntervalSpec};
    use super::shard::{HostShard, Shard};
    use crate::device::DeviceBuffer;
    use crate::element::RadixKey;
    let Some(gpu) = crate::device::cuda::tests::gpu() else {
        return;
    };
    for (name, data) in inputs::<T>(n, seed) {
        let buf = DeviceBuffer::from_host_on(&gpu, &data).unwrap();
        for omit in [false, true] {
            let mut host = HostShard::new(&data, true);
            let mut dev = DeviceShard::new(&buf);
            let (hs, ds) = (host.stats(omit).unwrap(), dev.stats(omit).unwrap());
            assert_eq!(hs, ds, "{name} omit={omit}");
            if hs.included == 0 || hs.min == hs.max {
                continue;
            }
            // Bins over [min, max]; three intervals over [min, max] with uneven bucket counts;
            // intervals over the active buckets' extremes.
            let (lo, hi) = (hs.min, hs.max);
            let mut sample: Vec<u64> = data
                .iter()
                .step_by(7)
                .map(|v| v.to_key().to_u64())
                .collect();
            sample.sort_unstable();
            let bins = BinnedSpec::from_sample(lo, hi, &sample, 300);
            let mid = lo + (hi - lo) / 3;
            let mut specs = vec![IntervalSpec {
                lo,
                hi: mid,
                buckets: 7,
            }];
            if mid + 1 < hi {
                specs.push(IntervalSpec {
                    lo: mid + 1,
                    hi: hi - 1,
                    buckets: 300,
                });
            }
            specs.push(IntervalSpec {
                lo: hi.max(mid + 1),
                hi,
                buckets: 2,
            });
            specs.dedup_by(|b, a| b.lo <= a.hi);
            for pass in 0..3 {
                let plan = match pass {
                    0 => BucketPlan::<T>::from_binned(&bins).unwrap(),
                    _ => BucketPlan::<T>::from_words(&IntervalSpec::to_words(&specs)).unwrap(),
                };
                let (hs, ds) = (host.sketch(&plan).unwrap(), dev.sketch(&plan).unwrap());
                assert_eq!(hs, ds, "{name} omit={omit} pass {pass}");
                let keep: Vec<usize> = match pass {
                    0 => (0..plan.buckets())
                        .filter(|&b| if omit { b % 2 == 0 } else { b % 3 != 1 })
                        .collect(),
                    _ => Vec::new(),
                };
                let (hc, dc) = (
                    host.count(&plan, &keep).unwrap(),
                    dev.count(&plan, &keep).unwrap(),
                );
                assert_eq!(hc, dc, "{name} omit={omit} pass {pass}");
                let active: Vec<usize> =
                    (0..hc.len()).filter(|&b| hc[b] > 0 && b % 3 != 1).collect();
                let (he, de) = (
                    host.reduce(&plan, &active).unwrap(),
                    dev.reduce(&plan, &active).unwrap(),
                );
                assert_eq!(he, de, "{name} omit={omit} pass {pass}");
                if pass == 0 {
                    continue;
                }
                specs = he
                    .iter()
                    .filter(|e| e.0 != 0)
                    .map(|&(max, not_min)| IntervalSpec {
                        lo: !not_min,
                        hi: max,
                        buckets: 5,
                    })
                    .filter(|s| s.lo <= s.hi)
                    .collect();
                if specs.is_empty() {
                    break;
                }
            }
            let mut hk = host.keys(omit).unwrap();
            hk.sort_unstable();
            let dk = dev.keys(omit).unwrap();
            assert_eq!(
                hk.iter().map(|k| k.to_u64()).collect::<Vec<_>>(),
                dk.iter().map(|k| k.to_u64()).collect::<Vec<_>>(),
                "{name}"
            );
        }
    }
}

#[test]
fn gpu_passes_equal_the_hosts_for_every_type() {
    device_passes_match_host::<f32>(5000, 31);
    device_passes_match_host::<f64>(5000, 32);
    device_passes_match_host::<i32>(3000, 33);
    device_passes_match_host::<i64>(3000, 34);
    device_passes_match_host::<u32>(3000, 35);
    device_passes_match_host::<u64>(3000, 36);
}

#[test]
fn gpu_ranks_and_cpu_ranks_together_match_one_process() {
    use crate::device::DeviceBuffer;
    let Some(gpu) = crate::device::cuda::tests::gpu() else {
        return;
    };
    let mut rng = SplitMix64::new(41);
    let n = 300_000;
    let data: Vec<f32> = (0..n)
        .map(|_| (rng.next_u64() >> 40) as f32 / 1e3 - 8e3)
        .collect();
    let probs: Vec<f64> = (0..=100).map(|i| i as f64 / 100.0).collect();
    let expected = crate::select::quantiles(&data, &probs, QuantileMethod::Linear).unwrap();
    for q in 1..=4 {
        let shards = parts(&data, &splits(n, q)[1.min(q - 1)].1);
        let buffers: Vec<_> = shards
            .iter()
            .map(|s| DeviceBuffer::from_host_on(&gpu, s).unwrap())
            .collect();
        // The default buckets (shared histograms, bucket ids), more than a block's shared
        // memory holds (histograms in global memory), more than a bucket id holds.
        for (algorithm, buckets) in ALGORITHMS
            .into_iter()
            .map(|a| (a, super::DEFAULT_BUCKETS))
            .chain([
                (DistributedAlgorithm::Dibms, 20_000),
                (DistributedAlgorithm::Dibms, 70_000),
            ])
        {
            // Even ranks on the GPU, odd ranks on the CPU.
            let got = run(q, |comm| {
                let sel = DistributedSelector::new(comm)
                    .algorithm(algorithm)
                    .buckets(buckets);
                let r = comm.rank();
                if r % 2 == 0 {
                    sel.quantiles_device(&buffers[r], &probs, QuantileMethod::Linear)
                } else {
                    sel.quantiles(&shards[r], &probs, QuantileMethod::Linear)
                }
                .unwrap()
            });
            for g in got {
                assert_eq!(
                    g.values.as_ref().unwrap(),
                    &expected,
                    "q={q} {algorithm} {buckets}"
                );
            }
        }
    }
}

/// A shard whose counts fail on one rank, for the failure paths inside the algorithms.
struct FailingCount<'a> {
    inner: super::shard::HostShard<'a, f64>,
    fail: bool,
}

impl super::shard::Shard<f64> for FailingCount<'_> {
    fn len(&self) -> u64 {
        self.inner.len()
    }
    fn stats(&mut self, omit_nan: bool) -> crate::error::Result<super::shard::LocalStats> {
        self.inner.stats(omit_nan)
    }
    fn sample(
        &mut self,
        count: usize,
        omit_nan: bool,
        seed: u64,
    ) -> crate::error::Result<Vec<u64>> {
        self.inner.sample(count, omit_nan, seed)
    }
    fn sketch(&mut self, plan: &super::plan::BucketPlan<f64>) -> crate::error::Result<Vec<u64>> {
        self.inner.sketch(plan)
    }
    fn count(
        &mut self,
        plan: &super::plan::BucketPlan<f64>,
        keep: &[usize],
    ) -> crate::error::Result<Vec<u64>> {
        if self.fail {
            return Err(Error::OutOfDeviceMemory {
                bytes: 1 << 40,
                what: "the bucket counts".into(),
                free: 0,
                total: 0,
            });
        }
        self.inner.count(plan, keep)
    }
    fn reduce(
        &mut self,
        plan: &super::plan::BucketPlan<f64>,
        active: &[usize],
    ) -> crate::error::Result<Vec<(u64, u64)>> {
        self.inner.reduce(plan, active)
    }
    fn keys(&mut self, omit_nan: bool) -> crate::error::Result<Vec<u64>> {
        self.inner.keys(omit_nan)
    }
}

#[test]
fn a_rank_failing_inside_an_algorithm_fails_every_rank() {
    let data: Vec<f64> = (0..4000).map(|i| ((i * 7919) % 4000) as f64).collect();
    let shards = parts(&data, &[1000, 1000, 1000, 1000]);
    for algorithm in BUCKETED {
        for failing in 0..4 {
            let got = run(4, |comm| {
                let mut shard = FailingCount {
                    inner: super::shard::HostShard::new(&shards[comm.rank()], false),
                    fail: comm.rank() == failing,
                };
                DistributedSelector::new(comm)
                    .algorithm(algorithm)
                    .multiselect_in(&mut shard, &[0, 3999])
            });
            for (r, g) in got.into_iter().enumerate() {
                match g {
                    Err(Error::OutOfDeviceMemory { .. }) if r == failing => {}
                    Err(Error::RankFailed { rank, message }) if r != failing => {
                        assert_eq!(rank, failing);
                        assert!(message.contains("ran out of memory"), "{message}");
                    }
                    other => panic!("{algorithm} failing {failing}, rank {r}: {other:?}"),
                }
            }
        }
    }
}

/// The first pass sketched (few ranks among many values): the count copies the keys of the
/// buckets the sketches predict, and the answers are one process's whether the prediction
/// holds (random values) or misses every wanted rank (values whose sketched runs lie above all
/// the others, so that the sketches place every rank among them and the reduction reads the
/// data).
#[test]
fn sketched_first_passes_give_one_process_answers() {
    use super::shard::{sketch_run, SKETCH_GROUP, SKETCH_PIECE};
    let (n, q) = (1 << 19, 3);
    let sizes = splits(n, q)[0].1.clone();
    let mut rng = SplitMix64::new(7);
    let random: Vec<f64> = (0..n).map(|_| (rng.next_u64() >> 11) as f64).collect();
    let group = SKETCH_PIECE * SKETCH_GROUP;
    let misled: Vec<f64> = sizes
        .iter()
        .flat_map(|&len| {
            (0..len).map(move |i| {
                match (i % group) / SKETCH_PIECE == sketch_run((i / group) as u64) {
                    true => 1e12 + i as f64,
                    false => i as f64,
                }
            })
        })
        .collect();
    let ranks = [0, n / 3, n / 2, n - 1];
    for (name, data) in [("random", random), ("misled", misled)] {
        let expected = Selector::new().multiselect(&data, &ranks).unwrap();
        let shards = parts(&data, &sizes);
        for algorithm in BUCKETED {
            let got = run(q, |comm| {
                DistributedSelector::new(comm)
                    .algorithm(algorithm)
                    .parallel(false)
                    .sketch_from(0)
                    .multiselect(&shards[comm.rank()], &ranks)
            });
            for (r, g) in got.into_iter().enumerate() {
                let g = g.unwrap();
                let sketched = g.report.traffic.phase(Phase::PredictSampled).messages;
                assert!(sketched > 0, "{name} {algorithm} rank {r}: not sketched");
                assert!(
                    same_bits(&g.values.unwrap(), &expected),
                    "{name} {algorithm} rank {r}"
                );
            }
        }
    }
}

/// A host rank's reduction after a copying count: the same kept keys and extremes as after a
/// plain count, whether the copy holds every active bucket or not.
#[test]
fn a_copy_and_the_data_reduce_alike() {
    use super::plan::{BucketPlan, IntervalSpec};
    use super::shard::{HostShard, Shard};
    let mut rng = SplitMix64::new(9);
    let data: Vec<u32> = (0..50_000).map(|_| rng.next_u64() as u32 >> 8).collect();
    let specs = [IntervalSpec {
        lo: 0,
        hi: (1 << 24) - 1,
        buckets: 64,
    }];
    let plan = BucketPlan::<u32>::from_words(&IntervalSpec::to_words(&specs)).unwrap();
    let active = [3, 17, 40];
    let reduced = |keep: &[usize]| {
        let mut shard = HostShard::new(&data, false);
        let counts = shard.count(&plan, keep).unwrap();
        let extremes = shard.reduce(&plan, &active).unwrap();
        let mut keys = shard.keys(false).unwrap();
        keys.sort_unstable();
        (counts, extremes, keys)
    };
    let plain = reduced(&[]);
    assert_eq!(reduced(&[2, 3, 17, 18, 40]), plain);
    assert_eq!(reduced(&[3, 40]), plain);
}
