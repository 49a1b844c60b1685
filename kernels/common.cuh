// Shared definitions for kselect's kernels. Self-contained: no toolkit headers, so that only
// libnvrtc is needed at run time. Every .cu file is compiled with this header in front of it.
#pragma once

typedef unsigned int u32;
typedef unsigned long long u64;
typedef int i32;
typedef long long i64;

#define WARP_SIZE 32
#define FULL_MASK 0xffffffffu

// Order-preserving keys: the same mapping as src/element.rs. NaN (either sign) maps to the
// largest key so that NaNs order last; negatives have all bits flipped, positives the sign bit.
__device__ __forceinline__ u32 to_key(float x) {
    u32 b = __float_as_uint(x);
    if (x != x) return 0xffffffffu;
    u32 flip = (u32)((i32)b >> 31) | 0x80000000u;
    return b ^ flip;
}
__device__ __forceinline__ u64 to_key(double x) {
    u64 b = (u64)__double_as_longlong(x);
    if (x != x) return 0xffffffffffffffffull;
    u64 flip = (u64)((i64)b >> 63) | 0x8000000000000000ull;
    return b ^ flip;
}
__device__ __forceinline__ u32 to_key(i32 x) { return (u32)x ^ 0x80000000u; }
__device__ __forceinline__ u64 to_key(i64 x) { return (u64)x ^ 0x8000000000000000ull; }
__device__ __forceinline__ u32 to_key(u32 x) { return x; }
__device__ __forceinline__ u64 to_key(u64 x) { return x; }

template <typename T> struct KeyOf;
template <> struct KeyOf<float> { typedef u32 type; };
template <> struct KeyOf<double> { typedef u64 type; };
template <> struct KeyOf<i32> { typedef u32 type; };
template <> struct KeyOf<i64> { typedef u64 type; };
template <> struct KeyOf<u32> { typedef u32 type; };
template <> struct KeyOf<u64> { typedef u64 type; };

// The value of a key (NaN keys give the canonical quiet NaN).
template <typename T> __device__ __forceinline__ T from_key(typename KeyOf<T>::type k);
template <> __device__ __forceinline__ float from_key<float>(u32 k) {
    if (k == 0xffffffffu) return __uint_as_float(0x7fc00000u);  // canonical quiet NaN
    u32 b = (k & 0x80000000u) ? (k ^ 0x80000000u) : ~k;
    return __uint_as_float(b);
}
template <> __device__ __forceinline__ double from_key<double>(u64 k) {
    if (k == 0xffffffffffffffffull) return __longlong_as_double(0x7ff8000000000000ll);  // quiet NaN
    u64 b = (k & 0x8000000000000000ull) ? (k ^ 0x8000000000000000ull) : ~k;
    return __longlong_as_double((i64)b);
}
template <> __device__ __forceinline__ i32 from_key<i32>(u32 k) { return (i32)(k ^ 0x80000000u); }
template <> __device__ __forceinline__ i64 from_key<i64>(u64 k) { return (i64)(k ^ 0x8000000000000000ull); }
template <> __device__ __forceinline__ u32 from_key<u32>(u32 k) { return k; }
template <> __device__ __forceinline__ u64 from_key<u64>(u64 k) { return k; }

__device__ __forceinline__ bool is_nan(float x) { return x != x; }
__device__ __forceinline__ bool is_nan(double x) { return x != x; }

// Whether a value of any element type is NaN (never for integers).
__device__ __forceinline__ bool is_nan_value(float x) { return x != x; }
__device__ __forceinline__ bool is_nan_value(double x) { return x != x; }
__device__ __forceinline__ bool is_nan_value(i32) { return false; }
__device__ __forceinline__ bool is_nan_value(i64) { return false; }
__device__ __forceinline__ bool is_nan_value(u32) { return false; }
__device__ __forceinline__ bool is_nan_value(u64) { return false; }

// Whether a type can hold NaN.
template <typename T> struct HasNan { static const bool value = false; };
template <> struct HasNan<float> { static const bool value = true; };
template <> struct HasNan<double> { static const bool value = true; };

// Lanes below this one in the warp.
__device__ __forceinline__ u32 lanemask_lt() {
    u32 mask;
    asm("mov.u32 %0, %%lanemask_lt;" : "=r"(mask));
    return mask;
}

