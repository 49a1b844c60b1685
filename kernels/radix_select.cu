// MSD radix select (Alabi et al.): 8-bit digits from the most significant down. Each pass
// histograms the digit of the candidates (the keys that match the prefix fixed so far), and a
// one-block kernel picks the digit whose bucket holds rank k. Once the candidates fit in the
// workspace, a pass also copies them out, so later passes read only them. All decisions stay on
// the device: a selection is a fixed sequence of launches with no host round trip.
#include "common.cuh"

#define SEL_BLOCK 256
#define SEL_WARPS (SEL_BLOCK / WARP_SIZE)
#define SEL_RADIX 256
// Keys a warp stages before writing its candidates out with one atomic (instead of a block-wide
// append: two barriers a trip), two or four trips of 16-byte vectors.
#define SEL_STAGE (WARP_SIZE * 8)

extern "C" __global__ void rsel_init(SelState* st, u64* hist, u64 k, u64 n, u64 cap) {
    for (int d = threadIdx.x; d < SEL_RADIX; d += blockDim.x) hist[d] = 0;
    if (threadIdx.x == 0) {
        st->prefix = 0;
        st->k = k;
        st->count = n;
        st->src_count = 0;
        st->out_count = 0;
        st->fixed_bits = 0;
        st->src = SRC_INPUT;
        st->dst = n <= cap ? 1u : 0u;
        st->pad = 0;
        st->nans = 0;
        st->base = 0;
    }
}


// One pass over the candidates: histogram of the digit at `shift` of the keys matching the
// prefix, the copy of those keys when the state asks for it (staged by each warp), and (first
// pass) the NaN count. Loops are block-uniform (every thread of a block makes the same number of
// trips), so that a warp's lanes stage together.
template <typename T>
__device__ void rsel_pass_impl(const T* __restrict__ x, u64 n, typename KeyOf<T>::type* buf0,
                               typename KeyOf<T>::type* buf1, SelState* st, u64* hist, u32 shift) {
    typedef typename KeyOf<T>::type K;
    const int V = Vec16<T>::N;
    __shared__ u32 warp_hist[SEL_WARPS][SEL_RADIX];
    __shared__ K stages[SEL_WARPS][SEL_STAGE];
    K* stage = stages[threadIdx.x / WARP_SIZE];
    u32 staged = 0;
    for (int i = threadIdx.x; i < SEL_WARPS * SEL_RADIX; i += blockDim.x) (&warp_hist[0][0])[i] = 0;
    __syncthreads();
    const SelState s = *st;
    // A digit that the state has fixed already (a selection started with a known prefix).
    if (shift >= sizeof(K) * 8 - s.fixed_bits) return;
    const K prefix = (K)s.prefix;
    K* out = s.dst == 1 ? buf0 : (s.dst == 2 ? buf1 : (K*)0);
    u32* my_hist = warp_hist[threadIdx.x / WARP_SIZE];
    const u64 threads = (u64)gridDim.x * blockDim.x;
    const u64 first = (u64)blockIdx.x * blockDim.x;
    // The first pass reads every element: it counts the NaNs too (their key is the largest).
    const bool count_nans = HasNan<T>::value && s.fixed_bits == 0;
    u32 nans = 0;
    if (s.src == SRC_INPUT) {
        const u64 nvec = n / V;
        // Whole 16-byte vectors, then the tail that does not fill one (block 0).
        const u64 trips = nvec > first ? (nvec - first + threads - 1) / threads : 0;
        const bool tail_block = blockIdx.x == 0 && nvec * V < n;
        for (u64 t = 0; t < trips + (tail_block ? 1 : 0); ++t) {
            K key[V];
            bool m[V];
            if (t < trips) {
                const u64 i = first + t * threads + threadIdx.x;
                const bool in = i < nvec;
                T v[V];
                if (in) load16(x + i * V, v);
#pragma unroll
                for (int j = 0; j < V; ++j) {
                    key[j] = in ? to_key(v[j]) : (K)0;
                    m[j] = in && radix::matches(key[j], prefix, s.fixed_bits);
                    if (count_nans) nans += (in && key[j] == (K)~(K)0) ? 1u : 0u;
                }
            } else {
#pragma unroll
                for (int j = 0; j < V; ++j) {
                    const u64 i = nvec * V + threadIdx.x * V + j;
                    const bool in = threadIdx.x * V + j < (u64)V && i < n;
                    key[j] = in ? to_key(x[i]) : (K)0;
                    m[j] = in && radix::matches(key[j], prefix, s.fixed_bits);
                    if (count_nans) nans += (in && key[j] == (K)~(K)0) ? 1u : 0u;
                }
            }
#pragma unroll
            for (int j = 0; j < V; ++j) radix::count_digit(my_hist, m[j], (u32)(key[j] >> shift) & (SEL_RADIX - 1));
            if (out) warp_stage_append<K, V, SEL_STAGE>(stage, staged, out, ~0ull, &st->out_count, key, m);
        }
    } else {
        const K* src = s.src == 1 ? buf0 : buf1;
        const int VK = Vec16<K>::N;
        for_each_trip(src, s.src_count, [&](K (&key)[VK], bool (&m)[VK]) {
#pragma unroll
            for (int j = 0; j < VK; ++j) {
                m[j] = m[j] && radix::matches(key[j], prefix, s.fixed_bits);
                radix::count_digit(my_hist, m[j], (u32)(key[j] >> shift) & (SEL_RADIX - 1));
            }
            if (out) warp_stage_append<K, VK, SEL_STAGE>(stage, staged, out, ~0ull, &st->out_count, key, m);
        });
    }
    if (out) warp_flush(stage, staged, out, ~0ull, &st->out_count);
    if (count_nans) {
        for (int off = WARP_SIZE / 2; off > 0; off /= 2) nans += __shfl_down_sync(FULL_MASK, nans, off);
        if ((threadIdx.x & 31) == 0 && nans) atomicAdd(&st->nans, (u64)nans);
    }
    __syncthreads();
    for (int d = threadIdx.x; d < SEL_RADIX; d += blockDim.x) {
        u32 total = 0;
        for (int w = 0; w < SEL_WARPS; ++w) total += warp_hist[w][d];
        if (total) atomicAdd(&hist[d], (u64)total);
    }
}

