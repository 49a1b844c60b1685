#!/usr/bin/env python3
"""Generate scikit-learn reference cases for the `knn` module's tests.

Usage (from the repository root; needs numpy and scikit-learn):

    python3 scripts/knn_sklearn_cases.py

writes `tests/data/knn/sklearn_cases.json`. The output is deterministic (numpy `default_rng`
with fixed seeds) for given numpy / scikit-learn versions, which are recorded in the file as
"numpy_version" and "sklearn_version".

The file holds two lists:

* "neighbors": raw searches, `NearestNeighbors(algorithm="brute", metric=...).kneighbors`,
  with "indices" and "distances" as scikit-learn returns them. `"query": null` means the
  training set searched against itself (`kneighbors()` without X), where each point is left
  out of its own neighbour list.
* "estimators": `KNeighborsRegressor` / `KNeighborsClassifier` (algorithm="brute") with
  "predict", for classification also "classes" and "predict_proba" (columns in ascending
  label order, as scikit-learn's `classes_`), and leave-one-out predictions of every training
  point ("loo_predict", each point predicted by a model fitted on the other n-1 points) with
  "loo_error" (regression: mean squared error; classification: fraction misclassified).

Ties. Distances are recomputed here in float64 by direct differences (cosine as
1 - dot / (|a| |b|)), and every stored query, every training point of a leave-one-out run and
every point of a self-search has its k+1 smallest distances pairwise distinct with a relative
gap above GAP (1e-6, well above float rounding), so the neighbour order is the unique sorted
order whatever the tie rule. Points that fail are redrawn. Two kinds of ties are kept on
purpose because they do not make the answer ambiguous:

* weights="distance" with queries copied from the training set (distance exactly 0): the
  coincident training point gets all the weight (coordinates there are on a binary grid so
  every distance computation is exact);
* uniform classification with even k where the k neighbours split the vote evenly between
  two labels: scikit-learn predicts the smallest of the tied labels. Some of these queries
  have the larger tied label on their nearest neighbour.

For distance-weighted classification the two largest class weights of every query (and of
every leave-one-out point) differ by a relative margin above GAP as well.

Distances in the file are scikit-learn's own output (for euclidean it uses the
|x|^2 - 2 x.y + |y|^2 expansion), so compare distances and real-valued predictions with a
small relative tolerance (about 1e-9); indices, labels and tie outcomes are exact.
"""

import json
import os
import sys

import numpy as np
import sklearn
from sklearn.neighbors import KNeighborsClassifier, KNeighborsRegressor, NearestNeighbors

GAP = 1e-6
OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "data", "knn",
                   "sklearn_cases.json")


# ---------------------------------------------------------------------------------------------
# Direct float64 distances and the gap conditions


def dists(metric, q, x):
    """Distances from each row of q to each row of x, by direct differences."""
    q = np.asarray(q, dtype=np.float64)
    x = np.asarray(x, dtype=np.float64)
    if metric == "cosine":
        qn = np.sqrt((q * q).sum(axis=1))
        xn = np.sqrt((x * x).sum(axis=1))
        return 1.0 - (q @ x.T) / np.outer(qn, xn)
    diff = q[:, None, :] - x[None, :, :]
    if metric == "manhattan":
        return np.abs(diff).sum(axis=2)
    sq = (diff * diff).sum(axis=2)
    if metric == "sqeuclidean":
        return sq
    assert metric == "euclidean", metric
    return np.sqrt(sq)


def distinct_prefix(row, m):
    """The m smallest values of row (m capped at len(row)) are pairwise distinct, rel. gap > GAP."""
    s = np.sort(row)[: min(m, len(row))]
    for a, b in zip(s[:-1], s[1:]):
        if not (b - a > GAP * abs(b)):
            return False
    return True


def duplicates(x):
    """Indices of rows equal to an earlier row."""
    seen, dup = set(), []
    for i, r in enumerate(map(tuple, x)):
        if r in seen:
            dup.append(i)
        seen.add(r)
    return dup


