// Sparse recovery on the device: the vector steps of the solvers (scaled sums, restriction to
// a support), reductions into per-block partial results (inner products in double, the
// equality and a fingerprint of supports), and the products of the sparse binary
// operator.
#include "common.cuh"

#define REC_THREADS 256

#define REC_FOR_EACH(i, n) \
    for (u64 i = (u64)blockIdx.x * blockDim.x + threadIdx.x; i < (n); i += (u64)gridDim.x * blockDim.x)

// out = a + s b
template <typename T>
__device__ void rec_add_scaled(const T* __restrict__ a, const T* __restrict__ b, double s, u64 n,
                               T* __restrict__ out) {
    const T st = (T)s;
    REC_FOR_EACH(i, n) out[i] = a[i] + st * b[i];
}

// y = y + s b
template <typename T>
__device__ void rec_axpy(const T* __restrict__ b, double s, u64 n, T* __restrict__ y) {
    const T st = (T)s;
    REC_FOR_EACH(i, n) y[i] = y[i] + st * b[i];
}

// y = a + s y
template <typename T>
__device__ void rec_xpay(const T* __restrict__ a, double s, u64 n, T* __restrict__ y) {
    const T st = (T)s;
    REC_FOR_EACH(i, n) y[i] = a[i] + st * y[i];
}

// out = a - b
template <typename T>
__device__ void rec_difference(const T* __restrict__ a, const T* __restrict__ b, u64 n,
                               T* __restrict__ out) {
    REC_FOR_EACH(i, n) out[i] = a[i] - b[i];
}

// The block's sum (wrapping for integers) of a value each thread holds, in a fixed order,
// returned to thread 0.
template <typename V>
__device__ __forceinline__ V rec_block_total(V acc) {
    __shared__ V warp_sums[REC_THREADS / WARP_SIZE];
    for (int off = WARP_SIZE / 2; off > 0; off /= 2) acc += __shfl_down_sync(FULL_MASK, acc, off);
    if ((threadIdx.x & (WARP_SIZE - 1)) == 0) warp_sums[threadIdx.x / WARP_SIZE] = acc;
    __syncthreads();
    V total = 0;
    if (threadIdx.x == 0) {
        for (int w = 0; w < REC_THREADS / WARP_SIZE; ++w) total += warp_sums[w];
    }
    __syncthreads();
    return total;
}

// The block's sum of a value each thread holds, into partial[blockIdx.x].
__device__ __forceinline__ void rec_block_sum(double acc, double* partial) {
    const double total = rec_block_total(acc);
    if (threadIdx.x == 0) partial[blockIdx.x] = total;
}

// partial[b] = block b's share of sum a[i] b[i] (in double); with a support (k entries), of
// the entries it names only.
template <typename T>
__device__ void rec_dot(const T* __restrict__ a, const T* __restrict__ b, const u64* __restrict__ s,
                        u64 count, double* __restrict__ partial) {
    double acc = 0.0;
    REC_FOR_EACH(j, count) {
        const u64 i = s ? s[j] : j;
        acc += (double)a[i] * (double)b[i];
    }
    rec_block_sum(acc, partial);
}

#define REC_VECTOR_OPS(NAME, T)                                                                  \
    extern "C" __global__ void rec_add_scaled_##NAME(const T* a, const T* b, double s, u64 n,    \
                                                     T* out) {                                   \
        rec_add_scaled<T>(a, b, s, n, out);                                                      \
    }                                                                                            \
    extern "C" __global__ void rec_axpy_##NAME(const T* b, double s, u64 n, T* y) {              \
        rec_axpy<T>(b, s, n, y);                                                                 \
    }                                                                                            \
    extern "C" __global__ void rec_xpay_##NAME(const T* a, double s, u64 n, T* y) {              \
        rec_xpay<T>(a, s, n, y);                                                                 \
    }                                                                                            \
    extern "C" __global__ void rec_difference_##NAME(const T* a, const T* b, u64 n, T* out) {    \
        rec_difference<T>(a, b, n, out);                                                         \
    }                                                                                            \
    extern "C" __global__ void rec_dot_##NAME(const T* a, const T* b, const u64* s, u64 count,   \
                                              double* partial) {                                 \
        rec_dot<T>(a, b, s, count, partial);                                                     \
    }
