// randomizedSelect (Monroe et al.): two splitters from a random sample bracket rank k with high
// probability; one pass counts the keys below the bracket and copies the keys inside it; the
// rank is then selected among the copies by the radix select kernels (radix_select.cu), started
// from the state that `rnd_resolve` leaves. Every decision stays on the device: a selection is a
// fixed sequence of launches with one read-back at the end.
#include "common.cuh"

#define RND_BLOCK 256
#define RND_WARPS (RND_BLOCK / WARP_SIZE)
// Threads of the block that selects one splitter in the sample.
#define RND_SPLIT_BLOCK 1024
// Keys each warp stages in shared memory before writing them out with one atomic.
#define RND_STAGE 256

// The counters of one pass, in order.
#define RND_BELOW 0    // keys < lo
#define RND_BETWEEN 1  // keys strictly between lo and hi (also the copies' append position)
#define RND_NANS 2     // NaNs (floats)
#define RND_EQ_LO 3    // keys == lo
#define RND_EQ_HI 4    // keys == hi, when hi != lo
#define RND_COUNTERS 5

// What `rnd_resolve` found for a rank.
#define RND_DONE 1u        // the rank is a splitter's: result written
#define RND_CANDIDATES 2u  // the rank is among the copies: the radix passes select it
#define RND_MISSED 3u      // the bracket missed the rank or the copies overflowed

// sample[i] = key of x[p(i)]: one element from each of s equal strides, at a hashed offset.
template <typename T>
__device__ void rnd_sample_impl(const T* __restrict__ x, u64 n, typename KeyOf<T>::type* __restrict__ sample,
                                u64 s, u64 seed) {
    const u64 i = (u64)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= s) return;
    const u64 stride = n / s;
    u64 h = (i + seed) * 0x9E3779B97F4A7C15ull;
    h ^= h >> 31;
    h *= 0xBF58476D1CE4E5B9ull;
    h ^= h >> 29;
    sample[i] = to_key(x[i * stride + (stride > 1 ? h % stride : 0)]);
}

// Counts one 8-bit digit into a shared histogram; a warp whose valid lanes share the digit adds
// once (few-valued samples would otherwise serialise on one counter).
__device__ __forceinline__ void rnd_count_digit(u32* hist, bool valid, u32 d) {
    const u32 active = __ballot_sync(FULL_MASK, valid);
    if (active == 0) return;
    const int leader = __ffs(active) - 1;
    const u32 lead_d = __shfl_sync(FULL_MASK, d, leader);
    if (__all_sync(FULL_MASK, !valid || d == lead_d)) {
        if ((threadIdx.x & 31) == (u32)leader) atomicAdd(&hist[lead_d], (u32)__popc(active));
    } else if (valid) {
        atomicAdd(&hist[d], 1u);
    }
}

// Block b (of two) selects the key of rank r_b of the s sample keys by MSD radix select over the
// (L2-resident) sample, writing it to bounds[b]; a rank >= s leaves the bound open (the smallest
// key for b = 0, the largest for b = 1). Block 0 also clears the pass counters.
template <typename K>
__device__ void rnd_splitters_impl(const K* __restrict__ sample, u64 s, u64 r_lo, u64 r_hi,
                                   K* bounds, u64* counters) {
    const u32 BITS = sizeof(K) * 8;
    __shared__ u32 hist[256];
    __shared__ K chosen_prefix;
    __shared__ u64 chosen_rank;
    if (blockIdx.x == 0 && threadIdx.x < RND_COUNTERS) counters[threadIdx.x] = 0;
    u64 r = blockIdx.x == 0 ? r_lo : r_hi;
    if (r >= s) {
        if (threadIdx.x == 0) bounds[blockIdx.x] = blockIdx.x == 0 ? (K)0 : (K)~(K)0;
        return;
    }
    K prefix = 0;
    for (u32 fixed = 0; fixed < BITS; fixed += 8) {
        const u32 shift = BITS - 8 - fixed;
        for (u32 d = threadIdx.x; d < 256; d += blockDim.x) hist[d] = 0;
        __syncthreads();
        const u64 trips = (s + blockDim.x - 1) / blockDim.x;
        for (u64 t = 0; t < trips; ++t) {
            const u64 i = t * blockDim.x + threadIdx.x;
            const K key = i < s ? sample[i] : (K)0;
            const bool match = i < s && (fixed == 0 || (key >> (BITS - fixed)) == (prefix >> (BITS - fixed)));
            rnd_count_digit(hist, match, (u32)(key >> shift) & 255u);
        }
        __syncthreads();
        if (threadIdx.x < WARP_SIZE) {
            // Warp 0: each lane sums 8 consecutive digits, a warp scan finds the lane holding r.
            const u32 lane = threadIdx.x;
            u32 mine = 0;
            for (u32 j = 0; j < 8; ++j) mine += hist[lane * 8 + j];
            u32 incl = mine;
            for (int off = 1; off < WARP_SIZE; off <<= 1) {
                const u32 y = __shfl_up_sync(FULL_MASK, incl, off);
                if (lane >= (u32)off) incl += y;
            }
            const u32 excl = incl - mine;
            if (excl <= r && r < incl) {
                u64 before = excl;
                u32 d = lane * 8;
                while (before + hist[d] <= r) before += hist[d++];
                chosen_prefix = prefix | ((K)d << shift);
                chosen_rank = r - before;
            }
        }
        __syncthreads();
        prefix = chosen_prefix;
        r = chosen_rank;
        __syncthreads();
    }
    if (threadIdx.x == 0) bounds[blockIdx.x] = prefix;
}