namespace warp {

// Inclusive prefix sum of v over the lanes of the warp. Collective over the warp.
template <typename T>
__device__ __forceinline__ T inclusive_sum(T v) {
    const u32 lane = threadIdx.x & 31;
#pragma unroll
    for (int off = 1; off < WARP_SIZE; off <<= 1) {
        const T y = __shfl_up_sync(FULL_MASK, v, off);
        if (lane >= (u32)off) v += y;
    }
    return v;
}

// The smallest of the warp's lo, the largest of its hi and the sums of each of `sums`, in
// lane 0 (a shuffle-down tree). Collective over the warp.
template <typename K, typename... S>
__device__ __forceinline__ void reduce_extremes(K& lo, K& hi, S&... sums) {
    for (int off = WARP_SIZE / 2; off > 0; off /= 2) {
        const K a = __shfl_down_sync(FULL_MASK, lo, off);
        const K b = __shfl_down_sync(FULL_MASK, hi, off);
        lo = a < lo ? a : lo;
        hi = b > hi ? b : hi;
        ((sums += __shfl_down_sync(FULL_MASK, sums, off)), ...);
    }
}

}  // namespace warp

namespace block {

// Inclusive prefix sum (Hillis–Steele) of v over the N threads of a block (blockDim.x == N),
// through scratch[0..N) in shared memory. Collective over the block.
template <u32 N>
__device__ __forceinline__ u64 inclusive_sum(u64 v, u64* scratch) {
    const u32 d = threadIdx.x;
    scratch[d] = v;
    __syncthreads();
    for (u32 off = 1; off < N; off <<= 1) {
        const u64 y = d >= off ? scratch[d - off] : 0;
        __syncthreads();
        scratch[d] += y;
        __syncthreads();
    }
    return scratch[d];
}

}  // namespace block

namespace serial {

// Turns a[0..count) into its exclusive prefix sums, by one thread; returns the total.
template <typename T>
__device__ __forceinline__ T exclusive_sum(T* a, u32 count) {
    T run = 0;
    for (u32 w = 0; w < count; ++w) {
        const T c = a[w];
        a[w] = run;
        run += c;
    }
    return run;
}

}  // namespace serial

