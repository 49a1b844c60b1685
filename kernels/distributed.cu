// Distributed selection's local passes on a rank's GPU: statistics, the sample gather, the
// bucket counts of a pass and the reduction to the active buckets. The bucket of a key is
// computed exactly as the host computes it (src/distributed/plan.rs), so that ranks on CPUs
// and GPUs agree on every bucket.
#include "common.cuh"

// An interval of a bucket plan: 8 words.
//   [0] lo key  [1] hi key  [2] span low word  [3] span high word (span = hi - lo + 1)
//   [4] lo value (f64 bits)  [5] scale (f64 bits)  [6] first | buckets << 32
//   [7] projection: 0 keys, 1 values
#define IV_WORDS 8

// Inputs a thread loads at once before working on them (loads in flight hide the memory's
// latency).
#define TILE_LOADS 8

__device__ __forceinline__ double as_f64(float x) { return (double)x; }
__device__ __forceinline__ double as_f64(double x) { return x; }
__device__ __forceinline__ double as_f64(i32 x) { return (double)x; }
__device__ __forceinline__ double as_f64(i64 x) { return (double)x; }
__device__ __forceinline__ double as_f64(u32 x) { return (double)x; }
__device__ __forceinline__ double as_f64(u64 x) { return (double)x; }

// Whether r * span > the 128-bit product (ph, pl), for a span below 2^64.
__device__ __forceinline__ bool times_span_exceeds(u64 r, u64 span, u64 ph, u64 pl) {
    const u64 h = __umul64hi(r, span), l = r * span;
    return h > ph || (h == ph && l > pl);
}

// floor(x * b / span) for x < span and b < 2^32, exactly.
__device__ __forceinline__ u64 mul_div(u64 x, u64 b, u64 span_lo, u64 span_hi) {
    if (span_hi != 0) return __umul64hi(x, b);  // span = 2^64
    const u64 ph = __umul64hi(x, b), pl = x * b;
    const double est = ((double)ph * 18446744073709551616.0 + (double)pl) / (double)span_lo;
    u64 r = est >= 4294967295.0 ? 4294967295ull : (u64)est;
    while (r > 0 && times_span_exceeds(r, span_lo, ph, pl)) --r;
    while (!times_span_exceeds(r + 1, span_lo, ph, pl)) ++r;
    return r;
}

// The host's value projection of the value v onto buckets 0..=last of an interval from lo:
// Rust's `(((v - lo) * scale) as usize).min(last)`, the cast taking NaN and negatives to 0 and
// saturating above.
__device__ __forceinline__ u64 value_projection(double v, double lo, double scale, u64 last) {
    const double t = (v - lo) * scale;
    const u64 u = !(t > 0.0) ? 0ull : (t >= 18446744073709551616.0 ? ~0ull : (u64)t);
    return u < last ? u : last;
}

// The bucket of `key` in interval I (IV_WORDS words, which holds it from below: key >= I's
// lo), or -1 when the key is above the interval.
template <typename T>
__device__ __forceinline__ long long bucket_in_interval(u64 key, const u64* I) {
    if (key > I[1]) return -1;
    const u64 first = I[6] & 0xffffffffull, buckets = I[6] >> 32;
    const u64 local =
        I[7] == 0 ? mul_div(key - I[0], buckets, I[2], I[3])
                  : value_projection(as_f64(from_key<T>((typename KeyOf<T>::type)key)), __longlong_as_double(I[4]),
                                     __longlong_as_double(I[5]), buckets - 1);
    return (long long)(first + local);
}

// The bucket of `key` under a plan of `p` intervals laid out as the host lays it out (IV_WORDS
// words an interval), or -1 when no interval holds it.
template <typename T>
__device__ __forceinline__ long long bucket_of(u64 key, const u64* __restrict__ iv, u32 p) {
    u32 lo = 0, hi = p;
    while (lo < hi) {
        const u32 mid = (lo + hi) / 2;
        if (iv[mid * IV_WORDS] <= key) lo = mid + 1; else hi = mid;
    }
    if (lo == 0) return -1;
    return bucket_in_interval<T>(key, iv + (lo - 1) * IV_WORDS);
}

// The key of an input value: inputs are the elements themselves (first pass) or keys.
template <typename T> __device__ __forceinline__ u64 key_of_input(T x) { return (u64)to_key(x); }
template <typename T> __device__ __forceinline__ u64 key_of_key(typename KeyOf<T>::type k) { return (u64)k; }

// Loads a thread's tile: inputs base + threadIdx.x + j blockDim.x for j < TILE_LOADS, those
// below `end` (the others are left as they were).
template <typename In>
__device__ __forceinline__ void load_tile(const In* __restrict__ x, u64 base, u64 end, In (&v)[TILE_LOADS]) {
#pragma unroll
    for (int j = 0; j < TILE_LOADS; ++j) {
        const u64 i = base + threadIdx.x + (u64)j * blockDim.x;
        if (i < end) v[j] = x[i];
    }
}

