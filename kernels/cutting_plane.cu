// Beliakov's cutting-plane selection: the check loss f(y) = sum rho_tau(t(x_i) - t(y)) and its
// one-sided slopes come from one fused pass over the data (counts below and at y, sums of the
// transformed values on each side); the exact answer is then selected among the values copied
// from the final bracket. Kernels: the finite range and non-finite counts, the fused
// objective pass (per-block partials), their fixed-order combination, and the bracket copy.
//
// Every value is compared as a double ((double)x is exact for 32-bit types and rounds to
// nearest, monotonically, for 64-bit integers), so a count describes a prefix of the key order.
#include "common.cuh"

#define CP_BLOCK 256
#define CP_WARPS (CP_BLOCK / WARP_SIZE)
// Words of one block's partial result: lt, le, sum below (bits), sum above (bits).
#define CP_WORDS 4

template <typename T> __device__ __forceinline__ double cp_f64(T x) { return (double)x; }

// Whether a double is finite (no exponent of all ones): NaN and +-inf are not.
__device__ __forceinline__ bool cp_finite(double v) {
    return ((u64)__double_as_longlong(v) & 0x7ff0000000000000ull) != 0x7ff0000000000000ull;
}

// The key of a finite value widened to 64 bits (keys of one type are compared only together).
template <typename T> __device__ __forceinline__ u64 cp_key64(T x) { return (u64)to_key(x); }

// The value in the objective's frame: the monotone transform (mode 0: identity, mode 1:
// sign(v) * log(1 + |v|), bounded by 710 for every double), centred and scaled to [-1, 1].
__device__ __forceinline__ double cp_frame(double v, u32 mode, double center, double scale) {
    const double t = mode ? copysign(log1p(fabs(v)), v) : v;
    return (t - center) * scale;
}

// out[0] += -inf values, out[1] += +inf values, out[2] += NaNs, out[3] = min(out[3], smallest
// key of a finite value), out[4] = max(out[4], largest such key). The caller initialises out to
// {0, 0, 0, ~0, 0}.
template <typename T>
__device__ void cp_stats_impl(const T* __restrict__ x, u64 n, u64* out) {
    const int V = Vec16<T>::N;
    u32 neg = 0, pos = 0, nans = 0;
    u64 lo = ~0ull, hi = 0;
    for_each_trip(x, n, [&](T (&v)[V], bool (&valid)[V]) {
#pragma unroll
        for (int j = 0; j < V; ++j) {
            if (!valid[j]) continue;
            const double d = cp_f64(v[j]);
            if (cp_finite(d)) {
                const u64 key = cp_key64(v[j]);
                lo = key < lo ? key : lo;
                hi = key > hi ? key : hi;
            } else if (d != d) {
                ++nans;
            } else if (d < 0.0) {
                ++neg;
            } else {
                ++pos;
            }
        }
    });
    for (int off = WARP_SIZE / 2; off > 0; off /= 2) {
        neg += __shfl_down_sync(FULL_MASK, neg, off);
        pos += __shfl_down_sync(FULL_MASK, pos, off);
        nans += __shfl_down_sync(FULL_MASK, nans, off);
        const u64 olo = __shfl_down_sync(FULL_MASK, lo, off);
        const u64 ohi = __shfl_down_sync(FULL_MASK, hi, off);
        lo = olo < lo ? olo : lo;
        hi = ohi > hi ? ohi : hi;
    }
    if ((threadIdx.x & 31) == 0) {
        if (neg) atomicAdd(&out[0], (u64)neg);
        if (pos) atomicAdd(&out[1], (u64)pos);
        if (nans) atomicAdd(&out[2], (u64)nans);
        if (lo != ~0ull) atomicMin(&out[3], lo);
        if (hi != 0) atomicMax(&out[4], hi);
    }
}

// Sums a thread's four accumulators over the block in a fixed order; thread 0 gets the totals.
__device__ __forceinline__ void cp_block_sum(u64& lt, u64& le, double& below, double& above) {
    __shared__ u64 s_lt[CP_WARPS], s_le[CP_WARPS];
    __shared__ double s_below[CP_WARPS], s_above[CP_WARPS];
    for (int off = WARP_SIZE / 2; off > 0; off /= 2) {
        lt += __shfl_down_sync(FULL_MASK, lt, off);
        le += __shfl_down_sync(FULL_MASK, le, off);
        below += __shfl_down_sync(FULL_MASK, below, off);
        above += __shfl_down_sync(FULL_MASK, above, off);
    }
    const u32 warp = threadIdx.x / WARP_SIZE;
    if ((threadIdx.x & 31) == 0) {
        s_lt[warp] = lt;
        s_le[warp] = le;
        s_below[warp] = below;
        s_above[warp] = above;
    }
    __syncthreads();
    if (threadIdx.x == 0) {
        lt = 0;
        le = 0;
        below = 0.0;
        above = 0.0;
        for (int w = 0; w < CP_WARPS; ++w) {
            lt += s_lt[w];
            le += s_le[w];
            below += s_below[w];
            above += s_above[w];
        }
    }
}

