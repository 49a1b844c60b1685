//! Exact neighbour search: every backend against a brute-force reference (each pair measured
//! in `f64`, a stable sort, ties by index) on the adversarial corpus for distances, random
//! sets, scikit-learn's `NearestNeighbors(algorithm="brute")` on data without ties, and the
//! errors of bad input.

#[macro_use]
mod common;

use common::sklearn::{self, matrix};
use common::SplitMix64;
use kselect::knn::{
    Among, KnnError, KnnFloat, Metric, NeighborLists, Neighbors, PointSet, Points, METRICS,
};
use kselect::{Device, Error, Selector};
use serde_json::Value;

/// The kNN check that `e` reports.
fn knn_error(e: &Error) -> KnnError {
    match e {
        Error::Knn(e) => e.clone(),
        other => panic!("not a kNN argument error: {other:?}"),
    }
}

/// The metric's value of a pair, written out plainly (cosine through the crate's own
/// canonical scaling, checked against the plain formula separately).
fn reference_value<T: KnnFloat>(metric: Metric, q: &[T], x: &[T]) -> f64 {
    let pairs = q.iter().zip(x).map(|(a, b)| (a.to_f64(), b.to_f64()));
    match metric {
        Metric::SquaredEuclidean => pairs.fold(0.0, |s, (a, b)| s + (a - b) * (a - b)),
        Metric::Euclidean => pairs.fold(0.0, |s, (a, b)| s + (a - b) * (a - b)).sqrt(),
        Metric::Manhattan => pairs.fold(0.0, |s, (a, b)| s + (a - b).abs()),
        Metric::InnerProduct => pairs.fold(0.0, |s, (a, b)| s + a * b),
        Metric::Cosine => metric.measure(q, x),
    }
}

/// Brute force: every pair's value, a stable sort (nearest first, ties in index order), the
/// first `k`.
fn brute_force<T: KnnFloat>(
    metric: Metric,
    reference: &Points<'_, T>,
    queries: &Points<'_, T>,
    k: usize,
    leave_out_self: bool,
) -> (Vec<f64>, Vec<usize>) {
    let (mut values, mut indices) = (Vec::new(), Vec::new());
    for i in 0..queries.rows() {
        let mut all: Vec<(f64, usize)> = (0..reference.rows())
            .filter(|&j| !(leave_out_self && j == i))
            .map(|j| (reference_value(metric, queries.row(i), reference.row(j)), j))
            .collect();
        if metric == Metric::InnerProduct {
            all.sort_by(|a, b| b.0.total_cmp(&a.0));
        } else {
            all.sort_by(|a, b| a.0.total_cmp(&b.0));
        }
        for &(v, j) in &all[..k] {
            values.push(v);
            indices.push(j);
        }
    }
    (values, indices)
}

/// Asserts identical indices and distances equal to the reference's values as `T`.
fn assert_exact<T: KnnFloat>(
    lists: &NeighborLists<T>,
    expected: &(Vec<f64>, Vec<usize>),
    what: &str,
) {
    let k = lists.k();
    let first_index = lists
        .indices()
        .iter()
        .zip(&expected.1)
        .position(|(a, b)| a != b);
    let differ = |at: usize, difference: String| -> ! {
        panic!(
            "{what}: query {} neighbour {}: {difference}",
            at / k,
            at % k
        )
    };
    if let Some(at) = first_index {
        let (got, want) = (lists.indices()[at], expected.1[at]);
        differ(at, format!("index {got} where brute force has {want}"));
    }
    let want: Vec<T> = expected.0.iter().map(|&v| T::from_f64(v)).collect();
    let first_value = lists.distances().iter().zip(&want).position(|(a, b)| {
        let (a, b) = (a.to_f64(), b.to_f64());
        a.to_bits() != b.to_bits() && !(a.is_nan() && b.is_nan())
    });
    if let Some(at) = first_value {
        let (got, want) = (lists.distances()[at], want[at]);
        differ(
            at,
            format!("distance {got:?} where brute force has {want:?}"),
        );
    }
}

