// Fused bucket multiselection: bucketMultiSelect's counting and writing in one pass over the
// input, the buckets to write predicted from a count over a subset of it.
//
// 1. plan (one block): a 16384-key sample gives the key range [lo, hi] of the sample; coarse bins
//    of width W = 2^cshift from base = lo - W (or 0) cover it, and each bin gets a power of two of
//    equal buckets (about its share of the sample). A key's bucket is one shared-table read
//    away: with rel = max(key, base) - base and entry = table[min(rel >> cshift, FMS_BINS)],
//    bucket = entry.off + (rel >> entry.shift). Entry 0 also takes every key below base; the last
//    entry (one bucket) every key above the bins; the largest key (every NaN's) has the last
//    bucket to itself.
// 2. subset count: every bucket counted over one 64-byte piece in each group of G of the input
//    (hashed; G a power of two from 2 to 16, chosen by the host), per block, then totalled.
// 3. predict (one block): each wanted rank's window in the subset's scaled prefix sums (several
//    standard deviations of the estimate wide) marks the buckets to write.
// 4. fused pass: every element counted in its bucket (per block, shared) and the keys of marked
//    buckets appended to a workspace (in no order); the mark is the counter's top bit, so the
//    atomic that counts a key also says whether to keep it.
// 5. choose (one block): exact bucket totals give each rank's bucket and its rank inside; a rank
//    whose bucket was not written marks the run as failed (the host falls back); each such
//    bucket ("active") gets a segment of a second workspace, as long as its total.
// 6. gather: one pass over the workspace moves the keys of the active buckets to their segments.
// 7. final (one block per rank): its segment's keys narrowed by 8-bit digits while more than
//    FMS_FINAL_CAP remain, then gathered and sorted on chip; equal keys answer at once.
// The exact form, for ranks too many to predict: 1, a count of every element (per block), the
// totals, a settlement giving each rank's bucket and each such bucket a segment, a pass
// appending those buckets' keys to a workspace (in no order), then 6 and 7.
// A status word records any failure (a missed bucket, a full workspace, a segment too large);
// every kernel after a failure returns at once, and the host falls back to an exact
// multiselection that needs no prediction.
#include "common.cuh"

#define FMS_BLOCK 512
#define FMS_WARPS (FMS_BLOCK / WARP_SIZE)
#define FMS_UNROLL 4                 // 16-byte vectors a thread loads per trip
#define FMS_COARSE 1024              // coarse bins the sample's range needs at most
#define FMS_BINS (FMS_COARSE + 1)    // table entries with equal buckets (one more below lo)
#define FMS_TABLE (FMS_BINS + 1)     // and the upper tail
#define FMS_BUCKETS 16384            // buckets at most (64 KB of shared counters)
#define FMS_SAMPLE 16384
#define FMS_PLAN_THREADS 1024
#define FMS_SAMPLE_PER_THREAD (FMS_SAMPLE / FMS_PLAN_THREADS)
#define FMS_SCAN_ROWS 16             // values a lane holds in a one-block prefix sum
static_assert(FMS_BUCKETS <= FMS_SCAN_ROWS * FMS_PLAN_THREADS, "one block scans every bucket");
#define FMS_MARK 0x80000000u
#define FMS_FINAL_THREADS 1024
#define FMS_FINAL_CAP 4096           // keys a final block sorts on chip
#define FMS_SCAN_UNROLL 8            // keys a thread of a final block loads at once
#define FMS_MAX_RANKS 256            // distinct ranks a run takes
#define FMS_SEGMENT_MAX (1u << 20)   // keys an active bucket may hold
#define FMS_GATHER_KEYS 8            // keys a thread of the gather takes per tile
#define FMS_NONE 0xffffu

// Status bits.
#define FMS_MISSED 1u   // a rank's bucket was not written
#define FMS_FULL 2u     // a workspace was too small
#define FMS_TOO_BIG 4u  // an active bucket holds more than FMS_SEGMENT_MAX keys

// params words: base, coarse shift, buckets used, the largest key's bucket.
#define FMS_P_BASE 0
#define FMS_P_SHIFT 1
#define FMS_P_BUCKETS 2
#define FMS_P_TOP 3
#define FMS_PARAMS 4

// v >> s with PTX semantics: 0 when s reaches the width (the tails' entries shift by it).
__device__ __forceinline__ u32 fms_shr(u32 v, u32 s) {
    u32 r;
    asm("shr.b32 %0, %1, %2;" : "=r"(r) : "r"(v), "r"(s));
    return r;
}
__device__ __forceinline__ u64 fms_shr(u64 v, u32 s) {
    u64 r;
    asm("shr.b64 %0, %1, %2;" : "=l"(r) : "l"(v), "r"(s));
    return r;
}

// A table entry in one word: the bucket offset (biased to be non-negative: it lies in
// [-2^24, 2^14]) above FMS_SHIFT_BITS bits of the shift of rel.
#define FMS_SHIFT_BITS 7
#define FMS_OFFSET_BIAS (1u << 24)
__device__ __forceinline__ u32 fms_entry(u32 offset, u32 shift) {
    return ((offset + FMS_OFFSET_BIAS) << FMS_SHIFT_BITS) | shift;
}
__device__ __forceinline__ u32 fms_entry_offset(u32 e) { return (e >> FMS_SHIFT_BITS) - FMS_OFFSET_BIAS; }
__device__ __forceinline__ u32 fms_entry_shift(u32 e) { return e & ((1u << FMS_SHIFT_BITS) - 1); }

// The bucket of `key` from the table (in shared memory).
template <typename K>
__device__ __forceinline__ u32 fms_bucket(const u32* table, K key, K base, u32 cshift, u32 top) {
    const K rel = (key > base ? key : base) - base;
    const K c = rel >> cshift;
    const u32 e = table[c < (K)FMS_BINS ? (u32)c : (u32)FMS_BINS];
    const u32 b = (e >> FMS_SHIFT_BITS) + (u32)fms_shr(rel, fms_entry_shift(e)) - FMS_OFFSET_BIAS;
    return key == (K)~(K)0 ? top : b;
}

// ---------------------------------------------------------------------------------------------
// Block-wide sums and prefix sums (red: 33 words of shared scratch).

__device__ __forceinline__ u64 fms_block_sum(u64 v, u64* red) {
    for (int off = 16; off > 0; off /= 2) v += __shfl_down_sync(FULL_MASK, v, off);
    __syncthreads();
    if ((threadIdx.x & 31) == 0) red[threadIdx.x / 32] = v;
    __syncthreads();
    u64 s = 0;
    for (u32 w = 0; w < blockDim.x / 32; ++w) s += red[w];
    __syncthreads();
    return s;
}

