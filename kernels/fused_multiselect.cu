// Fused bucket multiselection: bucketMultiSelect's counting and writing in one pass over the
// input, the buckets to write predicted from a count over a subset of it.
//
// 1. plan (one block): a 16384-key sample gives the key range [lo, hi] of the sample and a
//    histogram of FMS_COARSE equal coarse bins over it; each coarse bin gets a power of two of
//    buckets (about its share of the sample), equal key ranges within it. A key's bucket is then
//    one shared-table read away: entry[coarse(key)] = first bucket | shift << 16, bucket =
//    first + ((key - lo) & coarse mask) >> shift. Keys below lo have bucket 0, above the coarse
//    bins the next to last; the largest key (every NaN's) has the last bucket to itself.
// 2. subset count: every bucket counted over one 32-byte sector in each group of G of the
//    input (hashed; G from 2 to 16, chosen by the host), per block, then totalled.
// 3. predict (one block): each wanted rank's window in the subset's scaled prefix sums (several
//    standard deviations of the estimate wide) marks the buckets to write.
// 4. fused pass: every element counted in its bucket (per block, shared) and the keys of marked
//    buckets appended to a workspace (in no order); the mark is the counter's top bit, so the
//    atomic that counts a key also says whether to keep it.
// 5. choose (one block): exact bucket totals give each rank's bucket and its rank inside; a rank
//    whose bucket was not written marks the run as failed (the host falls back); each such
//    bucket ("active") is split into P equal key ranges for the second level.
// 6. second level over the workspace: count per (active bucket, part), choose the part of each
//    rank, append the keys of those parts to a second workspace.
// 7. final (one block per rank): the keys of its part, gathered from the second workspace,
//    sorted on chip; a part whose keys are all equal answers at once.
// A status word records any failure (a missed bucket, a full workspace, a part too large to
// sort); every kernel after a failure returns at once, and the host falls back to an exact
// multiselection that needs no prediction.
#include "common.cuh"

#define FMS_BLOCK 512
#define FMS_WARPS (FMS_BLOCK / WARP_SIZE)
#define FMS_UNROLL 2               // 16-byte vectors a thread loads per trip
#define FMS_COARSE 1024            // coarse bins of the plan
#define FMS_TABLE (FMS_COARSE + 2) // and the two tails
#define FMS_BUCKETS 16384          // buckets at most (64 KB of shared counters)
#define FMS_SAMPLE 16384
#define FMS_PLAN_THREADS 1024
#define FMS_MARK 0x80000000u
#define FMS_PARTS_MAX 16384        // second-level counters (active buckets x parts)
#define FMS_FINAL_THREADS 1024
#define FMS_FINAL_CAP 4096         // keys a final block sorts on chip
#define FMS_MAX_RANKS 256          // distinct ranks a run takes
#define FMS_NONE 0xffffu

// Status bits.
#define FMS_MISSED 1u       // a rank's bucket was not written
#define FMS_FULL 2u         // the workspace was too small
#define FMS_TOO_BIG 4u      // a final part holds more than FMS_FINAL_CAP distinct keys
#define FMS_TOO_MANY 8u     // more ranks than the second level can take

// params words: lo, coarse shift, buckets used, the largest key's bucket.
#define FMS_P_LO 0
#define FMS_P_SHIFT 1
#define FMS_P_BUCKETS 2
#define FMS_P_TOP 3
#define FMS_PARAMS 4

// The bucket of `key` from the coarse table (in shared memory).
template <typename K>
__device__ __forceinline__ u32 fms_bucket(const u32* table, K key, K lo, u32 cshift, u32 top) {
    const K rel = key - lo;
    const K c = rel >> cshift;
    const u32 idx = key < lo ? 0u : (c < (K)FMS_COARSE ? (u32)c + 1u : (u32)FMS_COARSE + 1u);
    const u32 e = table[idx];
    const K mask = ((K)1 << cshift) - 1;
    const u32 b = (e & 0xffffu) + (u32)((rel & mask) >> (e >> 16));
    return key == (K)~(K)0 ? top : b;
}

// The smallest of the warp's mn and the largest of its mx, in lane 0.
template <typename K>
__device__ __forceinline__ void fms_warp_extremes(K& mn, K& mx) {
    for (int off = 16; off > 0; off /= 2) {
        const K a = __shfl_down_sync(FULL_MASK, mn, off);
        const K b = __shfl_down_sync(FULL_MASK, mx, off);
        mn = a < mn ? a : mn;
        mx = b > mx ? b : mx;
    }
}

// ---------------------------------------------------------------------------------------------
// 1. The plan.

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