// One block of SEL_RADIX threads: finds the digit whose bucket holds rank k, fixes it in the
// prefix, moves the source to the buffer just written, decides whether the next pass compacts,
// and clears the histogram. After the last digit, writes the selected key (the state's base
// added back) to result[slot] and the NaN count to result[nans_at].
template <typename K>
__device__ void rsel_choose_impl(SelState* st, u64* hist, u32 shift, u64 cap, u64* result, u64 slot,
                                 u64 nans_at) {
    __shared__ u64 scan[SEL_RADIX];
    if (shift >= sizeof(K) * 8 - st->fixed_bits) return;  // fixed already (see rsel_pass)
    const u32 d = threadIdx.x;
    const u64 c = hist[d];
    const u64 before = block::inclusive_sum<SEL_RADIX>(c, scan) - c;
    const SelState s = *st;
    __syncthreads();
    if (c > 0 && before <= s.k && s.k < before + c) {
        const K prefix = (K)s.prefix | ((K)d << shift);
        st->prefix = prefix;
        st->k = s.k - before;
        st->count = c;
        st->fixed_bits = s.fixed_bits + 8;
        if (s.dst != 0) {
            st->src = s.dst;
            st->src_count = s.out_count;
        }
        const u32 src = s.dst != 0 ? s.dst : s.src;
        st->dst = c <= cap ? (src == 1 ? 2u : 1u) : 0u;
        st->out_count = 0;
        if (shift == 0) {
            result[slot] = (u64)(K)(prefix + (K)s.base);
            result[nans_at] = s.nans;
        }
    }
    hist[d] = 0;
}

#define RADIX_SELECT_KERNELS(NAME, T)                                                             \
    extern "C" __global__ void __launch_bounds__(SEL_BLOCK)                                       \
        rsel_pass_##NAME(const T* x, u64 n, KeyOf<T>::type* buf0, KeyOf<T>::type* buf1,           \
                         SelState* st, u64* hist, u32 shift) {                                    \
        rsel_pass_impl<T>(x, n, buf0, buf1, st, hist, shift);                                     \
    }