// Exclusive prefix sums of v[0..len) into out[0..len] (out[len] = the total) with one block,
// len <= FMS_SCAN_ROWS * blockDim.x: each warp takes a run of whole rows of 32 values, loaded
// at once (coalesced), and scans it row by row after the warps' totals are scanned. Between
// the two, `prepare(total)` (every thread; a barrier follows); then, warp-collectively, each
// value's `visit(j, lo, hi)` (lo = out[j], hi = out[j + 1]), its results gathered as bits into
// marks[j / 32] when marks is not null.
template <typename Prepare, typename Visit>
__device__ void fms_block_scan(const u64* __restrict__ v, u32 len, u64* out, u64* red, u32* marks, Prepare prepare,
                               Visit visit) {
    const u32 lane = threadIdx.x & 31, warp = threadIdx.x / 32, warps = blockDim.x / 32;
    const u32 rows = (len + blockDim.x - 1) / blockDim.x;
    const u32 first = warp * rows * 32;
    u64 x[FMS_SCAN_ROWS];
    u64 sum = 0;
#pragma unroll
    for (u32 j = 0; j < FMS_SCAN_ROWS; ++j) {
        const u32 i = first + j * 32 + lane;
        x[j] = (j < rows && i < len) ? v[i] : 0;
        sum += x[j];
    }
    for (int off = 16; off > 0; off /= 2) sum += __shfl_xor_sync(FULL_MASK, sum, off);
    __syncthreads();
    if (lane == 0) red[warp] = sum;
    __syncthreads();
    if (threadIdx.x == 0) {
        const u64 run = serial::exclusive_sum(red, warps);
        red[32] = run;
        out[len] = run;
    }
    __syncthreads();
    prepare(red[32]);
    __syncthreads();
    u64 carry = red[warp];
#pragma unroll
    for (u32 j = 0; j < FMS_SCAN_ROWS; ++j) {
        if (j < rows) {
            u64 incl = warp::inclusive_sum(x[j]);
            const u32 i = first + j * 32 + lane;
            const u64 lo = carry + incl - x[j];
            if (i < len) out[i] = lo;
            const bool bit = i < len && visit(i, lo, carry + incl);
            const u32 word = __ballot_sync(FULL_MASK, bit);
            if (marks && lane == 0 && i < len) marks[i >> 5] = word;
            carry += __shfl_sync(FULL_MASK, incl, 31);
        }
    }
    __syncthreads();
}

// Exclusive prefix sums of v[0..len) into out[0..len] (see fms_block_scan).
__device__ void fms_block_prefix(const u64* __restrict__ v, u32 len, u64* out, u64* red) {
    fms_block_scan(v, len, out, red, nullptr, [](u64) {}, [](u32, u64, u64) { return false; });
}

// ---------------------------------------------------------------------------------------------
// 1. The plan.

// One block of FMS_PLAN_THREADS. table gets FMS_TABLE entries, params FMS_PARAMS words.
template <typename T>
__device__ void fms_plan_impl(const T* __restrict__ x, u64 n, u64 seed, u32 max_buckets, u32* __restrict__ table,
                              u64* __restrict__ params) {
    typedef typename KeyOf<T>::type K;
    const int KB = sizeof(K) * 8;
    __shared__ u32 hist[FMS_BINS];
    __shared__ u32 logs[FMS_BINS];
    __shared__ u64 counts[FMS_BINS];
    __shared__ u64 firsts[FMS_BINS + 1];
    __shared__ u64 red[33];
    __shared__ K wmin[32], wmax[32];
    __shared__ K ext[2];
    K keys[FMS_SAMPLE_PER_THREAD];
#pragma unroll
    for (u32 j = 0; j < FMS_SAMPLE_PER_THREAD; ++j) {
        keys[j] = to_key(x[sample_position(j * FMS_PLAN_THREADS + threadIdx.x, n, FMS_SAMPLE, seed)]);
    }
    K mn = (K)~(K)0, mx = 0;
    u64 real = 0;
#pragma unroll
    for (u32 j = 0; j < FMS_SAMPLE_PER_THREAD; ++j) {
        const K k = keys[j];
        const bool in = k != (K)~(K)0;
        mn = (in && k < mn) ? k : mn;
        mx = (in && k > mx) ? k : mx;
        real += in ? 1u : 0u;
    }
    for (u32 i = threadIdx.x; i < FMS_BINS; i += blockDim.x) hist[i] = 0;
    warp::reduce_extremes(mn, mx);
    if ((threadIdx.x & 31) == 0) {
        wmin[threadIdx.x / 32] = mn;
        wmax[threadIdx.x / 32] = mx;
    }
    const u64 reals = fms_block_sum(real, red);
    if (threadIdx.x == 0) {
        K a = (K)~(K)0, b = 0;
        for (u32 w = 0; w < blockDim.x / 32; ++w) {
            a = wmin[w] < a ? wmin[w] : a;
            b = wmax[w] > b ? wmax[w] : b;
        }
        if (a > b) a = b = 0;  // every sampled key is the largest one
        ext[0] = a;
        ext[1] = b;
    }
    __syncthreads();
    const K lo = ext[0];
    const K span = ext[1] - lo;
    u32 cshift = 0;
    while ((span >> cshift) >= (K)FMS_COARSE) ++cshift;
    const K width = (K)1 << cshift;
    const K base = lo >= width ? lo - width : 0;
#pragma unroll
    for (u32 j = 0; j < FMS_SAMPLE_PER_THREAD; ++j) {
        const K k = keys[j];
        if (k != (K)~(K)0) atomicAdd(&hist[(u32)((k - base) >> cshift)], 1u);
    }
    __syncthreads();
    // Buckets for bin c: 2^p, p = round(log2(its share of the sample * room)) - bias, at most
    // the bin's width in keys, the bias raised until all fit.
    const u32 room = max_buckets - 2;  // the upper tail, the largest key
    const double per_key = reals > 0 ? (double)room / (double)reals : 0.0;
    for (int bias = 0;; ++bias) {
        u64 sum = 0;
        for (u32 c = threadIdx.x; c < FMS_BINS; c += blockDim.x) {
            int p = 0;
            if (hist[c] > 0) {
                p = (int)floor(log2((double)hist[c] * per_key) + 0.5) - bias;
                p = p < 0 ? 0 : p;
                p = p > (int)cshift ? (int)cshift : p;
                p = p > 14 ? 14 : p;
            }
            logs[c] = (u32)p;
            counts[c] = 1ull << p;
            sum += 1ull << p;
        }
        const u64 total = fms_block_sum(sum, red);
        if (total <= room || bias > 64) break;
    }
    fms_block_prefix(counts, FMS_BINS, firsts, red);
    // rel in bin c is [c W, (c + 1) W): rel >> (cshift - p) is c 2^p onwards.
    for (u32 c = threadIdx.x; c < FMS_BINS; c += blockDim.x) {
        table[c] = fms_entry((u32)firsts[c] - (c << logs[c]), cshift - logs[c]);
    }
    if (threadIdx.x == 0) {
        const u32 upper = (u32)firsts[FMS_BINS];
        table[FMS_BINS] = fms_entry(upper, (u32)KB);
        params[FMS_P_BASE] = (u64)base;
        params[FMS_P_SHIFT] = cshift;
        params[FMS_P_TOP] = upper + 1;
        params[FMS_P_BUCKETS] = upper + 2;
    }
}