// Exclusive prefix sums of v[0..len) into out[0..len] with one block (out[len] = the total).
__device__ void fms_block_prefix(const u64* __restrict__ v, u32 len, u64* out, u64* red) {
    const u32 per = (len + blockDim.x - 1) / blockDim.x;
    const u32 a = threadIdx.x * per < len ? threadIdx.x * per : len;
    const u32 b = a + per < len ? a + per : len;
    u64 s = 0;
    for (u32 i = a; i < b; ++i) s += v[i];
    // Inclusive scan over the block (warp shuffles, then the warp totals).
    const u32 lane = threadIdx.x & 31, warp = threadIdx.x / 32;
    u64 incl = s;
    for (int off = 1; off < 32; off <<= 1) {
        const u64 y = __shfl_up_sync(FULL_MASK, incl, off);
        if (lane >= (u32)off) incl += y;
    }
    __syncthreads();
    if (lane == 31) red[warp] = incl;
    __syncthreads();
    if (threadIdx.x == 0) {
        u64 run = 0;
        for (u32 w = 0; w < blockDim.x / 32; ++w) {
            const u64 t = red[w];
            red[w] = run;
            run += t;
        }
    }
    __syncthreads();
    u64 run = red[warp] + incl - s;
    for (u32 i = a; i < b; ++i) {
        out[i] = run;
        run += v[i];
    }
    if (b == len && a < b) out[len] = run;
    if (len == 0 && threadIdx.x == 0) out[0] = 0;
    __syncthreads();
}

