// MSD radix select (Alabi et al.): 8-bit digits from the most significant down. Each pass
// histograms the digit of the candidates (the keys that match the prefix fixed so far), and a
// one-block kernel picks the digit whose bucket holds rank k. Once the candidates fit in the
// workspace, a pass also copies them out, so later passes read only them. All decisions stay on
// the device: a selection is a fixed sequence of launches with no host round trip.
#include "common.cuh"

#define SEL_BLOCK 256
#define SEL_WARPS (SEL_BLOCK / WARP_SIZE)
#define SEL_RADIX 256

// Where the candidates are: the input itself, or one of two compacted buffers.
#define SRC_INPUT 0u

struct SelState {
    u64 prefix;      // the key bits fixed so far (in place, higher bits)
    u64 k;           // the rank still sought among the candidates
    u64 count;       // how many keys match the prefix
    u64 src_count;   // how many keys the source buffer holds (when not the input)
    u64 out_count;   // keys written by the current pass
    u32 fixed_bits;  // how many leading bits the prefix fixes
    u32 src;         // SRC_INPUT, or 1 / 2 for buffer 0 / 1
    u32 dst;         // 0: the pass writes nothing; 1 / 2: it copies candidates to buffer 0 / 1
    u32 pad;
};

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
    }
}

template <typename K>
__device__ __forceinline__ bool matches(K key, K prefix, u32 fixed_bits) {
    const u32 bits = sizeof(K) * 8;
    return fixed_bits == 0 || (key >> (bits - fixed_bits)) == (prefix >> (bits - fixed_bits));
}

// Counts one digit into the warp's histogram; a warp whose valid lanes all share the digit
// adds once (all-equal and few-valued inputs would otherwise serialise on one counter).
__device__ __forceinline__ void count_digit(u32* warp_hist, bool valid, u32 d) {
    const u32 active = __ballot_sync(FULL_MASK, valid);
    if (active == 0) return;
    const int leader = __ffs(active) - 1;
    const u32 lead_d = __shfl_sync(FULL_MASK, d, leader);
    if (__all_sync(FULL_MASK, !valid || d == lead_d)) {
        if ((threadIdx.x & 31) == (u32)leader) atomicAdd(&warp_hist[lead_d], (u32)__popc(active));
    } else if (valid) {
        atomicAdd(&warp_hist[d], 1u);
    }
}

// Appends the valid keys of a warp to `out` with one atomic per warp.
template <typename K>
__device__ __forceinline__ void append(K* out, u64* out_count, bool valid, K key) {
    const u32 active = __ballot_sync(FULL_MASK, valid);
    if (active == 0) return;
    const int leader = __ffs(active) - 1;
    u64 base = 0;
    if ((threadIdx.x & 31) == (u32)leader) base = atomicAdd(out_count, (u64)__popc(active));
    base = __shfl_sync(FULL_MASK, base, leader);
    if (valid) out[base + __popc(active & lanemask_lt())] = key;
}

template <typename T>
__device__ void rsel_pass_impl(const T* __restrict__ x, u64 n, typename KeyOf<T>::type* buf0,
                               typename KeyOf<T>::type* buf1, SelState* st, u64* hist, u32 shift) {
    typedef typename KeyOf<T>::type K;
    __shared__ u32 warp_hist[SEL_WARPS][SEL_RADIX];
    for (int i = threadIdx.x; i < SEL_WARPS * SEL_RADIX; i += blockDim.x) (&warp_hist[0][0])[i] = 0;
    __syncthreads();
    const SelState s = *st;
    const K prefix = (K)s.prefix;
    K* out = s.dst == 1 ? buf0 : (s.dst == 2 ? buf1 : (K*)0);
    u32* my_hist = warp_hist[threadIdx.x / WARP_SIZE];
    const u64 tid = (u64)blockIdx.x * blockDim.x + threadIdx.x;
    const u64 threads = (u64)gridDim.x * blockDim.x;
    if (s.src == SRC_INPUT) {
        const int V = Vec16<T>::N;
        // Whole 16-byte vectors; `base` is warp-uniform so every lane takes part in the votes.
        const u64 nvec = n / V;
        for (u64 base = tid - (threadIdx.x & 31); base < nvec; base += threads) {
            const u64 i = base + (threadIdx.x & 31);
            T v[16 / sizeof(T)];
            const bool in = i < nvec;
            if (in) load16(x + i * V, v);
#pragma unroll
            for (int j = 0; j < V; ++j) {
                const K key = in ? to_key(v[j]) : (K)0;
                const bool m = in && matches(key, prefix, s.fixed_bits);
                count_digit(my_hist, m, (u32)(key >> shift) & (SEL_RADIX - 1));
                if (out) append(out, &st->out_count, m, key);
            }
        }
        // The tail that does not fill a vector, handled by the first warp.
        if (blockIdx.x == 0 && threadIdx.x < 32) {
            const u64 i = nvec * V + threadIdx.x;
            const bool in = i < n;
            const K key = in ? to_key(x[i]) : (K)0;
            const bool m = in && matches(key, prefix, s.fixed_bits);
            count_digit(my_hist, m, (u32)(key >> shift) & (SEL_RADIX - 1));
            if (out) append(out, &st->out_count, m, key);
        }
    } else {
        const K* src = s.src == 1 ? buf0 : buf1;
        const u64 len = s.src_count;
        for (u64 base = tid - (threadIdx.x & 31); base < len; base += threads) {
            const u64 i = base + (threadIdx.x & 31);
            const bool in = i < len;
            const K key = in ? src[i] : (K)0;
            const bool m = in && matches(key, prefix, s.fixed_bits);
            count_digit(my_hist, m, (u32)(key >> shift) & (SEL_RADIX - 1));
            if (out) append(out, &st->out_count, m, key);
        }
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
// and clears the histogram. After the last digit, writes the selected key to result[slot].
template <typename K>
__device__ void rsel_choose_impl(SelState* st, u64* hist, u32 shift, u64 cap, K* result, u64 slot) {
    __shared__ u64 scan[SEL_RADIX];
    const u32 d = threadIdx.x;
    const u64 c = hist[d];
    scan[d] = c;
    __syncthreads();
    for (u32 off = 1; off < SEL_RADIX; off <<= 1) {
        const u64 v = d >= off ? scan[d - off] : 0;
        __syncthreads();
        scan[d] += v;
        __syncthreads();
    }
    const u64 before = scan[d] - c;
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
        if (shift == 0) result[slot] = prefix;
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
        rsel_choose_##NAME(SelState* st, u64* hist, u32 shift, u64 cap, K* result, u64 slot) {    \
        rsel_choose_impl<K>(st, hist, shift, cap, result, slot);                                  \
    }
KSELECT_FOR_EACH_KEY(RADIX_CHOOSE_KERNELS)