// ---------------------------------------------------------------------------------------------
// 2 and 4. The count passes.

// The vector a pass reads at slot i: every vector (fused), or, for the subset count, one
// 64-byte piece (FMS_PIECE vectors) of each group of `group` pieces (a power of two), at a
// hashed place.
#define FMS_PIECE 4
__device__ __forceinline__ u64 fms_vector(u64 i, bool subset, u32 group, u64 seed) {
    if (!subset) return i;
    const u64 g = i / FMS_PIECE;
    u32 h = ((u32)g ^ (u32)(g >> 32)) * 0x9E3779B1u + (u32)seed;
    h ^= h >> 16;
    h *= 0x85EBCA6Bu;
    h ^= h >> 13;
    return (g * group + (h & (group - 1))) * FMS_PIECE + (i % FMS_PIECE);
}

// Loads the shared table; initialises the counters (the marks of `marks` in their top bits when
// not null). Ends with a barrier.
__device__ __forceinline__ void fms_setup(u32* table, u32* hist, const u32* __restrict__ gtable,
                                          const u32* __restrict__ marks, u32 buckets) {
    for (u32 i = threadIdx.x; i < FMS_TABLE; i += blockDim.x) table[i] = gtable[i];
    for (u32 i = threadIdx.x; i < buckets; i += blockDim.x) {
        hist[i] = (marks && ((marks[i >> 5] >> (i & 31)) & 1u)) ? FMS_MARK : 0u;
    }
    __syncthreads();
}

// Writes a block's counters (marks cleared) to partial[blockIdx.x * buckets + b].
__device__ __forceinline__ void fms_flush_counts(const u32* hist, u32 buckets, u32* __restrict__ partial) {
    __syncthreads();
    u32* out = partial + (u64)blockIdx.x * buckets;
    for (u32 i = threadIdx.x; i < buckets; i += blockDim.x) out[i] = hist[i] & ~FMS_MARK;
}

// What a pass needs to place a key.
template <typename K>
struct FmsMap {
    const u32* table;
    u32* hist;
    K base;
    u32 cshift;
    u32 top;
};

// What a pass over the input does with each element.
#define FMS_SUBSET 0   // counts it, over a subset of the input (one piece in `group`)
#define FMS_COUNT 1    // counts it
#define FMS_FUSED 2    // counts it and appends the keys of marked buckets to a workspace
#define FMS_APPEND 3   // appends the keys of marked buckets to a workspace, counting nothing

// One trip of a pass: FMS_UNROLL vectors a thread from slot `first` on, each element handled
// as MODE says (the fused pass's appends warp-collective). CHECKED: some slots of the block's
// trip may lie at or beyond `slots`.
template <typename T, int MODE, bool CHECKED>
__device__ __forceinline__ void fms_trip(const T* __restrict__ x, u64 first, u64 slots, u32 group, u64 seed,
                                         const FmsMap<typename KeyOf<T>::type>& map,
                                         typename KeyOf<T>::type* stage, u32& staged,
                                         typename KeyOf<T>::type* __restrict__ out, u64 cap, u64* out_count) {
    typedef typename KeyOf<T>::type K;
    const int V = Vec16<T>::N;
    const int E = FMS_UNROLL * V;
    const bool APPENDS = MODE == FMS_FUSED || MODE == FMS_APPEND;
    T v[E];
    bool valid[FMS_UNROLL];
#pragma unroll
    for (int u = 0; u < FMS_UNROLL; ++u) {
        const u64 i = first + (u64)u * FMS_BLOCK;
        valid[u] = !CHECKED || i < slots;
        T w[V];
        if (valid[u]) {
            load16(x + fms_vector(i, MODE == FMS_SUBSET, group, seed) * V, w);
        } else {
#pragma unroll
            for (int j = 0; j < V; ++j) w[j] = (T)0;
        }
#pragma unroll
        for (int j = 0; j < V; ++j) v[u * V + j] = w[j];
    }
    K key[E];
    bool keep[E];
#pragma unroll
    for (int e = 0; e < E; ++e) {
        key[e] = to_key(v[e]);
        keep[e] = false;
        if (valid[e / V]) {
            u32* counter = &map.hist[fms_bucket(map.table, key[e], map.base, map.cshift, map.top)];
            if (MODE == FMS_APPEND) {
                keep[e] = (*counter & FMS_MARK) != 0;
            } else {
                const u32 old = atomicAdd(counter, 1u);
                keep[e] = MODE == FMS_FUSED && (old & FMS_MARK);
            }
        }
    }
    if (APPENDS) warp_stage_append<K, E, WARP_SIZE * E>(stage, staged, out, cap, out_count, key, keep);
}