KSELECT_FOR_EACH_TYPE(RADIX_SELECT_KERNELS)

#define RADIX_CHOOSE_KERNELS(NAME, K)                                                             \
    extern "C" __global__ void __launch_bounds__(SEL_RADIX)                                       \
        rsel_choose_##NAME(SelState* st, u64* hist, u32 shift, u64 cap, u64* result, u64 slot,    \
                           u64 nans_at) {                                                         \
        rsel_choose_impl<K>(st, hist, shift, cap, result, slot, nans_at);                         \
    }
KSELECT_FOR_EACH_KEY(RADIX_CHOOSE_KERNELS)

// Radix select of a short input by a grid of SMALL_BLOCK-thread blocks all resident at once
// (a cooperative launch), each thread holding up to SMALL_PER_THREAD keys in registers: element
// (j * gridDim.x + block) * SMALL_BLOCK + thread is key j of that thread (only the slots some
// thread fills are visited). Every digit is a count
// of the registers into a shared histogram (added into the digit's own global histogram and a
// grid barrier when there are several blocks), then every block scans the same histogram and
// fixes the same digit, so a selection is one launch. Up to two ranks (k0, then k1 when `ranks`
// is 2); out[r] is the key of the r-th, and out[ranks] the NaN count (floats; 0 otherwise).
// `work` (several blocks only): zeroed words, one 256-count histogram a rank and digit, then the
// NaN count and the barrier's arrivals.
#define SMALL_BLOCK 1024
#define SMALL_PER_THREAD 16
#define SMALL_GROUP 4

// Waits until every block of the grid has arrived for the `round`-th time (all blocks resident:
// a cooperative launch). `arrived` counts arrivals and is never reset.
__device__ __forceinline__ void grid_barrier(u32* arrived, u32 round) {
    __syncthreads();
    if (threadIdx.x == 0) {
        __threadfence();
        atomicAdd(arrived, 1u);
        const u32 target = round * gridDim.x;
        while (*(volatile u32*)arrived < target) __nanosleep(20);
        __threadfence();
    }
    __syncthreads();
}