// NaNs (count, first index) and the extreme keys of the included values:
// out = {nans, first_nan, min_key, max_key}, initialised {0, ~0, ~0, 0}. Keys in the element's
// own width; whole tiles without bounds checks.
template <typename T>
__device__ void stats_impl(const T* __restrict__ x, u64 n, u32 omit_nan, u64* out) {
    typedef typename KeyOf<T>::type K;
    u64 nans = 0, first = ~0ull;
    K mn = (K)~(K)0, mx = 0;
    bool any = false;
    auto visit = [&](T v, u64 i) {
        if (is_nan_value(v)) {
            ++nans;
            if (i < first) first = i;
            if (omit_nan) return;
        }
        const K k = to_key(v);
        mn = k < mn ? k : mn;
        mx = k > mx ? k : mx;
        any = true;
    };
    const u64 tile = (u64)blockDim.x * TILE_LOADS;
    const u64 stride = (u64)gridDim.x * tile;
    u64 base = (u64)blockIdx.x * tile;
    for (; base + tile <= n; base += stride) {
        T v[TILE_LOADS];
#pragma unroll
        for (int j = 0; j < TILE_LOADS; ++j) v[j] = x[base + threadIdx.x + j * blockDim.x];
#pragma unroll
        for (int j = 0; j < TILE_LOADS; ++j) visit(v[j], base + threadIdx.x + j * blockDim.x);
    }
    // The one partial tile, if any, falls to the block that reaches it.
    if (base < n)
        for (u64 i = base + threadIdx.x; i < n; i += blockDim.x) visit(x[i], i);
    const bool warp_any = __any_sync(FULL_MASK, any);
    for (int off = WARP_SIZE / 2; off > 0; off /= 2) {
        nans += __shfl_down_sync(FULL_MASK, nans, off);
        const u64 f = __shfl_down_sync(FULL_MASK, first, off);
        const K a = __shfl_down_sync(FULL_MASK, mn, off);
        const K b = __shfl_down_sync(FULL_MASK, mx, off);
        first = f < first ? f : first;
        mn = a < mn ? a : mn;
        mx = b > mx ? b : mx;
    }
    if ((threadIdx.x & (WARP_SIZE - 1)) == 0) {
        if (nans) {
            atomicAdd(&out[0], nans);
            atomicMin(&out[1], first);
        }
        if (warp_any) {
            atomicMin(&out[2], (u64)mn);
            atomicMax(&out[3], (u64)mx);
        }
    }
}

// out[i] = key of x[pos[i]].
template <typename T>
__device__ void gather_keys_impl(const T* __restrict__ x, const u64* __restrict__ pos, u64 count, u64* out) {
    const u64 stride = (u64)gridDim.x * blockDim.x;
    for (u64 i = (u64)blockIdx.x * blockDim.x + threadIdx.x; i < count; i += stride) out[i] = (u64)to_key(x[pos[i]]);
}

// Intervals a block copies into shared memory (more are read from global memory), searched
// in SHARED_STEPS steps; plans of at most SMALL_PLAN intervals (the first pass has 16) are
// searched in SMALL_STEPS.
#define SHARED_STEPS 7
#define SHARED_INTERVALS (1 << SHARED_STEPS)
#define SMALL_STEPS 4
#define SMALL_PLAN (1 << SMALL_STEPS)

// Flags in SharedPlan::last: an interval with a key projection; an interval whose scale is
// outside f32's normal range, so that the f32 estimate may not stand in for its projection.
#define KEY_PROJECTION 0x80000000u
#define NO_ESTIMATE 0x40000000u

// The f32 product below which the estimate's error is bounded (see bucket_in_shared).
#define ESTIMATE_LIMIT 8192.0f

// A plan of at most SHARED_INTERVALS intervals in a block's shared memory, in the element's
// key width, padded to a power of two (SMALL_PLAN or SHARED_INTERVALS) with copies of its
// last interval so that the search takes fixed steps, each value projection ready to apply.
template <typename T>
struct SharedPlan {
    typedef typename KeyOf<T>::type K;
    K lo[SHARED_INTERVALS];
    K hi[SHARED_INTERVALS];
    double vlo[SHARED_INTERVALS];
    double scale[SHARED_INTERVALS];
    // The projection in f32, for the estimate.
    float flo[SHARED_INTERVALS];
    float fscale[SHARED_INTERVALS];
    u32 first[SHARED_INTERVALS];
    // buckets - 1, with the flags above.
    u32 last[SHARED_INTERVALS];
    // The intervals before padding.
    u32 p;
};

// Copies a plan of 1 <= p <= padded <= SHARED_INTERVALS intervals (IV_WORDS words each) into `s`,
// padded to `padded` entries. Ends with a barrier.
template <typename T>
__device__ __forceinline__ void load_shared_plan(const u64* __restrict__ iv, u32 p, u32 padded, SharedPlan<T>& s) {
    typedef typename KeyOf<T>::type K;
    const K kmax = (K)~(K)0;
    for (u32 e = threadIdx.x; e < padded; e += blockDim.x) {
        const u32 j = e < p ? e : p - 1;
        const u64* I = iv + (u64)j * IV_WORDS;
        s.lo[e] = (K)I[0];
        // Keys never pass the type's largest key: a larger end clamps to it.
        s.hi[e] = I[1] > (u64)kmax ? kmax : (K)I[1];
        const double vlo = __longlong_as_double(I[4]), scale = __longlong_as_double(I[5]);
        s.vlo[e] = vlo;
        s.scale[e] = scale;
        s.flo[e] = (float)vlo;
        s.fscale[e] = (float)scale;
        // The estimate's error bound needs a normal f32 scale.
        const bool estimable = fabs(scale) >= 1.17549435e-38 && fabs(scale) <= 3.40282346e38;
        s.first[e] = (u32)(I[6] & 0xffffffffull);
        s.last[e] = (u32)((I[6] >> 32) - 1) | (I[7] == 0 ? KEY_PROJECTION : 0u) | (estimable ? 0u : NO_ESTIMATE);
    }
    if (threadIdx.x == 0) s.p = p;
    __syncthreads();
}