REC_VECTOR_OPS(f32, float)
REC_VECTOR_OPS(f64, double)

// SplitMix64's finaliser (src/recovery/backend.rs: mix).
__device__ __forceinline__ u64 rec_mix(u64 z) {
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

// s[j] = j: the support of every entry.
extern "C" __global__ void rec_iota(u64 n, u64* __restrict__ s) {
    REC_FOR_EACH(j, n) s[j] = j;
}

// The sparse binary operator: d entries of value w in each column. y = A x by rows (CSR:
// row i's columns at cols[start[i] .. start[i + 1]]); x = A^T y by columns (column j's rows
// at rows[j d .. (j + 1) d]). Each sum runs in index order. `count` problems side by side:
// x holds count vectors of n values, y count of m; with `stacked` set, each problem has its
// own operator (count of them one after the other in start, cols and rows).
template <typename T>
__device__ void rec_sparse_apply(const u64* __restrict__ start, const u64* __restrict__ cols,
                                 u64 stacked, const T* __restrict__ x, double w, u64 m, u64 n,
                                 u64 count, T* __restrict__ y) {
    const T wt = (T)w;
    REC_FOR_EACH(t, m * count) {
        const u64 i = t % m, c = t / m;
        const T* xc = x + c * n;
        // Column c's own operator when stacked: m + 1 offsets and n d entries each.
        const u64* s = start + (stacked ? c * (m + 1) : 0);
        const u64* l = cols + (stacked ? c * s[m] : 0);
        T acc = 0;
        for (u64 e = s[i]; e < s[i + 1]; ++e) acc += xc[l[e]];
        y[t] = wt * acc;
    }
}

template <typename T>
__device__ void rec_sparse_adjoint(const u64* __restrict__ rows, u32 d, u64 stacked,
                                   const T* __restrict__ y, double w, u64 m, u64 n, u64 count,
                                   T* __restrict__ x) {
    const T wt = (T)w;
    REC_FOR_EACH(t, n * count) {
        const u64 j = t % n, c = t / n;
        const T* yc = y + c * m;
        // Column c's own operator when stacked: n d entries each.
        const u64* r = rows + (stacked ? c * n * d : 0);
        T acc = 0;
        for (u32 e = 0; e < d; ++e) acc += yc[r[j * d + e]];
        x[t] = wt * acc;
    }
}

#define REC_SPARSE(NAME, T)                                                                      \
    extern "C" __global__ void rec_sparse_apply_##NAME(const u64* start, const u64* cols,        \
                                                       u64 stacked, const T* x, double w, u64 m, \
                                                       u64 n, u64 count, T* y) {                 \
        rec_sparse_apply<T>(start, cols, stacked, x, w, m, n, count, y);                         \
    }                                                                                            \
    extern "C" __global__ void rec_sparse_adjoint_##NAME(const u64* rows, u32 d, u64 stacked,    \
                                                         const T* y, double w, u64 m, u64 n,     \
                                                         u64 count, T* x) {                      \
        rec_sparse_adjoint<T>(rows, d, stacked, y, w, m, n, count, x);                           \
    }
REC_SPARSE(f32, float)
REC_SPARSE(f64, double)

// The subsampled DCT by a real FFT of length n (src/recovery/dct.rs has the same steps on the
// CPU with a complex one). A transform's coefficients are its first h = n / 2 + 1 (the others
// their conjugates), complex values as pairs (re, im) of T. `count` problems side by side: x
// holds count vectors of n values, y count of m, a transform's signals count of n values and its
// coefficients count of h pairs; with `stacked` set, each problem has its own rows (count lists
// of m one after the other).

