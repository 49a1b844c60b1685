// QuickSelect (Hoare), as Ribizel & Anzt's GPU reference: a pivot, the median of a small
// sample sorted by one block, and one fused pass per level that counts the keys below, equal to
// and above the pivot and bipartitions the others into a workspace buffer (those below grow from
// its front, those above from its back), with one pair of atomics per block and trip. The host
// reads the counts and continues with the side that holds the rank.
#include "common.cuh"

#define QS_BLOCK 256
#define QS_WARPS (QS_BLOCK / WARP_SIZE)
#define QS_SAMPLE 1024
#define QS_PIVOT_THREADS 512

// The words of a level's state.
#define QS_PIVOT 0  // the pivot's key
#define QS_LT 1     // keys below the pivot (copied to the front of the output)
#define QS_EQ 2     // keys equal to the pivot (counted only)
#define QS_GT 3     // keys above the pivot (copied to the back of the output)
#define QS_NANS 4   // NaNs of the input (the first level counts them)

// One block of QS_PIVOT_THREADS. The candidates are x[skip..n) (n > skip). Sorts a sample of
// s = min(n - skip, QS_SAMPLE) of their keys, one from each of s equal strides at a hashed
// offset, and writes its median as the pivot; clears the level's counts.
template <typename T>
__device__ void qs_pivot_impl(const T* __restrict__ x, u64 n, u64 skip, u64 seed, u64* state) {
    typedef typename KeyOf<T>::type K;
    __shared__ K keys[QS_SAMPLE];
    const u64 m = n - skip;
    const u64 s = m < QS_SAMPLE ? m : QS_SAMPLE;
    const u64 stride = m / s;
    for (u32 i = threadIdx.x; i < QS_SAMPLE; i += blockDim.x) {
        if (i < s) {
            u64 h = ((u64)i + seed) * 0x9E3779B97F4A7C15ull;
            h ^= h >> 31;
            h *= 0xBF58476D1CE4E5B9ull;
            h ^= h >> 29;
            keys[i] = to_key(x[skip + (u64)i * stride + (stride > 1 ? h % stride : 0)]);
        } else {
            keys[i] = (K)~(K)0;
        }
    }
    block_bitonic_sort<K, QS_SAMPLE>(keys);
    if (threadIdx.x == 0) {
        state[QS_PIVOT] = (u64)keys[(s - 1) / 2];
        state[QS_LT] = 0;
        state[QS_EQ] = 0;
        state[QS_GT] = 0;
    }
}

// Appends a block's marked items to both ends of out[0..cap): items marked `lt` to the front
// (positions from state[QS_LT]), items marked `gt` to the back (from state[QS_GT], counting
// down from cap - 1). One warp scan of the two counts packed in a word (each at most
// QS_BLOCK * V < 2^16), one pair of atomics per block. Collective over the block.
template <int V, typename T>
__device__ __forceinline__ void qs_append_both(T* out, u64 cap, u64* state, const T (&v)[V], const bool (&lt)[V],
                                               const bool (&gt)[V], u32* warp_offset, u64* block_base) {
    const u32 lane = threadIdx.x & 31;
    const u32 warp = threadIdx.x / WARP_SIZE;
    u32 mine = 0;
#pragma unroll
    for (int j = 0; j < V; ++j) mine += (lt[j] ? 1u : 0u) + (gt[j] ? 0x10000u : 0u);
    u32 incl = warp::inclusive_sum(mine);
    if (lane == 31) warp_offset[warp] = incl;
    __syncthreads();
    if (threadIdx.x == 0) {
        const u32 run = serial::exclusive_sum(warp_offset, QS_WARPS);
        const u32 n_lt = run & 0xffffu;
        const u32 n_gt = run >> 16;
        block_base[0] = n_lt ? atomicAdd((unsigned long long*)&state[QS_LT], (u64)n_lt) : 0;
        block_base[1] = n_gt ? atomicAdd((unsigned long long*)&state[QS_GT], (u64)n_gt) : 0;
    }
    __syncthreads();
    const u32 before = warp_offset[warp] + (incl - mine);
    u64 pos_lt = block_base[0] + (before & 0xffffu);
    u64 pos_gt = block_base[1] + (before >> 16);
#pragma unroll
    for (int j = 0; j < V; ++j) {
        if (lt[j]) out[pos_lt++] = v[j];
        if (gt[j]) out[cap - 1 - pos_gt++] = v[j];
    }
    __syncthreads();
}

// The fused pass over the candidates x[skip..n) (x 16-byte aligned; the first `skip` elements
// are not candidates): counts the keys below, equal to and above the pivot, copies those below
// to the front of out[0..cap) and those above to its back (cap >= n - skip), and counts the
// NaNs when `count_nans`. Block-uniform loops (load_trip), so the block may synchronise.
template <typename T>
__device__ void qs_pass_impl(const T* __restrict__ x, u64 n, u64 skip, T* __restrict__ out, u64 cap, u64* state,
                             u32 count_nans) {
    typedef typename KeyOf<T>::type K;
    const int V = Vec16<T>::N;
    __shared__ u32 warp_offset[QS_WARPS];
    __shared__ u64 block_base[2];
    const K pivot = (K)state[QS_PIVOT];
    const u64 threads = (u64)gridDim.x * blockDim.x;
    const u64 first = (u64)blockIdx.x * blockDim.x;
    const u64 trips = trip_count<V>(n, first, threads);
    const u64 vtrips = vector_trips<V>(n, first, threads);
    const u64 nvec = n / V;
    u32 eq = 0, nans = 0;
    for (u64 t = 0; t < trips; ++t) {
        T v[V];
        bool valid[V];
        load_trip<T, V>(x, n, first, threads, vtrips, t, v, valid);
        const u64 start = t < vtrips ? (first + t * threads + threadIdx.x) * V : nvec * V;
        bool lt[V], gt[V];
#pragma unroll
        for (int j = 0; j < V; ++j) {
            const bool in = valid[j] && start + j >= skip;
            const K key = in ? to_key(v[j]) : (K)0;
            lt[j] = in && key < pivot;
            gt[j] = in && key > pivot;
            eq += (in && key == pivot) ? 1u : 0u;
            nans += (in && is_nan_value(v[j])) ? 1u : 0u;
        }
        qs_append_both<V, T>(out, cap, state, v, lt, gt, warp_offset, block_base);
    }
    for (int off = WARP_SIZE / 2; off > 0; off /= 2) {
        eq += __shfl_down_sync(FULL_MASK, eq, off);
        nans += __shfl_down_sync(FULL_MASK, nans, off);
    }
    if ((threadIdx.x & 31) == 0) {
        if (eq) atomicAdd((unsigned long long*)&state[QS_EQ], (u64)eq);
        if (count_nans && nans) atomicAdd((unsigned long long*)&state[QS_NANS], (u64)nans);
    }
}

#define QUICK_SELECT_KERNELS(NAME, T)                                                                \
    extern "C" __global__ void __launch_bounds__(QS_PIVOT_THREADS)                                   \
        qs_pivot_##NAME(const T* x, u64 n, u64 skip, u64 seed, u64* state) {                        \
        qs_pivot_impl<T>(x, n, skip, seed, state);                                                   \
    }                                                                                                \
    extern "C" __global__ void __launch_bounds__(QS_BLOCK)                                           \
        qs_pass_##NAME(const T* x, u64 n, u64 skip, T* out, u64 cap, u64* state, u32 count_nans) {  \
        qs_pass_impl<T>(x, n, skip, out, cap, state, count_nans);                                    \
    }
KSELECT_FOR_EACH_TYPE(QUICK_SELECT_KERNELS)
