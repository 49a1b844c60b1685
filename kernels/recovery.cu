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

// out[s[j]] = v[s[j]] for the k entries of the support (out zeroed before).
template <typename T>
__device__ void rec_scatter(const T* __restrict__ v, const u64* __restrict__ s, u64 k,
                            T* __restrict__ out) {
    REC_FOR_EACH(j, k) out[s[j]] = v[s[j]];
}

// The block's sum of a value each thread holds, into partial[blockIdx.x].
__device__ __forceinline__ void rec_block_sum(double acc, double* partial) {
    __shared__ double warp_sums[REC_THREADS / WARP_SIZE];
    for (int off = WARP_SIZE / 2; off > 0; off /= 2) acc += __shfl_down_sync(FULL_MASK, acc, off);
    if ((threadIdx.x & (WARP_SIZE - 1)) == 0) warp_sums[threadIdx.x / WARP_SIZE] = acc;
    __syncthreads();
    if (threadIdx.x == 0) {
        double total = 0.0;
        for (int w = 0; w < REC_THREADS / WARP_SIZE; ++w) total += warp_sums[w];
        partial[blockIdx.x] = total;
    }
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
    extern "C" __global__ void rec_scatter_##NAME(const T* v, const u64* s, u64 k, T* out) {     \
        rec_scatter<T>(v, s, k, out);                                                            \
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

// partial[b] = block b's wrapping sum of mix(s[j] + 1): the support's fingerprint, in parts.
extern "C" __global__ void rec_fingerprint(const u64* __restrict__ s, u64 k, u64* __restrict__ partial) {
    __shared__ u64 warp_sums[REC_THREADS / WARP_SIZE];
    u64 acc = 0;
    REC_FOR_EACH(j, k) acc += rec_mix(s[j] + 1);
    for (int off = WARP_SIZE / 2; off > 0; off /= 2) acc += __shfl_down_sync(FULL_MASK, acc, off);
    if ((threadIdx.x & (WARP_SIZE - 1)) == 0) warp_sums[threadIdx.x / WARP_SIZE] = acc;
    __syncthreads();
    if (threadIdx.x == 0) {
        u64 total = 0;
        for (int w = 0; w < REC_THREADS / WARP_SIZE; ++w) total += warp_sums[w];
        partial[blockIdx.x] = total;
    }
}

// *flag = 1 when a[j] != b[j] for some j < k.
extern "C" __global__ void rec_differ(const u64* __restrict__ a, const u64* __restrict__ b, u64 k,
                                      u32* __restrict__ flag) {
    bool differ = false;
    REC_FOR_EACH(j, k) differ |= a[j] != b[j];
    if (differ) atomicExch(flag, 1u);
}

// s[j] = j: the support of every entry.
extern "C" __global__ void rec_iota(u64 n, u64* __restrict__ s) {
    REC_FOR_EACH(j, n) s[j] = j;
}

// The sparse binary operator: d entries of value w in each column. y = A x by rows (CSR:
// row i's columns at cols[start[i] .. start[i + 1]]); x = A^T y by columns (column j's rows
// at rows[j d .. (j + 1) d]). Each sum runs in index order.
template <typename T>
__device__ void rec_sparse_apply(const u64* __restrict__ start, const u64* __restrict__ cols,
                                 const T* __restrict__ x, double w, u64 m, T* __restrict__ y) {
    const T wt = (T)w;
    REC_FOR_EACH(i, m) {
        T acc = 0;
        for (u64 e = start[i]; e < start[i + 1]; ++e) acc += x[cols[e]];
        y[i] = wt * acc;
    }
}

template <typename T>
__device__ void rec_sparse_adjoint(const u64* __restrict__ rows, u32 d, const T* __restrict__ y,
                                   double w, u64 n, T* __restrict__ x) {
    const T wt = (T)w;
    REC_FOR_EACH(j, n) {
        T acc = 0;
        for (u32 e = 0; e < d; ++e) acc += y[rows[j * d + e]];
        x[j] = wt * acc;
    }
}

#define REC_SPARSE(NAME, T)                                                                      \
    extern "C" __global__ void rec_sparse_apply_##NAME(const u64* start, const u64* cols,        \
                                                       const T* x, double w, u64 m, T* y) {      \
        rec_sparse_apply<T>(start, cols, x, w, m, y);                                            \
    }                                                                                            \
    extern "C" __global__ void rec_sparse_adjoint_##NAME(const u64* rows, u32 d, const T* y,     \
                                                         double w, u64 n, T* x) {                \
        rec_sparse_adjoint<T>(rows, d, y, w, n, x);                                              \
    }