// The DCT's packed order of count vectors of n entries: packed[j] = x[2j] and packed[n - 1 - j]
// = x[2j + 1], the even entries, then the odd ones reversed. PACK: to = the packed order of
// from; otherwise to = the vector whose packed order is from.
template <typename T, bool PACK>
__device__ void rec_dct_reorder(const T* __restrict__ from, u64 n, u64 count, T* __restrict__ to) {
    const u64 half = (n + 1) / 2;
    REC_FOR_EACH(t, half * count) {
        const u64 c = t / half, j = t % half;
        const T* fc = from + c * n;
        T* tc = to + c * n;
        if (PACK) {
            tc[j] = fc[2 * j];
            if (2 * j + 1 < n) tc[n - 1 - j] = fc[2 * j + 1];
        } else {
            tc[2 * j] = fc[j];
            if (2 * j + 1 < n) tc[2 * j + 1] = fc[n - 1 - j];
        }
    }
}

// y[i] = Re(turn[k] V[k]) for k = rows[i]: the kept coefficients of the orthonormal DCT-II (V[k]
// = conj(V[n - k]) past the coefficients kept).
template <typename T>
__device__ void rec_dct_rows(const T* __restrict__ v, const T* __restrict__ turn,
                             const u64* __restrict__ rows, u64 stacked, u64 m, u64 n, u64 count,
                             T* __restrict__ y) {
    const u64 h = n / 2 + 1;
    REC_FOR_EACH(t, m * count) {
        const u64 c = t / m, i = t % m;
        const u64 k = rows[(stacked ? c * m : 0) + i];
        const T* vc = v + c * 2 * h;
        const bool kept = k < h;
        const u64 at = kept ? k : n - k;
        const T re = vc[2 * at], im = kept ? vc[2 * at + 1] : -vc[2 * at + 1];
        y[t] = turn[2 * k] * re - turn[2 * k + 1] * im;
    }
}

// The measurements y spread into the inverse transform's coefficients (zeroed before): with z
// the n coefficients (y at the rows, zero elsewhere), buf[k] = unturn[k] (z[k] - i z[n - k])
// for k < h (buf[0] = unturn[0] z[0]). First pass (second = 0): the z[k] terms, one row a k;
// second pass: the -i z[n - k] terms added, again one row a k.
template <typename T>
__device__ void rec_dct_spread(const T* __restrict__ y, const T* __restrict__ unturn,
                               const u64* __restrict__ rows, u64 stacked, u64 m, u64 n,
                               u64 count, u32 second, T* __restrict__ buf) {
    const u64 h = n / 2 + 1;
    REC_FOR_EACH(t, m * count) {
        const u64 c = t / m, i = t % m;
        const u64 r = rows[(stacked ? c * m : 0) + i];
        const T z = y[t];
        T* bc = buf + c * 2 * h;
        if (!second) {
            if (r < h) {
                // unturn[r] * (z + 0i)
                bc[2 * r] += unturn[2 * r] * z;
                bc[2 * r + 1] += unturn[2 * r + 1] * z;
            }
        } else if (r > 0 && n - r < h) {
            const u64 k = n - r;
            // unturn[k] * (0 - i z) = (unturn.im z, -unturn.re z)
            bc[2 * k] += unturn[2 * k + 1] * z;
            bc[2 * k + 1] -= unturn[2 * k] * z;
        }
    }
}