// A pass over the input (see FMS_SUBSET, ...): the counting modes leave each block's counts in
// row blockIdx.x of `partial`; the fused and appending passes append the keys of the buckets
// marked in `marks` to out[0..cap) through out_count (in no order).
template <typename T, int MODE>
__device__ void fms_pass_impl(const T* __restrict__ x, u64 n, const u32* __restrict__ gtable,
                              const u64* __restrict__ params, const u32* __restrict__ marks, u32 group,
                              u64 seed, u32* __restrict__ partial, typename KeyOf<T>::type* __restrict__ out, u64 cap,
                              u64* out_count, const u32* status) {
    typedef typename KeyOf<T>::type K;
    const int V = Vec16<T>::N;
    const int E = FMS_UNROLL * V;
    const bool APPENDS = MODE == FMS_FUSED || MODE == FMS_APPEND;
    extern __shared__ __align__(16) u32 fms_dyn[];
    __shared__ u32 table[FMS_TABLE];
    __shared__ K stages[APPENDS ? FMS_WARPS : 1][APPENDS ? WARP_SIZE * E : 1];
    const u32 buckets = (u32)params[FMS_P_BUCKETS];
    u32* hist = fms_dyn;
    if (MODE != FMS_SUBSET && *status) return;
    fms_setup(table, hist, gtable, APPENDS ? marks : nullptr, buckets);
    const FmsMap<K> map = {table, hist, (K)params[FMS_P_BASE], (u32)params[FMS_P_SHIFT], (u32)params[FMS_P_TOP]};
    K* stage = stages[APPENDS ? threadIdx.x / WARP_SIZE : 0];
    u32 staged = 0;
    const u64 nvec = n / V;
    const u64 slots = MODE != FMS_SUBSET ? nvec : nvec / (FMS_PIECE * (u64)group) * FMS_PIECE;
    const u64 per_trip = (u64)FMS_BLOCK * FMS_UNROLL;
    const u64 step = (u64)gridDim.x * per_trip;
    for (u64 block_first = (u64)blockIdx.x * per_trip; block_first < slots; block_first += step) {
        const u64 first = block_first + threadIdx.x;
        if (block_first + per_trip <= slots) {
            fms_trip<T, MODE, false>(x, first, slots, group, seed, map, stage, staged, out, cap, out_count);
        } else {
            fms_trip<T, MODE, true>(x, first, slots, group, seed, map, stage, staged, out, cap, out_count);
        }
    }
    if (MODE != FMS_SUBSET) {
        // The elements after the last whole vector: block 0's first warp.
        if (blockIdx.x == 0 && threadIdx.x < WARP_SIZE) {
            const u64 i = nvec * V + threadIdx.x;
            K key[1] = {0};
            bool keep[1] = {false};
            if (i < n) {
                key[0] = to_key(x[i]);
                u32* counter = &hist[fms_bucket(table, key[0], map.base, map.cshift, map.top)];
                if (MODE == FMS_APPEND) {
                    keep[0] = (*counter & FMS_MARK) != 0;
                } else {
                    const u32 old = atomicAdd(counter, 1u);
                    keep[0] = MODE == FMS_FUSED && (old & FMS_MARK) != 0;
                }
            }
            if (APPENDS) warp_stage_append<K, 1, WARP_SIZE * E>(stage, staged, out, cap, out_count, key, keep);
        }
        if (APPENDS) warp_flush(stage, staged, out, cap, out_count);
    }
    if (MODE != FMS_APPEND) fms_flush_counts(hist, buckets, partial);
}

// totals[c] += the counts of bucket c in a group of FMS_TOTAL_GROUP blocks (blockIdx.y) of
// partial[blk * buckets + c]; totals zero on entry.
#define FMS_TOTAL_GROUP 16
extern "C" __global__ void fms_totals(const u32* __restrict__ partial, u64 blocks, const u64* __restrict__ params,
                                      u64* __restrict__ totals, const u32* status) {
    if (*status) return;
    const u32 counters = (u32)params[FMS_P_BUCKETS];
    const u32 c = blockIdx.x * blockDim.x + threadIdx.x;
    if (c >= counters) return;
    const u64 k0 = (u64)blockIdx.y * FMS_TOTAL_GROUP;
    const u64 k1 = k0 + FMS_TOTAL_GROUP < blocks ? k0 + FMS_TOTAL_GROUP : blocks;
    u64 sum = 0;
#pragma unroll 8
    for (u64 k = k0; k < k1; ++k) sum += partial[k * counters + c];
    if (sum) atomicAdd(&totals[c], sum);
}

// ---------------------------------------------------------------------------------------------
// 3. The prediction.

// How many of the ascending v[0..len) are below x (or, INCLUSIVE, at most x).
template <bool INCLUSIVE>
__device__ __forceinline__ u32 fms_count_below(const u64* v, u32 len, u64 x) {
    u32 a = 0, z = len;
    while (a < z) {
        const u32 m = (a + z) / 2;
        if (INCLUSIVE ? v[m] <= x : v[m] < x) a = m + 1; else z = m;
    }
    return a;
}

// One block of FMS_PLAN_THREADS. From the subset totals: marks (buckets / 32 words) of the
// buckets each rank may fall in; a workspace the marks would overflow (by the estimate) fails
// the run. starts: buckets + 1 words of scratch.
extern "C" __global__ void __launch_bounds__(FMS_PLAN_THREADS)
    fms_predict(const u64* __restrict__ totals, const u64* __restrict__ params, const u64* __restrict__ ranks, u64 r,
                u64 n, u64 cap, double sigmas, u64* starts, u32* marks, u32* status) {
    __shared__ u64 red[33];
    __shared__ u64 win_lo[FMS_MAX_RANKS], win_hi[FMS_MAX_RANKS];
    const u32 buckets = (u32)params[FMS_P_BUCKETS];
    double scale = 0.0;
    const auto windows = [&](u64 counted) {
        if (counted == 0) return;
        scale = (double)n / (double)counted;
        const double f = (double)counted / (double)n;
        for (u64 i = threadIdx.x; i < r; i += blockDim.x) {
            const double k = (double)ranks[i];
            const double p = (k + 0.5) / (double)n;
            // The standard deviation of a scaled subset count at p (the subset as a random
            // sample of its size), `sigmas` of them each side, and a few vectors of granularity.
            const double sd = sqrt((double)n * p * (1.0 - p) * (1.0 - f) / f);
            const double w = sigmas * sd + 64.0 * scale;
            const double klo = (k - w) / scale, khi = (k + w) / scale;
            win_lo[i] = klo <= 0.0 ? 0 : (u64)klo;
            win_hi[i] = khi >= (double)counted ? counted : (u64)khi;
        }
        __syncthreads();
        if (threadIdx.x == 0) {
            // Widened to ascending ends (suffix minima of the starts, prefix maxima of the ends),
            // so that the last window starting at or before a position has the largest end.
            for (u32 i = (u32)r - 1; i > 0; --i) win_lo[i - 1] = win_lo[i - 1] < win_lo[i] ? win_lo[i - 1] : win_lo[i];
            for (u32 i = 1; i < (u32)r; ++i) win_hi[i] = win_hi[i] > win_hi[i - 1] ? win_hi[i] : win_hi[i - 1];
        }
    };
    // A bucket is marked when its closed range meets a window (so that buckets the subset found
    // empty at a window's ends are marked too).
    u64 est = 0;
    fms_block_scan(totals, buckets, starts, red, marks, windows, [&](u32, u64 lo, u64 hi) {
        const u32 c = scale > 0.0 ? fms_count_below<true>(win_lo, (u32)r, hi) : 0;
        const bool marked = c > 0 && win_hi[c - 1] >= lo;
        est += marked ? hi - lo : 0;
        return marked;
    });
    const u64 sum = fms_block_sum(est, red);
    if (threadIdx.x == 0) {
        if (scale == 0.0) atomicOr(status, FMS_MISSED);  // the subset counted nothing
        else if ((double)sum * scale > 0.8 * (double)cap) atomicOr(status, FMS_FULL);
    }
}

// ---------------------------------------------------------------------------------------------
// 5. The choice after the fused pass.

