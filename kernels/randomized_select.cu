// randomizedSelect (Monroe et al.): two splitters from a random sample bracket rank k with high
// probability; one pass counts the keys below the bracket and copies the keys inside it; the
// rank is then selected among the copies. Kernels: the sample gather and the fused pass.
#include "common.cuh"

#define RND_BLOCK 256
#define RND_WARPS (RND_BLOCK / WARP_SIZE)

// sample[i] = x[p(i)]: one element from each of s equal strides, at a hashed offset inside it.
template <typename T>
__device__ void rnd_sample_impl(const T* __restrict__ x, u64 n, T* __restrict__ sample, u64 s, u64 seed) {
    const u64 i = (u64)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= s) return;
    const u64 stride = n / s;
    u64 h = (i + seed) * 0x9E3779B97F4A7C15ull;
    h ^= h >> 31;
    h *= 0xBF58476D1CE4E5B9ull;
    h ^= h >> 29;
    sample[i] = x[i * stride + (stride > 1 ? h % stride : 0)];
}

// counters[0] += keys < lo, counters[1] += keys strictly between lo and hi (copied to cand
// while they fit in `cap`), counters[2] += NaNs (floats), counters[3] += keys == lo,
// counters[4] += keys == hi (when hi != lo). Values equal to a splitter are counted, not
// copied, so that many duplicates cost no workspace.
template <typename T>
__device__ void rnd_pass_impl(const T* __restrict__ x, u64 n, typename KeyOf<T>::type lo,
                              typename KeyOf<T>::type hi, T* __restrict__ cand, u64 cap,
                              u64* counters) {
    typedef typename KeyOf<T>::type K;
    const int V = Vec16<T>::N;
    __shared__ u32 warp_offset[RND_WARPS];
    __shared__ u64 block_base;
    const u64 threads = (u64)gridDim.x * blockDim.x;
    const u64 first = (u64)blockIdx.x * blockDim.x;
    const u64 trips = trip_count<V>(n, first, threads);
    const u64 vtrips = vector_trips<V>(n, first, threads);
    u32 below = 0, nans = 0, eq_lo = 0, eq_hi = 0;
    for (u64 t = 0; t < trips; ++t) {
        T v[V];
        bool valid[V];
        load_trip<T, V>(x, n, first, threads, vtrips, t, v, valid);
        bool m[V];
#pragma unroll
        for (int j = 0; j < V; ++j) {
            const bool in = valid[j];
            const K key = in ? to_key(v[j]) : (K)0;
            below += (in && key < lo) ? 1u : 0u;
            eq_lo += (in && key == lo) ? 1u : 0u;
            eq_hi += (in && key == hi && hi != lo) ? 1u : 0u;
            nans += (in && is_nan_value(v[j])) ? 1u : 0u;
            m[j] = in && key > lo && key < hi;
        }
        block_append<RND_WARPS>(cand, cap, &counters[1], v, m, warp_offset, &block_base);
    }
    for (int off = WARP_SIZE / 2; off > 0; off /= 2) {
        below += __shfl_down_sync(FULL_MASK, below, off);
        nans += __shfl_down_sync(FULL_MASK, nans, off);
        eq_lo += __shfl_down_sync(FULL_MASK, eq_lo, off);
        eq_hi += __shfl_down_sync(FULL_MASK, eq_hi, off);
    }
    if ((threadIdx.x & 31) == 0) {
        if (below) atomicAdd(&counters[0], (u64)below);
        if (nans) atomicAdd(&counters[2], (u64)nans);
        if (eq_lo) atomicAdd(&counters[3], (u64)eq_lo);
        if (eq_hi) atomicAdd(&counters[4], (u64)eq_hi);
    }
}

#define RANDOMIZED_SELECT_KERNELS(NAME, T)                                                        \
    extern "C" __global__ void rnd_sample_##NAME(const T* x, u64 n, T* sample, u64 s, u64 seed) { \
        rnd_sample_impl<T>(x, n, sample, s, seed);                                                \
    }                                                                                             \
    extern "C" __global__ void __launch_bounds__(RND_BLOCK)                                       \
        rnd_pass_##NAME(const T* x, u64 n, KeyOf<T>::type lo, KeyOf<T>::type hi, T* cand,         \
                        u64 cap, u64* counters) {                                                 \
        rnd_pass_impl<T>(x, n, lo, hi, cand, cap, counters);                                      \
    }
KSELECT_FOR_EACH_TYPE(RANDOMIZED_SELECT_KERNELS)