// The last interval of a padded plan of 2^STEPS entries whose lower end is not above `key`,
// or -1.
template <int STEPS, typename K>
__device__ __forceinline__ int interval_of(K key, const K* lo) {
    u32 j = 0;
#pragma unroll
    for (int s = STEPS - 1; s >= 0; --s) {
        const u32 t = j + (1u << s);
        if (lo[t] <= key) j = t;
    }
    return lo[0] <= key ? (int)j : -1;
}

// The difference of a key's value from an interval's lower end, in f32.
template <typename T>
__device__ __forceinline__ float offset_f32(typename KeyOf<T>::type key, const SharedPlan<T>& s, u32 j) {
    return (float)(as_f64(from_key<T>(key)) - s.vlo[j]);
}
template <>
__device__ __forceinline__ float offset_f32<float>(u32 key, const SharedPlan<float>& s, u32 j) {
    return from_key<float>(key) - s.flo[j];
}

// bucket_of for a plan in shared memory, padded to 2^STEPS entries (`iv`: the same plan in
// global memory, for key projections).
//
// A value projection is the host's `floor((v - lo) * scale)`, clamped, in f64. In f32 the same
// product t differs from it by at most |t| 3.1 2^-24 (three roundings of 2^-24 against two of
// 2^-53), under 0.0015 for |t| < ESTIMATE_LIMIT. So where the f32 product lies more than 1/256
// from an integer, its floor is the f64 floor; elsewhere (and for a subnormal difference, or a
// scale outside f32's normal range, NO_ESTIMATE) the f64 arithmetic decides.
template <typename T, int STEPS>
__device__ __forceinline__ int bucket_in_shared(typename KeyOf<T>::type key, const SharedPlan<T>& s,
                                                const u64* __restrict__ iv) {
    const int j = interval_of<STEPS>(key, s.lo);
    if (j < 0 || key > s.hi[j]) return -1;
    const u32 flags = s.last[j];
    if (flags & KEY_PROJECTION) {
        // A padding entry stands for the last interval.
        const u32 real = (u32)j < s.p ? (u32)j : s.p - 1;
        return (int)bucket_in_interval<T>((u64)key, iv + (u64)real * IV_WORDS);
    }
    const u32 last = flags & ~NO_ESTIMATE;
    if (!(flags & NO_ESTIMATE)) {
        const float d = offset_f32<T>(key, s, j);
        const float t = d * s.fscale[j];
        const float f = floorf(t);
        const float r = t - f;
        if (r > 1.0f / 256 && r < 1.0f - 1.0f / 256 && fabsf(t) < ESTIMATE_LIMIT &&
            !(d != 0.0f && fabsf(d) < 1.17549435e-38f)) {
            const int e = (int)f;
            return (int)(s.first[j] + (u32)(e < 0 ? 0 : (e > (int)last ? (int)last : e)));
        }
    }
    return (int)(s.first[j] + value_projection(as_f64(from_key<T>(key)), s.vlo[j], s.scale[j], last));
}

// A binned plan (the first pass's; BucketPlan::device_table on the host): bins of 2^shift
// keys from `base` on, the last one ending at `max`; the buckets of the keys below the bins
// and above them, the top key and its own bucket (-1 where the plan has none), in BIN_HEADER
// words; then a word a bin: its first bucket, and above bit 32 the shift from a key's offset
// in its bin to its bucket there. Counts take a binned plan as `iv` with `p` = 0.
#define MAX_BINS 256
#define BIN_HEADER 8
// A binned plan's words but its bins', which a count holds in registers: `span` = max - base
// and `mask` = 2^shift - 1, so that one comparison tells a key in the bins.
template <typename K>
struct BinHead {
    K base;
    K span;
    K mask;
    K top_key;
    u32 shift;
    int below;
    int above;
    int top;
};
template <typename K>
struct SharedBins {
    BinHead<K> head;
    u64 entry[MAX_BINS];
};

// Copies a binned plan into `s`. Ends with a barrier.
template <typename K>
__device__ __forceinline__ void load_shared_bins(const u64* __restrict__ words, SharedBins<K>& s) {
    const u32 bins = (u32)words[3];
    for (u32 i = threadIdx.x; i < bins; i += blockDim.x) s.entry[i] = words[BIN_HEADER + i];
    if (threadIdx.x == 0) {
        const u32 shift = (u32)words[1];
        s.head.base = (K)words[0];
        s.head.span = (K)(words[2] - words[0]);
        s.head.mask = (K)(((u64)1 << shift) - 1);
        s.head.shift = shift;
        s.head.below = (int)words[4];
        s.head.above = (int)words[5];
        s.head.top_key = (K)words[6];
        s.head.top = (int)words[7];
    }
    __syncthreads();
}

// The bucket of `key` under a binned plan (the host's key projection over 2^shift keys, and
// an open plan's buckets outside the bins), or -1 outside its keys: `h` its head (in
// registers), `entry_at` the shared-window address of its bins' words. 32-bit: a plan has
// fewer than 2^31 buckets. Without branches: a key outside the bins reads bin 0's word and
// takes the bucket of its side instead.
template <typename K>
__device__ __forceinline__ int bucket_in_bins(K key, const BinHead<K>& h, u32 entry_at) {
    const K rel = key - h.base;
    // Below the bins the difference wraps around: one comparison tells a key in them.
    const bool in_bins = rel <= h.span;
    const u32 bin = in_bins ? (u32)(rel >> h.shift) : 0u;
    // Not volatile: the read depends on the key, read after the barrier that filled the table,
    // and may go before the histogram's atomics (which never touch the table).
    u64 e;
    asm("ld.shared.u64 %0, [%1];" : "=l"(e) : "r"(entry_at + 8u * bin));
    const int inside = (int)((u32)e + (u32)((rel & h.mask) >> (u32)(e >> 32)));
    const int above = key < h.top_key ? h.above : key == h.top_key ? h.top : -1;
    return in_bins ? inside : key < h.base ? h.below : above;
}