// base + (c << cshift) + off, or the largest key when that passes it (off <= 2^cshift).
template <typename K>
__device__ __forceinline__ K fms_key_at(K base, u32 c, u32 cshift, K off) {
    const int KB = sizeof(K) * 8;
    if (fms_shr((K)c, (u32)(KB - cshift)) != 0) return (K)~(K)0;
    const K head = (K)c << cshift;
    const K rel = head + off;
    const K key = base + rel;
    return (rel < head || key < base) ? (K)~(K)0 : key;
}

// The key range [klo, khi] of bucket b (from the plan's table in shared memory). The largest
// key is only in bucket `top`; an empty range beyond the keys has klo > khi.
template <typename K>
__device__ void fms_bucket_range(const u32* table, const u64* params, u32 b, K& klo, K& khi) {
    const K base = (K)params[FMS_P_BASE];
    const u32 cshift = (u32)params[FMS_P_SHIFT];
    if (b == (u32)params[FMS_P_TOP]) {
        klo = khi = (K)~(K)0;
        return;
    }
    const K last = (K)~(K)0 - 1;
    if (b >= fms_entry_offset(table[FMS_BINS])) {
        klo = fms_key_at<K>(base, FMS_BINS, cshift, 0);
        khi = last;
        return;
    }
    // The bin c holding bucket b: the last whose first bucket, off + (c << p), is <= b.
    u32 a = 0, z = FMS_BINS;
    while (z - a > 1) {
        const u32 m = (a + z) / 2;
        if (fms_entry_offset(table[m]) + (m << (cshift - fms_entry_shift(table[m]))) <= b) a = m; else z = m;
    }
    const u32 shift = fms_entry_shift(table[a]);
    const u32 j = b - (fms_entry_offset(table[a]) + (a << (cshift - shift)));
    const K start = fms_key_at<K>(base, a, cshift, (K)j << shift);
    const K end = fms_key_at<K>(base, a, cshift, (K)(j + 1) << shift);  // exclusive
    klo = (a == 0 && j == 0) ? (K)0 : start;                          // keys below base
    khi = end == (K)~(K)0 ? last : end - 1;
}

// One block of FMS_PLAN_THREADS. totals: the fused pass's exact bucket totals. For rank i:
// info[2 i] = its active bucket's index (or ~0 when answered: results[i] set), [+1] its rank
// inside. Per active bucket a (in ascending order): act[4 a] = its segment's start, [+1] keys
// gathered so far (zero), [+2, +3] its key range; slots[b] = the active index of bucket b or
// FMS_NONE. out[0] = active buckets, out[1] = keys they hold, out[2] = the elements whose key
// is the largest (for floats: the NaNs). ranks ascending and distinct; `written_count` the fused
// pass's appended keys (a workspace of `cap`), the segments a workspace of `cap2`.
template <typename K>
__device__ void fms_choose_impl(const u64* __restrict__ totals, const u32* __restrict__ gtable,
                                const u64* __restrict__ params, const u32* __restrict__ marks,
                                const u64* __restrict__ ranks, u64 r, const u64* written_count, u64 cap, u64 cap2,
                                u64* starts, unsigned short* slots, u64* act, u64* info, u64* out, u64* results,
                                u32* status) {
    __shared__ u64 red[33];
    __shared__ u32 table[FMS_TABLE];
    __shared__ u64 wanted[FMS_MAX_RANKS];
    __shared__ u32 rank_bucket[FMS_MAX_RANKS];
    __shared__ u64 bucket_total[FMS_MAX_RANKS];
    __shared__ u32 rank_slot[FMS_MAX_RANKS];
    __shared__ K range_lo[FMS_MAX_RANKS], range_hi[FMS_MAX_RANKS];
    if (*status) return;
    if (*written_count > cap) {
        if (threadIdx.x == 0) atomicOr(status, FMS_FULL);
        return;
    }
    for (u32 i = threadIdx.x; i < FMS_TABLE; i += blockDim.x) table[i] = gtable[i];
    for (u32 i = threadIdx.x; i < (u32)r; i += blockDim.x) wanted[i] = ranks[i];
    const u32 buckets = (u32)params[FMS_P_BUCKETS];
    // Each bucket finds the ranks inside it.
    fms_block_scan(totals, buckets, starts, red, nullptr, [](u64) {}, [&](u32 j, u64 lo, u64 hi) {
        slots[j] = FMS_NONE;
        for (u32 i = fms_count_below<false>(wanted, (u32)r, lo); i < (u32)r && wanted[i] < hi; ++i) {
            rank_bucket[i] = j;
            bucket_total[i] = hi - lo;
            info[2 * i + 1] = wanted[i] - lo;
        }
        return false;
    });
    __syncthreads();
    for (u32 i = threadIdx.x; i < (u32)r; i += blockDim.x) {
        const u32 b = rank_bucket[i];
        K klo, khi;
        fms_bucket_range<K>(table, params, b, klo, khi);
        range_lo[i] = klo;
        range_hi[i] = khi;
        if (klo == khi) {
            results[i] = (u64)klo;  // one key: answered
        } else if (!((marks[b >> 5] >> (b & 31)) & 1u)) {
            atomicOr(status, FMS_MISSED);
        }
    }
    __syncthreads();
    if (threadIdx.x == 0) {
        // Active buckets in ascending order (ranks are ascending, so are their buckets).
        u32 a = 0;
        u64 run = 0;
        u32 flags = 0;
        for (u32 i = 0; i < (u32)r; ++i) {
            if (range_lo[i] == range_hi[i]) {
                rank_slot[i] = FMS_NONE;
            } else if (i > 0 && rank_bucket[i - 1] == rank_bucket[i]) {
                rank_slot[i] = rank_slot[i - 1];
            } else {
                rank_slot[i] = a;
                act[4 * a] = run;
                run += bucket_total[i];
                if (bucket_total[i] > FMS_SEGMENT_MAX) flags |= FMS_TOO_BIG;
                ++a;
            }
        }
        if (run > cap2) flags |= FMS_FULL;
        if (flags) atomicOr(status, flags);
        out[0] = a;
        out[1] = run;
        out[2] = totals[(u32)params[FMS_P_TOP]];
    }
    __syncthreads();
    for (u32 i = threadIdx.x; i < (u32)r; i += blockDim.x) {
        const u32 a = rank_slot[i];
        info[2 * i] = a == FMS_NONE ? ~0ull : a;
        if (a != FMS_NONE && (i == 0 || rank_slot[i - 1] != a)) {
            slots[rank_bucket[i]] = (unsigned short)a;
            act[4 * a + 1] = 0;
            act[4 * a + 2] = (u64)range_lo[i];
            act[4 * a + 3] = (u64)range_hi[i];
        }
    }
}

// ---------------------------------------------------------------------------------------------
// The exact form, for more ranks than a prediction can serve: a count pass over every element
// (FMS_COUNT), the settlement below, a pass appending the active buckets' keys (FMS_APPEND), and
// the gather and the final step as above.

