// randomizedSelect (Monroe et al.): two splitters from a random sample bracket rank k with high
// probability; one pass counts the keys below the bracket and copies the keys inside it, less the
// lower splitter (so that their leading digits are zero wherever the bracket is narrow); the rank
// is then selected among the copies by the radix select kernels (radix_select.cu), started from
// the state that `rnd_resolve` leaves. Every decision stays on the device: a selection is a
// fixed sequence of launches with one read-back at the end.
#include "common.cuh"

#define RND_BLOCK 256
#define RND_WARPS (RND_BLOCK / WARP_SIZE)
// Threads of the block that selects one splitter in the sample.
#define RND_SPLIT_BLOCK 1024
// Bits of a digit of the splitter selection, sample keys each of its threads loads at once, and
// the shared memory that holds the sample keys still in the running.
// (Four loads a thread: on an H200 the splitters of a median of uniform values take 26 us (f32)
// and 41 us (f64) with 4, 28 and 48 us with 16; benches/splitters.cu sets RND_SPLIT_LOADS to
// compare.)
#define RND_SPLIT_DIGIT 11
#ifndef RND_SPLIT_LOADS
#define RND_SPLIT_LOADS 4
#endif
#define RND_SPLIT_LOCAL_BYTES 32768
// Vectors each thread of the pass loads per trip, and the pass's resident blocks per
// multiprocessor (measured on an H200 with tune/-style harnesses: four 16-byte loads in flight a
// thread keep the pass within 1.1 reads of the floor for 32- and 64-bit types).
#define RND_UNROLL 4
#define RND_PASS_MIN_BLOCKS 4
// The most sample keys equal to a splitter for the lean pass: more suggest that the input repeats
// that value so often that copying its duplicates could overflow the candidate buffer.
#define RND_DUP_LIMIT 64

// The counters of one pass, in order.
#define RND_BELOW 0    // keys < lo
#define RND_BETWEEN 1  // the copies: keys in [lo, hi] (lean pass) or in (lo, hi) (full pass)
#define RND_NANS 2     // NaNs (floats)
#define RND_EQ_LO 3    // keys == lo (full pass)
#define RND_EQ_HI 4    // keys == hi, when hi != lo (full pass)
#define RND_PASS_COUNTERS 5
#define RND_DUPS_LO 5  // sample keys equal to lo (set by the splitter selection)
#define RND_DUPS_HI 6  // sample keys equal to hi
#define RND_COUNTERS 7

// What `rnd_resolve` found for a rank.
#define RND_DONE 1u        // the rank is a splitter's: result written
#define RND_CANDIDATES 2u  // the rank is among the copies: the radix passes select it
#define RND_MISSED 3u      // the bracket missed the rank or the copies overflowed

// sample[i] = key of x[p(i)]: one element from each of s equal strides, at a hashed offset.
// The grid also counts the sample keys' leading RND_SPLIT_DIGIT bits into top_hist (zero on
// entry), the first histogram of the splitter selection, so that many blocks share that pass.
template <typename T>
__device__ void rnd_sample_impl(const T* __restrict__ x, u64 n, typename KeyOf<T>::type* __restrict__ sample,
                                u64 s, u64 seed, u32* top_hist) {
    typedef typename KeyOf<T>::type K;
    __shared__ u32 hist[1u << RND_SPLIT_DIGIT];
    for (u32 d = threadIdx.x; d < (1u << RND_SPLIT_DIGIT); d += blockDim.x) hist[d] = 0;
    __syncthreads();
    const u64 i = (u64)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < s) {
        const K key = to_key(x[sample_position(i, n, s, seed)]);
        sample[i] = key;
        atomicAdd(&hist[(u32)(key >> (sizeof(K) * 8 - RND_SPLIT_DIGIT))], 1u);
    }
    __syncthreads();
    for (u32 d = threadIdx.x; d < (1u << RND_SPLIT_DIGIT); d += blockDim.x) {
        if (hist[d]) atomicAdd(&top_hist[d], hist[d]);
    }
}