#define REC_DCT(NAME, T)                                                                         \
    extern "C" __global__ void rec_dct_pack_##NAME(const T* x, u64 n, u64 count, T* buf) {       \
        rec_dct_reorder<T, true>(x, n, count, buf);                                              \
    }                                                                                            \
    extern "C" __global__ void rec_dct_rows_##NAME(const T* v, const T* turn, const u64* rows,   \
                                                   u64 stacked, u64 m, u64 n, u64 count, T* y) { \
        rec_dct_rows<T>(v, turn, rows, stacked, m, n, count, y);                                 \
    }                                                                                            \
    extern "C" __global__ void rec_dct_spread_##NAME(const T* y, const T* unturn,                \
                                                     const u64* rows, u64 stacked, u64 m, u64 n, \
                                                     u64 count, u32 second, T* buf) {            \
        rec_dct_spread<T>(y, unturn, rows, stacked, m, n, count, second, buf);                   \
    }                                                                                            \
    extern "C" __global__ void rec_dct_unpack_##NAME(const T* v, u64 n, u64 count, T* x) {       \
        rec_dct_reorder<T, false>(v, n, count, x);                                               \
    }
REC_DCT(f32, float)
REC_DCT(f64, double)

// Batches: `count` problems side by side, each problem's vector contiguous (a column-major
// matrix of one column a problem), each problem's support `k` indices inside its column.
// Per-column scalars are doubles (a fingerprint's 64 bits stored in one), so that the host
// reads every scalar of a step in one copy.

// v = x + mu[c] g, column c of n entries scaled by its own step.
template <typename T>
__device__ void rec_cols_step(const T* __restrict__ x, const T* __restrict__ g,
                              const double* __restrict__ mu, u64 n, u64 total, T* __restrict__ v) {
    REC_FOR_EACH(i, total) {
        const T st = (T)mu[i / n];
        v[i] = x[i] + st * g[i];
    }
}

// out[c n + s] = v[c n + s] for the k indices s of each column's support (out zeroed before).
template <typename T>
__device__ void rec_cols_restrict(const T* __restrict__ v, const u64* __restrict__ s, u64 k, u64 n,
                                  u64 total, T* __restrict__ out) {
    REC_FOR_EACH(j, total) {
        const u64 i = (j / k) * n + s[j];
        out[i] = v[i];
    }
}

// r = r - s_c a_c: with s_c = 1 and a = ad where the column's support moved (ad holds the
// moved columns only, column place[c]), s_c = mu[c] and a = ag where it held.
template <typename T>
__device__ void rec_cols_residual(const T* __restrict__ ag, const T* __restrict__ ad,
                                  const double* __restrict__ mu, const u64* __restrict__ place,
                                  u64 m, u64 total, T* __restrict__ r) {
    REC_FOR_EACH(i, total) {
        const u64 c = i / m;
        const u64 p = place[c];
        if (p != ~0ull) {
            r[i] = r[i] + (T)(-1.0) * ad[p * m + i % m];
        } else {
            r[i] = r[i] + (T)(-mu[c]) * ag[i];
        }
    }
}

// r = y - ax in the columns marked.
template <typename T>
__device__ void rec_cols_refresh(const T* __restrict__ y, const T* __restrict__ ax,
                                 const u32* __restrict__ marked, u64 m, u64 total,
                                 T* __restrict__ r) {
    REC_FOR_EACH(i, total) {
        if (marked[i / m]) r[i] = y[i] - ax[i];
    }
}

// Part p of the sum of squares (in double) of column c of a (len values a column), shared by
// `parts` blocks (each takes every parts-th stretch of blockDim.x entries); to thread 0.
template <typename T>
__device__ double rec_column_sumsq(const T* __restrict__ a, u64 len, u64 c, u64 p, u64 parts) {
    const T* col = a + c * len;
    double acc = 0.0;
    for (u64 i = p * blockDim.x + threadIdx.x; i < len; i += parts * blockDim.x)
        acc += (double)col[i] * (double)col[i];
    return rec_block_total(acc);
}

// partial[b] = part p of |a_c|^2 for block b = c parts + p (with one part, |a_c|^2 itself).
template <typename T>
__device__ void rec_cols_partial_sumsq(const T* __restrict__ a, u64 len, u32 parts,
                                       double* __restrict__ partial) {
    const double total = rec_column_sumsq(a, len, blockIdx.x / parts, blockIdx.x % parts, parts);
    if (threadIdx.x == 0) partial[blockIdx.x] = total;
}