// One evaluation at y over the finite values: partial[4 b + 0] = #(x < y), [4 b + 1] =
// #(x <= y), [4 b + 2] = sum of frame(x) over x < y, [4 b + 3] = sum of frame(x) over x > y
// (doubles as their bits), one row per block b. Launched with CP_BLOCK threads a block.
template <typename T>
__device__ void cp_reduce_impl(const T* __restrict__ x, u64 n, double y, u32 mode, double center,
                               double scale, u64* __restrict__ partial) {
    const int V = Vec16<T>::N;
    u64 lt = 0, le = 0;
    double below = 0.0, above = 0.0;
    for_each_trip(x, n, [&](T (&v)[V], bool (&valid)[V]) {
#pragma unroll
        for (int j = 0; j < V; ++j) {
            const double d = cp_f64(v[j]);
            const bool in = valid[j] && cp_finite(d);
            const double f = in ? cp_frame(d, mode, center, scale) : 0.0;
            const bool lower = in && d < y;
            const bool upper = in && d > y;
            lt += lower ? 1u : 0u;
            le += (in && d <= y) ? 1u : 0u;
            below += lower ? f : 0.0;
            above += upper ? f : 0.0;
        }
    });
    cp_block_sum(lt, le, below, above);
    if (threadIdx.x == 0) {
        u64* row = partial + (u64)blockIdx.x * CP_WORDS;
        row[0] = lt;
        row[1] = le;
        row[2] = (u64)__double_as_longlong(below);
        row[3] = (u64)__double_as_longlong(above);
    }
}

// Sums `blocks` rows of partials into out[0..4) in a fixed order (deterministic). One block of
// CP_BLOCK threads.
extern "C" __global__ void __launch_bounds__(CP_BLOCK)
    cp_combine(const u64* __restrict__ partial, u64 blocks, u64* __restrict__ out) {
    u64 lt = 0, le = 0;
    double below = 0.0, above = 0.0;
    for (u64 b = threadIdx.x; b < blocks; b += blockDim.x) {
        const u64* row = partial + b * CP_WORDS;
        lt += row[0];
        le += row[1];
        below += __longlong_as_double((i64)row[2]);
        above += __longlong_as_double((i64)row[3]);
    }
    cp_block_sum(lt, le, below, above);
    if (threadIdx.x == 0) {
        out[0] = lt;
        out[1] = le;
        out[2] = (u64)__double_as_longlong(below);
        out[3] = (u64)__double_as_longlong(above);
    }
}

// Copies the elements whose double lies strictly between lo and hi to out (while positions
// stay below cap; *count counts them all). NaN and +-inf never qualify when lo and hi are
// finite or infinite bounds of finite ranges, as all comparisons with them are false or fail.
template <typename T>
__device__ void cp_copy_impl(const T* __restrict__ x, u64 n, double lo, double hi,
                             T* __restrict__ out, u64 cap, u64* count) {
    const int V = Vec16<T>::N;
    __shared__ u32 warp_offset[CP_WARPS];
    __shared__ u64 block_base;
    for_each_trip(x, n, [&](T (&v)[V], bool (&valid)[V]) {
        bool m[V];
#pragma unroll
        for (int j = 0; j < V; ++j) {
            const double d = cp_f64(v[j]);
            m[j] = valid[j] && lo < d && d < hi;
        }
        block_append<CP_WARPS>(out, cap, count, v, m, warp_offset, &block_base);
    });
}

#define CUTTING_PLANE_KERNELS(NAME, T)                                                           \
    extern "C" __global__ void __launch_bounds__(CP_BLOCK)                                       \
        cp_stats_##NAME(const T* x, u64 n, u64* out) {                                           \
        cp_stats_impl<T>(x, n, out);                                                             \
    }                                                                                            \
    extern "C" __global__ void __launch_bounds__(CP_BLOCK)                                       \
        cp_reduce_##NAME(const T* x, u64 n, double y, u32 mode, double center, double scale,     \
                         u64* partial) {                                                         \
        cp_reduce_impl<T>(x, n, y, mode, center, scale, partial);                                \
    }                                                                                            \
    extern "C" __global__ void __launch_bounds__(CP_BLOCK)                                       \
        cp_copy_##NAME(const T* x, u64 n, double lo, double hi, T* out, u64 cap, u64* count) {   \
        cp_copy_impl<T>(x, n, lo, hi, out, cap, count);                                          \
    }
KSELECT_FOR_EACH_TYPE(CUTTING_PLANE_KERNELS)