/// On a CUDA device, also checks the lists left on the device against `expected`.
fn assert_device_lists_exact<T: KnnFloat>(
    device: &Device,
    index: &Neighbors<'_, T>,
    queries: &Points<'_, T>,
    k: usize,
    expected: &(Vec<f64>, Vec<usize>),
    what: &str,
) {
    if let Device::Cuda(_) = device {
        let lists = index.search_device(queries.clone(), k).unwrap();
        assert_eq!((lists.queries(), lists.k()), (queries.rows(), k));
        let host = lists.to_host().unwrap();
        assert_exact(&host, expected, &format!("{what}, left on the device"));
        let indices = lists.indices().to_host().unwrap();
        assert!(indices
            .iter()
            .zip(host.indices())
            .all(|(&a, &b)| a as usize == b));
    } else {
        let e = index.search_device(queries.clone(), k).unwrap_err();
        assert_eq!(knn_error(&e), KnnError::DeviceListsOnCpu);
        assert!(e.to_string().contains("CUDA device"), "{e}");
    }
}

/// Searches `queries` for their `k` nearest points of `reference` with `index` (of `metric`)
/// and checks the lists, and on a CUDA device those left there, against brute force.
fn check_search<T: KnnFloat>(
    device: &Device,
    index: &Neighbors<'_, T>,
    metric: Metric,
    (reference, queries): (&Points<'_, T>, &Points<'_, T>),
    k: usize,
    label: &str,
) {
    let lists = index.search(queries.clone(), k).unwrap();
    let expected = brute_force(metric, reference, queries, k, false);
    assert_exact(&lists, &expected, label);
    assert_device_lists_exact(device, index, queries, k, &expected, label);
}

/// Searches with every metric and checks against brute force, queries given and the set
/// against itself.
fn check_all_metrics<T: KnnFloat>(
    device: &Device,
    reference: &[T],
    queries: &[T],
    dim: usize,
    ks: &[usize],
    what: &str,
) {
    let r = Points::new(reference, dim).unwrap();
    let q = Points::new(queries, dim).unwrap();
    for metric in METRICS {
        let index = Neighbors::new(r.clone())
            .unwrap()
            .metric(metric)
            .device(device.clone());
        for &k in ks.iter().filter(|&&k| k <= r.rows()) {
            let label = format!("{what}, {metric}, k = {k}");
            check_search(device, &index, metric, (&r, &q), k, &label);
            if k < r.rows() {
                let graph = index.search_self(k).unwrap();
                let expected = brute_force(metric, &r, &r, k, true);
                assert_exact(&graph, &expected, &format!("{label}, the graph"));
            }
        }
    }
}