// The sum of column c's `parts` partial sums (parts a column, one after the other), one block
// a column: thread t adds parts t, t + blockDim.x, ... in order, then the block's fixed-order
// total; to thread 0.
__device__ __forceinline__ double rec_parts_total(const double* __restrict__ partial, u32 parts,
                                                  u64 c) {
    double acc = 0.0;
    for (u32 p = threadIdx.x; p < parts; p += blockDim.x) acc += partial[c * parts + p];
    return rec_block_total(acc);
}

// sums[c] = the sum of column c's `parts` partial sums, one block a column.
extern "C" __global__ void rec_cols_sum_parts(const double* __restrict__ partial, u32 parts,
                                              double* __restrict__ sums) {
    const double total = rec_parts_total(partial, parts, blockIdx.x);
    if (threadIdx.x == 0) sums[blockIdx.x] = total;
}

// NIHT's step of each column from the partial sums of |g_S|^2 and |A g_S|^2: their quotient,
// 1 when the latter is 0; one block a column.
extern "C" __global__ void rec_cols_step_parts(const double* __restrict__ gg, u32 g_parts,
                                               const double* __restrict__ agg, u32 a_parts,
                                               double* __restrict__ mu) {
    const double num = rec_parts_total(gg, g_parts, blockIdx.x);
    const double den = rec_parts_total(agg, a_parts, blockIdx.x);
    if (threadIdx.x == 0) mu[blockIdx.x] = den > 0.0 ? num / den : 1.0;
}

// NIHT's step of each column: mu[c] = |g_S|^2 / |A g_S|^2 (1 when the latter is 0), one block
// a column.
template <typename T>
__device__ void rec_cols_step_size(const T* __restrict__ gs, u64 n, const T* __restrict__ ags,
                                   u64 m, double* __restrict__ mu) {
    const double gg = rec_column_sumsq(gs, n, blockIdx.x, 0, 1);
    const double agg = rec_column_sumsq(ags, m, blockIdx.x, 0, 1);
    if (threadIdx.x == 0) mu[blockIdx.x] = agg > 0.0 ? gg / agg : 1.0;
}

// a = 0 in the columns listed (of len values each; total = len times the columns listed).
template <typename T>
__device__ void rec_cols_clear(const u64* __restrict__ cols, u64 len, u64 total,
                               T* __restrict__ a) {
    REC_FOR_EACH(i, total) a[cols[i / len] * len + i % len] = 0;
}

// dst column j = src column cols[j] (len values a column; total = len times the columns).
template <typename T>
__device__ void rec_cols_gather(const T* __restrict__ src, const u64* __restrict__ cols, u64 len,
                                u64 total, T* __restrict__ dst) {
    REC_FOR_EACH(i, total) dst[i] = src[cols[i / len] * len + i % len];
}

// dst column cols[j] = src column j.
template <typename T>
__device__ void rec_cols_scatter(const T* __restrict__ src, const u64* __restrict__ cols, u64 len,
                                 u64 total, T* __restrict__ dst) {
    REC_FOR_EACH(i, total) dst[cols[i / len] * len + i % len] = src[i];
}

// out column j = a column cols[j] - b column cols[j].
template <typename T>
__device__ void rec_cols_gather_difference(const T* __restrict__ a, const T* __restrict__ b,
                                           const u64* __restrict__ cols, u64 len, u64 total,
                                           T* __restrict__ out) {
    REC_FOR_EACH(i, total) {
        const u64 at = cols[i / len] * len + i % len;
        out[i] = a[at] - b[at];
    }
}

// differ[j / k] = 1 where a[j] != b[j] (differ zeroed before).
extern "C" __global__ void rec_cols_differ(const u64* __restrict__ a, const u64* __restrict__ b,
                                           u64 k, u64 total, double* __restrict__ differ) {
    REC_FOR_EACH(j, total) {
        if (a[j] != b[j]) differ[j / k] = 1.0;
    }
}