// Writes a warp's staged items out (see warp_stage_append).
template <typename E>
__device__ __forceinline__ void warp_flush(E* stage, u32 staged, E* out, u64 cap, u64* out_count) {
    __syncwarp();
    const u32 lane = threadIdx.x & 31;
    u64 base = 0;
    if (lane == 0 && staged) base = atomicAdd(out_count, (u64)staged);
    base = __shfl_sync(FULL_MASK, base, 0);
    for (u32 i = lane; i < staged; i += WARP_SIZE) {
        if (base + i < cap) out[base + i] = stage[i];
    }
    __syncwarp();
}

// Stages the marked items of a warp in its shared `stage` (RND_STAGE slots, `staged` of them
// used: warp-uniform) and writes the stage out to `out` with one atomic on `out_count` when the
// next items would not fit. Items whose position reaches `cap` are counted but not written.
// Collective over the warp; no block barrier.
template <typename E, int V>
__device__ __forceinline__ void warp_stage_append(E* stage, u32& staged, E* out, u64 cap, u64* out_count,
                                                  const E (&item)[V], const bool (&m)[V]) {
    const u32 lane = threadIdx.x & 31;
    u32 mine = 0;
#pragma unroll
    for (int j = 0; j < V; ++j) mine += m[j] ? 1u : 0u;
    u32 incl = mine;
    for (int off = 1; off < WARP_SIZE; off <<= 1) {
        const u32 y = __shfl_up_sync(FULL_MASK, incl, off);
        if (lane >= (u32)off) incl += y;
    }
    const u32 total = __shfl_sync(FULL_MASK, incl, 31);
    if (total == 0) return;
    if (staged + total > RND_STAGE) {
        warp_flush(stage, staged, out, cap, out_count);
        staged = 0;
    }
    u32 pos = staged + incl - mine;
#pragma unroll
    for (int j = 0; j < V; ++j) {
        if (m[j]) stage[pos++] = item[j];
    }
    staged += total;
    __syncwarp();
}

// The fused pass: counters (see RND_*) += this grid's counts, and the keys strictly between
// lo = bounds[0] and hi = bounds[1] are copied to cand (while they fit in `cap`). Keys equal to
// a splitter are counted, not copied, so that many duplicates cost no workspace.
template <typename T>
__device__ void rnd_pass_impl(const T* __restrict__ x, u64 n, const typename KeyOf<T>::type* bounds,
                              typename KeyOf<T>::type* __restrict__ cand, u64 cap, u64* counters) {
    typedef typename KeyOf<T>::type K;
    const int V = Vec16<T>::N;
    static_assert(RND_STAGE >= WARP_SIZE * 16 / sizeof(T), "a warp's trip must fit the stage");
    __shared__ K stages[RND_WARPS][RND_STAGE];
    K* stage = stages[threadIdx.x / WARP_SIZE];
    u32 staged = 0;
    const K lo = bounds[0];
    const K hi = bounds[1];
    const u64 threads = (u64)gridDim.x * blockDim.x;
    const u64 first = (u64)blockIdx.x * blockDim.x;
    const u64 trips = trip_count<V>(n, first, threads);
    const u64 vtrips = vector_trips<V>(n, first, threads);
    u32 below = 0, nans = 0, eq_lo = 0, eq_hi = 0;
    for (u64 t = 0; t < trips; ++t) {
        T v[V];
        bool valid[V];
        load_trip<T, V>(x, n, first, threads, vtrips, t, v, valid);
        K key[V];
        bool m[V];
#pragma unroll
        for (int j = 0; j < V; ++j) {
            const bool in = valid[j];
            key[j] = in ? to_key(v[j]) : (K)0;
            below += (in && key[j] < lo) ? 1u : 0u;
            eq_lo += (in && key[j] == lo) ? 1u : 0u;
            eq_hi += (in && key[j] == hi && hi != lo) ? 1u : 0u;
            nans += (in && is_nan_value(v[j])) ? 1u : 0u;
            m[j] = in && key[j] > lo && key[j] < hi;
        }
        warp_stage_append(stage, staged, cand, cap, &counters[RND_BETWEEN], key, m);
    }
    warp_flush(stage, staged, cand, cap, &counters[RND_BETWEEN]);
    for (int off = WARP_SIZE / 2; off > 0; off /= 2) {
        below += __shfl_down_sync(FULL_MASK, below, off);
        nans += __shfl_down_sync(FULL_MASK, nans, off);
        eq_lo += __shfl_down_sync(FULL_MASK, eq_lo, off);
        eq_hi += __shfl_down_sync(FULL_MASK, eq_hi, off);
    }
    if ((threadIdx.x & 31) == 0) {
        if (below) atomicAdd(&counters[RND_BELOW], (u64)below);
        if (nans) atomicAdd(&counters[RND_NANS], (u64)nans);
        if (eq_lo) atomicAdd(&counters[RND_EQ_LO], (u64)eq_lo);
        if (eq_hi) atomicAdd(&counters[RND_EQ_HI], (u64)eq_hi);
    }
}