// An active bucket's place in the settlement's prefix sums: its ordinal above FMS_ORDINAL_SHIFT
// bits of its segment's start.
#define FMS_ORDINAL_SHIFT 40
#define FMS_START_MASK ((1ull << FMS_ORDINAL_SHIFT) - 1)

// One block of FMS_PLAN_THREADS. From the count pass's exact totals: starts (buckets + 1 words)
// their exclusive prefix sums; a bucket is active when it holds a wanted rank and more than one
// key (marks: buckets / 32 words, zero on entry); sizes (buckets words of scratch) and segs
// (buckets + 1 words) give each active bucket its ordinal a and its segment in a workspace of
// cap2 keys. slots[b] = a or FMS_NONE; per rank i (ranks ascending, distinct; r of them):
// info[2 i] = its bucket's a (or ~0 when answered: results[i] set), [+1] its rank inside; per
// active bucket: act[4 a] its segment's start, [+1] zero (the gather's count), [+2, +3] its key
// range. out: as fms_choose's.
template <typename K>
__device__ void fms_settle_impl(const u64* __restrict__ totals, const u32* __restrict__ gtable,
                                const u64* __restrict__ params, const u64* __restrict__ ranks, u64 r, u64 cap2,
                                u64* starts, u64* sizes, u64* segs, u32* marks, unsigned short* slots, u64* act,
                                u64* info, u64* out, u64* results, u32* status) {
    __shared__ u64 red[33];
    __shared__ u32 table[FMS_TABLE];
    if (*status) return;
    for (u32 i = threadIdx.x; i < FMS_TABLE; i += blockDim.x) table[i] = gtable[i];
    __syncthreads();
    const u32 buckets = (u32)params[FMS_P_BUCKETS];
    fms_block_scan(totals, buckets, starts, red, marks, [](u64) {}, [&](u32 j, u64 lo, u64 hi) {
        bool active = false;
        if (hi > lo) {
            const u32 i = fms_count_below<false>(ranks, (u32)r, lo);
            if (i < (u32)r && ranks[i] < hi) {
                K klo, khi;
                fms_bucket_range<K>(table, params, j, klo, khi);
                active = klo != khi;
            }
        }
        sizes[j] = active ? (1ull << FMS_ORDINAL_SHIFT) | (hi - lo) : 0;
        return active;
    });
    fms_block_prefix(sizes, buckets, segs, red);
    for (u32 j = threadIdx.x; j < buckets; j += blockDim.x) {
        slots[j] = sizes[j] ? (unsigned short)(segs[j] >> FMS_ORDINAL_SHIFT) : (unsigned short)FMS_NONE;
    }
    u32 flags = 0;
    for (u32 i = threadIdx.x; i < (u32)r; i += blockDim.x) {
        const u64 k = ranks[i];
        const u32 b = fms_count_below<true>(starts, buckets, k) - 1;
        info[2 * i + 1] = k - starts[b];
        K klo, khi;
        fms_bucket_range<K>(table, params, b, klo, khi);
        if (klo == khi) {
            results[i] = (u64)klo;  // one key: answered
            info[2 * i] = ~0ull;
            continue;
        }
        const u64 a = segs[b] >> FMS_ORDINAL_SHIFT;
        info[2 * i] = a;
        // Ranks sharing a bucket write the same words.
        act[4 * a] = segs[b] & FMS_START_MASK;
        act[4 * a + 1] = 0;
        act[4 * a + 2] = (u64)klo;
        act[4 * a + 3] = (u64)khi;
        if (totals[b] > FMS_SEGMENT_MAX) flags |= FMS_TOO_BIG;
    }
    if (threadIdx.x == 0) {
        if ((segs[buckets] & FMS_START_MASK) > cap2) flags |= FMS_FULL;
        out[0] = segs[buckets] >> FMS_ORDINAL_SHIFT;
        out[1] = segs[buckets] & FMS_START_MASK;
        out[2] = totals[(u32)params[FMS_P_TOP]];
    }
    if (flags) atomicOr(status, flags);
}

// ---------------------------------------------------------------------------------------------
// 6. The gather: the keys of the active buckets into their segments.

// Blocks of FMS_BLOCK threads; dynamic shared memory (gather_shared on the host): the slots (2
// bytes a bucket), then for up to max_active active buckets their segments' starts, the tile's
// bases and two sets of the tile's counts. Tiles of FMS_GATHER_KEYS keys a thread: each key of
// an active bucket gets its place in the tile from a shared counter, the tile's places in each
// segment from one global atomic per active bucket, so that every segment fills from one front.
// (Fewer reservations, each block counting a range of several tiles first, were slower at 1001
// active buckets: 0.85 ms against 0.71 for 2^24 kept keys on an H100, and 1.2 ms with one
// range a block, whose many fronts leave partly written sectors to be evicted.)
template <typename K>
__device__ void fms_gather_impl(const K* __restrict__ keys, const u64* count, u64 cap, const u32* __restrict__ gtable,
                                const u64* __restrict__ params, const unsigned short* __restrict__ gslots, u64* act,
                                const u64* __restrict__ choice, u32 max_active, K* __restrict__ out,
                                const u32* status) {
    extern __shared__ __align__(16) u32 fms_dyn[];
    __shared__ u32 table[FMS_TABLE];
    if (*status) return;
    const u32 nact = (u32)choice[0];
    if (nact == 0) return;
    if (nact > max_active) {
        if (threadIdx.x == 0) atomicOr(const_cast<u32*>(status), FMS_FULL);
        return;
    }
    // FMS_BUCKETS slots, then 8-byte aligned arrays of max_active entries.
    u64* seg_start = reinterpret_cast<u64*>(fms_dyn + FMS_BUCKETS / 2);
    u64* tile_base = seg_start + max_active;
    u32* tile_count[2] = {reinterpret_cast<u32*>(tile_base + max_active),
                          reinterpret_cast<u32*>(tile_base + max_active) + max_active};
    unsigned short* slots = reinterpret_cast<unsigned short*>(fms_dyn);
    const u32 buckets = (u32)params[FMS_P_BUCKETS];
    for (u32 i = threadIdx.x; i < FMS_TABLE; i += blockDim.x) table[i] = gtable[i];
    for (u32 i = threadIdx.x; i < buckets; i += blockDim.x) slots[i] = gslots[i];
    for (u32 a = threadIdx.x; a < nact; a += blockDim.x) {
        seg_start[a] = act[4 * a];
        tile_count[0][a] = 0;
        tile_count[1][a] = 0;
    }
    __syncthreads();
    const K base = (K)params[FMS_P_BASE];
    const u32 cshift = (u32)params[FMS_P_SHIFT];
    const u32 top = (u32)params[FMS_P_TOP];
    const u64 m = *count < cap ? *count : cap;
    const u64 tile = (u64)blockDim.x * FMS_GATHER_KEYS;
    u32 par = 0;
    for (u64 t0 = (u64)blockIdx.x * tile; t0 < m; t0 += (u64)gridDim.x * tile) {
        K key[FMS_GATHER_KEYS];
        u32 slot[FMS_GATHER_KEYS];
        u32 place[FMS_GATHER_KEYS];
        load_strided(keys, t0, m, key);
#pragma unroll
        for (int g = 0; g < FMS_GATHER_KEYS; ++g) {
            const u64 i = t0 + (u64)g * blockDim.x + threadIdx.x;
            slot[g] = i < m ? slots[fms_bucket(table, key[g], base, cshift, top)] : FMS_NONE;
            place[g] = slot[g] != FMS_NONE ? atomicAdd(&tile_count[par][slot[g]], 1u) : 0u;
        }
        __syncthreads();
        for (u32 a = threadIdx.x; a < nact; a += blockDim.x) {
            const u32 c = tile_count[par][a];
            tile_base[a] = c ? seg_start[a] + atomicAdd(&act[4 * a + 1], (u64)c) : 0;
            tile_count[par ^ 1][a] = 0;
        }
        __syncthreads();
#pragma unroll
        for (int g = 0; g < FMS_GATHER_KEYS; ++g) {
            if (slot[g] != FMS_NONE) out[tile_base[slot[g]] + place[g]] = key[g];
        }
        par ^= 1;
    }
}