def weights_of(dd, weights):
    if weights == "uniform":
        return np.ones_like(dd)
    if (dd == 0).any():
        return (dd == 0).astype(np.float64)
    return 1.0 / dd


def manual_predict(task, weights, k, drow, y, classes):
    """Prediction (and class weights) from one row of distances, by plain numpy."""
    idx = np.argsort(drow, kind="stable")[:k]
    w = weights_of(drow[idx], weights)
    if task == "regression":
        return float((w * y[idx]).sum() / w.sum()), None
    votes = np.array([w[y[idx] == c].sum() for c in classes])
    proba = votes / votes.sum()
    return int(classes[int(np.argmax(proba))]), proba


def vote_margin_ok(task, weights, proba):
    """Distance-weighted votes must not be near-tied (uniform ties are exact and intended)."""
    if task != "classification" or weights != "distance":
        return True
    top = np.sort(proba)[::-1]
    return len(top) < 2 or top[0] - top[1] > GAP * top[0]


def query_ok(metric, task, weights, k, q, x, y, classes):
    d = dists(metric, q[None, :], x)[0]
    if not distinct_prefix(d, k + 1):
        return False
    _, proba = manual_predict(task, weights, k, d, y, classes)
    return vote_margin_ok(task, weights, proba)


def loo_bad_points(metric, task, weights, k, x, y, classes):
    """Training points whose leave-one-out prediction would be ambiguous."""
    d = dists(metric, x, x)
    n = len(x)
    bad = []
    for i in range(n):
        keep = np.arange(n) != i
        row = d[i, keep]
        if not distinct_prefix(row, k + 1):
            bad.append(i)
            continue
        _, proba = manual_predict(task, weights, k, row, y[keep], classes)
        if not vote_margin_ok(task, weights, proba):
            bad.append(i)
    return bad


def self_bad_points(metric, k, x):
    d = dists(metric, x, x)
    n = len(x)
    return [i for i in range(n) if not distinct_prefix(d[i, np.arange(n) != i], k + 1)]


def repair(x, y, draw, bad_points, rng):
    """Redraw the failing training points until none fails (fixed order, so deterministic)."""
    for _ in range(10000):
        bad = bad_points(x, y)
        if not bad:
            return x, y
        for i in bad:
            xi, yi = draw(rng)
            x[i] = xi
            if y is not None:
                y[i] = yi
    raise RuntimeError("could not repair training set")


# ---------------------------------------------------------------------------------------------
# Point generators


def rounded(v, decimals):
    return np.round(np.asarray(v, dtype=np.float64), decimals)


def gen_normal(d, scale=1.0, center=0.0, decimals=6):
    return lambda rng: rounded(center + scale * rng.normal(size=d), decimals)


def gen_uniform(d, lo, hi, decimals=6):
    return lambda rng: rounded(rng.uniform(lo, hi, size=d), decimals)


def gen_intgrid(d, lo, hi, jitter=0.01, decimals=6):
    """Integer-valued coordinates plus a small jitter, so distances stay distinct."""
    return lambda rng: rounded(rng.integers(lo, hi + 1, size=d) + rng.uniform(-jitter, jitter, d),
                               decimals)


def gen_binary_grid(d, half_width=4.0, bits=10):
    """Multiples of 2**-bits in [-half_width, half_width]: all distance arithmetic is exact."""
    step = 2.0 ** -bits
    m = int(half_width / step)
    return lambda rng: rng.integers(-m, m + 1, size=d).astype(np.float64) * step


def gen_cosine(d, decimals=6):
    """Nonzero vectors spread over directions (kept away from the origin)."""
    def draw(rng):
        while True:
            v = rng.normal(size=d)
            if np.linalg.norm(v) > 0.3:
                return rounded(v * rng.uniform(0.5, 3.0), decimals)
    return draw