// Histograms the digit `(key >> shift) & mask` of the keys of src[0..len) that match the
// prefix. A global source is read RND_SPLIT_LOADS keys a thread at a time, so that the L2
// latency is paid once per group rather than once per key.
template <typename K>
__device__ void rnd_histogram(const K* src, u64 len, bool global, K prefix, u32 fixed, u32 shift,
                              u32 mask, u32* hist) {
    const u64 step = (u64)blockDim.x * RND_SPLIT_LOADS;
    for (u64 base = 0; base < len; base += step) {
        K key[RND_SPLIT_LOADS];
        if (global) {
#pragma unroll
            for (int u = 0; u < RND_SPLIT_LOADS; ++u) {
                const u64 i = base + (u64)u * blockDim.x + threadIdx.x;
                key[u] = i < len ? __ldcg(src + i) : (K)0;
            }
        } else {
#pragma unroll
            for (int u = 0; u < RND_SPLIT_LOADS; ++u) {
                const u64 i = base + (u64)u * blockDim.x + threadIdx.x;
                key[u] = i < len ? src[i] : (K)0;
            }
        }
#pragma unroll
        for (int u = 0; u < RND_SPLIT_LOADS; ++u) {
            const u64 i = base + (u64)u * blockDim.x + threadIdx.x;
            const bool in = i < len && radix::matches(key[u], prefix, fixed);
            radix::count_digit(hist, in, (u32)(key[u] >> shift) & mask);
        }
    }
}

// Copies the keys of the global src[0..len) that match the prefix into the shared `local`
// (the caller knows they fit), counting them in `*local_len` (zero on entry). Each warp reserves
// the places of a whole group of loads with one atomic.
template <typename K>
__device__ void rnd_gather_local(const K* src, u64 len, K prefix, u32 fixed, K* local, u32* local_len) {
    const u64 step = (u64)blockDim.x * RND_SPLIT_LOADS;
    const u32 lane = threadIdx.x & 31;
    for (u64 base = 0; base < len; base += step) {
        K key[RND_SPLIT_LOADS];
#pragma unroll
        for (int u = 0; u < RND_SPLIT_LOADS; ++u) {
            const u64 i = base + (u64)u * blockDim.x + threadIdx.x;
            key[u] = i < len ? __ldcg(src + i) : (K)0;
        }
        u32 ballot[RND_SPLIT_LOADS];
        u32 total = 0;
#pragma unroll
        for (int u = 0; u < RND_SPLIT_LOADS; ++u) {
            const u64 i = base + (u64)u * blockDim.x + threadIdx.x;
            ballot[u] = __ballot_sync(FULL_MASK, i < len && radix::matches(key[u], prefix, fixed));
            total += __popc(ballot[u]);
        }
        if (total == 0) continue;
        u32 at = 0;
        if (lane == 0) at = atomicAdd(local_len, total);
        at = __shfl_sync(FULL_MASK, at, 0);
#pragma unroll
        for (int u = 0; u < RND_SPLIT_LOADS; ++u) {
            if ((ballot[u] >> lane) & 1u) local[at + __popc(ballot[u] & lanemask_lt())] = key[u];
            at += __popc(ballot[u]);
        }
    }
}