// prints[c] += the wrapping sum of mix(s + 1) over part p of column c's k indices (its 64 bits
// held in a double; zeroed before, unless one part takes the column and writes it), block
// b = c parts + p taking every parts-th stretch of blockDim.x indices. Integer sums, so the
// parts' order does not matter.
extern "C" __global__ void rec_cols_fingerprint(const u64* __restrict__ s, u64 k, u32 parts,
                                                double* __restrict__ prints) {
    const u64 c = blockIdx.x / parts, p = blockIdx.x % parts;
    const u64* col = s + c * k;
    u64 acc = 0;
    for (u64 j = p * blockDim.x + threadIdx.x; j < k; j += (u64)parts * blockDim.x)
        acc += rec_mix(col[j] + 1);
    const u64 total = rec_block_total(acc);
    if (threadIdx.x == 0 && parts == 1) prints[c] = __longlong_as_double((long long)total);
    else if (threadIdx.x == 0)
        atomicAdd(reinterpret_cast<unsigned long long*>(prints + c), (unsigned long long)total);
}

// Supports (k indices a column) gathered and scattered by column.
extern "C" __global__ void rec_cols_gather_index(const u64* src, const u64* cols, u64 len,
                                                 u64 total, u64* dst) {
    rec_cols_gather<u64>(src, cols, len, total, dst);
}
extern "C" __global__ void rec_cols_scatter_index(const u64* src, const u64* cols, u64 len,
                                                  u64 total, u64* dst) {
    rec_cols_scatter<u64>(src, cols, len, total, dst);
}

#define REC_COLS(NAME, T)                                                                        \
    extern "C" __global__ void rec_cols_step_##NAME(const T* x, const T* g, const double* mu,    \
                                                    u64 n, u64 total, T* v) {                    \
        rec_cols_step<T>(x, g, mu, n, total, v);                                                 \
    }                                                                                            \
    extern "C" __global__ void rec_cols_restrict_##NAME(const T* v, const u64* s, u64 k, u64 n,  \
                                                        u64 total, T* out) {                     \
        rec_cols_restrict<T>(v, s, k, n, total, out);                                            \
    }                                                                                            \
    extern "C" __global__ void rec_cols_residual_##NAME(const T* ag, const T* ad,                \
                                                        const double* mu, const u64* place,      \
                                                        u64 m, u64 total, T* r) {                \
        rec_cols_residual<T>(ag, ad, mu, place, m, total, r);                                    \
    }                                                                                            \
    extern "C" __global__ void rec_cols_refresh_##NAME(const T* y, const T* ax,                  \
                                                       const u32* marked, u64 m, u64 total,      \
                                                       T* r) {                                   \
        rec_cols_refresh<T>(y, ax, marked, m, total, r);                                         \
    }                                                                                            \
    extern "C" __global__ void rec_cols_partial_sumsq_##NAME(const T* a, u64 len, u32 parts,     \
                                                             double* partial) {                  \
        rec_cols_partial_sumsq<T>(a, len, parts, partial);                                       \
    }                                                                                            \
    extern "C" __global__ void rec_cols_step_size_##NAME(const T* gs, u64 n, const T* ags,      \
                                                         u64 m, double* mu) {                    \
        rec_cols_step_size<T>(gs, n, ags, m, mu);                                                \
    }                                                                                            \
    extern "C" __global__ void rec_cols_clear_##NAME(const u64* cols, u64 len, u64 total,        \
                                                     T* a) {                                     \
        rec_cols_clear<T>(cols, len, total, a);                                                  \
    }                                                                                            \
    extern "C" __global__ void rec_cols_gather_##NAME(const T* src, const u64* cols, u64 len,    \
                                                      u64 total, T* dst) {                       \
        rec_cols_gather<T>(src, cols, len, total, dst);                                          \
    }                                                                                            \
    extern "C" __global__ void rec_cols_scatter_##NAME(const T* src, const u64* cols, u64 len,   \
                                                       u64 total, T* dst) {                      \
        rec_cols_scatter<T>(src, cols, len, total, dst);                                         \
    }                                                                                            \
    extern "C" __global__ void rec_cols_gather_difference_##NAME(                                \
        const T* a, const T* b, const u64* cols, u64 len, u64 total, T* out) {                   \
        rec_cols_gather_difference<T>(a, b, cols, len, total, out);                              \
    }