fn random_points<T: KnnFloat>(
    rng: &mut SplitMix64,
    count: usize,
    f: impl Fn(f64) -> f64,
) -> Vec<T> {
    (0..count)
        .map(|_| T::from_f64(f((rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64)))
        .collect()
}

fn corpus<T: KnnFloat>(device: &Device, huge: f64, tiny: f64) {
    let mut rng = SplitMix64::new(17);
    let ks = [1, 2, 5, 17, 64, 1000];
    // Random points, small and awkward sizes.
    for (n, d) in [(1, 3), (2, 1), (9, 2), (63, 5), (130, 7), (257, 16)] {
        let r: Vec<T> = random_points(&mut rng, n * d, |u| u * 2.0 - 1.0);
        let q: Vec<T> = random_points(&mut rng, 11 * d, |u| u * 2.0 - 1.0);
        check_all_metrics(device, &r, &q, d, &ks, &format!("random n = {n}, d = {d}"));
        let all = [n];
        check_all_metrics(
            device,
            &r,
            &q,
            d,
            &all,
            &format!("random n = {n}, d = {d}, k = n"),
        );
    }
    // Every point equal, and duplicated points.
    let same = vec![T::from_f64(0.5); 40 * 3];
    check_all_metrics(device, &same, &same[..9], 3, &ks, "all equal");
    let base: Vec<T> = random_points(&mut rng, 10 * 4, |u| u);
    let dup: Vec<T> = base.iter().cycle().take(50 * 4).copied().collect();
    check_all_metrics(device, &dup, &base, 4, &ks, "duplicated points");
    // Integer grids: many exact ties.
    let grid: Vec<T> = (0..100 * 2)
        .map(|i| T::from_f64(((i * 7) % 10) as f64))
        .collect();
    let gq: Vec<T> = (0..20 * 2)
        .map(|i| T::from_f64((i % 11) as f64 - 0.0))
        .collect();
    check_all_metrics(device, &grid, &gq, 2, &ks, "integer grid");
    // Huge and tiny coordinates.
    let big: Vec<T> = random_points(&mut rng, 30 * 3, |u| (u - 0.5) * huge);
    check_all_metrics(device, &big, &big[..15], 3, &ks, "huge coordinates");
    let small: Vec<T> = random_points(&mut rng, 30 * 3, |u| (u - 0.5) * tiny);
    check_all_metrics(device, &small, &small[..15], 3, &ks, "tiny coordinates");
    // d = 1000.
    let wide: Vec<T> = random_points(&mut rng, 40 * 1000, |u| u);
    check_all_metrics(device, &wide, &wide[..3000], 1000, &[1, 7, 40], "d = 1000");
}

backend_test!(corpus_f64_equals_brute_force, |selector: Selector| {
    corpus::<f64>(selector.device(), 1e300, 1e-300);
});

backend_test!(corpus_f32_equals_brute_force, |selector: Selector| {
    corpus::<f32>(selector.device(), 1e30, 1e-30);
});

backend_test!(random_sets_equal_brute_force, |selector: Selector| {
    let mut rng = SplitMix64::new(99);
    for round in 0..20 {
        let n = 1 + (rng.next_u64() % 300) as usize;
        let d = 1 + (rng.next_u64() % 12) as usize;
        let m = 1 + (rng.next_u64() % 40) as usize;
        let k = 1 + (rng.next_u64() as usize % n);
        // Coarse values make ties common.
        let levels = 1 + rng.next_u64() % 6;
        let r: Vec<f64> = random_points(&mut rng, n * d, |u| (u * levels as f64).floor());
        let q: Vec<f64> = random_points(&mut rng, m * d, |u| (u * levels as f64).floor());
        check_all_metrics(
            selector.device(),
            &r,
            &q,
            d,
            &[k],
            &format!("round {round}"),
        );
    }
});

backend_test!(bad_input_is_a_clear_error, |selector: Selector| {
    let device = selector.device().clone();
    let r = [0.0f64, 1.0, 2.0, 3.0];
    let index = Neighbors::new(Points::new(&r, 2).unwrap())
        .unwrap()
        .device(device.clone());
    let q = Points::new(&[0.0, 0.0], 2).unwrap();
    for (k, want) in [(0, "k = 0"), (3, "k = 3")] {
        let e = index.search(q.clone(), k).unwrap_err();
        assert_eq!(
            knn_error(&e),
            KnnError::KOutOfRange {
                k,
                available: 2,
                among: Among::Reference
            }
        );
        let e = e.to_string();
        assert!(e.contains(want) && e.contains("2 reference points"), "{e}");
    }
    let e = index.search_self(2).unwrap_err();
    assert_eq!(
        knn_error(&e),
        KnnError::KOutOfRange {
            k: 2,
            available: 1,
            among: Among::OtherReference
        }
    );
    assert!(e.to_string().contains("1 other reference points"), "{e}");
    let e = index
        .search(Points::new(&[0.0], 1).unwrap(), 1)
        .unwrap_err();
    assert_eq!(
        knn_error(&e),
        KnnError::DimMismatch {
            queries: 1,
            reference: 2
        }
    );
    assert!(
        e.to_string().contains("1 coordinates") && e.to_string().contains("have 2"),
        "{e}"
    );
    let e = index.search(Points::new(&[], 2).unwrap(), 1).unwrap_err();
    assert_eq!(
        knn_error(&e),
        KnnError::EmptySet {
            set: PointSet::Query
        }
    );
    assert!(e.to_string().contains("query set is empty"), "{e}");
    let e = index
        .search(Points::new(&[0.0, f64::NAN], 2).unwrap(), 1)
        .unwrap_err();
    assert!(
        matches!(
            e,
            Error::Knn(KnnError::NonFiniteCoordinate {
                set: PointSet::Query,
                row: 0,
                column: 1,
                value
            }) if value.is_nan()
        ),
        "{e:?}"
    );
    assert!(
        e.to_string().contains("query 0") && e.to_string().contains("column 1"),
        "{e}"
    );
    let e = Neighbors::new(Points::new(&[1.0, f64::INFINITY, 0.0, 0.0], 2).unwrap()).unwrap_err();
    assert_eq!(
        knn_error(&e),
        KnnError::NonFiniteCoordinate {
            set: PointSet::Reference,
            row: 0,
            column: 1,
            value: f64::INFINITY
        }
    );
    assert!(e.to_string().contains("reference point 0"), "{e}");
    let one = Neighbors::new(Points::new(&[1.0f32], 1).unwrap()).unwrap();
    let e = one.device(device).search_self(1).unwrap_err();
    assert_eq!(
        knn_error(&e),
        KnnError::KOutOfRange {
            k: 1,
            available: 0,
            among: Among::OtherReference
        }
    );
    assert!(e.to_string().contains("no other reference point"), "{e}");
    assert_eq!(
        knn_error(&Points::new(&[1.0f32, 2.0, 3.0], 2).unwrap_err()),
        KnnError::Ragged { len: 3, dim: 2 }
    );
    assert_eq!(
        knn_error(&Points::<f32>::new(&[], 0).unwrap_err()),
        KnnError::NoCoordinate { set: None }
    );
});

backend_test!(searches_equal_scikit_learn, |selector: Selector| {
    let cases = sklearn::cases();
    for case in cases["neighbors"].as_array().unwrap() {
        let name = case["name"].as_str().unwrap();
        let metric: Metric = case["metric"].as_str().unwrap().parse().unwrap();
        let k = case["k"].as_u64().unwrap() as usize;
        let (train, dim) = matrix(&case["train"]);
        let index = Neighbors::new(Points::new(&train, dim).unwrap())
            .unwrap()
            .metric(metric)
            .device(selector.device().clone());
        let lists = match &case["query"] {
            Value::Null => index.search_self(k).unwrap(),
            q => {
                let (query, _) = matrix(q);
                index.search(Points::new(&query, dim).unwrap(), k).unwrap()
            }
        };
        let (want_d, _) = matrix(&case["distances"]);
        let (want_i, _) = matrix(&case["indices"]);
        let got_i: Vec<f64> = lists.indices().iter().map(|&i| i as f64).collect();
        assert_eq!(got_i, want_i, "{name}: indices");
        for (a, b) in lists.distances().iter().zip(&want_d) {
            assert!(
                (a - b).abs() <= 1e-9 * b.abs().max(1e-300) + 1e-12,
                "{name}: {a} vs {b}"
            );
        }
    }
});

#[test]
fn cosine_agrees_with_the_plain_formula() {
    let mut rng = SplitMix64::new(5);
    for _ in 0..200 {
        let q: Vec<f64> = random_points(&mut rng, 6, |u| u - 0.3);
        let x: Vec<f64> = random_points(&mut rng, 6, |u| u - 0.6);
        let dot: f64 = q.iter().zip(&x).map(|(a, b)| a * b).sum();
        let nq = q.iter().map(|a| a * a).sum::<f64>().sqrt();
        let nx = x.iter().map(|a| a * a).sum::<f64>().sqrt();
        let plain = 1.0 - dot / (nq * nx);
        assert!((Metric::Cosine.measure(&q, &x) - plain).abs() < 1e-14);
    }
}

#[test]
fn arrays_are_accepted_in_any_layout() {
    let a = ndarray::array![[0.0f64, 0.0], [1.0, 1.0], [5.0, 5.0]];
    let t = a.t().to_owned();
    let index = Neighbors::new(a.view()).unwrap();
    let lists = index.search(t.t(), 1).unwrap();
    assert_eq!(lists.indices(), &[0, 1, 2]);
    let (d, i) = lists.into_arrays();
    assert_eq!((d[[2, 0]], i[[2, 0]]), (0.0, 2));
    // The same points as a slice with its shape, and as strided rows (a gap after each).
    let flat = [0.0f64, 0.0, 1.0, 1.0, 5.0, 5.0];
    let by_matrix = Neighbors::new(kselect::Matrix::new(&flat, 3, 2)).unwrap();
    assert_eq!(by_matrix.search(t.t(), 1).unwrap().indices(), &[0, 1, 2]);
    let padded = [0.9f64, 0.9, -1.0, 4.0, 4.0, -1.0];
    let queries = kselect::Matrix::new(&padded, 2, 2).with_stride(3);
    assert_eq!(index.search(queries, 1).unwrap().indices(), &[1, 2]);
    let short = kselect::Matrix::new(&flat, 4, 2);
    assert!(Neighbors::new(short).is_err(), "4 rows of 2 need 8 values");
}

backend_test!(
    a_small_memory_budget_tiles_and_stays_exact,
    |selector: Selector| {
        // 3000 points of 5 coordinates in 64 KiB: reference tiles of fewer points than k = 300,
        // queries one or a few at a time, lists merged across tiles.
        let mut rng = SplitMix64::new(3);
        let (n, d) = (3000, 5);
        let r: Vec<f64> = random_points(&mut rng, n * d, |u| (u * 8.0).floor());
        let q: Vec<f64> = random_points(&mut rng, 7 * d, |u| (u * 8.0).floor());
        let (rp, qp) = (Points::new(&r, d).unwrap(), Points::new(&q, d).unwrap());
        for metric in METRICS {
            let index = Neighbors::new(rp.clone())
                .unwrap()
                .metric(metric)
                .device(selector.device().clone())
                .memory_budget(64 << 10);
            for k in [1, 50, 300] {
                let label = format!("{metric}, k = {k}, 64 KiB");
                check_search(selector.device(), &index, metric, (&rp, &qp), k, &label);
            }
        }
    }
);

backend_test!(
    many_equal_distances_stay_exact_at_scale,
    |selector: Selector| {
        // An integer grid of 4000 points: hundreds at each distance from a query, more than any
        // margin of candidates, and queries on and off the grid.
        let (n, d) = (4000, 3);
        let r: Vec<f32> = (0..n * d).map(|i| ((i * 7 + i / 3) % 6) as f32).collect();
        let q: Vec<f32> = (0..40 * d).map(|i| ((i * 5) % 7) as f32 * 0.5).collect();
        let (rp, qp) = (Points::new(&r, d).unwrap(), Points::new(&q, d).unwrap());
        let index = Neighbors::new(rp.clone())
            .unwrap()
            .device(selector.device().clone());
        for metric in METRICS {
            let index = index.clone().metric(metric);
            for k in [1, 10, 100, 1000] {
                // Twice: the second search reuses the reference set kept on the device.
                for round in 0..2 {
                    let label = format!("{metric}, k = {k}, round {round}");
                    check_search(selector.device(), &index, metric, (&rp, &qp), k, &label);
                }
            }
        }
    }
);

backend_test!(
    random_points_at_scale_equal_brute_force,
    |selector: Selector| {
        // Enough points that the candidates are a small part of them: the bound does the work.
        let mut rng = SplitMix64::new(11);
        let (n, d) = (20_000, 24);
        let r: Vec<f32> = random_points(&mut rng, n * d, |u| u * 10.0 + 100.0);
        let q: Vec<f32> = random_points(&mut rng, 50 * d, |u| u * 10.0 + 100.0);
        let (rp, qp) = (Points::new(&r, d).unwrap(), Points::new(&q, d).unwrap());
        for metric in METRICS {
            let index = Neighbors::new(rp.clone())
                .unwrap()
                .metric(metric)
                .device(selector.device().clone());
            for k in [1, 16, 500] {
                let label = format!("{metric}, k = {k}");
                check_search(selector.device(), &index, metric, (&rp, &qp), k, &label);
            }
        }
    }
);