// Where a count adds its inputs: a histogram in shared memory, by its shared-window address
// (`SharedHist`), or a block's row in global memory (`GlobalHist`). `add(b)` counts an input of
// bucket b, none for b = -1, and returns the counter's value before (0 for b = -1).
struct SharedHist {
    u32 at;
    __device__ __forceinline__ u32 add(int b) const {
        u32 before;
        asm volatile(
            "{\n\t.reg .pred counted;\n\t"
            "setp.ge.s32 counted, %2, 0;\n\t"
            "mov.u32 %0, 0;\n\t"
            "@counted atom.shared.add.u32 %0, [%1], 1;\n\t}"
            : "=r"(before)
            : "r"(at + 4u * (u32)b), "r"(b));
        return before;
    }
};
struct GlobalHist {
    u32* row;
    __device__ __forceinline__ u32 add(int b) const { return b >= 0 ? atomicAdd(&row[b], 1u) : 0u; }
};

// The bucket number of an input in no bucket, in the `ids` a count writes (plans of fewer
// buckets only).
#define NO_BUCKET 0xffff

// Threads of a block of the count and reduction kernels (the host launches this many), and
// the inputs of a tile: block b takes tiles b, b + gridDim.x, b + 2 gridDim.x, ... in the count
// and in the reduction after it alike, so that both see the same inputs, and all blocks work
// near one another in memory.
#define DIST_BLOCK 256
#define TILE ((u64)DIST_BLOCK * TILE_LOADS)

// The places a count reads: every input (`AllPlaces`), or a sketch's (`SketchPlaces`): runs of
// SKETCH_PIECE inputs, one run at a hashed place in each group of SKETCH_GROUP runs (the host's
// `SKETCH_PIECE`, `SKETCH_GROUP` and `sketch_run` in src/distributed/shard.rs).
#define SKETCH_PIECE 16
#define SKETCH_GROUP 16
struct AllPlaces {
    __device__ __forceinline__ u64 operator()(u64 i) const { return i; }
};
struct SketchPlaces {
    __device__ __forceinline__ u64 operator()(u64 i) const {
        const u64 g = i / SKETCH_PIECE;
        u32 h = ((u32)g ^ (u32)(g >> 32)) * 0x9E3779B1u;
        h ^= h >> 16;
        h *= 0x85EBCA6Bu;
        h ^= h >> 13;
        return (g * SKETCH_GROUP + h % SKETCH_GROUP) * SKETCH_PIECE + i % SKETCH_PIECE;
    }
};

// Buckets a copying count takes at most (their counters and the warps' stages fit the 48 KB
// of shared memory a block gets without opting in, for 8-byte keys too); the mark of a bucket
// to copy, in its counter; the parts a tile's keys are staged in (a warp stages a part's keys,
// 32 a part a thread, before it writes them out): one for 4-byte keys, two for 8-byte ones.
#define COPY_BUCKETS 8192
#define COPY_MARK 0x80000000u
#define COPY_PARTS(K) (sizeof(K) == 4 ? 1 : 2)
#define COPY_STAGE(K) (WARP_SIZE * TILE_LOADS / COPY_PARTS(K))

// What a copying count does besides counting: the keys of the buckets marked (COPY_MARK in
// their counters, so that the atomic that counts a key tells whether to copy it) appended to
// out[0, cap) through `out_count` (in no order; places from `cap` on are counted only), staged
// a warp at a time. A count that copies nothing has COPY false and none of this is used.
template <typename K, bool COPY>
struct Copier {
    K* stage;
    u32 staged;
    K* out;
    u64 cap;
    u64* out_count;

    // Collective over the warp: the keys `key[j]` with `keep[j]`, a part of a tile at a time.
    __device__ __forceinline__ void append(const K (&key)[TILE_LOADS], const bool (&keep)[TILE_LOADS]) {
        if constexpr (COPY) {
            constexpr int PART = TILE_LOADS / COPY_PARTS(K);
#pragma unroll
            for (int h = 0; h < COPY_PARTS(K); ++h) {
                K k[PART];
                bool m[PART];
#pragma unroll
                for (int j = 0; j < PART; ++j) {
                    k[j] = key[h * PART + j];
                    m[j] = keep[h * PART + j];
                }
                warp_stage_append<K, PART, COPY_STAGE(K)>(stage, staged, out, cap, out_count, k, m);
            }
        }
    }
    __device__ __forceinline__ void flush() {
        if constexpr (COPY) warp_flush(stage, staged, out, cap, out_count);
    }
};

// One tile of a count from place `base` on: the inputs counted by `bucket` into `h`, their
// buckets written to `ids` when given, and handed to `copier`. CHECKED: places from `n` on are
// skipped (the partial tile).
template <bool CHECKED, typename In, u64 (*KEY)(In), typename K, bool COPY, typename Hist, typename Bucket,
          typename Place>
