// Exact k-nearest neighbours: every pair measured by the metric's canonical arithmetic (the same
// as src/knn/metric.rs: coordinates converted to double and combined in coordinate order, each
// operation rounded on its own through the _rn intrinsics, which are never contracted into
// fused multiply-adds), written as rank keys (smallest first) into a tile of distances; and the
// merge of each query's running list with a tile's best.
#include "common.cuh"

#define KNN_TILE 64      // queries and reference points a block measures
#define KNN_DEPTH 16     // coordinates staged in shared memory at a time
#define KNN_THREADS 256  // 16 x 16 threads, each measuring 4 x 4 pairs

// The metrics, numbered as MetricCode in src/knn/gpu/kernels.rs.
#define KNN_SQEUCLIDEAN 0
#define KNN_EUCLIDEAN 1
#define KNN_MANHATTAN 2
#define KNN_COSINE 3
#define KNN_INNER 4

// KERNEL(NAME, T, M) for every metric M (NAME its name) and value type T (NAME suffixed _f32
// for float, _f64 for double).
#define KNN_EACH_METRIC(KERNEL)                         \
    KNN_EACH_TYPE(KERNEL, sqeuclidean, KNN_SQEUCLIDEAN) \
    KNN_EACH_TYPE(KERNEL, euclidean, KNN_EUCLIDEAN)     \
    KNN_EACH_TYPE(KERNEL, manhattan, KNN_MANHATTAN)     \
    KNN_EACH_TYPE(KERNEL, cosine, KNN_COSINE)           \
    KNN_EACH_TYPE(KERNEL, inner_product, KNN_INNER)
