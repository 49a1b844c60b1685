// One-pass kernels: NaN counts, the one-read floor (a sum), key conversion and gathers.
#include "common.cuh"

// Counts NaNs and finds the first one's index. `out[0]` += count, `out[1]` = min index
// (initialised to all ones by the caller).
template <typename T>
__device__ void count_nan_impl(const T* __restrict__ x, u64 n, u64* out) {
    u64 count = 0;
    u64 first = ~0ull;
    const u64 stride = (u64)gridDim.x * blockDim.x;
    for (u64 i = (u64)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        if (is_nan(x[i])) {
            ++count;
            if (i < first) first = i;
        }
    }
    for (int off = WARP_SIZE / 2; off > 0; off /= 2) {
        count += __shfl_down_sync(FULL_MASK, count, off);
        u64 other = __shfl_down_sync(FULL_MASK, first, off);
        first = other < first ? other : first;
    }
    if ((threadIdx.x & (WARP_SIZE - 1)) == 0 && count > 0) {
        atomicAdd(&out[0], count);
        atomicMin(&out[1], first);
    }
}

extern "C" __global__ void count_nan_f32(const float* x, u64 n, u64* out) { count_nan_impl(x, n, out); }
extern "C" __global__ void count_nan_f64(const double* x, u64 n, u64* out) { count_nan_impl(x, n, out); }

// The sum in double precision, reading every element once with 16-byte loads: the one-read
// floor that selection times are compared with. One atomic per block.
template <typename T, typename Acc>
__device__ void floor_sum_impl(const T* __restrict__ x, u64 n, Acc* out) {
    const int V = Vec16<T>::N;
    Acc acc = 0;
    const u64 nvec = n / V;
    const u64 stride = (u64)gridDim.x * blockDim.x;
    for (u64 i = (u64)blockIdx.x * blockDim.x + threadIdx.x; i < nvec; i += stride) {
        T v[16 / sizeof(T)];
        load16(x + i * V, v);
#pragma unroll
        for (int j = 0; j < V; ++j) acc += (Acc)v[j];
    }
    for (u64 i = nvec * V + (u64)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) acc += (Acc)x[i];
    for (int off = WARP_SIZE / 2; off > 0; off /= 2) acc += __shfl_down_sync(FULL_MASK, acc, off);
    __shared__ Acc warp_sums[32];
    if ((threadIdx.x & 31) == 0) warp_sums[threadIdx.x / 32] = acc;
    __syncthreads();
    if (threadIdx.x == 0) {
        Acc total = 0;
        for (int w = 0; w < (int)(blockDim.x / 32); ++w) total += warp_sums[w];
        atomicAdd(out, total);
    }
}

#define FLOOR_SUM(NAME, T)                                                                        \
    extern "C" __global__ void sum_##NAME(const T* x, u64 n, double* out) { floor_sum_impl<T, double>(x, n, out); }
KSELECT_FOR_EACH_TYPE(FLOOR_SUM)

// keys[i] = to_key(x[i]).
template <typename T>
__device__ void to_keys_impl(const T* __restrict__ x, typename KeyOf<T>::type* __restrict__ keys, u64 n) {
    const u64 stride = (u64)gridDim.x * blockDim.x;
    for (u64 i = (u64)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) keys[i] = to_key(x[i]);
}

// x[i] = from_key(keys[i]).
template <typename T>
__device__ void from_keys_impl(const typename KeyOf<T>::type* __restrict__ keys, T* __restrict__ x, u64 n) {
    const u64 stride = (u64)gridDim.x * blockDim.x;
    for (u64 i = (u64)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) x[i] = from_key<T>(keys[i]);
}

#define KEY_CONVERSIONS(NAME, T)                                                                  \
    extern "C" __global__ void to_keys_##NAME(const T* x, KeyOf<T>::type* keys, u64 n) {          \
        to_keys_impl<T>(x, keys, n);                                                              \
    }                                                                                             \
    extern "C" __global__ void from_keys_##NAME(const KeyOf<T>::type* keys, T* x, u64 n) {        \
        from_keys_impl<T>(keys, x, n);                                                            \
    }
KSELECT_FOR_EACH_TYPE(KEY_CONVERSIONS)

// out[j] = keys[ranks[j]] for j < m.
#define GATHER(NAME, K)                                                                           \
    extern "C" __global__ void gather_##NAME(const K* keys, const u64* ranks, K* out, u64 m) {    \
        u64 j = (u64)blockIdx.x * blockDim.x + threadIdx.x;                                       \
        if (j < m) out[j] = keys[ranks[j]];                                                       \
    }
KSELECT_FOR_EACH_KEY(GATHER)