// ---------------------------------------------------------------------------------------------
// 7. The final step: one block of FMS_FINAL_THREADS per rank.

// The keys of keys[0..m) that lie in [klo, khi], scanned by the block: their number, extremes
// and (up to FMS_FINAL_CAP of them) the keys in buf, or with `digit_shift` < 64 the counts of
// their 8-bit digits at that shift in hist instead.
template <typename K>
__device__ void fms_final_scan(const K* __restrict__ keys, u64 m, K klo, K khi, u32 digit_shift, K* buf, u32* hist,
                               u32* fill, K* ext) {
    if (threadIdx.x == 0) {
        *fill = 0;
        ext[0] = (K)~(K)0;
        ext[1] = 0;
    }
    for (u32 j = threadIdx.x; j < 256; j += blockDim.x) hist[j] = 0;
    __syncthreads();
    K mn = (K)~(K)0, mx = 0;
    for (u64 j0 = 0; j0 < m; j0 += (u64)FMS_SCAN_UNROLL * blockDim.x) {
        K batch[FMS_SCAN_UNROLL];
        load_strided(keys, j0, m, batch);
#pragma unroll
        for (int u = 0; u < FMS_SCAN_UNROLL; ++u) {
            const K key = batch[u];
            const bool in = j0 + (u64)u * blockDim.x + threadIdx.x < m && key >= klo && key <= khi;
            if (in) {
                mn = key < mn ? key : mn;
                mx = key > mx ? key : mx;
            }
            if (digit_shift < 64) {
                if (in) atomicAdd(&hist[(u32)(key >> digit_shift) & 255u], 1u);
            } else {
                // One shared atomic a warp for the places in buf.
                const u32 votes = __ballot_sync(FULL_MASK, in);
                if (votes == 0) continue;
                const u32 leader = __ffs(votes) - 1;
                u32 at = 0;
                if ((threadIdx.x & 31) == leader) at = atomicAdd(fill, (u32)__popc(votes));
                at = __shfl_sync(FULL_MASK, at, leader) + __popc(votes & lanemask_lt());
                if (in && at < FMS_FINAL_CAP) buf[at] = key;
            }
        }
    }
    warp::reduce_extremes(mn, mx);
    if ((threadIdx.x & 31) == 0) {
        if (sizeof(K) == 8) {
            atomicMin((u64*)&ext[0], (u64)mn);
            atomicMax((u64*)&ext[1], (u64)mx);
        } else {
            atomicMin((u32*)&ext[0], (u32)mn);
            atomicMax((u32*)&ext[1], (u32)mx);
        }
    }
    __syncthreads();
}

// Sorts buf[0..have) (have <= FMS_FINAL_CAP) on chip, padded with the largest key to the next
// of 256, 1024 or FMS_FINAL_CAP.
template <typename K>
__device__ void fms_sort_buffer(K* buf, u32 have) {
    const u32 size = have <= 256 ? 256 : (have <= 1024 ? 1024 : FMS_FINAL_CAP);
    for (u32 j = have + threadIdx.x; j < size; j += blockDim.x) buf[j] = (K)~(K)0;
    if (size == 256) {
        block_bitonic_sort<K, 256>(buf);
    } else if (size == 1024) {
        block_bitonic_sort<K, 1024>(buf);
    } else {
        block_bitonic_sort<K, FMS_FINAL_CAP>(buf);
    }
}