// One block of 256 threads: places rank k among the pass's counts. A rank on a splitter's
// duplicates is that splitter (result[slot]); one strictly between them starts a radix selection
// over the copies (cand = the radix passes' buffer 0, `cap` keys); otherwise the bracket missed.
// The radix state always ends with the NaN count and with a source that radix passes may read
// (an empty one when they have nothing to do). status[slot] = RND_DONE / RND_CANDIDATES /
// RND_MISSED.
template <typename K>
__device__ void rnd_resolve_impl(const K* bounds, const u64* counters, u64 k, u64 cap, SelState* st,
                                 u64* hist, K* result, u32* status, u64 slot) {
    for (u32 d = threadIdx.x; d < 256; d += blockDim.x) hist[d] = 0;
    if (threadIdx.x != 0) return;
    const K lo = bounds[0];
    const K hi = bounds[1];
    const u64 below = counters[RND_BELOW];
    const u64 between = counters[RND_BETWEEN];
    const u64 first_between = below + counters[RND_EQ_LO];
    const u64 first_hi = first_between + between;
    st->prefix = 0;
    st->k = 0;
    st->count = 0;
    st->src_count = 0;
    st->out_count = 0;
    st->fixed_bits = 0;
    st->src = 1;
    st->dst = 0;
    st->pad = 0;
    st->nans = counters[RND_NANS];
    u32 outcome;
    if (k < below || k >= first_hi + counters[RND_EQ_HI]) {
        outcome = RND_MISSED;
    } else if (k < first_between) {
        result[slot] = lo;
        outcome = RND_DONE;
    } else if (k >= first_hi) {
        result[slot] = hi;
        outcome = RND_DONE;
    } else if (between > cap) {
        outcome = RND_MISSED;
    } else {
        st->k = k - first_between;
        st->count = between;
        st->src_count = between;
        outcome = RND_CANDIDATES;
    }
    status[slot] = outcome;
}

#define RANDOMIZED_SELECT_KERNELS(NAME, T)                                                        \
    extern "C" __global__ void rnd_sample_##NAME(const T* x, u64 n, KeyOf<T>::type* sample, u64 s, \
                                                 u64 seed) {                                      \
        rnd_sample_impl<T>(x, n, sample, s, seed);                                                \
    }                                                                                             \
    extern "C" __global__ void __launch_bounds__(RND_BLOCK)                                       \
        rnd_pass_##NAME(const T* x, u64 n, const KeyOf<T>::type* bounds, KeyOf<T>::type* cand,    \
                        u64 cap, u64* counters) {                                                 \
        rnd_pass_impl<T>(x, n, bounds, cand, cap, counters);                                      \
    }
KSELECT_FOR_EACH_TYPE(RANDOMIZED_SELECT_KERNELS)

#define RANDOMIZED_KEY_KERNELS(NAME, K)                                                           \
    extern "C" __global__ void __launch_bounds__(RND_SPLIT_BLOCK)                                 \
        rnd_splitters_##NAME(const K* sample, u64 s, u64 r_lo, u64 r_hi, K* bounds, u64* counters) { \
        rnd_splitters_impl<K>(sample, s, r_lo, r_hi, bounds, counters);                           \
    }                                                                                             \
    extern "C" __global__ void rnd_resolve_##NAME(const K* bounds, const u64* counters, u64 k,    \
                                                  u64 cap, SelState* st, u64* hist, K* result,    \
                                                  u32* status, u64 slot) {                        \
        rnd_resolve_impl<K>(bounds, counters, k, cap, st, hist, result, status, slot);            \
    }
KSELECT_FOR_EACH_KEY(RANDOMIZED_KEY_KERNELS)