# Targets / labels as functions of the point (plus noise), so the data has structure.

def reg_target(scale=1.0, decimals=6):
    def f(rng, x):
        t = np.sin(x.sum() / scale) + 0.5 * np.cos(x[0] / scale) + 0.1 * rng.normal()
        return float(np.round(t * 10.0, decimals))
    return f


def clf_target(labels, d, seed, scale=1.0, center=0.0, flip=0.15):
    crng = np.random.default_rng(seed)
    centers = center + crng.normal(size=(len(labels), d)) * scale
    labels = list(labels)

    def f(rng, x):
        j = int(np.argmin(((centers - x) ** 2).sum(axis=1)))
        if rng.uniform() < flip:
            j = int(rng.integers(len(labels)))
        return labels[j]
    return f


def point_and_target(gen, target):
    def draw(rng):
        x = gen(rng)
        return x, target(rng, x)
    return draw


# ---------------------------------------------------------------------------------------------
# Neighbour search cases


def neighbors_case(name, metric, k, n, gen, n_query, seed, self_search=False):
    rng = np.random.default_rng(seed)
    x = np.array([gen(rng) for _ in range(n)])
    if self_search:
        assert k <= n - 1
        x, _ = repair(x, None, lambda r: (gen(r), None),
                      lambda xx, _y: self_bad_points(metric, k, xx), rng)
        q = None
    else:
        assert k <= n
        # The training set must itself be free of exact duplicates for a k = n search.
        x, _ = repair(x, None, lambda r: (gen(r), None), lambda xx, _y: duplicates(xx), rng)
        qs = []
        while len(qs) < n_query:
            c = gen(rng)
            if distinct_prefix(dists(metric, c[None, :], x)[0], k + 1):
                qs.append(c)
        q = np.array(qs)

    nn = NearestNeighbors(n_neighbors=k, algorithm="brute", metric=metric).fit(x)
    dist, ind = nn.kneighbors() if q is None else nn.kneighbors(q)

    # Check against the direct computation: same (unique) order, same distances.
    if q is None:
        d = dists(metric, x, x)
        np.fill_diagonal(d, np.inf)
    else:
        d = dists(metric, q, x)
    want = np.argsort(d, axis=1, kind="stable")[:, :k]
    assert (ind == want).all(), name
    assert np.allclose(dist, np.take_along_axis(d, want, axis=1), rtol=1e-9, atol=1e-12), name

    return {
        "name": name, "metric": metric, "k": k,
        "train": x.tolist(), "query": None if q is None else q.tolist(),
        "indices": ind.tolist(), "distances": dist.tolist(),
    }


def neighbors_cases():
    return [
        neighbors_case("euclidean_d2_k5", "euclidean", 5, 40, gen_normal(2), 10, 101),
        neighbors_case("sqeuclidean_d3_k3", "sqeuclidean", 3, 60, gen_uniform(3, -2, 2), 12, 102),
        neighbors_case("manhattan_d5_k7", "manhattan", 7, 80, gen_normal(5), 10, 103),
        neighbors_case("cosine_d8_k10", "cosine", 10, 100, gen_cosine(8), 10, 104),
        neighbors_case("euclidean_d1_k2", "euclidean", 2, 30, gen_uniform(1, 0, 10), 12, 105),
        neighbors_case("manhattan_d1_k3", "manhattan", 3, 25, gen_normal(1, 5.0), 8, 106),
        neighbors_case("euclidean_d3_k1", "euclidean", 1, 50, gen_normal(3), 12, 107),
        neighbors_case("euclidean_d2_k_all", "euclidean", 25, 25, gen_normal(2), 8, 108),
        neighbors_case("manhattan_d3_k_all", "manhattan", 20, 20, gen_uniform(3, 0, 1), 8, 109),
        neighbors_case("cosine_d2_k7", "cosine", 7, 45, gen_cosine(2), 10, 110),
        neighbors_case("euclidean_scale1e3_d3_k5", "euclidean", 5, 60,
                       gen_normal(3, scale=300.0, center=1000.0, decimals=3), 10, 111),
        neighbors_case("manhattan_intgrid_d2_k5", "manhattan", 5, 50, gen_intgrid(2, 0, 9), 10, 112),
        neighbors_case("self_euclidean_d2_k3", "euclidean", 3, 30, gen_normal(2), 0, 113,
                       self_search=True),
        neighbors_case("self_manhattan_d5_k5", "manhattan", 5, 40, gen_normal(5), 0, 114,
                       self_search=True),
        neighbors_case("self_cosine_d3_k2", "cosine", 2, 30, gen_cosine(3), 0, 115,
                       self_search=True),
        neighbors_case("self_sqeuclidean_d2_k_all", "sqeuclidean", 19, 20, gen_uniform(2, -1, 1),
                       0, 116, self_search=True),
    ]