#define KNN_EACH_TYPE(KERNEL, NAME, M) \
    KERNEL(NAME##_f32, float, M)       \
    KERNEL(NAME##_f64, double, M)

template <int M>
__device__ __forceinline__ double knn_step(double acc, double a, double b) {
    if (M == KNN_SQEUCLIDEAN || M == KNN_EUCLIDEAN) {
        double t = __dsub_rn(a, b);
        return __dadd_rn(acc, __dmul_rn(t, t));
    } else if (M == KNN_MANHATTAN) {
        return __dadd_rn(acc, fabs(__dsub_rn(a, b)));
    } else {
        // Cosine's coordinates arrive scaled; the inner product's unscaled.
        return __dadd_rn(acc, __dmul_rn(a, b));
    }
}

// The rank key of a finished sum: the distance, or the negated inner product.
template <int M>
__device__ __forceinline__ double knn_key(double acc, double q_norm, double x_norm) {
    if (M == KNN_EUCLIDEAN) return __dsqrt_rn(acc);
    if (M == KNN_INNER) return -acc;
    if (M == KNN_COSINE) {
        if (q_norm == 0.0 || x_norm == 0.0) return 1.0;
        double c = __dsub_rn(1.0, __ddiv_rn(acc, __dmul_rn(__dsqrt_rn(q_norm), __dsqrt_rn(x_norm))));
        return fmin(fmax(c, 0.0), 2.0);
    }
    return acc;
}

// out[i * ld + j] = key(q_i, x_j) for the nq x nx pairs; q and x row-major with d coordinates.
// Cosine multiplies each coordinate by its point's scale on load (q_scale, x_scale) and
// finishes with the scaled squared norms (q_norm, x_norm); the other metrics ignore them.
template <typename T, int M>
__device__ void knn_direct(const T* __restrict__ q, const T* __restrict__ x, u64 nq, u64 nx, u32 d,
                           const double* __restrict__ q_scale, const double* __restrict__ q_norm,
                           const double* __restrict__ x_scale, const double* __restrict__ x_norm,
                           double* __restrict__ out, u64 ld) {
    __shared__ double qs[KNN_DEPTH][KNN_TILE + 1];
    __shared__ double xs[KNN_DEPTH][KNN_TILE + 1];
    const u32 tx = threadIdx.x % 16, ty = threadIdx.x / 16;
    const u64 q0 = (u64)blockIdx.y * KNN_TILE, x0 = (u64)blockIdx.x * KNN_TILE;
    double acc[4][4];
#pragma unroll
    for (int a = 0; a < 4; a++)
#pragma unroll
        for (int b = 0; b < 4; b++) acc[a][b] = 0.0;
    for (u32 c0 = 0; c0 < d; c0 += KNN_DEPTH) {
        // Stage KNN_DEPTH coordinates of the block's 64 queries and 64 points.
        for (u32 e = threadIdx.x; e < KNN_DEPTH * KNN_TILE; e += KNN_THREADS) {
            u32 row = e / KNN_DEPTH, c = e % KNN_DEPTH;
            double qv = 0.0, xv = 0.0;
            if (c0 + c < d) {
                if (q0 + row < nq) {
                    qv = (double)q[(q0 + row) * d + c0 + c];
                    if (M == KNN_COSINE) qv = __dmul_rn(qv, q_scale[q0 + row]);
                }
                if (x0 + row < nx) {
                    xv = (double)x[(x0 + row) * d + c0 + c];
                    if (M == KNN_COSINE) xv = __dmul_rn(xv, x_scale[x0 + row]);
                }
            }
            qs[c][row] = qv;
            xs[c][row] = xv;
        }
        __syncthreads();
        u32 depth = min((u32)KNN_DEPTH, d - c0);
        for (u32 c = 0; c < depth; c++) {
            double qa[4], xb[4];
#pragma unroll
            for (int a = 0; a < 4; a++) qa[a] = qs[c][ty + 16 * a];
#pragma unroll
            for (int b = 0; b < 4; b++) xb[b] = xs[c][tx + 16 * b];
#pragma unroll
            for (int a = 0; a < 4; a++)
#pragma unroll
                for (int b = 0; b < 4; b++) acc[a][b] = knn_step<M>(acc[a][b], qa[a], xb[b]);
        }
        __syncthreads();
    }
#pragma unroll
    for (int a = 0; a < 4; a++) {
        u64 i = q0 + ty + 16 * a;
        if (i >= nq) continue;
        double qn = (M == KNN_COSINE) ? q_norm[i] : 0.0;
#pragma unroll
        for (int b = 0; b < 4; b++) {
            u64 j = x0 + tx + 16 * b;
            if (j >= nx) continue;
            double xn = (M == KNN_COSINE) ? x_norm[j] : 0.0;
            out[i * ld + j] = knn_key<M>(acc[a][b], qn, xn);
        }
    }
}

#define KNN_DIRECT(NAME, T, M)                                                                   \
    extern "C" __global__ void __launch_bounds__(KNN_THREADS)                                    \
        knn_direct_##NAME(const T* q, const T* x, u64 nq, u64 nx, u32 d, const double* q_scale, \
                          const double* q_norm, const double* x_scale, const double* x_norm,    \
                          double* out, u64 ld) {                                                 \
        knn_direct<T, M>(q, x, nq, nx, d, q_scale, q_norm, x_scale, x_norm, out, ld);            \
    }
KNN_EACH_METRIC(KNN_DIRECT)

// The merge rows: row i holds the running list (k keys and indices) followed by a tile's best
// (t keys and indices inside the tile, which starts at reference point `first`).
extern "C" __global__ void knn_merge_rows(const double* __restrict__ run_keys,
                                          const u64* __restrict__ run_index,
                                          const double* __restrict__ tile_keys,
                                          const u64* __restrict__ tile_index, u64 rows, u32 k, u32 t,
                                          u64 first, double* __restrict__ keys,
                                          u64* __restrict__ index) {
    u64 width = (u64)k + t;
    for (u64 e = (u64)blockIdx.x * blockDim.x + threadIdx.x; e < rows * width;
         e += (u64)gridDim.x * blockDim.x) {
        u64 i = e / width, c = e % width;
        if (c < k) {
            keys[e] = run_keys[i * k + c];
            index[e] = run_index[i * k + c];
        } else {
            keys[e] = tile_keys[i * t + (c - k)];
            index[e] = first + tile_index[i * t + (c - k)];
        }
    }
}

// out[i * k + c] = values[i * width + pos[i * k + c]] for keys (double) and indices (u64), with
// `offset` added to the indices.
extern "C" __global__ void knn_gather(const u64* __restrict__ pos, const double* __restrict__ keys,
                                      const u64* __restrict__ index, u64 rows, u32 k, u64 width,
                                      u64 offset, double* __restrict__ out_keys,
                                      u64* __restrict__ out_index) {
    for (u64 e = (u64)blockIdx.x * blockDim.x + threadIdx.x; e < rows * k;
         e += (u64)gridDim.x * blockDim.x) {
        u64 i = e / k, src = i * width + pos[e];
        out_keys[e] = keys[src];
        out_index[e] = offset + (index ? index[src] : pos[e]);
    }
}

// ---------------------------------------------------------------------------------------------
// Screening: approximate keys by one single-precision product, then the exact measure of the
// candidates it leaves.
// ---------------------------------------------------------------------------------------------

// The screening rows, numbered as ScreenRows in src/knn/gpu/screen.rs.
#define KNN_ROWS_POINTS 0   // [x', |x'|^2, 0...]: x' = (x - center) scale
#define KNN_ROWS_QUERIES 1  // [-2 q', 1, 0...]
#define KNN_ROWS_PLAIN 2    // [x scale, 0...] (inner product's points)
#define KNN_ROWS_NEGATED 3  // [-q scale, 0...] (inner product's queries)
#define KNN_ROWS_UNIT 4     // [x / |x|, 0...] (cosine's points; zero stays zero)
#define KNN_ROWS_NEG_UNIT 5 // [-q / |q|, 0...] (cosine's queries)

// The TF32 part of a float: its low 13 mantissa bits cleared, so that TF32 holds it exactly
// (whether the tensor cores round or truncate their inputs).
__device__ __forceinline__ float knn_tf32_part(float f) {
    return __uint_as_float(__float_as_uint(f) & 0xffffe000u);
}

// Writes screening value w of column j of a row of 3 * width floats: its TF32 part hi and the
// remainder lo = w - hi (exact), as [hi | lo | hi] for a point and [hi | hi | lo] for a query.
__device__ __forceinline__ void knn_split_value(float* o, u32 width, u32 j, float w, bool query) {
    float hi = knn_tf32_part(w), lo = w - hi;
    o[j] = hi;
    o[width + j] = query ? hi : lo;
    o[2 * width + j] = query ? lo : hi;
}

// One row of 3 * width floats a point for the screening products, and the norm of the point's
// screening coordinates (|x'| for the Euclidean rows, |x scale| for the plain ones, 1 or 0 for
// unit rows) in norms[i]; the largest norm raised into *largest (as float bits: non-negative
// floats order as their bits), and *overflow set when a coordinate does not fit a float.
// Each screening value v (width of them, zero-padded) is split as v = hi + lo, hi = its TF32
// part, lo = v - hi (exact): points are laid out [hi | lo | hi], queries (modes QUERIES,
// NEGATED, NEG_UNIT) [hi | hi | lo], so that the product of the first `width` columns is the
// single TF32 product hi.hi and that of all 3 width columns is hi.hi + lo.hi + hi.lo, the split
// product accurate to about 2^-20. scale = scale_a * scale_b (two factors, each a normal
// double).
template <typename T>
__device__ void knn_screen_rows(const T* __restrict__ x, u64 n, u32 d, u32 width, u32 mode,
                                const double* __restrict__ center, double scale_a, double scale_b,
                                float* __restrict__ out, float* __restrict__ norms,
                                u32* __restrict__ largest, u32* __restrict__ overflow) {
    const bool query = mode == KNN_ROWS_QUERIES || mode == KNN_ROWS_NEGATED ||
                       mode == KNN_ROWS_NEG_UNIT;
    const bool unit_rows = mode == KNN_ROWS_UNIT || mode == KNN_ROWS_NEG_UNIT;
    const u32 lane = threadIdx.x % WARP_SIZE;
    // A warp a point: coalesced reads of its coordinates and writes of its row.
    for (u64 i = ((u64)blockIdx.x * blockDim.x + threadIdx.x) / WARP_SIZE; i < n;
         i += (u64)gridDim.x * blockDim.x / WARP_SIZE) {
        const T* row = x + i * d;
        float* o = out + i * 3 * (u64)width;
        double unit = 0.0;
        if (unit_rows) {
            double big = 0.0;
            for (u32 j = lane; j < d; j += WARP_SIZE) big = fmax(big, fabs((double)row[j]));
            for (int s = WARP_SIZE / 2; s > 0; s /= 2)
                big = fmax(big, __shfl_xor_sync(FULL_MASK, big, s));
            double inv = big > 0.0 ? 1.0 / big : 0.0;
            double s2 = 0.0;
            for (u32 j = lane; j < d; j += WARP_SIZE) {
                double v = (double)row[j] * inv;
                s2 += v * v;
            }
            for (int s = WARP_SIZE / 2; s > 0; s /= 2) s2 += __shfl_xor_sync(FULL_MASK, s2, s);
            unit = s2 > 0.0 ? inv / sqrt(s2) : 0.0;
        }
        // The squared norm of a Euclidean point follows its coordinates: written once the
        // warp has summed it.
        const u32 norm_column = mode == KNN_ROWS_POINTS ? d : width;
        double norm2 = 0.0;
        bool wide = false;
        for (u32 j = lane; j < width; j += WARP_SIZE) {
            if (j == norm_column) continue;
            float w = 0.0f;
            if (j < d) {
                double v = (double)row[j];
                float f;
                if (unit_rows) {
                    f = (float)(v * unit);
                } else {
                    if (mode == KNN_ROWS_POINTS || mode == KNN_ROWS_QUERIES) v -= center[j];
                    f = (float)((v * scale_a) * scale_b);
                    if (isinf(f)) wide = true;
                    norm2 += (double)f * (double)f;
                }
                w = f;
                if (mode == KNN_ROWS_QUERIES) w = -2.0f * f;
                if (mode == KNN_ROWS_NEGATED || mode == KNN_ROWS_NEG_UNIT) w = -f;
            } else if (j == d && mode == KNN_ROWS_QUERIES) {
                w = 1.0f;
            }
            knn_split_value(o, width, j, w, query);
        }
        for (int s = WARP_SIZE / 2; s > 0; s /= 2) norm2 += __shfl_xor_sync(FULL_MASK, norm2, s);
        wide = __any_sync(FULL_MASK, wide);
        if (unit_rows) norm2 = unit > 0.0 ? 1.0 : 0.0;
        if (lane == 0) {
            if (norm_column < width) knn_split_value(o, width, norm_column, (float)norm2, query);
            float norm = (float)sqrt(norm2);
            // Rounded up, so that the bound holds for the norm itself.
            norm = __uint_as_float(__float_as_uint(norm) + 1u);
            norms[i] = norm;
            if (isinf(norm) || isinf((float)norm2)) wide = true;
            atomicMax(largest, __float_as_uint(norm));
            if (wide) atomicExch(overflow, 1u);
        }
    }
}

#define KNN_SCREEN_ROWS(NAME, T)                                                                \
    extern "C" __global__ void knn_screen_rows_##NAME(                                         \
        const T* x, u64 n, u32 d, u32 width, u32 mode, const double* center, double scale_a,   \
        double scale_b, float* out, float* norms, u32* largest, u32* overflow) {               \
        knn_screen_rows<T>(x, n, d, width, mode, center, scale_a, scale_b, out, norms, largest, \
                           overflow);                                                           \
    }