template <typename T>
__device__ void rsel_small_impl(const T* __restrict__ x, u64 n, u64 k0, u64 k1, u32 ranks, u64* out,
                                u32* work) {
    typedef typename KeyOf<T>::type K;
    const u32 bits = sizeof(K) * 8;
    const bool grid = gridDim.x > 1;
    u32* nan_total = grid ? work + ranks * bits / 8 * SEL_RADIX : (u32*)0;
    u32* arrived = grid ? nan_total + 1 : (u32*)0;
    // Two histograms taking turns: the next digit's is zeroed while this one's is scanned.
    __shared__ u32 hist[2][SEL_RADIX];
    __shared__ u32 warp_total[SEL_RADIX / WARP_SIZE];
    __shared__ u64 chosen_prefix;
    __shared__ u64 chosen_k;
    __shared__ u32 chosen_count;
    __shared__ u32 nan_count;
    // Element j of this thread, and whether the input has it.
    const auto index = [&](int j) { return ((u64)j * gridDim.x + blockIdx.x) * SMALL_BLOCK + threadIdx.x; };
    // The register slots any thread of the grid fills (the same for all: the others are
    // skipped).
    const u64 per_slot = (u64)gridDim.x * SMALL_BLOCK;
    const int used = (int)min((u64)SMALL_PER_THREAD, (n + per_slot - 1) / per_slot);
    K key[SMALL_PER_THREAD];
    u32 nans = 0;
#pragma unroll
    for (int j = 0; j < SMALL_PER_THREAD; ++j) {
        const bool in = j < used && index(j) < n;
        key[j] = in ? to_key(x[index(j)]) : (K)0;
        if (HasNan<T>::value && in && key[j] == (K)~(K)0) ++nans;
    }
    if (threadIdx.x == 0) nan_count = 0;
    if (threadIdx.x < SEL_RADIX) hist[0][threadIdx.x] = 0;
    __syncthreads();
    if (HasNan<T>::value) {
        for (int off = WARP_SIZE / 2; off > 0; off /= 2) nans += __shfl_down_sync(FULL_MASK, nans, off);
        if ((threadIdx.x & 31) == 0 && nans) atomicAdd(grid ? nan_total : &nan_count, nans);
    }
    u32 round = 0;
    u32 turn = 0;
    for (u32 r = 0; r < ranks; ++r) {
        K prefix = 0;
        u64 k = r == 0 ? k0 : k1;
        for (u32 fixed = 0; fixed < bits; fixed += 8, turn ^= 1) {
            const u32 shift = bits - 8 - fixed;
            u32* global_hist = grid ? work + (r * bits / 8 + fixed / 8) * SEL_RADIX : (u32*)0;
            u32* counts = hist[turn];
            // Slots in groups of SMALL_GROUP: a group's counts are scheduled together, and only
            // the groups some thread fills are visited.
#pragma unroll
            for (int g = 0; g < SMALL_PER_THREAD; g += SMALL_GROUP) {
                if (g < used) {
#pragma unroll
                    for (int j = g; j < g + SMALL_GROUP; ++j) {
                        const bool valid = index(j) < n && radix::matches(key[j], prefix, fixed);
                        radix::count_digit(counts, valid, (u32)(key[j] >> shift) & (SEL_RADIX - 1));
                    }
                }
            }
            __syncthreads();
            if (grid) {
                if (threadIdx.x < SEL_RADIX && counts[threadIdx.x]) atomicAdd(&global_hist[threadIdx.x], counts[threadIdx.x]);
                grid_barrier(arrived, ++round);
            }
            u32 count = 0, inclusive = 0;
            if (threadIdx.x < SEL_RADIX) {
                count = grid ? *(volatile u32*)&global_hist[threadIdx.x] : counts[threadIdx.x];
                inclusive = warp::inclusive_sum(count);
                if ((threadIdx.x & 31) == 31) warp_total[threadIdx.x / WARP_SIZE] = inclusive;
                hist[turn ^ 1][threadIdx.x] = 0;
            }
            __syncthreads();
            if (threadIdx.x < SEL_RADIX) {
                u64 before = inclusive - count;
                for (u32 w = 0; w < threadIdx.x / WARP_SIZE; ++w) before += warp_total[w];
                if (count > 0 && before <= k && k < before + count) {
                    chosen_prefix = (u64)(prefix | ((K)threadIdx.x << shift));
                    chosen_k = k - before;
                    chosen_count = count;
                }
            }
            __syncthreads();
            prefix = (K)chosen_prefix;
            k = chosen_k;
            if (!grid && chosen_count == 1 && fixed + 8 < bits) {
                // One candidate is left in the block: it is the key sought, whatever its lower
                // digits (its thread writes it; the decision is the block's, so all leave).
                __syncthreads();
#pragma unroll
                for (int j = 0; j < SMALL_PER_THREAD; ++j) {
                    if (j < used && index(j) < n && radix::matches(key[j], prefix, fixed + 8)) chosen_prefix = (u64)key[j];
                }
                __syncthreads();
                prefix = (K)chosen_prefix;
                turn ^= 1;
                break;
            }
        }
        if (blockIdx.x == 0 && threadIdx.x == 0) out[r] = (u64)prefix;
    }
    if (blockIdx.x == 0 && threadIdx.x == 0) out[ranks] = grid ? *(volatile u32*)nan_total : nan_count;
}

#define RADIX_SMALL_KERNELS(NAME, T)                                                              \
    extern "C" __global__ void __launch_bounds__(SMALL_BLOCK)                                     \
        rsel_small_##NAME(const T* x, u64 n, u64 k0, u64 k1, u32 ranks, u64* out, u32* work) {   \
        rsel_small_impl<T>(x, n, k0, k1, ranks, out, work);                                       \
    }
KSELECT_FOR_EACH_TYPE(RADIX_SMALL_KERNELS)