// Block b (of two) selects the key of rank r_b of the s sample keys by MSD radix select with
// 11-bit digits, writing it to bounds[b]; a rank >= s leaves the bound open (the smallest key for
// b = 0, the largest for b = 1). The first digit's histogram is the sample kernel's top_hist;
// further digits read the (L2-resident) sample until the keys
// matching the prefix fit in shared memory they are gathered there and the remaining digits read
// only them. Block 0 also clears the pass counters; block b writes to counters[RND_DUPS_LO + b]
// how many sample keys equal its bound (for an open side, an upper bound of that number).
template <typename K>
__device__ void rnd_splitters_impl(const K* __restrict__ sample, u64 s, const u32* top_hist, u64 r_lo,
                                   u64 r_hi, K* bounds, u64* counters) {
    const u32 BITS = sizeof(K) * 8;
    const u32 LOCAL_CAP = RND_SPLIT_LOCAL_BYTES / sizeof(K);
    __shared__ u32 hist[1u << RND_SPLIT_DIGIT];
    __shared__ K local[RND_SPLIT_LOCAL_BYTES / sizeof(K)];
    __shared__ u32 local_len;
    __shared__ K chosen_prefix;
    __shared__ u64 chosen_rank;
    __shared__ u32 chosen_count;
    __shared__ u32 warp_sums[RND_SPLIT_BLOCK / WARP_SIZE];
    if (blockIdx.x == 0 && threadIdx.x < RND_PASS_COUNTERS) counters[threadIdx.x] = 0;
    u64 r = blockIdx.x == 0 ? r_lo : r_hi;
    if (r >= s) {
        // An open side: its bound is the extreme key, and the sample keys in the extreme bin of
        // the first digit bound its duplicates from above.
        if (threadIdx.x == 0) {
            bounds[blockIdx.x] = blockIdx.x == 0 ? (K)0 : (K)~(K)0;
            counters[RND_DUPS_LO + blockIdx.x] = top_hist[blockIdx.x == 0 ? 0 : (1u << RND_SPLIT_DIGIT) - 1];
        }
        return;
    }
    const K* src = sample;
    u64 len = s;
    bool global = true;
    K prefix = 0;
    u32 fixed = 0;
    while (fixed < BITS) {
        const u32 width = BITS - fixed < RND_SPLIT_DIGIT ? BITS - fixed : RND_SPLIT_DIGIT;
        const u32 shift = BITS - fixed - width;
        const u32 bins = 1u << width;
        if (fixed == 0) {
            // The first digit's histogram comes from the sample kernel.
            for (u32 d = threadIdx.x; d < (1u << RND_SPLIT_DIGIT); d += blockDim.x) hist[d] = top_hist[d];
            __syncthreads();
        } else {
            for (u32 d = threadIdx.x; d < (1u << RND_SPLIT_DIGIT); d += blockDim.x) hist[d] = 0;
            __syncthreads();
            rnd_histogram(src, len, global, prefix, fixed, shift, bins - 1, hist);
            __syncthreads();
        }
        {
            // Each thread sums a run of bins; a block scan finds the thread whose run holds r.
            const u32 lane = threadIdx.x & 31;
            const u32 warp = threadIdx.x / WARP_SIZE;
            const u32 per = (bins + blockDim.x - 1) / blockDim.x;
            const u32 first_bin = threadIdx.x * per;
            u32 mine = 0;
            for (u32 j = 0; j < per; ++j) mine += first_bin + j < bins ? hist[first_bin + j] : 0u;
            u32 incl = warp::inclusive_sum(mine);
            if (lane == WARP_SIZE - 1) warp_sums[warp] = incl;
            __syncthreads();
            if (warp == 0) {
                const u32 total = lane < blockDim.x / WARP_SIZE ? warp_sums[lane] : 0u;
                u32 run = warp::inclusive_sum(total);
                if (lane < blockDim.x / WARP_SIZE) warp_sums[lane] = run - total;
            }
            __syncthreads();
            const u32 excl = warp_sums[warp] + incl - mine;
            if (mine > 0 && excl <= r && r < (u64)excl + mine) {
                u64 before = excl;
                u32 d = first_bin;
                while (before + hist[d] <= r) before += hist[d++];
                chosen_prefix = prefix | ((K)d << shift);
                chosen_rank = r - before;
                chosen_count = hist[d];
            }
        }
        __syncthreads();
        prefix = chosen_prefix;
        r = chosen_rank;
        fixed += width;
        const u32 count = chosen_count;
        if (global && fixed < BITS && count <= LOCAL_CAP) {
            if (threadIdx.x == 0) local_len = 0;
            __syncthreads();
            rnd_gather_local(src, len, prefix, fixed, local, &local_len);
            global = false;
            src = local;
            len = count;
        }
        __syncthreads();
    }
    if (threadIdx.x == 0) {
        bounds[blockIdx.x] = prefix;
        counters[RND_DUPS_LO + blockIdx.x] = chosen_count;
    }
}

// The tallies a warp's lane keeps in a pass (see RND_*).
struct RndTally {
    u32 below, nans, eq_lo, eq_hi;
};

// Tallies the keys of one lane's E elements, marks the ones to copy and leaves each key less lo
// in its place (what is copied). The lean form marks the closed bracket [lo, hi] (one
// subtraction and one comparison a key) and counts only the keys below it and the NaNs; the full
// form marks the open bracket (lo, hi) and also counts the keys equal to each splitter, so that a
// value repeated many times costs no copies.
template <typename K, bool FULL, bool NANS, int E>
__device__ __forceinline__ void rnd_tally(K (&key)[E], K lo, K hi, K width, RndTally& c, bool (&m)[E]) {
#pragma unroll
    for (int e = 0; e < E; ++e) {
        c.below += key[e] < lo ? 1u : 0u;
        if (NANS) c.nans += key[e] == (K)~(K)0 ? 1u : 0u;
        if (FULL) {
            c.eq_lo += key[e] == lo ? 1u : 0u;
            c.eq_hi += (key[e] == hi && hi != lo) ? 1u : 0u;
            m[e] = key[e] > lo && key[e] < hi;
        } else {
            m[e] = (K)(key[e] - lo) <= width;
        }
        key[e] -= lo;
    }
}