__device__ __forceinline__ void count_tile(const In* __restrict__ x, u64 base, u64 n, Hist h,
                                           unsigned short* __restrict__ ids, Bucket bucket, Place place,
                                           Copier<K, COPY>& copier) {
    In v[TILE_LOADS];
    bool in[TILE_LOADS];
#pragma unroll
    for (int j = 0; j < TILE_LOADS; ++j) {
        const u64 i = base + threadIdx.x + j * DIST_BLOCK;
        in[j] = !CHECKED || i < n;
        if (in[j]) v[j] = x[place(i)];
    }
    bool keep[TILE_LOADS];
#pragma unroll
    for (int j = 0; j < TILE_LOADS; ++j) {
        keep[j] = false;
        if (!in[j]) continue;
        const int b = (int)bucket(KEY(v[j]));
        const u32 before = h.add(b);
        if constexpr (COPY) keep[j] = (before & COPY_MARK) != 0;
        if (ids) ids[base + threadIdx.x + j * DIST_BLOCK] = b >= 0 ? (unsigned short)b : NO_BUCKET;
    }
    if constexpr (COPY) {
        K key[TILE_LOADS];
#pragma unroll
        for (int j = 0; j < TILE_LOADS; ++j) key[j] = in[j] ? (K)KEY(v[j]) : (K)0;
        copier.append(key, keep);
    }
}

// Counts this block's tiles of the places [0, n) (input `place(i)` at place i) by `bucket` into
// the histogram `h` (SharedHist or GlobalHist), writes each input's bucket to `ids` when given,
// and hands the inputs to `copier`. Whole tiles without bounds checks; a copying count takes
// its partial tile with every thread, as the copy's votes are collective.
template <typename In, u64 (*KEY)(In), typename K, bool COPY, typename Hist, typename Bucket, typename Place>
__device__ __forceinline__ void count_tiles(const In* __restrict__ x, u64 n, Hist h, unsigned short* __restrict__ ids,
                                            Bucket bucket, Place place, Copier<K, COPY>& copier) {
    for (u64 base = (u64)blockIdx.x * TILE; base < n; base += (u64)gridDim.x * TILE) {
        if (base + TILE <= n) {
            count_tile<false, In, KEY>(x, base, n, h, ids, bucket, place, copier);
        } else if constexpr (COPY) {
            count_tile<true, In, KEY>(x, base, n, h, ids, bucket, place, copier);
        } else {
            for (u64 i = base + threadIdx.x; i < n; i += DIST_BLOCK) {
                const int b = (int)bucket(KEY(x[place(i)]));
                h.add(b);
                if (ids) ids[i] = b >= 0 ? (unsigned short)b : NO_BUCKET;
            }
        }
    }
}

// Block b counts the inputs of its tiles by bucket into row b of
// `partial` (blocks x buckets), with a histogram in shared memory when `shared_ok`, else by
// atomics on its own row. No two blocks share a counter. Each combination of where the plan
// and the histogram lie is its own loop, so that every access has its own address space.
// COPY: the keys of the buckets marked in `marks` (buckets / 32 words; at most COPY_BUCKETS
// buckets, counted in shared memory) are appended to out[0, cap) through `out_count`.
// PLANS: the plans a kernel takes, BINNED_PLANS (the first pass's: `iv` a binned plan,
// SharedBins, with `p` = 0), INTERVAL_PLANS (the later passes': `p` intervals) or both, so that
// each kernel compiles only the loops it runs: the counts over the data take bins, those over
// kept keys both (the later passes, and the recount of a binned pass's copy). The host checks
// the plan's kind before it launches one.
#define BINNED_PLANS 1
#define INTERVAL_PLANS 2
#define ALL_PLANS (BINNED_PLANS | INTERVAL_PLANS)
template <typename T, typename In, u64 (*KEY)(In), bool COPY, typename Place, int PLANS>
__device__ void count_impl(const In* __restrict__ x, u64 n, const u64* __restrict__ iv, u32 p,
                           u32 buckets, u32 shared_ok, u32* __restrict__ partial, unsigned short* __restrict__ ids,
                           Place place, const u32* __restrict__ marks, typename KeyOf<T>::type* out, u64 cap,
                           u64* out_count) {
    typedef typename KeyOf<T>::type K;
    extern __shared__ u32 hist[];
    // A plan of intervals or of bins, in the same place.
    __shared__ union {
        SharedPlan<T> intervals;
        SharedBins<K> bins;
    } space;
    SharedPlan<T>& plan = space.intervals;
    __shared__ K stages[COPY ? DIST_BLOCK / WARP_SIZE : 1][COPY ? COPY_STAGE(K) : 1];
    u32* row = partial + (u64)blockIdx.x * buckets;
    if (shared_ok) {
        for (u32 b = threadIdx.x; b < buckets; b += blockDim.x)
            hist[b] = COPY && ((marks[b >> 5] >> (b & 31)) & 1u) ? COPY_MARK : 0u;
    }
    Copier<K, COPY> copier = {stages[COPY ? threadIdx.x / WARP_SIZE : 0], 0, out, cap, out_count};
    constexpr bool takes_bins = (PLANS & BINNED_PLANS) != 0, takes_intervals = (PLANS & INTERVAL_PLANS) != 0;
    const bool small = p >= 1 && p <= SMALL_PLAN, in_shared = p >= 1 && p <= SHARED_INTERVALS;
    const bool binned = takes_bins && (!takes_intervals || p == 0);
    if (binned) load_shared_bins<K>(iv, space.bins);
    else if (in_shared) load_shared_plan<T>(iv, p, small ? SMALL_PLAN : SHARED_INTERVALS, plan);
    __syncthreads();
    // The plan's head read once into registers: the histogram's atomics could otherwise
    // alias it in shared memory and reload it for every input.
    const BinHead<K> head = space.bins.head;
    const u32 entry_at = shared_address(space.bins.entry);
    auto from_bins = [head, entry_at](u64 k) { return bucket_in_bins<K>((K)k, head, entry_at); };
    auto from_small = [&](u64 k) { return bucket_in_shared<T, SMALL_STEPS>((K)k, plan, iv); };
    auto from_shared = [&](u64 k) { return bucket_in_shared<T, SHARED_STEPS>((K)k, plan, iv); };
    auto from_global = [&](u64 k) { return bucket_of<T>(k, iv, p); };
    // The search matches the plan's padding.
    auto count_into = [&](auto h) {
        if (binned) {
            if constexpr (takes_bins) count_tiles<In, KEY>(x, n, h, ids, from_bins, place, copier);
        } else if constexpr (takes_intervals) {
            if (small) {
                count_tiles<In, KEY>(x, n, h, ids, from_small, place, copier);
            } else if (in_shared) {
                count_tiles<In, KEY>(x, n, h, ids, from_shared, place, copier);
            } else {
                count_tiles<In, KEY>(x, n, h, ids, from_global, place, copier);
            }
        }
    };
    if (shared_ok) {
        count_into(SharedHist{shared_address(hist)});
        copier.flush();
        __syncthreads();
        for (u32 b = threadIdx.x; b < buckets; b += blockDim.x) row[b] = hist[b] & ~(COPY ? COPY_MARK : 0u);
    } else if constexpr (!COPY) {
        count_into(GlobalHist{row});
    }
}