KNN_SCREEN_ROWS(f32, float)
KNN_SCREEN_ROWS(f64, double)

// Cosine's canonical parts of every point (src/knn/metric.rs: cosine_scale, scaled_norm2): the
// power of two that brings the largest magnitude into [0.5, 1) and the scaled squared norm.
template <typename T>
__device__ void knn_cosine_parts(const T* __restrict__ x, u64 n, u32 d, double* __restrict__ scale,
                                 double* __restrict__ norm) {
    for (u64 i = (u64)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (u64)gridDim.x * blockDim.x) {
        const T* row = x + i * d;
        double big = 0.0;
        for (u32 j = 0; j < d; j++) big = fmax(big, fabs((double)row[j]));
        double s = 1.0;
        if (big > 0.0) {
            u64 bits = (u64)__double_as_longlong(big);
            int biased = (int)((bits >> 52) & 0x7ff);
            int e;
            if (biased == 0) {
                // Subnormal: normalise by 2^54 first.
                u64 b2 = (u64)__double_as_longlong(big * 18014398509481984.0);
                e = (int)((b2 >> 52) & 0x7ff) - 1022 - 54;
            } else {
                e = biased - 1022;
            }
            if (e < -1023) e = -1023;
            if (e > 1022) {
                s = __dmul_rn(__longlong_as_double((i64)(1ull) << 52 /* 2^-1022 */),
                              __longlong_as_double((i64)((u64)(1022 - e + 1023) << 52)));
            } else {
                s = __longlong_as_double((i64)((u64)(-e + 1023) << 52));
            }
        }
        double acc = 0.0;
        for (u32 j = 0; j < d; j++) {
            double v = __dmul_rn((double)row[j], s);
            acc = __dadd_rn(acc, __dmul_rn(v, v));
        }
        scale[i] = s;
        norm[i] = acc;
    }
}