namespace radix {

// Whether `key` has the `fixed` leading bits of `prefix`.
template <typename K>
__device__ __forceinline__ bool matches(K key, K prefix, u32 fixed) {
    const u32 bits = sizeof(K) * 8;
    return fixed == 0 || (key >> (bits - fixed)) == (prefix >> (bits - fixed));
}

// Counts one digit into a shared histogram; a warp whose valid lanes all share the digit adds
// once (all-equal and few-valued inputs would otherwise serialise on one counter).
__device__ __forceinline__ void count_digit(u32* hist, bool valid, u32 d) {
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

}  // namespace radix

// Element types and their kernel-name suffixes: M(suffix, type).
#define KSELECT_FOR_EACH_TYPE(M) \
    M(f32, float)                \
    M(f64, double)               \
    M(i32, i32)                  \
    M(i64, i64)                  \
    M(u32, u32)                  \
    M(u64, u64)

// Key types and their suffixes: M(suffix, type).
#define KSELECT_FOR_EACH_KEY(M) \
    M(k32, u32)                 \
    M(k64, u64)

// Element loads of 16 bytes: VEC elements of T at once from a 16-byte aligned index.
template <typename T> struct Vec16 { static const int N = 16 / sizeof(T); };

template <typename T>
__device__ __forceinline__ void load16(const T* p, T (&out)[16 / sizeof(T)]) {
    const uint4 raw = *reinterpret_cast<const uint4*>(p);
    const T* v = reinterpret_cast<const T*>(&raw);
#pragma unroll
    for (int j = 0; j < (int)(16 / sizeof(T)); ++j) out[j] = v[j];
}

// Block-uniform loops over x[0..n) in 16-byte vectors of V elements: every thread of a block
// makes the same number of trips (so a trip may synchronise the block). `first` is the block's
// first vector, `threads` the grid's thread count. Trips below `vector_trips` load one vector a
// thread; block 0 makes one more trip, in which thread 0 takes the tail that fills no vector.
template <int V>
__device__ __forceinline__ u64 vector_trips(u64 n, u64 first, u64 threads) {
    const u64 nvec = n / V;
    return nvec > first ? (nvec - first + threads - 1) / threads : 0;
}

// All trips of the block: the vector trips, and the tail trip on block 0.
template <int V>
__device__ __forceinline__ u64 trip_count(u64 n, u64 first, u64 threads) {
    return vector_trips<V>(n, first, threads) + ((blockIdx.x == 0 && n % V != 0) ? 1 : 0);
}

// The elements of trip `t` (`vtrips` = vector_trips, computed once per loop); `valid[j]` says
// which of v[j] are elements of x.
template <typename T, int V>
__device__ __forceinline__ void load_trip(const T* __restrict__ x, u64 n, u64 first, u64 threads,
                                          u64 vtrips, u64 t, T (&v)[V], bool (&valid)[V]) {
    const u64 nvec = n / V;
    if (t < vtrips) {
        const u64 i = first + t * threads + threadIdx.x;
        const bool in = i < nvec;
        if (in) load16(x + i * V, v);
#pragma unroll
        for (int j = 0; j < V; ++j) valid[j] = in;
    } else {
#pragma unroll
        for (int j = 0; j < V; ++j) {
            const u64 i = nvec * V + j;
            valid[j] = threadIdx.x == 0 && i < n;
            v[j] = valid[j] ? x[i] : (T)0;
        }
    }
}

// The block-uniform loop over x[0..n) of the whole grid: body(v, valid) once a trip, with the
// trip's V = Vec16<T>::N elements loaded by load_trip.
template <typename T, typename Body>
__device__ __forceinline__ void for_each_trip(const T* __restrict__ x, u64 n, Body body) {
    const int V = Vec16<T>::N;
    const u64 threads = (u64)gridDim.x * blockDim.x;
    const u64 first = (u64)blockIdx.x * blockDim.x;
    const u64 vtrips = vector_trips<V>(n, first, threads);
    const u64 trips = trip_count<V>(n, first, threads);
    for (u64 t = 0; t < trips; ++t) {
        T v[V];
        bool valid[V];
        load_trip<T, V>(x, n, first, threads, vtrips, t, v, valid);
        body(v, valid);
    }
}

// The position of sample element i (i < s <= n) among x[0..n): one element from each of s equal
// strides of n / s, at an offset hashed from i and the seed (splitmix64's finaliser), so that
// sorted or periodic inputs are not sampled in step with their pattern.
__device__ __forceinline__ u64 sample_position(u64 i, u64 n, u64 s, u64 seed) {
    const u64 stride = n / s;
    u64 h = (i + seed) * 0x9E3779B97F4A7C15ull;
    h ^= h >> 31;
    h *= 0xBF58476D1CE4E5B9ull;
    h ^= h >> 29;
    return i * stride + (stride > 1 ? h % stride : 0);
}

// Loads out[u] = keys[base + u * blockDim.x + threadIdx.x] for u < U (0 at or beyond len): a
// block's coalesced batch of U independent loads a thread.
template <int U, typename K>
__device__ __forceinline__ void load_strided(const K* __restrict__ keys, u64 base, u64 len, K (&out)[U]) {
#pragma unroll
    for (int u = 0; u < U; ++u) {
        const u64 i = base + (u64)u * blockDim.x + threadIdx.x;
        out[u] = i < len ? keys[i] : (K)0;
    }
}

// The shared-window address of a pointer into shared memory.
__device__ __forceinline__ u32 shared_address(const void* p) {
    u64 a;
    asm("cvta.to.shared.u64 %0, %1;" : "=l"(a) : "l"(p));
    return (u32)a;
}

// Stores to shared memory at a shared-window address.
__device__ __forceinline__ void st_shared(u32 at, u32 v) {
    asm volatile("st.shared.u32 [%0], %1;" ::"r"(at), "r"(v) : "memory");
}
__device__ __forceinline__ void st_shared(u32 at, u64 v) {
    asm volatile("st.shared.u64 [%0], %1;" ::"r"(at), "l"(v) : "memory");
}

// Reserves `staged` places on `out_count` with one atomic for the warp and calls
// `write(i, place)` for each staged item i (lanes striding over them). Collective over the warp.
template <typename Write>
__device__ __forceinline__ void warp_flush_with(u32 staged, u64* out_count, Write write) {
    __syncwarp();
    const u32 lane = threadIdx.x & 31;
    u64 base = 0;
    if (lane == 0 && staged) base = atomicAdd(out_count, (u64)staged);
    base = __shfl_sync(FULL_MASK, base, 0);
    for (u32 i = lane; i < staged; i += WARP_SIZE) write(i, base + i);
    __syncwarp();
}

// Writes a warp's staged items out (see warp_stage_append); places from `cap` on are counted
// only.
template <typename E>
__device__ __forceinline__ void warp_flush(E* stage, u32 staged, E* out, u64 cap, u64* out_count) {
    warp_flush_with(staged, out_count, [&](u32 i, u64 at) {
        if (at < cap) out[at] = stage[i];
    });
}

// Stages the marked items of a warp (up to V a lane) in its shared `stage` (STAGE slots,
// `staged` of them used: warp-uniform; STAGE >= 32 * V) and hands the stage to `flush(staged)`
// when the next items would not fit. A lane's place comes from one ballot per bit of its item
// count, so a warp with nothing to append pays a few votes. Collective over the warp; no block
// barrier.
template <typename E, int V, int STAGE, typename Flush>
__device__ __forceinline__ void warp_stage_append_with(E* stage, u32& staged, const E (&item)[V],
                                                       const bool (&m)[V], Flush flush) {
    u32 mine = 0;
#pragma unroll
    for (int j = 0; j < V; ++j) mine += m[j] ? 1u : 0u;
    const u32 lt = lanemask_lt();
    u32 total = 0, before = 0;
#pragma unroll
    for (int b = 0; (1 << b) <= V; ++b) {
        const u32 votes = __ballot_sync(FULL_MASK, (mine >> b) & 1u);
        total += (u32)__popc(votes) << b;
        before += (u32)__popc(votes & lt) << b;
    }
    if (total == 0) return;
    if (staged + total > STAGE) {
        flush(staged);
        staged = 0;
    }
    // Stores through a shared-window address computed once: a predicated store and add a item.
    u32 at = shared_address(stage + staged + before);
#pragma unroll
    for (int j = 0; j < V; ++j) {
        if (m[j]) {
            st_shared(at, item[j]);
            at += sizeof(E);
        }
    }
    staged += total;
    __syncwarp();
}

// warp_stage_append_with whose stage goes to `out` with one atomic on `out_count`; items whose
// position reaches `cap` are counted but not written.
template <typename E, int V, int STAGE>
__device__ __forceinline__ void warp_stage_append(E* stage, u32& staged, E* out, u64 cap, u64* out_count,
                                                  const E (&item)[V], const bool (&m)[V]) {
    warp_stage_append_with<E, V, STAGE>(stage, staged, item, m,
                                        [&](u32 n) { warp_flush(stage, n, out, cap, out_count); });
}

// Appends the marked items of a whole block (up to V a thread) to `out` with one global atomic
// per block: a warp scan of the per-thread counts, a scan of the WARPS warp totals, one
// reservation on `out_count`. Items whose position reaches `cap` are counted but not written.
// Collective: every thread of the block calls it the same number of times.
template <int WARPS, typename E, int V>
__device__ __forceinline__ void block_append(E* out, u64 cap, u64* out_count, const E (&item)[V],
                                             const bool (&m)[V], u32* warp_offset, u64* block_base) {
    const u32 lane = threadIdx.x & 31;
    const u32 warp = threadIdx.x / WARP_SIZE;
    u32 mine = 0;
#pragma unroll
    for (int j = 0; j < V; ++j) mine += m[j] ? 1u : 0u;
    const u32 incl = warp::inclusive_sum(mine);
    if (lane == 31) warp_offset[warp] = incl;
    __syncthreads();
    if (threadIdx.x == 0) {
        const u32 run = serial::exclusive_sum(warp_offset, WARPS);
        *block_base = run ? atomicAdd(out_count, (u64)run) : 0;
    }
    __syncthreads();
    u64 pos = *block_base + warp_offset[warp] + (incl - mine);
#pragma unroll
    for (int j = 0; j < V; ++j) {
        if (m[j]) {
            if (pos < cap) out[pos] = item[j];
            ++pos;
        }
    }
    __syncthreads();
}

namespace bitonic {

// The bitonic network over p places (a power of two) with the whole block: exchange(lo, hi, up)
// once for each pair a step compares, lo < hi, `up` when the pair is to be ascending; a block
// barrier after each step.
template <typename Exchange>
__device__ __forceinline__ void network(u32 p, Exchange exchange) {
    for (u32 size = 2; size <= p; size <<= 1) {
        for (u32 stride = size >> 1; stride > 0; stride >>= 1) {
            for (u32 t = threadIdx.x; t < p / 2; t += blockDim.x) {
                const u32 lo = 2 * t - (t & (stride - 1));
                const u32 hi = lo + stride;
                exchange(lo, hi, (lo & size) == 0);
            }
            __syncthreads();
        }
    }
}

// Sorts a[0..p) ascending in shared memory with the whole block (p a power of two).
template <typename K>
__device__ __forceinline__ void sort(K* a, u32 p) {
    network(p, [&](u32 lo, u32 hi, bool ascending) {
        const K x = a[lo];
        const K y = a[hi];
        if ((x > y) == ascending) {
            a[lo] = y;
            a[hi] = x;
        }
    });
}

}  // namespace bitonic

// Sorts a[0..N) ascending in shared memory with the whole block (N a power of two).
// Starts and ends with a barrier.
template <typename K, int N>
__device__ void block_bitonic_sort(K* a) {
    __syncthreads();
    bitonic::sort(a, (u32)N);
}

// The state of a radix selection (kernels/radix_select.cu), kept on the device between its
// launches; other selections (kernels/randomized_select.cu) start one from their candidates.
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
    u64 nans;        // NaNs of the input, counted by the first pass (floats only)
    u64 base;        // the candidates are keys less `base` (0: the keys themselves)
};