REC_COLS(f32, float)
REC_COLS(f64, double)

// The largest support rec_cols_changes stages in shared memory.
#define REC_STAGED_SUPPORT 2048

// The change of each column's support from S to T (k ascending indices each), one block a
// column: the indices of T not in S, then those of S not in T (bit 63 set), each in ascending
// order, into list[c * 2k ...]; lengths[c] their count (a double, exact).
__device__ __forceinline__ bool rec_holds(const u64* __restrict__ a, u64 k, u64 v) {
    u64 lo = 0, hi = k;
    while (lo < hi) {
        const u64 mid = (lo + hi) / 2;
        if (a[mid] < v) lo = mid + 1; else hi = mid;
    }
    return lo < k && a[lo] == v;
}

extern "C" __global__ void rec_cols_changes(const u64* __restrict__ S, const u64* __restrict__ T,
                                            u64 k, u64* __restrict__ list,
                                            double* __restrict__ lengths) {
    const u64 c = blockIdx.x;
    const u64* s = S + c * k;
    const u64* t = T + c * k;
    u64* out = list + c * 2 * k;
    __shared__ u32 warp_counts[REC_THREADS / WARP_SIZE];
    __shared__ u64 base;
    if (threadIdx.x == 0) base = 0;
    __syncthreads();
    // The other support, searched by every thread, staged in shared memory when it fits.
    __shared__ u64 staged[REC_STAGED_SUPPORT];
    const int lane = threadIdx.x & (WARP_SIZE - 1), warp = threadIdx.x / WARP_SIZE;
    for (int pass = 0; pass < 2; ++pass) {
        const u64* from = pass ? s : t;
        const u64* other = pass ? t : s;
        if (k <= REC_STAGED_SUPPORT) {
            for (u64 j = threadIdx.x; j < k; j += blockDim.x) staged[j] = other[j];
            __syncthreads();
            other = staged;
        }
        for (u64 start = 0; start < k; start += blockDim.x) {
            const u64 j = start + threadIdx.x;
            bool keep = false;
            u64 v = 0;
            if (j < k) {
                v = from[j];
                keep = !rec_holds(other, k, v);
            }
            const unsigned ballot = __ballot_sync(FULL_MASK, keep);
            if (lane == 0) warp_counts[warp] = __popc(ballot);
            __syncthreads();
            u64 place = base;
            for (int w = 0; w < warp; ++w) place += warp_counts[w];
            place += __popc(ballot & ((1u << lane) - 1u));
            if (keep) out[place] = v | (pass ? (1ull << 63) : 0ull);
            __syncthreads();
            if (threadIdx.x == 0) {
                u64 total = 0;
                for (int w = 0; w < REC_THREADS / WARP_SIZE; ++w) total += warp_counts[w];
                base += total;
            }
            __syncthreads();
        }
        __syncthreads();
    }
    if (threadIdx.x == 0) lengths[c] = (double)base;
}