#define KNN_COSINE_PARTS(NAME, T)                                                             \
    extern "C" __global__ void knn_cosine_parts_##NAME(const T* x, u64 n, u32 d, double* scale, \
                                                      double* norm) {                         \
        knn_cosine_parts<T>(x, n, d, scale, norm);                                            \
    }
KNN_COSINE_PARTS(f32, float)
KNN_COSINE_PARTS(f64, double)

#define KNN_MEASURE_WARPS 4     // warps a block of the measure kernel
#define KNN_MEASURE_QUERIES 16  // queries a block of the measure kernel

// The first position of row[0..len) (ascending) whose value is at least key.
__device__ __forceinline__ u32 knn_lower_bound(const u64* __restrict__ row, u32 len, u64 key) {
    u32 lo = 0, hi = len;
    while (lo < hi) {
        u32 mid = lo + (hi - lo) / 2;
        if (row[mid] < key) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

// out[i * kc + c] = the rank key of query i and reference point cand[i * kc + c], each row of
// cand ascending: the same arithmetic as knn_direct.
//
// Block b measures the pairs of queries (b % groups) * 16 .. + 16 whose points lie in the
// chunk (b / groups) * chunk .. + chunk of the reference set: the blocks that run together
// share a few chunks, which stay in L2 while every query's candidates in them are measured,
// instead of each candidate point coming from memory on its own. The block's pairs are packed
// across its queries, and each warp measures 32 of them at a time, one a lane: the points are
// staged in shared memory 32 coordinates at a time, each point's 32 by one coalesced load of
// the whole warp, and each lane then adds its pair's terms from there in coordinate order
// (rows padded to 33 values, so that the lanes read distinct banks).
template <typename T, int M>
__device__ void knn_measure(const T* __restrict__ q, const T* __restrict__ x,
                            const u64* __restrict__ cand, u64 rows, u32 kc, u32 d, u64 chunk,
                            u64 groups, const double* __restrict__ q_scale,
                            const double* __restrict__ q_norm,
                            const double* __restrict__ x_scale,
                            const double* __restrict__ x_norm, double* __restrict__ out) {
    __shared__ T stage[KNN_MEASURE_WARPS][WARP_SIZE][WARP_SIZE + 1];
    __shared__ u32 first[KNN_MEASURE_QUERIES], start[KNN_MEASURE_QUERIES + 1];
    const u32 lane = threadIdx.x % WARP_SIZE, w = threadIdx.x / WARP_SIZE;
    const u64 lowest = (blockIdx.x / groups) * chunk;
    const u64 q0 = (blockIdx.x % groups) * KNN_MEASURE_QUERIES;
    if (threadIdx.x < KNN_MEASURE_QUERIES) {
        const u64 i = q0 + threadIdx.x;
        u32 b = 0, e = 0;
        if (i < rows) {
            const u64* row = cand + i * kc;
            b = knn_lower_bound(row, kc, lowest);
            e = b + knn_lower_bound(row + b, kc - b, lowest + chunk);
        }
        first[threadIdx.x] = b;
        start[threadIdx.x + 1] = e - b;
    }
    __syncthreads();
    if (threadIdx.x == 0) {
        start[0] = 0;
        for (u32 s = 0; s < KNN_MEASURE_QUERIES; s++) start[s + 1] += start[s];
    }
    __syncthreads();
    const u32 total = start[KNN_MEASURE_QUERIES];
    T (*mine)[WARP_SIZE + 1] = stage[w];
    for (u32 base = w * WARP_SIZE; base < total; base += KNN_MEASURE_WARPS * WARP_SIZE) {
        const u32 p = base + lane;
        const bool live = p < total;
        u32 s = 0;
        while (live && start[s + 1] <= p) s++;
        const u64 i = q0 + s;
        const u64 e = live ? i * kc + first[s] + (p - start[s]) : 0;
        const u64 j = live ? cand[e] : 0;
        const u32 pairs = min((u32)WARP_SIZE, total - base);
        const T* qr = q + (live ? i : 0) * d;
        double qs = 1.0, xs = 1.0;
        if (M == KNN_COSINE && live) {
            qs = q_scale[i];
            xs = x_scale[j];
        }
        double acc = 0.0;
        for (u32 c0 = 0; c0 < d; c0 += WARP_SIZE) {
            const u32 c = c0 + lane;
            for (u32 t = 0; t < pairs; t++) {
                const u64 jt = __shfl_sync(FULL_MASK, j, t);
                if (c < d) mine[t][lane] = x[jt * d + c];
            }
            __syncwarp();
            const u32 span = min((u32)WARP_SIZE, d - c0);
            for (u32 cc = 0; cc < span; cc++) {
                double a = (double)qr[c0 + cc], b = (double)mine[lane][cc];
                if (M == KNN_COSINE) {
                    a = __dmul_rn(a, qs);
                    b = __dmul_rn(b, xs);
                }
                acc = knn_step<M>(acc, a, b);
            }
            __syncwarp();
        }
        if (live) {
            double qn = (M == KNN_COSINE) ? q_norm[i] : 0.0;
            double xn = (M == KNN_COSINE) ? x_norm[j] : 0.0;
            out[e] = knn_key<M>(acc, qn, xn);
        }
    }
}

#define KNN_MEASURE(NAME, T, M)                                                                \
    extern "C" __global__ void knn_measure_##NAME(                                             \
        const T* q, const T* x, const u64* cand, u64 rows, u32 kc, u32 d, u64 chunk, u64 groups, \
        const double* q_scale, const double* q_norm, const double* x_scale, const double* x_norm, \
        double* out) {                                                                           \
        knn_measure<T, M>(q, x, cand, rows, kc, d, chunk, groups, q_scale, q_norm, x_scale,     \
                          x_norm, out);                                                          \
    }
KNN_EACH_METRIC(KNN_MEASURE)

// The lists as the caller gets them: values[e] = the canonical value of rank key keys[e] (the
// key, or its negation for a similarity, -0.0 read as 0.0, every NaN the quiet NaN) in T, and
// index32[e] = index[e] when index32 is given (reference sets below 2^32 points).
template <typename T>
__device__ void knn_finish(const double* __restrict__ keys, const u64* __restrict__ index,
                           u64 count, u32 similarity, T* __restrict__ values,
                           u32* __restrict__ index32) {
    for (u64 e = (u64)blockIdx.x * blockDim.x + threadIdx.x; e < count;
         e += (u64)gridDim.x * blockDim.x) {
        double v = keys[e];
        if (similarity) v = __dadd_rn(-v, 0.0);
        T out = (T)v;
        if (v != v) out = from_key<T>(~(typename KeyOf<T>::type)0);
        values[e] = out;
        if (index32) index32[e] = (u32)index[e];
    }
}

#define KNN_FINISH(NAME, T)                                                                  \
    extern "C" __global__ void knn_finish_##NAME(const double* keys, const u64* index,      \
                                                 u64 count, u32 similarity, T* values,      \
                                                 u32* index32) {                            \
        knn_finish<T>(keys, index, count, similarity, values, index32);                      \
    }
KNN_FINISH(f32, float)
KNN_FINISH(f64, double)

// Row r of src (width words) into row rows[r] of dst, for count rows: the lists of a subset of
// the queries put in their places.
extern "C" __global__ void knn_scatter_rows(const u32* __restrict__ src, u32* __restrict__ dst,
                                            const u64* __restrict__ rows, u64 count, u64 width) {
    for (u64 e = (u64)blockIdx.x * blockDim.x + threadIdx.x; e < count * width;
         e += (u64)gridDim.x * blockDim.x) {
        u64 r = e / width, c = e % width;
        dst[rows[r] * width + c] = src[e];
    }
}