// The final step of rank blockIdx.x: its active bucket's segment, sorted on chip; a segment of
// equal keys answers at once; more than FMS_FINAL_CAP keys are first narrowed by 8-bit digits
// (radix select over the segment, one scan a digit) until few enough remain.
template <typename K>
__device__ void fms_final_impl(const K* __restrict__ segments, const u64* __restrict__ act,
                               const u64* __restrict__ info, u64* results, u32* status) {
    __shared__ K buf[FMS_FINAL_CAP];
    __shared__ u32 hist[256];
    __shared__ u32 fill;
    __shared__ K ext[2];
    __shared__ K range[2];
    __shared__ u64 left[2];  // rank inside the range, keys in the range
    if (*status) return;
    const u64 i = blockIdx.x;
    const u64 a = info[2 * i];
    if (a == ~0ull) return;
    const K* keys = segments + act[4 * a];
    const u64 m = act[4 * a + 1];
    // Few keys: gathered at once. Many: narrowed from the bucket's key range.
    u64 got = m;
    if (m <= FMS_FINAL_CAP) {
        fms_final_scan<K>(keys, m, 0, (K)~(K)0, 64, buf, hist, &fill, ext);
        got = fill;
    }
    if (threadIdx.x == 0) {
        range[0] = m <= FMS_FINAL_CAP ? ext[0] : (K)act[4 * a + 2];
        range[1] = m <= FMS_FINAL_CAP ? ext[1] : (K)act[4 * a + 3];
        left[0] = info[2 * i + 1];
        left[1] = got;
    }
    __syncthreads();
    if (got == 0 || left[0] >= got) {
        if (threadIdx.x == 0) atomicOr(status, FMS_MISSED);
        return;
    }
    bool narrowed = false;
    while (left[1] > FMS_FINAL_CAP && range[0] != range[1]) {
        const K klo = range[0], khi = range[1];
        const K diff = klo ^ khi;
        u32 width = 0;
        while (width < sizeof(K) * 8 && (diff >> width) != 0) ++width;
        const u32 shift = width > 8 ? width - 8 : 0;
        fms_final_scan<K>(keys, m, klo, khi, shift, buf, hist, &fill, ext);
        // The digit holding the rank: the first warp sums eight digits a lane, and the lane
        // whose run passes the rank walks its eight.
        u32 g = 256;
        u64 k = 0;
        if (threadIdx.x < WARP_SIZE) {
            const u32 lane = threadIdx.x;
            u32 mine = 0;
#pragma unroll
            for (u32 j = 0; j < 8; ++j) mine += hist[lane * 8 + j];
            const u32 incl = warp::inclusive_sum(mine);
            const u32 past = __ballot_sync(FULL_MASK, (u64)incl > left[0]);
            const u32 at = past ? (u32)__ffs(past) - 1 : WARP_SIZE - 1;
            if (lane == at) {
                k = left[0] - (incl - mine);
                g = lane * 8;
                while (g < lane * 8 + 7 && k >= hist[g]) {
                    k -= hist[g];
                    ++g;
                }
            }
        }
        if (g < 256) {
            const K base = width >= sizeof(K) * 8 ? (K)0 : (klo >> width) << width;
            K nlo = base | ((K)g << shift);
            K nhi = nlo + (((K)1 << shift) - 1);
            range[0] = nlo > klo ? nlo : klo;
            range[1] = nhi < khi ? nhi : khi;
            left[0] = k;
            left[1] = hist[g];
        }
        __syncthreads();
        narrowed = true;
    }
    if (range[0] == range[1]) {
        if (threadIdx.x == 0) results[i] = (u64)range[0];
        return;
    }
    if (narrowed) {
        fms_final_scan<K>(keys, m, range[0], range[1], 64, buf, hist, &fill, ext);
        if (fill > FMS_FINAL_CAP || left[0] >= fill) {
            if (threadIdx.x == 0) atomicOr(status, FMS_TOO_BIG);
            return;
        }
        if (ext[0] == ext[1]) {
            if (threadIdx.x == 0) results[i] = (u64)ext[0];
            return;
        }
    }
    fms_sort_buffer<K>(buf, fill);
    if (threadIdx.x == 0) results[i] = (u64)buf[left[0]];
}

#define FUSED_MULTISELECT_KERNELS(NAME, T)                                                           \
    extern "C" __global__ void __launch_bounds__(FMS_PLAN_THREADS)                                   \
        fms_plan_##NAME(const T* x, u64 n, u64 seed, u32 max_buckets, u32* table, u64* params) {  \
        fms_plan_impl<T>(x, n, seed, max_buckets, table, params);                                    \
    }                                                                                                \
    extern "C" __global__ void __launch_bounds__(FMS_BLOCK)                                          \
        fms_subset_##NAME(const T* x, u64 n, const u32* table, const u64* params, u32 group,      \
                          u64 seed, u32* partial) {                                                  \
        fms_pass_impl<T, FMS_SUBSET>(x, n, table, params, nullptr, group, seed, partial, nullptr, 0, \
                                     nullptr, nullptr);                                              \
    }                                                                                                \
    extern "C" __global__ void __launch_bounds__(FMS_BLOCK, 2)                                       \
        fms_fused_##NAME(const T* x, u64 n, const u32* table, const u64* params, const u32* marks,\
                         u32* partial, KeyOf<T>::type* out, u64 cap, u64* out_count,                \
                         const u32* status) {                                                        \
        fms_pass_impl<T, FMS_FUSED>(x, n, table, params, marks, 1, 0, partial, out, cap, out_count,  \
                                    status);                                                         \
    }                                                                                                \
    extern "C" __global__ void __launch_bounds__(FMS_BLOCK, 2)                                       \
        fms_count_##NAME(const T* x, u64 n, const u32* table, const u64* params, u32* partial,     \
                         const u32* status) {                                                        \
        fms_pass_impl<T, FMS_COUNT>(x, n, table, params, nullptr, 1, 0, partial, nullptr, 0, nullptr,\
                                    status);                                                         \
    }                                                                                                \
    extern "C" __global__ void __launch_bounds__(FMS_BLOCK, 2)                                       \
        fms_append_##NAME(const T* x, u64 n, const u32* table, const u64* params, const u32* marks,\
                          KeyOf<T>::type* out, u64 cap, u64* out_count, const u32* status) {        \
        fms_pass_impl<T, FMS_APPEND>(x, n, table, params, marks, 1, 0, nullptr, out, cap, out_count, \
                                     status);                                                        \
    }
KSELECT_FOR_EACH_TYPE(FUSED_MULTISELECT_KERNELS)

#define FUSED_MULTISELECT_KEY_KERNELS(NAME, K)                                                       \
    extern "C" __global__ void __launch_bounds__(FMS_PLAN_THREADS)                                   \
        fms_choose_##NAME(const u64* totals, const u32* table, const u64* params, const u32* marks,\
                          const u64* ranks, u64 r, const u64* written, u64 cap, u64 cap2,           \
                          u64* starts, unsigned short* slots, u64* act, u64* info, u64* out,        \
                          u64* results, u32* status) {                                               \
        fms_choose_impl<K>(totals, table, params, marks, ranks, r, written, cap, cap2, starts, slots, \
                           act, info, out, results, status);                                         \
    }                                                                                                \
    extern "C" __global__ void __launch_bounds__(FMS_PLAN_THREADS)                                   \
        fms_settle_##NAME(const u64* totals, const u32* table, const u64* params, const u64* ranks, \
                          u64 r, u64 cap2, u64* starts, u64* sizes, u64* segs, u32* marks,          \
                          unsigned short* slots, u64* act, u64* info, u64* out, u64* results,       \
                          u32* status) {                                                             \
        fms_settle_impl<K>(totals, table, params, ranks, r, cap2, starts, sizes, segs, marks, slots, \
                           act, info, out, results, status);                                         \
    }                                                                                                \
    extern "C" __global__ void __launch_bounds__(FMS_BLOCK)                                          \
        fms_gather_##NAME(const K* keys, const u64* count, u64 cap, const u32* table,             \
                          const u64* params, const unsigned short* slots, u64* act,                 \
                          const u64* choice, u32 max_active, K* out, const u32* status) {           \
        fms_gather_impl<K>(keys, count, cap, table, params, slots, act, choice, max_active, out,    \
                           status);                                                                  \
    }                                                                                                \
    extern "C" __global__ void __launch_bounds__(FMS_FINAL_THREADS)                                  \
        fms_final_##NAME(const K* segments, const u64* act, const u64* info, u64* results,          \
                         u32* status) {                                                              \
        fms_final_impl<K>(segments, act, info, results, status);                                     \
    }
KSELECT_FOR_EACH_KEY(FUSED_MULTISELECT_KEY_KERNELS)