# ---------------------------------------------------------------------------------------------
# Estimator cases


def estimator_case(name, task, metric, weights, k, n, gen, target, n_query, seed,
                   exact_queries=0, tie_queries=0, tie_larger_nearest=0):
    """exact_queries: that many queries are copies of training points (weights="distance").
    tie_queries: that many queries with an even two-label vote split (uniform, even k), of
    which tie_larger_nearest have the larger tied label on their nearest neighbour."""
    rng = np.random.default_rng(seed)
    draw = point_and_target(gen, target)
    pairs = [draw(rng) for _ in range(n)]
    x = np.array([p[0] for p in pairs])
    y = np.array([p[1] for p in pairs], dtype=np.float64 if task == "regression" else np.int64)
    classes = np.array(target.labels) if task == "classification" else None

    def bad_points(xx, yy):
        # No exact duplicates, and every leave-one-out prediction unambiguous.
        return duplicates(xx) or loo_bad_points(metric, task, weights, k, xx, yy, classes)

    x, y = repair(x, y, draw, bad_points, rng)
    if task == "classification":
        assert set(y.tolist()) == set(classes.tolist()), name

    # Queries.
    qs = []
    if exact_queries:
        assert weights == "distance" and metric != "cosine"
        order = rng.permutation(n)
        for i in order:
            if len(qs) == exact_queries:
                break
            if query_ok(metric, task, weights, k, x[i], x, y, classes):
                qs.append(x[i].copy())
        assert len(qs) == exact_queries, name
    if tie_queries:
        assert task == "classification" and weights == "uniform" and k % 2 == 0
        n_larger = 0
        n_tie = 0
        for _ in range(200000):
            if n_tie == tie_queries:
                break
            c = gen(rng)
            d = dists(metric, c[None, :], x)[0]
            if not distinct_prefix(d, k + 1):
                continue
            idx = np.argsort(d)[:k]
            labs, counts = np.unique(y[idx], return_counts=True)
            if not (len(labs) == 2 and counts[0] == counts[1]):
                continue
            larger_nearest = y[idx[0]] == labs[1]
            need_larger = tie_larger_nearest - n_larger
            if not larger_nearest and tie_queries - n_tie <= need_larger:
                continue
            qs.append(c)
            n_tie += 1
            n_larger += int(larger_nearest)
        assert n_tie == tie_queries and n_larger >= tie_larger_nearest, name
    while len(qs) < n_query:
        c = gen(rng)
        if query_ok(metric, task, weights, k, c, x, y, classes):
            qs.append(c)
    q = np.array(qs)
    q = q[rng.permutation(len(q))]

    make = KNeighborsRegressor if task == "regression" else KNeighborsClassifier

    def model(xx, yy):
        return make(n_neighbors=k, weights=weights, algorithm="brute", metric=metric).fit(xx, yy)

    m = model(x, y)
    pred = m.predict(q)
    proba = m.predict_proba(q) if task == "classification" else None
    if task == "classification":
        assert (m.classes_ == classes).all(), name

    loo = []
    for i in range(n):
        keep = np.arange(n) != i
        loo.append(model(x[keep], y[keep]).predict(x[i : i + 1])[0])
    loo = np.array(loo)

    # Manual numpy computation must agree with scikit-learn.
    dq = dists(metric, q, x)
    for j in range(len(q)):
        mp, mproba = manual_predict(task, weights, k, dq[j], y, classes)
        if task == "regression":
            assert np.isclose(pred[j], mp, rtol=1e-9, atol=1e-12), (name, j)
        else:
            assert pred[j] == mp, (name, j)
            assert np.allclose(proba[j], mproba, rtol=1e-9, atol=1e-12), (name, j)
    dx = dists(metric, x, x)
    for i in range(n):
        keep = np.arange(n) != i
        mp, _ = manual_predict(task, weights, k, dx[i, keep], y[keep], classes)
        if task == "regression":
            assert np.isclose(loo[i], mp, rtol=1e-9, atol=1e-12), (name, "loo", i)
        else:
            assert loo[i] == mp, (name, "loo", i)
    if exact_queries:
        hits = 0
        for j in range(len(q)):
            z = np.nonzero(dq[j] == 0)[0]
            if len(z):
                hits += 1
                assert len(z) == 1
                assert pred[j] == y[z[0]], (name, j)
                if task == "classification":
                    assert proba[j][list(classes).index(y[z[0]])] == 1.0, (name, j)
        assert hits == exact_queries, name
    if tie_queries:
        ties = 0
        for j in range(len(q)):
            idx = np.argsort(dq[j])[:k]
            labs, counts = np.unique(y[idx], return_counts=True)
            if len(labs) == 2 and counts[0] == counts[1]:
                ties += 1
                assert pred[j] == labs[0], (name, j)
        assert ties >= tie_queries, name

    if task == "regression":
        loo_error = float(np.mean((loo - y) ** 2))
    else:
        loo_error = float(np.mean(loo != y))

    case = {
        "name": name, "task": task, "metric": metric, "weights": weights, "k": k,
        "x_train": x.tolist(), "y_train": y.tolist(),
        "x_query": q.tolist(),
        "predict": [float(v) for v in pred] if task == "regression" else [int(v) for v in pred],
    }
    if task == "classification":
        case["classes"] = [int(c) for c in classes]
        case["predict_proba"] = proba.tolist()
    case["loo_predict"] = ([float(v) for v in loo] if task == "regression"
                           else [int(v) for v in loo])
    case["loo_error"] = loo_error
    return case