// counts[j] = the sum of column j of `partial` (blocks x buckets).
extern "C" __global__ void dist_totals(const u32* __restrict__ partial, u32 blocks, u32 buckets, u64* counts) {
    const u32 j = blockIdx.x * blockDim.x + threadIdx.x;
    if (j >= buckets) return;
    u64 sum = 0;
    for (u32 b = 0; b < blocks; ++b) sum += partial[(u64)b * buckets + j];
    counts[j] = sum;
}

// offsets[b] = the kept inputs of the blocks before b (kept: in one of the `a` buckets of
// `active`); offsets[blocks] = all kept. One block of threads.
extern "C" __global__ void dist_offsets(const u32* __restrict__ partial, u32 blocks, u32 buckets,
                                        const u32* __restrict__ active, u32 a, u64* offsets) {
    __shared__ u64 kept[1024];
    for (u32 b = threadIdx.x; b < blocks; b += blockDim.x) {
        u64 sum = 0;
        for (u32 j = 0; j < a; ++j) sum += partial[(u64)b * buckets + active[j]];
        kept[b] = sum;
    }
    __syncthreads();
    if (threadIdx.x == 0) {
        u64 run = 0;
        for (u32 b = 0; b < blocks; ++b) {
            offsets[b] = run;
            run += kept[b];
        }
        offsets[blocks] = run;
    }
}

// Slots whose extremes a block gathers in shared memory before its atomics to `extremes`.
#define SHARED_SLOTS 1024

// A warp's kept inputs of one round appended to the block's `dst` (at the block's `written`,
// one shared atomic a warp), and each one's key folded into its slot's extremes (the largest
// key and the complement of the smallest, by maximum). `load` gives a kept input's key, so
// that an input is read only when kept where that saves a read.
template <typename K, typename Load>
__device__ __forceinline__ void keep_round(bool keep, u32 s, Load load, u32* written, K* __restrict__ dst,
                                           u64* ext) {
    const u32 mask = __ballot_sync(FULL_MASK, keep);
    if (mask == 0) return;
    const u32 lane = threadIdx.x & (WARP_SIZE - 1);
    const int leader = __ffs(mask) - 1;
    u32 at = 0;
    if ((int)lane == leader) at = atomicAdd(written, (u32)__popc(mask));
    at = __shfl_sync(FULL_MASK, at, leader);
    if (keep) {
        const u64 k = load();
        dst[at + __popc(mask & lanemask_lt())] = (K)k;
        atomicMax(&ext[2 * (u64)s], k);
        atomicMax(&ext[2 * (u64)s + 1], ~k);
    }
}

// Each slot's extremes: in shared memory when there are few slots (then `extremes` gets the
// block's own at the end, `flush_extremes`), else straight into `extremes`.
__device__ __forceinline__ u64* block_extremes_of(u64* shared, u64* extremes, u32 slots) {
    if (slots > SHARED_SLOTS) return extremes;
    for (u32 j = threadIdx.x; j < 2 * slots; j += blockDim.x) shared[j] = 0;
    return shared;
}

__device__ __forceinline__ void flush_extremes(const u64* shared, u64* extremes, u32 slots) {
    if (slots > SHARED_SLOTS) return;
    __syncthreads();
    for (u32 j = threadIdx.x; j < 2 * slots; j += blockDim.x)
        if (shared[j]) atomicMax(&extremes[j], shared[j]);
}