// Products of a dense A (column-major m x n) with vectors that have few nonzeros, listed: column
// c's list holds lengths[c] indices (at most stride; bit 63 set: the entry counts negated), and
// the product sums A[:, j] v_c[j] over them. The list is cut into `chunks` stretches of
// `per_chunk` entries; thread (q, c, i) sums stretch q of column c's list for row i, in order,
// into partial[q][c m + i] (coalesced: a column of A is contiguous). Column c's matrix starts at
// a + c a_stride (0: one A for every column; m n: a stack of matrices, one a column).
template <typename T>
__device__ void rec_dense_columns(const T* __restrict__ a, u64 a_stride, u64 m, u64 n,
                                  const u64* __restrict__ list, const double* __restrict__ lengths,
                                  u64 stride, u64 per_chunk, const T* __restrict__ v, u64 total,
                                  u64 chunks, T* __restrict__ partial) {
    REC_FOR_EACH(t, total * chunks) {
        const u64 q = t / total, s = t % total;
        const u64 c = s / m, i = s % m;
        const u64* l = list + c * stride;
        const u64 len = (u64)lengths[c];
        const u64 begin = q * per_chunk;
        const u64 end = begin + per_chunk < len ? begin + per_chunk : len;
        const T* vc = v + c * n;
        const T* ac = a + c * a_stride;
        T acc = 0;
        for (u64 e = begin; e < end; ++e) {
            const u64 word = l[e];
            const u64 j = word & ~(1ull << 63);
            const T term = ac[j * m + i] * vc[j];
            acc += (word >> 63) ? -term : term;
        }
        partial[t] = acc;
    }
}

// out[c m + i] = the stretches' sums in order, plus mu[c] base[c m + i] when SCALED.
template <typename T, bool SCALED>
__device__ void rec_dense_columns_sum(const T* __restrict__ partial, u64 chunks, u64 m,
                                      const double* __restrict__ mu, const T* __restrict__ base,
                                      u64 total, T* __restrict__ out) {
    REC_FOR_EACH(s, total) {
        T acc = SCALED ? (T)mu[s / m] * base[s] : (T)0;
        for (u64 q = 0; q < chunks; ++q) acc += partial[q * total + s];
        out[s] = acc;
    }
}

// A row-major block of `rows` rows of n values (rows first .. first + rows of A) written into
// A column-major m x n.
template <typename T>
__device__ void rec_dense_transpose(const T* __restrict__ block, u64 rows, u64 first, u64 m,
                                    u64 n, T* __restrict__ a) {
    REC_FOR_EACH(t, rows * n) {
        const u64 i = t / n, j = t % n;
        a[j * m + first + i] = block[t];
    }
}

#define REC_DENSE_COLUMNS(NAME, T)                                                               \
    extern "C" __global__ void rec_dense_columns_##NAME(                                         \
        const T* a, u64 a_stride, u64 m, u64 n, const u64* list, const double* lengths,          \
        u64 stride, u64 per_chunk, const T* v, u64 total, u64 chunks, T* partial) {              \
        rec_dense_columns<T>(a, a_stride, m, n, list, lengths, stride, per_chunk, v, total,      \
                             chunks, partial);                                                   \
    }                                                                                            \
    extern "C" __global__ void rec_dense_columns_sum_##NAME(                                     \
        const T* partial, u64 chunks, u64 m, const double* mu, const T* base, u64 total,         \
        T* out) {                                                                                \
        rec_dense_columns_sum<T, false>(partial, chunks, m, mu, base, total, out);               \
    }                                                                                            \
    extern "C" __global__ void rec_dense_columns_scaled_sum_##NAME(                              \
        const T* partial, u64 chunks, u64 m, const double* mu, const T* base, u64 total,         \
        T* out) {                                                                                \
        rec_dense_columns_sum<T, true>(partial, chunks, m, mu, base, total, out);                \
    }                                                                                            \
    extern "C" __global__ void rec_dense_transpose_##NAME(const T* block, u64 rows, u64 first,   \
                                                          u64 m, u64 n, T* a) {                  \
        rec_dense_transpose<T>(block, rows, first, m, n, a);                                     \
    }
REC_DENSE_COLUMNS(f32, float)
REC_DENSE_COLUMNS(f64, double)