class Labels:
    """Label function with its label set attached (so every class is known up front)."""

    def __init__(self, labels, d, seed, scale=1.0, center=0.0, flip=0.15):
        self.labels = sorted(labels)
        self.f = clf_target(labels, d, seed, scale, center, flip)

    def __call__(self, rng, x):
        return self.f(rng, x)


def estimator_cases():
    R, C = "regression", "classification"
    return [
        estimator_case("reg_euclidean_uniform_d2_k5", R, "euclidean", "uniform", 5, 50,
                       gen_normal(2), reg_target(), 10, 201),
        estimator_case("reg_euclidean_distance_d3_k7", R, "euclidean", "distance", 7, 80,
                       gen_normal(3), reg_target(), 12, 202),
        estimator_case("reg_manhattan_uniform_d5_k3", R, "manhattan", "uniform", 3, 60,
                       gen_uniform(5, -1, 1), reg_target(), 10, 203),
        estimator_case("reg_manhattan_distance_d1_k4", R, "manhattan", "distance", 4, 30,
                       gen_uniform(1, 0, 6), reg_target(), 10, 204),
        estimator_case("reg_cosine_uniform_d8_k10", R, "cosine", "uniform", 10, 120,
                       gen_cosine(8), reg_target(), 10, 205),
        estimator_case("reg_cosine_distance_d3_k5", R, "cosine", "distance", 5, 40,
                       gen_cosine(3), reg_target(), 10, 206),
        estimator_case("reg_euclidean_uniform_d2_k1", R, "euclidean", "uniform", 1, 25,
                       gen_normal(2), reg_target(), 8, 207),
        estimator_case("reg_euclidean_distance_exact_d2_k3", R, "euclidean", "distance", 3, 40,
                       gen_binary_grid(2), reg_target(), 10, 208, exact_queries=3),
        estimator_case("reg_manhattan_distance_scale1e3_d3_k5", R, "manhattan", "distance", 5, 70,
                       gen_normal(3, scale=250.0, center=1000.0, decimals=3),
                       reg_target(scale=250.0), 10, 209),
        estimator_case("reg_euclidean_uniform_intgrid_d2_k10", R, "euclidean", "uniform", 10, 150,
                       gen_intgrid(2, 0, 12), reg_target(scale=3.0), 10, 210),
        estimator_case("clf_euclidean_uniform_d2_k5", C, "euclidean", "uniform", 5, 60,
                       gen_normal(2), Labels([3, 7, 12], 2, 11), 10, 301),
        estimator_case("clf_manhattan_distance_d3_k7", C, "manhattan", "distance", 7, 80,
                       gen_normal(3), Labels([0, 1, 2, 3], 3, 12), 12, 302),
        estimator_case("clf_cosine_uniform_d5_k3", C, "cosine", "uniform", 3, 50,
                       gen_cosine(5), Labels([1, 2], 5, 13), 10, 303),
        estimator_case("clf_euclidean_uniform_ties_d2_k2", C, "euclidean", "uniform", 2, 40,
                       gen_normal(2), Labels([2, 5, 9], 2, 14, flip=0.3), 12, 304,
                       tie_queries=6, tie_larger_nearest=3),
        estimator_case("clf_manhattan_uniform_ties_d3_k4", C, "manhattan", "uniform", 4, 60,
                       gen_normal(3), Labels([4, 10], 3, 15, flip=0.3), 12, 305,
                       tie_queries=6, tie_larger_nearest=3),
        estimator_case("clf_manhattan_distance_exact_d2_k5", C, "manhattan", "distance", 5, 50,
                       gen_binary_grid(2), Labels([0, 6, 11], 2, 16, scale=3.0), 10, 306,
                       exact_queries=3),
        estimator_case("clf_cosine_uniform_d8_k1", C, "cosine", "uniform", 1, 100,
                       gen_cosine(8), Labels([1, 3, 4, 8], 8, 17), 10, 307),
        estimator_case("clf_euclidean_distance_d1_k10", C, "euclidean", "distance", 10, 40,
                       gen_uniform(1, -3, 3), Labels([1, 3], 1, 18), 10, 308),
        estimator_case("clf_euclidean_distance_scale1e3_d5_k3", C, "euclidean", "distance", 3, 70,
                       gen_normal(5, scale=300.0, center=1000.0, decimals=3),
                       Labels([5, 20, 21], 5, 19, scale=300.0, center=1000.0), 10, 309),
    ]


def main():
    data = {
        "sklearn_version": sklearn.__version__,
        "numpy_version": np.__version__,
        "neighbors": neighbors_cases(),
        "estimators": estimator_cases(),
    }
    text = json.dumps(data, separators=(",", ":"))
    # Round trip: the floats must come back bit for bit.
    assert json.loads(text) == data
    os.makedirs(os.path.dirname(OUT), exist_ok=True)
    with open(OUT, "w") as f:
        f.write(text)
        f.write("\n")
    print(f"wrote {os.path.normpath(OUT)} ({len(text) + 1} bytes): "
          f"{len(data['neighbors'])} neighbor cases, {len(data['estimators'])} estimator cases",
          file=sys.stderr)


if __name__ == "__main__":
    main()