// The pass proper, in the lean or the full form (see rnd_tally). Warps take chunks of
// 32 * RND_UNROLL whole vectors (each lane RND_UNROLL loads in flight); the last warp of the grid
// takes what fills no chunk, one element a lane.
template <typename T, bool FULL>
__device__ void rnd_scan(const T* __restrict__ x, u64 n, typename KeyOf<T>::type lo, typename KeyOf<T>::type hi,
                         typename KeyOf<T>::type* __restrict__ cand, u64 cap, u64* counters,
                         typename KeyOf<T>::type* stage) {
    typedef typename KeyOf<T>::type K;
    const int V = Vec16<T>::N;
    const int E = RND_UNROLL * V;  // elements a lane takes per trip
    const bool NANS = HasNan<T>::value;
    const K width = hi - lo;
    u32 staged = 0;
    const u32 lane = threadIdx.x & 31;
    const u64 chunk = (u64)WARP_SIZE * RND_UNROLL;  // vectors a warp takes per trip
    const u64 full_chunks = n / V / chunk;
    const u64 warps = (u64)gridDim.x * RND_WARPS;
    const u64 warp_id = (u64)blockIdx.x * RND_WARPS + threadIdx.x / WARP_SIZE;
    RndTally c = {0, 0, 0, 0};
    const T* base = x + lane * V;
    for (u64 w = warp_id; w < full_chunks; w += warps) {
        T v[RND_UNROLL][V];
#pragma unroll
        for (int u = 0; u < RND_UNROLL; ++u) load16(base + (w * chunk + u * WARP_SIZE) * V, v[u]);
        K key[E];
#pragma unroll
        for (int u = 0; u < RND_UNROLL; ++u) {
#pragma unroll
            for (int j = 0; j < V; ++j) key[u * V + j] = to_key(v[u][j]);
        }
        bool m[E];
        rnd_tally<K, FULL, NANS, E>(key, lo, hi, width, c, m);
        warp_stage_append<K, E, WARP_SIZE * E>(stage, staged, cand, cap, &counters[RND_BETWEEN], key, m);
    }
    if (warp_id == warps - 1) {
        for (u64 i0 = full_chunks * chunk * V; i0 < n; i0 += WARP_SIZE) {
            const u64 i = i0 + lane;
            K key[1] = {i < n ? to_key(x[i]) : lo};
            RndTally one = {0, 0, 0, 0};
            bool m[1];
            rnd_tally<K, FULL, NANS, 1>(key, lo, hi, width, one, m);
            if (i < n) {
                c.below += one.below;
                c.nans += one.nans;
                c.eq_lo += one.eq_lo;
                c.eq_hi += one.eq_hi;
            }
            m[0] = m[0] && i < n;
            warp_stage_append<K, 1, WARP_SIZE * E>(stage, staged, cand, cap, &counters[RND_BETWEEN], key, m);
        }
    }
    warp_flush(stage, staged, cand, cap, &counters[RND_BETWEEN]);
    for (int off = WARP_SIZE / 2; off > 0; off /= 2) {
        c.below += __shfl_down_sync(FULL_MASK, c.below, off);
        if (NANS) c.nans += __shfl_down_sync(FULL_MASK, c.nans, off);
        if (FULL) {
            c.eq_lo += __shfl_down_sync(FULL_MASK, c.eq_lo, off);
            c.eq_hi += __shfl_down_sync(FULL_MASK, c.eq_hi, off);
        }
    }
    if (lane == 0) {
        if (c.below) atomicAdd(&counters[RND_BELOW], (u64)c.below);
        if (c.nans) atomicAdd(&counters[RND_NANS], (u64)c.nans);
        if (c.eq_lo) atomicAdd(&counters[RND_EQ_LO], (u64)c.eq_lo);
        if (c.eq_hi) atomicAdd(&counters[RND_EQ_HI], (u64)c.eq_hi);
    }
}

// Whether the pass takes its full form: the splitters are one value, or the sample suggests that
// one of them repeats often (see RND_DUP_LIMIT). The pass and rnd_resolve decide alike.
template <typename K>
__device__ __forceinline__ bool rnd_full_form(const K* bounds, const u64* counters) {
    return bounds[0] == bounds[1] || counters[RND_DUPS_LO] > RND_DUP_LIMIT || counters[RND_DUPS_HI] > RND_DUP_LIMIT;
}