// One block of FMS_PLAN_THREADS. table gets FMS_TABLE entries, params FMS_PARAMS words. The
// sample is read twice (extremes, then the coarse histogram); it is small and stays in cache.
template <typename T>
__device__ void fms_plan_impl(const T* __restrict__ x, u64 n, u64 seed, u32 max_buckets, u32* __restrict__ table,
                              u64* __restrict__ params) {
    typedef typename KeyOf<T>::type K;
    const int KB = sizeof(K) * 8;
    __shared__ u32 hist[FMS_COARSE];
    __shared__ u32 logs[FMS_COARSE];
    __shared__ u64 counts[FMS_COARSE];
    __shared__ u64 firsts[FMS_COARSE + 1];
    __shared__ u64 red[32];
    __shared__ K wmin[32], wmax[32];
    __shared__ K ext[2];
    K mn = (K)~(K)0, mx = 0;
    u64 real = 0;
#pragma unroll 4
    for (u32 i = threadIdx.x; i < FMS_SAMPLE; i += blockDim.x) {
        const K k = to_key(x[sample_position(i, n, FMS_SAMPLE, seed)]);
        const bool in = k != (K)~(K)0;
        mn = (in && k < mn) ? k : mn;
        mx = (in && k > mx) ? k : mx;
        real += in ? 1u : 0u;
    }
    for (u32 i = threadIdx.x; i < FMS_COARSE; i += blockDim.x) hist[i] = 0;
    fms_warp_extremes(mn, mx);
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
#pragma unroll 4
    for (u32 i = threadIdx.x; i < FMS_SAMPLE; i += blockDim.x) {
        const K k = to_key(x[sample_position(i, n, FMS_SAMPLE, seed)]);
        if (k != (K)~(K)0 && k >= lo) {
            const K c = (k - lo) >> cshift;
            atomicAdd(&hist[c < (K)FMS_COARSE ? (u32)c : FMS_COARSE - 1], 1u);
        }
    }
    __syncthreads();
    // Buckets for coarse bin c: 2^p, p = round(log2(its share of the sample * room)) - bias,
    // at most the bin's width in keys, the bias raised until all fit.
    const u32 room = max_buckets - 3;  // bucket 0, the upper tail, the largest key
    const double per_key = reals > 0 ? (double)room / (double)reals : 0.0;
    for (int bias = 0;; ++bias) {
        u64 sum = 0;
        for (u32 c = threadIdx.x; c < FMS_COARSE; c += blockDim.x) {
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
    fms_block_prefix(counts, FMS_COARSE, firsts, red);
    for (u32 c = threadIdx.x; c < FMS_COARSE; c += blockDim.x) {
        table[c + 1] = (u32)(firsts[c] + 1) | ((cshift - logs[c]) << 16);
    }
    if (threadIdx.x == 0) {
        const u32 upper = (u32)firsts[FMS_COARSE] + 1;
        table[0] = (u32)(KB - 1) << 16;  // below lo: bucket 0 (the offset shifted to nothing)
        table[FMS_COARSE + 1] = upper | ((u32)(KB - 1) << 16);
        params[FMS_P_LO] = (u64)lo;
        params[FMS_P_SHIFT] = cshift;
        params[FMS_P_TOP] = upper + 1;
        params[FMS_P_BUCKETS] = upper + 2;
    }
}

// ---------------------------------------------------------------------------------------------
// 2 and 4. The count passes.

// The vector a pass reads at slot i: every vector (fused), or, for the subset count, one
// 32-byte sector (two vectors) of each group of `group` sectors, at a hashed place.
__device__ __forceinline__ u64 fms_vector(u64 i, bool subset, u32 group, u64 seed) {
    if (!subset) return i;
    const u64 g = i >> 1;
    u64 h = (g + seed) * 0x9E3779B97F4A7C15ull;
    h ^= h >> 31;
    h *= 0xBF58476D1CE4E5B9ull;
    h ^= h >> 29;
    return (g * group + h % group) * 2 + (i & 1);
}

// Loads the shared table and parameters; initialises the counters (the marks of `marks` in
// their top bits when not null). Ends with a barrier.
template <typename K>
__device__ __forceinline__ void fms_setup(u32* table, u32* hist, const u32* __restrict__ gtable,
                                          const u64* __restrict__ params, const u32* __restrict__ marks, u32 buckets) {
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

// The subset count (marks null, subset) or the fused pass (marks set: every element, the keys of
// marked buckets appended to out[0..cap) through out_count; NaN-free tail included).
template <typename T, bool FUSED>
__device__ void fms_pass_impl(const T* __restrict__ x, u64 n, const u32* __restrict__ gtable,
                              const u64* __restrict__ params, const u32* __restrict__ marks, u32 group,
                              u64 seed, u32* __restrict__ partial, typename KeyOf<T>::type* __restrict__ out, u64 cap,
                              u64* out_count, const u32* status) {
    typedef typename KeyOf<T>::type K;
    const int V = Vec16<T>::N;
    const int U = FMS_UNROLL;
    const int E = U * V;
    extern __shared__ __align__(16) u32 fms_dyn[];
    __shared__ u32 table[FMS_TABLE];
    __shared__ K stages[FUSED ? FMS_WARPS : 1][FUSED ? WARP_SIZE * E : 1];
    u32* hist = fms_dyn;
    const u32 buckets = (u32)params[FMS_P_BUCKETS];
    if (FUSED && *status) return;
    fms_setup<K>(table, hist, gtable, params, FUSED ? marks : nullptr, buckets);
    const K lo = (K)params[FMS_P_LO];
    const u32 cshift = (u32)params[FMS_P_SHIFT];
    const u32 top = (u32)params[FMS_P_TOP];
    K* stage = stages[FUSED ? threadIdx.x / WARP_SIZE : 0];
    u32 staged = 0;
    const u64 nvec = n / V;
    const u64 slots = FUSED ? nvec : nvec / (2 * (u64)group) * 2;
    const u64 step = (u64)gridDim.x * FMS_BLOCK * U;
    for (u64 first = (u64)blockIdx.x * FMS_BLOCK * U + threadIdx.x; first < slots + threadIdx.x; first += step) {
        T v[E];
        bool valid[E];
#pragma unroll
        for (int u = 0; u < U; ++u) {
            const u64 i = first + (u64)u * FMS_BLOCK;
            const bool in = i < slots;
            T w[V];
            if (in) {
                load16(x + fms_vector(i, !FUSED, group, seed) * V, w);
            } else {
#pragma unroll
                for (int j = 0; j < V; ++j) w[j] = (T)0;
            }
#pragma unroll
            for (int j = 0; j < V; ++j) {
                v[u * V + j] = w[j];
                valid[u * V + j] = in;
            }
        }
        K key[E];
        bool keep[E];
#pragma unroll
        for (int e = 0; e < E; ++e) {
            key[e] = to_key(v[e]);
            keep[e] = false;
            if (valid[e]) {
                const u32 b = fms_bucket(table, key[e], lo, cshift, top);
                const u32 old = atomicAdd(&hist[b], 1u);
                keep[e] = FUSED && (old & FMS_MARK);
            }
        }
        if (FUSED) warp_stage_append<K, E, WARP_SIZE * E>(stage, staged, out, cap, out_count, key, keep);
    }
    if (FUSED) {
        // The elements after the last whole vector: block 0's first warp.
        if (blockIdx.x == 0 && threadIdx.x < WARP_SIZE) {
            const u64 i = nvec * V + threadIdx.x;
            K key[1] = {0};
            bool keep[1] = {false};
            if (i < n) {
                key[0] = to_key(x[i]);
                const u32 old = atomicAdd(&hist[fms_bucket(table, key[0], lo, cshift, top)], 1u);
                keep[0] = (old & FMS_MARK) != 0;
            }
            warp_stage_append<K, 1, WARP_SIZE * E>(stage, staged, out, cap, out_count, key, keep);
        }
        warp_flush(stage, staged, out, cap, out_count);
    }
    fms_flush_counts(hist, buckets, partial);
}

// totals[c] += the counts of counter c in a group of FMS_TOTAL_GROUP blocks (blockIdx.y) of
// partial[blk * counters + c]; totals zero on entry. The counters: the plan's buckets
// (second = 0: words are its params) or the second level's (second = 1: words are the choice).
#define FMS_TOTAL_GROUP 16
extern "C" __global__ void fms_totals(const u32* __restrict__ partial, u64 blocks, const u64* __restrict__ words,
                                      u32 second, u64* __restrict__ totals, const u32* status) {
    if (*status) return;
    const u32 counters = second ? (u32)words[0] * (u32)words[1] : (u32)words[FMS_P_BUCKETS];
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

// The last index i in [0, len) with starts[i] <= k (starts ascending, starts[0] = 0).
__device__ __forceinline__ u32 fms_find(const u64* starts, u32 len, u64 k) {
    u32 a = 0, b = len;
    while (b - a > 1) {
        const u32 m = (a + b) / 2;
        if (starts[m] <= k) a = m; else b = m;
    }
    return a;
}

// One block of FMS_PLAN_THREADS. From the subset totals: marks (buckets / 32 words, zero on
// entry) of the buckets each rank may fall in; a workspace the marks would overflow (by the
// estimate) fails the run. starts: buckets + 1 words of scratch.
extern "C" __global__ void fms_predict(const u64* __restrict__ totals, const u64* __restrict__ params,
                                       const u64* __restrict__ ranks, u64 r, u64 n, u64 cap, double sigmas,
                                       u64* starts, u32* marks, u32* status) {
    __shared__ u64 red[32];
    const u32 buckets = (u32)params[FMS_P_BUCKETS];
    fms_block_prefix(totals, buckets, starts, red);
    const u64 counted = starts[buckets];
    if (counted == 0) {
        if (threadIdx.x == 0) atomicOr(status, FMS_MISSED);
        return;
    }
    const double scale = (double)n / (double)counted;
    const double f = (double)counted / (double)n;
    for (u64 i = threadIdx.x; i < r; i += blockDim.x) {
        const double k = (double)ranks[i];
        const double p = (k + 0.5) / (double)n;
        // The standard deviation of a scaled subset count at p (the subset as a random sample
        // of its size), `sigmas` of them each side, and a few vectors of granularity.
        const double sd = sqrt((double)n * p * (1.0 - p) * (1.0 - f) / f);
        const double w = sigmas * sd + 64.0 * scale;
        // Every bucket whose closed range of subset positions [starts[j], starts[j + 1]] meets
        // the window's (so that buckets the subset found empty at its ends are marked too).
        const double klo = (k - w) / scale, khi = (k + w) / scale;
        const u64 a = klo <= 0.0 ? 0 : (u64)klo;
        const u64 b = khi >= (double)counted ? counted : (u64)khi;
        u32 lo = 0, hi = buckets - 1;  // the first j with starts[j + 1] >= a
        while (lo < hi) {
            const u32 m = (lo + hi) / 2;
            if (starts[m + 1] >= a) hi = m; else lo = m + 1;
        }
        const u32 ba = lo;
        const u32 bb = fms_find(starts, buckets, b);
        for (u32 j = ba; j <= bb; ++j) atomicOr(&marks[j >> 5], 1u << (j & 31));
    }
    __syncthreads();
    u64 est = 0;
    for (u32 j = threadIdx.x; j < buckets; j += blockDim.x) {
        if ((marks[j >> 5] >> (j & 31)) & 1u) est += totals[j];
    }
    const u64 sum = fms_block_sum(est, red);
    if (threadIdx.x == 0 && (double)sum * scale > 0.8 * (double)cap) atomicOr(status, FMS_FULL);
}

// ---------------------------------------------------------------------------------------------
// 5. The choice after the fused pass.

// The key range [klo, khi] of bucket b (from the plan's table).
template <typename K>
__device__ void fms_bucket_range(const u32* table, const u64* params, u32 b, K& klo, K& khi) {
    const K lo = (K)params[FMS_P_LO];
    const u32 cshift = (u32)params[FMS_P_SHIFT];
    const u32 top = (u32)params[FMS_P_TOP];
    const int KB = sizeof(K) * 8;
    if (b == top) {
        klo = khi = (K)~(K)0;
        return;
    }
    if (b == 0) {
        klo = 0;
        khi = lo == 0 ? 0 : lo - 1;
        return;
    }
    const u32 upper = table[FMS_COARSE + 1] & 0xffffu;
    const K coarse_w = cshift >= (u32)KB ? (K)0 : ((K)1 << cshift);
    if (b == upper) {
        const K end = lo + coarse_w * (K)FMS_COARSE;  // wraps to 0 when the bins reach the top
        klo = (end == 0 || end < lo) ? (K)~(K)0 : end;
        khi = (K)~(K)0 - 1;
        return;
    }
    // The coarse bin c (entry c + 1) holding bucket b: the last whose first bucket <= b.
    u32 a = 1, z = FMS_COARSE + 1;
    while (z - a > 1) {
        const u32 m = (a + z) / 2;
        if ((table[m] & 0xffffu) <= b) a = m; else z = m;
    }
    const u32 e = table[a];
    const u32 sh = e >> 16;
    const K start = lo + (K)(a - 1) * coarse_w + ((K)(b - (e & 0xffffu)) << sh);
    klo = start;
    khi = start + (((K)1 << sh) - 1);
}

// One block of FMS_PLAN_THREADS. totals: the fused pass's exact bucket totals. For rank i:
// info[4 i] = its active bucket (or ~0 when answered: results[i] set), [+1] its rank inside,
// per active a: act[2 a] = lowest key, act[2 a + 1] = part shift; slots[b] = active index of
// bucket b or FMS_NONE; out[0] = active buckets, out[1] = parts per active bucket; out[2] = the
// elements whose key is the largest (for floats: the NaNs). ranks ascending and distinct;
// `written_count` the fused pass's appended keys (a workspace of `cap`).
template <typename K>
__device__ void fms_choose_impl(const u64* __restrict__ totals, const u32* __restrict__ gtable,
                                const u64* __restrict__ params, const u32* __restrict__ marks,
                                const u64* __restrict__ ranks, u64 r, const u64* written_count, u64 cap,
                                u64* starts, u64* rank_bucket, unsigned short* slots, u64* act, u64* info, u64* out,
                                u64* results, u32* status) {
    __shared__ u64 red[32];
    __shared__ u32 table[FMS_TABLE];
    __shared__ u32 nact;
    if (*status) return;
    if (*written_count > cap) {
        if (threadIdx.x == 0) atomicOr(status, FMS_FULL);
        return;
    }
    for (u32 i = threadIdx.x; i < FMS_TABLE; i += blockDim.x) table[i] = gtable[i];
    const u32 buckets = (u32)params[FMS_P_BUCKETS];
    fms_block_prefix(totals, buckets, starts, red);
    for (u32 b = threadIdx.x; b < buckets; b += blockDim.x) slots[b] = FMS_NONE;
    __syncthreads();
    for (u64 i = threadIdx.x; i < r; i += blockDim.x) {
        const u32 b = fms_find(starts, buckets, ranks[i]);
        rank_bucket[i] = b;
        K klo, khi;
        fms_bucket_range<K>(table, params, b, klo, khi);
        if (klo != khi && !((marks[b >> 5] >> (b & 31)) & 1u)) atomicOr(status, FMS_MISSED);
    }
    __syncthreads();
    if (threadIdx.x == 0) {
        // Active buckets in ascending order (ranks are ascending, so are their buckets).
        u32 a = 0;
        for (u64 i = 0; i < r; ++i) {
            const u32 b = (u32)rank_bucket[i];
            if (slots[b] == FMS_NONE) slots[b] = (unsigned short)(a < FMS_NONE ? a++ : a);
        }
        nact = a;
        if (a >= FMS_NONE || a > FMS_PARTS_MAX) atomicOr(status, FMS_TOO_MANY);
    }
    __syncthreads();
    const u32 A = nact;
    u32 parts = 1;
    while (parts * 2 * A <= FMS_PARTS_MAX && parts < 1024) parts *= 2;
    u32 plog = 0;
    while ((1u << plog) < parts) ++plog;
    for (u32 b = threadIdx.x; b < buckets; b += blockDim.x) {
        const u32 a = slots[b];
        if (a == FMS_NONE) continue;
        K klo, khi;
        fms_bucket_range<K>(table, params, b, klo, khi);
        const K width = khi - klo;  // one less than the keys in range
        u32 bits = 0;
        while (bits < sizeof(K) * 8 && (width >> bits) != 0) ++bits;
        act[2 * a] = (u64)klo;
        act[2 * a + 1] = bits > plog ? bits - plog : 0;
    }
    for (u64 i = threadIdx.x; i < r; i += blockDim.x) {
        const u32 b = (u32)rank_bucket[i];
        info[4 * i] = slots[b];
        info[4 * i + 1] = ranks[i] - starts[b];
        K klo, khi;
        fms_bucket_range<K>(table, params, b, klo, khi);
        if (klo == khi) {
            // One key: answered.
            results[i] = (u64)klo;
            info[4 * i] = ~0ull;
        }
    }
    if (threadIdx.x == 0) {
        out[0] = A;
        out[1] = parts;
        out[2] = totals[(u32)params[FMS_P_TOP]];
    }
}

// ---------------------------------------------------------------------------------------------
// 6. The second level over the workspace.

// The second-level counter of key (active bucket's part) or ~0 when its bucket is not active.
template <typename K>
__device__ __forceinline__ u32 fms_part(const u32* table, const unsigned short* slots, const u64* act, K key, K lo,
                                        u32 cshift, u32 top, u32 parts) {
    const u32 b = fms_bucket(table, key, lo, cshift, top);
    const u32 a = slots[b];
    if (a == FMS_NONE) return ~0u;
    const K base = (K)act[2 * a];
    const u32 sh = (u32)act[2 * a + 1];
    const K q = (key - base) >> sh;
    return a * parts + (q < (K)parts ? (u32)q : parts - 1);
}

// Counts (keep null) or appends the keys of kept parts (keep: bit per counter) of the workspace
// keys[0..*count) (at most cap). Counts go to partial[blk * counters + c].
template <typename K, bool APPEND>
__device__ void fms_level2_impl(const K* __restrict__ keys, const u64* count, u64 cap, const u32* __restrict__ gtable,
                                const u64* __restrict__ params, const unsigned short* __restrict__ gslots,
                                const u64* __restrict__ act, const u64* __restrict__ choice, const u32* __restrict__ keep,
                                u32* __restrict__ partial, K* __restrict__ out, u64 out_cap, u64* out_count,
                                const u32* status) {
    extern __shared__ __align__(16) u32 fms_dyn[];
    __shared__ u32 table[FMS_TABLE];
    __shared__ K stages[APPEND ? FMS_WARPS : 1][APPEND ? WARP_SIZE * 4 : 1];
    if (*status) return;
    const u32 buckets = (u32)params[FMS_P_BUCKETS];
    const u32 nact = (u32)choice[0];
    const u32 parts = (u32)choice[1];
    const u32 counters = nact * parts;
    u32* hist = fms_dyn;
    unsigned short* slots = reinterpret_cast<unsigned short*>(hist + (APPEND ? 0 : counters));
    for (u32 i = threadIdx.x; i < FMS_TABLE; i += blockDim.x) table[i] = gtable[i];
    for (u32 i = threadIdx.x; i < buckets; i += blockDim.x) slots[i] = gslots[i];
    if (!APPEND) for (u32 i = threadIdx.x; i < counters; i += blockDim.x) hist[i] = 0;
    __syncthreads();
    const K lo = (K)params[FMS_P_LO];
    const u32 cshift = (u32)params[FMS_P_SHIFT];
    const u32 top = (u32)params[FMS_P_TOP];
    const u64 m = *count < cap ? *count : cap;
    K* stage = stages[APPEND ? threadIdx.x / WARP_SIZE : 0];
    u32 staged = 0;
    const u64 step = (u64)gridDim.x * blockDim.x * 4;
    for (u64 base = (u64)blockIdx.x * blockDim.x * 4; base < m; base += step) {
        K key[4];
        bool sel[4];
#pragma unroll
        for (int j = 0; j < 4; ++j) {
            const u64 i = base + (u64)j * blockDim.x + threadIdx.x;
            sel[j] = false;
            key[j] = 0;
            if (i < m) {
                key[j] = keys[i];
                const u32 c = fms_part(table, slots, act, key[j], lo, cshift, top, parts);
                if (c != ~0u) {
                    if (APPEND) sel[j] = (keep[c >> 5] >> (c & 31)) & 1u;
                    else atomicAdd(&hist[c], 1u);
                }
            }
        }
        if (APPEND) warp_stage_append<K, 4, WARP_SIZE * 4>(stage, staged, out, out_cap, out_count, key, sel);
    }
    if (APPEND) {
        warp_flush(stage, staged, out, out_cap, out_count);
        return;
    }
    __syncthreads();
    u32* dst = partial + (u64)blockIdx.x * counters;
    for (u32 i = threadIdx.x; i < counters; i += blockDim.x) dst[i] = hist[i];
}

// One block. For each rank not answered: its part (inside its active bucket) from the second
// level totals, its rank inside the part, the part's key range; the part's keep bit set.
// info[4 i + 2] = the part's counter, info[4 i + 3] = rank inside the part.
extern "C" __global__ void fms_choose2(const u64* __restrict__ totals, const u64* __restrict__ choice, u64 r,
                                       u64* info, u32* keep, const u32* status) {
    if (*status) return;
    const u32 parts = (u32)choice[1];
    for (u64 i = threadIdx.x; i < r; i += blockDim.x) {
        const u64 a = info[4 * i];
        if (a == ~0ull) continue;
        u64 k = info[4 * i + 1];
        u32 p = 0;
        const u64* t = totals + a * parts;
        while (p + 1 < parts && k >= t[p]) {
            k -= t[p];
            ++p;
        }
        const u32 c = (u32)a * parts + p;
        info[4 * i + 2] = c;
        info[4 * i + 3] = k;
        atomicOr(&keep[c >> 5], 1u << (c & 31));
    }
}

// ---------------------------------------------------------------------------------------------
// 7. The final step: one block of FMS_FINAL_THREADS per rank.

// The keys of the workspace whose part is `want` and that lie in [klo, khi], scanned by the
// block: their number, extremes and (up to FMS_FINAL_CAP of them) the keys in buf, or with
// `digit_shift` < 64 the counts of their 8-bit digits at that shift in hist instead.
template <typename K>
__device__ void fms_final_scan(const K* __restrict__ keys, u64 m, const u32* table, const unsigned short* slots,
                               const u64* act, K lo, u32 cshift, u32 top, u32 parts, u32 want, K klo, K khi,
                               u32 digit_shift, K* buf, u32* hist, u32* fill, K* ext) {
    if (threadIdx.x == 0) {
        *fill = 0;
        ext[0] = (K)~(K)0;
        ext[1] = 0;
    }
    for (u32 j = threadIdx.x; j < 256; j += blockDim.x) hist[j] = 0;
    __syncthreads();
    K mn = (K)~(K)0, mx = 0;
    for (u64 j = threadIdx.x; j < m; j += blockDim.x) {
        const K key = keys[j];
        if (key < klo || key > khi) continue;
        if (fms_part(table, slots, act, key, lo, cshift, top, parts) != want) continue;
        mn = key < mn ? key : mn;
        mx = key > mx ? key : mx;
        if (digit_shift < 64) {
            atomicAdd(&hist[(u32)(key >> digit_shift) & 255u], 1u);
        } else {
            const u32 at = atomicAdd(fill, 1u);
            if (at < FMS_FINAL_CAP) buf[at] = key;
        }
    }
    fms_warp_extremes(mn, mx);
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

// The final step of rank blockIdx.x: its part's keys gathered and sorted on chip; a part of
// equal keys answers at once; a part of more than FMS_FINAL_CAP keys is first narrowed by 8-bit
// digits (radix select over the workspace, one scan a digit) until few enough keys remain.
template <typename K>
__device__ void fms_final_impl(const K* __restrict__ keys, const u64* count, u64 cap, const u32* __restrict__ gtable,
                               const u64* __restrict__ params, const unsigned short* __restrict__ slots,
                               const u64* __restrict__ act, const u64* __restrict__ choice, const u64* __restrict__ info,
                               u64* results, u32* status) {
    __shared__ K buf[FMS_FINAL_CAP];
    __shared__ u32 table[FMS_TABLE];
    __shared__ u32 hist[256];
    __shared__ u32 fill;
    __shared__ K ext[2];
    __shared__ K range[2];
    __shared__ u64 left[2];  // rank inside the range, keys in the range
    if (*status) return;
    const u64 i = blockIdx.x;
    if (info[4 * i] == ~0ull) return;
    if (*count > cap) {
        if (threadIdx.x == 0) atomicOr(status, FMS_FULL);
        return;
    }
    const u32 want = (u32)info[4 * i + 2];
    for (u32 j = threadIdx.x; j < FMS_TABLE; j += blockDim.x) table[j] = gtable[j];
    const K lo = (K)params[FMS_P_LO];
    const u32 cshift = (u32)params[FMS_P_SHIFT];
    const u32 top = (u32)params[FMS_P_TOP];
    const u32 parts = (u32)choice[1];
    const u64 m = *count < cap ? *count : cap;
    fms_final_scan<K>(keys, m, table, slots, act, lo, cshift, top, parts, want, 0, (K)~(K)0, 64, buf, hist, &fill,
                      ext);
    const u32 got = fill;
    if (threadIdx.x == 0) {
        range[0] = ext[0];
        range[1] = ext[1];
        left[0] = info[4 * i + 3];
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
        fms_final_scan<K>(keys, m, table, slots, act, lo, cshift, top, parts, want, klo, khi, shift, buf, hist, &fill,
                          ext);
        if (threadIdx.x == 0) {
            u64 k = left[0];
            u32 g = 0;
            while (g < 255 && k >= hist[g]) {
                k -= hist[g];
                ++g;
            }
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
        fms_final_scan<K>(keys, m, table, slots, act, lo, cshift, top, parts, want, range[0], range[1], 64, buf,
                          hist, &fill, ext);
        if (fill > FMS_FINAL_CAP || left[0] >= fill) {
            if (threadIdx.x == 0) atomicOr(status, FMS_TOO_BIG);
            return;
        }
        if (ext[0] == ext[1]) {
            if (threadIdx.x == 0) results[i] = (u64)ext[0];
            return;
        }
    }
    const u32 have = fill;
    for (u32 j = have + threadIdx.x; j < FMS_FINAL_CAP; j += blockDim.x) buf[j] = (K)~(K)0;
    block_bitonic_sort<K, FMS_FINAL_CAP>(buf);
    if (threadIdx.x == 0) results[i] = (u64)buf[left[0]];
}

#define FUSED_MULTISELECT_KERNELS(NAME, T)                                                           \
    extern "C" __global__ void __launch_bounds__(FMS_PLAN_THREADS)                                   \
        fms_plan_##NAME(const T* x, u64 n, u64 seed, u32 max_buckets, u32* table, u64* params) {    \
        fms_plan_impl<T>(x, n, seed, max_buckets, table, params);                                    \
    }                                                                                                \
    extern "C" __global__ void __launch_bounds__(FMS_BLOCK)                                          \
        fms_subset_##NAME(const T* x, u64 n, const u32* table, const u64* params, u32 group,        \
                          u64 seed, u32* partial) {                                                  \
        fms_pass_impl<T, false>(x, n, table, params, nullptr, group, seed, partial, nullptr, 0,     \
                                nullptr, nullptr);                                                   \
    }                                                                                                \
    extern "C" __global__ void __launch_bounds__(FMS_BLOCK)                                          \
        fms_fused_##NAME(const T* x, u64 n, const u32* table, const u64* params, const u32* marks,  \
                         u32* partial, KeyOf<T>::type* out, u64 cap, u64* out_count,                \
                         const u32* status) {                                                        \
        fms_pass_impl<T, true>(x, n, table, params, marks, 1, 0, partial, out, cap, out_count, status); \
    }
KSELECT_FOR_EACH_TYPE(FUSED_MULTISELECT_KERNELS)

#define FUSED_MULTISELECT_KEY_KERNELS(NAME, K)                                                       \
    extern "C" __global__ void __launch_bounds__(FMS_PLAN_THREADS)                                   \
        fms_choose_##NAME(const u64* totals, const u32* table, const u64* params, const u32* marks, \
                          const u64* ranks, u64 r, const u64* written, u64 cap, u64* starts,        \
                          u64* rank_bucket, unsigned short* slots, u64* act, u64* info, u64* out,   \
                          u64* results, u32* status) {                                               \
        fms_choose_impl<K>(totals, table, params, marks, ranks, r, written, cap, starts, rank_bucket, \
                           slots, act, info, out, results, status);                                  \
    }                                                                                                \
    extern "C" __global__ void __launch_bounds__(FMS_BLOCK)                                          \
        fms_count2_##NAME(const K* keys, const u64* count, u64 cap, const u32* table,               \
                          const u64* params, const unsigned short* slots, const u64* act,           \
                          const u64* choice, u32* partial, const u32* status) {                     \
        fms_level2_impl<K, false>(keys, count, cap, table, params, slots, act, choice, nullptr,      \
                                  partial, nullptr, 0, nullptr, status);                             \
    }                                                                                                \
    extern "C" __global__ void __launch_bounds__(FMS_BLOCK)                                          \
        fms_append2_##NAME(const K* keys, const u64* count, u64 cap, const u32* table,              \
                           const u64* params, const unsigned short* slots, const u64* act,          \
                           const u64* choice, const u32* keep, K* out, u64 out_cap, u64* out_count, \
                           const u32* status) {                                                      \
        fms_level2_impl<K, true>(keys, count, cap, table, params, slots, act, choice, keep, nullptr, \
                                 out, out_cap, out_count, status);                                   \
    }                                                                                                \
    extern "C" __global__ void __launch_bounds__(FMS_FINAL_THREADS)                                  \
        fms_final_##NAME(const K* keys, const u64* count, u64 cap, const u32* table,                \
                         const u64* params, const unsigned short* slots, const u64* act,            \
                         const u64* choice, const u64* info, u64* results, u32* status) {           \
        fms_final_impl<K>(keys, count, cap, table, params, slots, act, choice, info, results,        \
                          status);                                                                   \
    }
KSELECT_FOR_EACH_KEY(FUSED_MULTISELECT_KEY_KERNELS)