// Block b keeps the inputs of its tiles whose bucket has a slot (slot[bucket] != ~0): their
// keys written from out[offsets[b]] on (the block's counts of the same plan tell where), and
// per slot the largest key and the complement of the smallest, by atomic maximum into
// `extremes` (2 words a slot, zeroed by the caller).
template <typename T, typename In, u64 (*KEY)(In)>
__device__ void reduce_impl(const In* __restrict__ x, u64 n, const u64* __restrict__ iv, u32 p,
                            const u32* __restrict__ slot, u32 slots, const u64* __restrict__ offsets,
                            typename KeyOf<T>::type* __restrict__ out, u64* extremes) {
    typedef typename KeyOf<T>::type K;
    __shared__ u64 shared_extremes[2 * SHARED_SLOTS];
    __shared__ SharedPlan<T> plan;
    __shared__ u32 written;
    u64* ext = block_extremes_of(shared_extremes, extremes, slots);
    if (threadIdx.x == 0) written = 0;
    const bool in_shared = p >= 1 && p <= SHARED_INTERVALS;
    if (in_shared) load_shared_plan<T>(iv, p, SHARED_INTERVALS, plan);
    __syncthreads();
    typename KeyOf<T>::type* dst = out + offsets[blockIdx.x];
    // Every thread runs the same number of rounds, so that whole warps vote.
    for (u64 base = (u64)blockIdx.x * TILE; base < n; base += (u64)gridDim.x * TILE) {
        const u64 end = base + TILE < n ? base + TILE : n;
        In v[TILE_LOADS];
        load_tile(x, base, end, v);
#pragma unroll
        for (int j = 0; j < TILE_LOADS; ++j) {
            u32 s = 0xffffffffu;
            u64 k = 0;
            if (base + threadIdx.x + (u64)j * blockDim.x < end) {
                k = KEY(v[j]);
                const long long b = in_shared ? bucket_in_shared<T, SHARED_STEPS>((K)k, plan, iv) : bucket_of<T>(k, iv, p);
                if (b >= 0) s = slot[b];
            }
            keep_round(s != 0xffffffffu, s, [&] { return k; }, &written, dst, ext);
        }
    }
    flush_extremes(shared_extremes, extremes, slots);
}

// Ids a thread of the reduction after a count reads at once (one 16-byte load), and such loads
// a round.
#define IDS_PER_LOAD 8
#define ID_LOADS 2
static_assert(IDS_PER_LOAD * DIST_BLOCK == TILE, "a thread's load of ids covers its part of a tile");