REC_SPARSE(f32, float)
REC_SPARSE(f64, double)

// The subsampled DCT by a complex FFT of length n (src/recovery/dct.rs has the same steps on the
// CPU). Complex values are pairs (re, im) of T.

// buf[j] = (x[2j], 0) and buf[n - 1 - j] = (x[2j + 1], 0): the even entries, then the odd ones
// reversed.
template <typename T>
__device__ void rec_dct_pack(const T* __restrict__ x, u64 n, T* __restrict__ buf) {
    REC_FOR_EACH(j, (n + 1) / 2) {
        buf[2 * j] = x[2 * j];
        buf[2 * j + 1] = 0;
        if (2 * j + 1 < n) {
            buf[2 * (n - 1 - j)] = x[2 * j + 1];
            buf[2 * (n - 1 - j) + 1] = 0;
        }
    }
}

// y[i] = Re(turn[k] V[k]) for k = rows[i]: the kept coefficients of the orthonormal DCT-II.
template <typename T>
__device__ void rec_dct_rows(const T* __restrict__ v, const T* __restrict__ turn,
                             const u64* __restrict__ rows, u64 m, T* __restrict__ y) {
    REC_FOR_EACH(i, m) {
        const u64 k = rows[i];
        y[i] = turn[2 * k] * v[2 * k] - turn[2 * k + 1] * v[2 * k + 1];
    }
}

// The measurements y spread into the inverse transform's input (zeroed before): with z the n
// coefficients (y at the rows, zero elsewhere), buf[k] = unturn[k] (z[k] - i z[n - k]) (buf[0]
// = unturn[0] z[0]). First pass (second = 0): the z[k] terms, one row a k; second pass: the
// -i z[n - k] terms added, again one row a k.
template <typename T>
__device__ void rec_dct_spread(const T* __restrict__ y, const T* __restrict__ unturn,
                               const u64* __restrict__ rows, u64 m, u64 n, u32 second,
                               T* __restrict__ buf) {
    REC_FOR_EACH(i, m) {
        const u64 r = rows[i];
        const T z = y[i];
        if (!second) {
            // unturn[r] * (z + 0i)
            buf[2 * r] += unturn[2 * r] * z;
            buf[2 * r + 1] += unturn[2 * r + 1] * z;
        } else if (r > 0) {
            const u64 k = n - r;
            // unturn[k] * (0 - i z) = (unturn.im z, -unturn.re z)
            buf[2 * k] += unturn[2 * k + 1] * z;
            buf[2 * k + 1] -= unturn[2 * k] * z;
        }
    }
}

// x[2j] = Re v[j], x[2j + 1] = Re v[n - 1 - j].
template <typename T>
__device__ void rec_dct_unpack(const T* __restrict__ v, u64 n, T* __restrict__ x) {
    REC_FOR_EACH(j, (n + 1) / 2) {
        x[2 * j] = v[2 * j];
        if (2 * j + 1 < n) x[2 * j + 1] = v[2 * (n - 1 - j)];
    }
}

#define REC_DCT(NAME, T)                                                                         \
    extern "C" __global__ void rec_dct_pack_##NAME(const T* x, u64 n, T* buf) {                  \
        rec_dct_pack<T>(x, n, buf);                                                              \
    }                                                                                            \
    extern "C" __global__ void rec_dct_rows_##NAME(const T* v, const T* turn, const u64* rows,   \
                                                   u64 m, T* y) {                                \
        rec_dct_rows<T>(v, turn, rows, m, y);                                                    \
    }                                                                                            \
    extern "C" __global__ void rec_dct_spread_##NAME(const T* y, const T* unturn,                \
                                                     const u64* rows, u64 m, u64 n, u32 second,  \
                                                     T* buf) {                                   \
        rec_dct_spread<T>(y, unturn, rows, m, n, second, buf);                                   \
    }                                                                                            \
    extern "C" __global__ void rec_dct_unpack_##NAME(const T* v, u64 n, T* x) {                  \
        rec_dct_unpack<T>(v, n, x);                                                              \
    }
REC_DCT(f32, float)
REC_DCT(f64, double)