// The fused pass: counters (see RND_*) += this grid's counts, and the bracket's keys are copied to
// cand (while they fit in `cap`).
template <typename T>
__device__ void rnd_pass_impl(const T* __restrict__ x, u64 n, const typename KeyOf<T>::type* bounds,
                              typename KeyOf<T>::type* __restrict__ cand, u64 cap, u64* counters) {
    typedef typename KeyOf<T>::type K;
    const int E = RND_UNROLL * Vec16<T>::N;
    __shared__ K stages[RND_WARPS][WARP_SIZE * E];
    K* stage = stages[threadIdx.x / WARP_SIZE];
    const K lo = bounds[0];
    const K hi = bounds[1];
    if (rnd_full_form(bounds, counters)) {
        rnd_scan<T, true>(x, n, lo, hi, cand, cap, counters, stage);
    } else {
        rnd_scan<T, false>(x, n, lo, hi, cand, cap, counters, stage);
    }
}

// One block of 256 threads: places rank k among the pass's counts. A rank on a splitter's
// duplicates (full form) is that splitter (out[slot]); one among the copies starts a radix
// selection over them (cand = the radix passes' buffer 0, `cap` keys, each less lo) with the
// leading digits that no copy uses (those of hi - lo) already fixed; otherwise the bracket
// missed. The radix state always ends with the NaN count and with a source that radix passes may
// read (an empty one when they have nothing to do). out[ranks + slot] = RND_DONE /
// RND_CANDIDATES / RND_MISSED, and out[2 * ranks] = the NaN count.
template <typename K>
__device__ void rnd_resolve_impl(const K* bounds, const u64* counters, u64 k, u64 cap, SelState* st,
                                 u64* hist, u64* out, u64 slot, u64 ranks) {
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
    st->base = 0;
    out[2 * ranks] = counters[RND_NANS];
    u32 outcome;
    if (k < below || k >= first_hi + counters[RND_EQ_HI]) {
        outcome = RND_MISSED;
    } else if (k < first_between) {
        out[slot] = (u64)lo;
        outcome = RND_DONE;
    } else if (k >= first_hi) {
        out[slot] = (u64)hi;
        outcome = RND_DONE;
    } else if (between > cap) {
        outcome = RND_MISSED;
    } else {
        // Every copy is a key of [lo, hi] less lo: the whole digits above those of hi - lo are
        // zero in every copy, so they are fixed already.
        const u32 bits = sizeof(K) * 8;
        const u32 unused_bits = (u32)__clzll((u64)(K)(hi - lo)) - (64 - bits);
        // (At most all digits but the last, so that the last pass writes the result.)
        st->fixed_bits = min(unused_bits / 8 * 8, bits - 8);
        st->base = (u64)lo;
        st->k = k - first_between;
        st->count = between;
        st->src_count = between;
        outcome = RND_CANDIDATES;
    }
    out[ranks + slot] = outcome;
}

#define RANDOMIZED_SELECT_KERNELS(NAME, T)                                                        \
    extern "C" __global__ void rnd_sample_##NAME(const T* x, u64 n, KeyOf<T>::type* sample, u64 s, \
                                                 u64 seed, u32* top_hist) {                       \
        rnd_sample_impl<T>(x, n, sample, s, seed, top_hist);                                      \
    }                                                                                             \
    extern "C" __global__ void __launch_bounds__(RND_BLOCK, RND_PASS_MIN_BLOCKS)       \
        rnd_pass_##NAME(const T* x, u64 n, const KeyOf<T>::type* bounds, KeyOf<T>::type* cand,    \
                        u64 cap, u64* counters) {                                                 \
        rnd_pass_impl<T>(x, n, bounds, cand, cap, counters);                                      \
    }
KSELECT_FOR_EACH_TYPE(RANDOMIZED_SELECT_KERNELS)

#define RANDOMIZED_KEY_KERNELS(NAME, K)                                                           \
    extern "C" __global__ void __launch_bounds__(RND_SPLIT_BLOCK)                                 \
        rnd_splitters_##NAME(const K* sample, u64 s, const u32* top_hist, u64 r_lo, u64 r_hi,     \
                             K* bounds, u64* counters) {                                          \
        rnd_splitters_impl<K>(sample, s, top_hist, r_lo, r_hi, bounds, counters);                 \
    }                                                                                             \
    extern "C" __global__ void rnd_resolve_##NAME(const K* bounds, const u64* counters, u64 k,    \
                                                  u64 cap, SelState* st, u64* hist, u64* out,     \
                                                  u64 slot, u64 ranks) {                          \
        rnd_resolve_impl<K>(bounds, counters, k, cap, st, hist, out, slot, ranks);                \
    }
KSELECT_FOR_EACH_KEY(RANDOMIZED_KEY_KERNELS)