// The reduction after a count that wrote `ids` (`buckets` buckets, below 2^16 - 1): the same
// as reduce_impl, with each input's bucket read from `ids` (eight at once), tested against a
// bit set of the active buckets in shared memory, and the input itself read only when kept.
template <typename T, typename In, u64 (*KEY)(In)>
__device__ void reduce_ids_impl(const In* __restrict__ x, const unsigned short* __restrict__ ids, u64 n, u32 buckets, const u32* __restrict__ slot, u32 slots,
                                const u64* __restrict__ offsets, typename KeyOf<T>::type* __restrict__ out,
                                u64* extremes) {
    __shared__ u64 shared_extremes[2 * SHARED_SLOTS];
    __shared__ u32 active[(NO_BUCKET + 1) / 32];
    __shared__ u32 written;
    u64* ext = block_extremes_of(shared_extremes, extremes, slots);
    if (threadIdx.x == 0) written = 0;
    const u32 words = (buckets + 31) / 32;
    for (u32 w = threadIdx.x; w < words; w += blockDim.x) {
        u32 bits = 0;
        for (u32 j = 0; j < 32 && 32 * w + j < buckets; ++j)
            bits |= (u32)(slot[32 * w + j] != 0xffffffffu) << j;
        active[w] = bits;
    }
    __syncthreads();
    typename KeyOf<T>::type* dst = out + offsets[blockIdx.x];
    auto is_active = [&](u32 id) { return id < buckets && ((active[id >> 5] >> (id & 31)) & 1u); };
    // A round takes ID_LOADS of this block's tiles, eight ids a thread in each (one 16-byte
    // load: tiles start at multiples of TILE); every thread runs the same rounds, so that
    // whole warps vote.
    const u64 step = (u64)gridDim.x * TILE;
    for (u64 round = (u64)blockIdx.x * TILE; round < n; round += step * ID_LOADS) {
        unsigned short id[ID_LOADS * IDS_PER_LOAD];
        u64 first[ID_LOADS];
#pragma unroll
        for (int r = 0; r < ID_LOADS; ++r) {
            first[r] = round + r * step + (u64)threadIdx.x * IDS_PER_LOAD;
            unsigned short* mine = id + r * IDS_PER_LOAD;
            if (first[r] + IDS_PER_LOAD <= n) {
                const uint4 v = *reinterpret_cast<const uint4*>(ids + first[r]);
                const u32 w[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
                for (int j = 0; j < 4; ++j) {
                    mine[2 * j] = (unsigned short)(w[j] & 0xffffu);
                    mine[2 * j + 1] = (unsigned short)(w[j] >> 16);
                }
            } else {
#pragma unroll
                for (int j = 0; j < IDS_PER_LOAD; ++j)
                    mine[j] = first[r] + j < n ? ids[first[r] + j] : (unsigned short)NO_BUCKET;
            }
        }
        // The kept inputs' loads, all issued before any is used.
        u32 keep = 0, mine = 0;
        In v[ID_LOADS * IDS_PER_LOAD];
#pragma unroll
        for (int j = 0; j < ID_LOADS * IDS_PER_LOAD; ++j)
            if (is_active(id[j])) {
                keep |= 1u << j;
                ++mine;
                v[j] = x[first[j / IDS_PER_LOAD] + j % IDS_PER_LOAD];
            }
        // One place-finding a round for the warp: a scan of the threads' counts, and one
        // atomic for the warp's total.
        if (!__any_sync(FULL_MASK, mine != 0)) continue;
        const u32 lane = threadIdx.x & (WARP_SIZE - 1);
        u32 upto = warp::inclusive_sum(mine);
        u32 at = 0;
        if (lane == WARP_SIZE - 1) at = atomicAdd(&written, upto);
        at = __shfl_sync(FULL_MASK, at, WARP_SIZE - 1) + upto - mine;
#pragma unroll
        for (int j = 0; j < ID_LOADS * IDS_PER_LOAD; ++j)
            if (keep >> j & 1u) {
                const u64 k = KEY(v[j]);
                const u32 s = slot[id[j]];
                dst[at++] = (typename KeyOf<T>::type)k;
                atomicMax(&ext[2 * (u64)s], k);
                atomicMax(&ext[2 * (u64)s + 1], ~k);
            }
    }
    flush_extremes(shared_extremes, extremes, slots);
}

// The counts run four blocks of 256 threads on every multiprocessor (the host's launch): at
// most 64 registers a thread, or a fourth of the blocks would wait for a second wave.
#define COUNT_BOUNDS __launch_bounds__(256, 4)

#define DIST_ELEMENT(NAME, T)                                                                        \
    extern "C" __global__ void dist_stats_##NAME(const T* x, u64 n, u32 omit_nan, u64* out) {      \
        stats_impl<T>(x, n, omit_nan, out);                                                          \
    }                                                                                                \
    extern "C" __global__ void dist_gather_##NAME(const T* x, const u64* pos, u64 count, u64* out) { \
        gather_keys_impl<T>(x, pos, count, out);                                                     \
    }                                                                                                \
    extern "C" __global__ void COUNT_BOUNDS dist_count_##NAME(const T* x, u64 n, const u64* iv, u32 p,  \
                                                 u32 buckets, u32 shared_ok, u32* partial,           \
                                                 unsigned short* ids) {                              \
        count_impl<T, T, key_of_input<T>, false, AllPlaces, BINNED_PLANS>(x, n, iv, p, buckets,         \
                                                 shared_ok, partial, ids,                             \
                                                 AllPlaces(), nullptr, nullptr, 0, nullptr);         \
    }                                                                                                \
    extern "C" __global__ void COUNT_BOUNDS dist_sketch_##NAME(const T* x, u64 places, const u64* iv, \
                                                  u32 p, u32 buckets, u32 shared_ok, u32* partial) { \
        count_impl<T, T, key_of_input<T>, false, SketchPlaces, BINNED_PLANS>(x, places, iv, p, buckets, \
                                                 shared_ok, partial,                                  \
                                                 nullptr, SketchPlaces(), nullptr, nullptr, 0,       \
                                                 nullptr);                                           \
    }                                                                                                \
    extern "C" __global__ void COUNT_BOUNDS dist_count_copy_##NAME(const T* x, u64 n, const u64* iv,  \
                                                  u32 p, u32 buckets, u32* partial,                  \
                                                  const u32* marks, KeyOf<T>::type* out, u64 cap,    \
                                                  u64* out_count) {                                  \
        count_impl<T, T, key_of_input<T>, true, AllPlaces, BINNED_PLANS>(x, n, iv, p, buckets, 1,       \
                                                partial, nullptr,                                    \
                                                AllPlaces(), marks, out, cap, out_count);            \
    }                                                                                                \
    extern "C" __global__ void dist_reduce_ids_##NAME(const T* x, const unsigned short* ids, u64 n, \
                                                      u32 buckets, const u32* slot,                  \
                                                      u32 slots, const u64* offsets,                 \
                                                      KeyOf<T>::type* out, u64* extremes) {          \
        reduce_ids_impl<T, T, key_of_input<T> >(x, ids, n, buckets, slot, slots, offsets, out, \
                                                extremes);                                           \
    }                                                                                                \
    extern "C" __global__ void dist_reduce_ids_keys_##NAME(const KeyOf<T>::type* x,                 \
                                                           const unsigned short* ids, u64 n,         \
                                                           u32 buckets, const u32* slot, u32 slots,  \
                                                           const u64* offsets, KeyOf<T>::type* out,  \
                                                           u64* extremes) {                          \
        reduce_ids_impl<T, KeyOf<T>::type, key_of_key<T> >(x, ids, n, buckets, slot, slots, offsets, \
                                                          out, extremes);                            \
    }                                                                                                \
    extern "C" __global__ void COUNT_BOUNDS dist_count_keys_##NAME(const KeyOf<T>::type* x, u64 n,      \
                                                      const u64* iv, u32 p, u32 buckets,             \
                                                      u32 shared_ok, u32* partial,                   \
                                                      unsigned short* ids) {                         \
        count_impl<T, KeyOf<T>::type, key_of_key<T>, false, AllPlaces, ALL_PLANS>(x, n, iv, p,         \
                                                            buckets, shared_ok, partial,             \
                                                            ids, AllPlaces(), nullptr, nullptr, 0,   \
                                                            nullptr);                                \
    }                                                                                                \
    extern "C" __global__ void dist_reduce_##NAME(const T* x, u64 n, const u64* iv, u32 p,           \
                                                  const u32* slot, u32 slots, const u64* offsets,    \
                                                  KeyOf<T>::type* out, u64* extremes) {              \
        reduce_impl<T, T, key_of_input<T> >(x, n, iv, p, slot, slots, offsets, out, extremes); \
    }                                                                                                \
    extern "C" __global__ void dist_reduce_keys_##NAME(const KeyOf<T>::type* x, u64 n,             \
                                                       const u64* iv, u32 p, const u32* slot,        \
                                                       u32 slots, const u64* offsets,                \
                                                       KeyOf<T>::type* out, u64* extremes) {         \
        reduce_impl<T, KeyOf<T>::type, key_of_key<T> >(x, n, iv, p, slot, slots, offsets, out, \
                                                      extremes);                                     \
    }
KSELECT_FOR_EACH_TYPE(DIST_ELEMENT)
