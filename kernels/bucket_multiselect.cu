// bucketMultiSelect (Blanchard, Chen & Kim 2016) and its iterative form (phase 2 of DIBMS,
// Blanchard et al. 2024) on one GPU: every candidate of a level is assigned to a bucket by a
// linear projection of its order-preserving key inside the interval of its segment that holds it,
// buckets are counted per block, the buckets holding a wanted rank ("active") are found by
// prefix sums, and the candidates of the active buckets are copied out, each active bucket to its
// own region (the per-block segmented write) or all of them together (the flag-based write).
//
// A level works on segments of one buffer (the input itself at the first level; the active
// buckets of the previous level after it). The host describes it with three arrays of u64 words:
//   chunk    (CH_WORDS):  first element, one past the last, its segment, offset of its counts
//   segment  (SEG_WORDS): first interval, intervals, first bucket (of the level), buckets,
//                         first chunk, one past its last chunk, lookup base key, lookup shift
//   interval (IV_WORDS):  lowest key, 32-bit multiplier, first bucket (within the segment),
//                         buckets | shift << 32 | identity << 40
// Block b of the count and write kernels works on chunk b, which lies inside one segment. A key's
// interval is found from a shared table indexed by its bits above the lookup shift (relative to
// the lookup base, the second interval's lowest key), which gives the last interval starting at
// or below the bin's first key; a few comparisons finish. The projection of a key inside an interval is
// `mulhi32((key - lo) >> shift, mult)`, monotone and below the interval's bucket count by
// construction (src/select/bucket_multi/plan.rs), or `(key - lo)` itself when the interval holds
// no more keys than buckets (`identity`).
#include "common.cuh"

#define BMS_BLOCK 512
#define BMS_WARPS (BMS_BLOCK / WARP_SIZE)
#define BMS_MAX_IV 48        // intervals of one segment (the binary search covers 64)
#define BMS_CHOOSE 1024      // threads of the one-block choice
#define BMS_SAMPLE 1024      // the sample of the first level
#define BMS_SORT_THREADS 1024
#define BMS_NONE 0xffffffffffffffffull

#define BMS_TABLE 4096     // bins of the interval lookup table
#define BMS_NO_SLOT 0xffffu

#define CH_WORDS 4
#define SEG_WORDS 8
#define IV_WORDS 4

// The projection of one interval: 32-bit multiplier, shift | identity << 8, first bucket within
// the segment, buckets - 1.
struct __align__(16) IvParams {
    u32 mult;
    u32 shift_ident;
    u32 base;
    u32 last;
};

// The intervals of one segment and their lookup table, in shared memory.
template <typename K>
struct IvTable {
    K lo[BMS_MAX_IV];
    IvParams p[BMS_MAX_IV];
    unsigned char bin[BMS_TABLE];
    K tbase;
    u32 tshift;
    u32 count;
};

// Loads the intervals of the segment `seg` (its descriptor words) and builds the lookup table
// when the segment has more than one interval. Starts and ends with a barrier.
template <typename K>
__device__ void iv_load(IvTable<K>& t, const u64* __restrict__ ivs, const u64* __restrict__ seg) {
    const u32 first = (u32)seg[0];
    const u32 count = (u32)seg[1] < BMS_MAX_IV ? (u32)seg[1] : BMS_MAX_IV;
    for (u32 i = threadIdx.x; i < count; i += blockDim.x) {
        const u64* w = ivs + (u64)IV_WORDS * (first + i);
        t.lo[i] = (K)w[0];
        IvParams p;
        p.mult = (u32)w[1];
        p.base = (u32)w[2];
        const u32 buckets = (u32)(w[3] & 0xffffffffull);
        p.last = buckets > 0 ? buckets - 1 : 0;
        p.shift_ident = (u32)((w[3] >> 32) & 0xff) | ((u32)((w[3] >> 40) & 1) << 8);
        t.p[i] = p;
    }
    if (threadIdx.x == 0) {
        t.count = count;
        t.tbase = (K)seg[6];
        t.tshift = (u32)seg[7];
    }
    __syncthreads();
    if (count > 1) {
        const K tbase = t.tbase;
        const u32 tshift = t.tshift;
        const K room = ((K)~(K)0 - tbase) >> tshift;  // bins whose first key does not wrap
        for (u32 b = threadIdx.x; b < BMS_TABLE; b += blockDim.x) {
            const K start = (K)b <= room ? tbase + ((K)b << tshift) : (K)~(K)0;
            u32 i = 0;
            for (u32 step = 32; step > 0; step >>= 1) {
                if (i + step < count && t.lo[i + step] <= start) i += step;
            }
            t.bin[b] = (unsigned char)i;
        }
    }
    __syncthreads();
}

// The bucket (within the segment) of a key: its interval from the lookup table and a few
// comparisons, then the interval's projection, clamped to its buckets.
template <typename K>
__device__ __forceinline__ u32 iv_bucket(const IvTable<K>& t, u32 count, K key) {
    u32 i = 0;
    if (count > 1) {
        // Keys below the table's base (the second interval's lowest key) are in the first.
        if (key >= t.tbase) {
            const K bin = (key - t.tbase) >> t.tshift;
            i = t.bin[bin < (K)(BMS_TABLE - 1) ? (u32)bin : BMS_TABLE - 1];
        }
        while (i + 1 < count && t.lo[i + 1] <= key) ++i;
    }
    const IvParams p = t.p[i];
    const u32 q = (u32)((key - t.lo[i]) >> (p.shift_ident & 0xffu));
    const u32 j = (p.shift_ident >> 8) ? q : __umulhi(q, p.mult);
    return p.base + (j < p.last ? j : p.last);
}

// Counts the buckets b[0..V) of a trip in a shared histogram. When every lane's every element
// falls in one bucket (sorted runs, equal values) the warp adds once; otherwise each element adds.
template <int V>
__device__ __forceinline__ void bms_count_trip(u32* hist, const u32 (&b)[V], const bool (&valid)[V]) {
    bool same = true;
#pragma unroll
    for (int j = 0; j < V; ++j) same = same && valid[j] && b[j] == b[0];
    const u32 lead = __shfl_sync(FULL_MASK, b[0], 0);
    if (__all_sync(FULL_MASK, same && b[0] == lead)) {
        if ((threadIdx.x & 31) == 0) atomicAdd(&hist[lead], (u32)(WARP_SIZE * V));
    } else {
#pragma unroll
        for (int j = 0; j < V; ++j) {
            if (valid[j]) atomicAdd(&hist[b[j]], 1u);
        }
    }
}

// Vectors each thread loads per trip (several in flight hide the memory latency at the
// occupancy the shared counters allow): the count pass, and the write passes. Measured on an
// H200 at 2^28 values: four vectors a trip halved the 8-byte types' write (its oracles are
// 4 bytes a vector) and helped their count a little; 4-byte types count best with two and write
// best with one (more registers cost them occupancy).
template <typename T> struct BmsShape { static const int COUNT = 4; static const int WRITE = 4; };
template <> struct BmsShape<float> { static const int COUNT = 2; static const int WRITE = 1; };
template <> struct BmsShape<i32> { static const int COUNT = 2; static const int WRITE = 1; };
template <> struct BmsShape<u32> { static const int COUNT = 2; static const int WRITE = 1; };

// The trips over the elements [begin, end) of a chunk. The 16-byte vectors wholly inside the chunk
// come first, U a thread per trip (vector u of trip t is vfirst + (t * U + u) * blockDim.x +
// threadIdx.x); the last trip gives the first threads one each of the elements outside those
// vectors (at most 2V - 2). Every thread of the block makes the same number of trips, so a trip
// may use warp collectives. Elements of a trip are numbered e = u * V + j.
template <int V, int U>
struct ChunkTrips {
    u64 begin, end;
    u64 vfirst, vlast;  // whole vectors [vfirst, vlast)
    u64 vtrips;
    u64 head;           // scalar elements before the vectors (begin..), then those after them
    u64 tail_begin;
    u64 scalars;

    __device__ __forceinline__ ChunkTrips(u64 b, u64 e) : begin(b), end(e) {
        vfirst = (b + V - 1) / V;
        vlast = e / V;
        if (vlast <= vfirst) {
            // No whole vector: every element is a scalar.
            vfirst = vlast = 0;
            head = e - b;
            tail_begin = e;
        } else {
            head = vfirst * V - b;
            tail_begin = vlast * V;
        }
        scalars = head + (e - tail_begin);
        const u64 step = (u64)blockDim.x * U;
        vtrips = (vlast - vfirst + step - 1) / step;
    }

    __device__ __forceinline__ u64 trips() const { return vtrips + 1; }

    // The vector u of trip t (t < vtrips).
    __device__ __forceinline__ u64 vec(u64 t, int u) const {
        return vfirst + (t * U + (u64)u) * blockDim.x + threadIdx.x;
    }

    // The index of element e of trip t (meaningful where the trip's valid[e] is set).
    __device__ __forceinline__ u64 index(u64 t, int e) const {
        if (t < vtrips) return vec(t, e / V) * V + (u64)(e % V);
        const u64 s = threadIdx.x;
        return s < head ? begin + s : tail_begin + (s - head);
    }

    // The elements of trip t; valid[e] says which of v[e] are elements of the chunk.
    template <typename T>
    __device__ __forceinline__ void load(const T* __restrict__ x, u64 t, T (&v)[U * V], bool (&valid)[U * V]) const {
        if (t < vtrips) {
#pragma unroll
            for (int u = 0; u < U; ++u) {
                const u64 i = vec(t, u);
                const bool in = i < vlast;
                T w[V];
                if (in) {
                    load16(x + i * V, w);
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
        } else {
            const bool in = threadIdx.x < scalars;
            v[0] = in ? x[index(t, 0)] : (T)0;
            valid[0] = in;
#pragma unroll
            for (int e = 1; e < U * V; ++e) {
                v[e] = (T)0;
                valid[e] = false;
            }
        }
    }

    // Stores the buckets b[e] of trip t's valid elements as u16 oracles (one V * 2-byte store
    // per vector).
    __device__ __forceinline__ void store_oracles(unsigned short* oracles, u64 t, const u32 (&b)[U * V],
                                                  const bool (&valid)[U * V]) const {
        if (t < vtrips) {
#pragma unroll
            for (int u = 0; u < U; ++u) {
                const u64 i = vec(t, u);
                if (i >= vlast) continue;
                u64 w = 0;
#pragma unroll
                for (int j = 0; j < V; ++j) w |= (u64)(b[u * V + j] & 0xffffu) << (16 * j);
                if (V == 4) {
                    *reinterpret_cast<u64*>(oracles + i * V) = w;
                } else {
                    *reinterpret_cast<u32*>(oracles + i * V) = (u32)w;
                }
            }
        } else if (valid[0]) {
            oracles[index(t, 0)] = (unsigned short)b[0];
        }
    }

    // The oracles of trip t (as store_oracles left them); invalid ones are BMS_NO_SLOT.
    __device__ __forceinline__ void load_oracles(const unsigned short* oracles, u64 t, u32 (&o)[U * V],
                                                 bool (&valid)[U * V]) const {
        if (t < vtrips) {
#pragma unroll
            for (int u = 0; u < U; ++u) {
                const u64 i = vec(t, u);
                const bool in = i < vlast;
                u64 w = 0;
                if (in) {
                    if (V == 4) {
                        w = *reinterpret_cast<const u64*>(oracles + i * V);
                    } else {
                        w = *reinterpret_cast<const u32*>(oracles + i * V);
                    }
                }
#pragma unroll
                for (int j = 0; j < V; ++j) {
                    valid[u * V + j] = in;
                    o[u * V + j] = in ? (u32)(w >> (16 * j)) & 0xffffu : BMS_NO_SLOT;
                }
            }
        } else {
            const bool in = threadIdx.x < scalars;
            valid[0] = in;
            o[0] = in ? (u32)oracles[index(t, 0)] : BMS_NO_SLOT;
#pragma unroll
            for (int e = 1; e < U * V; ++e) {
                valid[e] = false;
                o[e] = BMS_NO_SLOT;
            }
        }
    }
};

// The count kernel: the bucket of every element of the block's chunk, counted in shared memory
// (dynamic: one u32 counter per bucket of the segment) and written to partial[offset + b]; with
// `oracles` (not null, as long as x), each element's bucket within its segment is also stored
// there as a u16, for the write kernel.
template <typename T>
__device__ void bms_count_impl(const T* __restrict__ x, const u64* __restrict__ chunks, const u64* __restrict__ segs,
                               const u64* __restrict__ ivs, u32* __restrict__ partial,
                               unsigned short* __restrict__ oracles) {
    typedef typename KeyOf<T>::type K;
    const int V = Vec16<T>::N;
    extern __shared__ u32 bms_counts[];
    __shared__ IvTable<K> table;
    const u64* ch = chunks + (u64)CH_WORDS * blockIdx.x;
    const u64* seg = segs + (u64)SEG_WORDS * ch[2];
    const u32 buckets = (u32)seg[3];
    for (u32 b = threadIdx.x; b < buckets; b += blockDim.x) bms_counts[b] = 0;
    iv_load(table, ivs, seg);
    const u32 niv = table.count;
    const int U = BmsShape<T>::COUNT;
    const int E = U * V;
    const ChunkTrips<V, U> it(ch[0], ch[1]);
    for (u64 t = 0; t < it.trips(); ++t) {
        T v[E];
        bool valid[E];
        it.load(x, t, v, valid);
        u32 b[E];
#pragma unroll
        for (int e = 0; e < E; ++e) b[e] = iv_bucket(table, niv, to_key(v[e]));
        bms_count_trip<E>(bms_counts, b, valid);
        if (oracles) it.store_oracles(oracles, t, b, valid);
    }
    __syncthreads();
    u32* out = partial + ch[3];
    for (u32 b = threadIdx.x; b < buckets; b += blockDim.x) out[b] = bms_counts[b];
}

// totals[j] += the counts of bucket j in a group of BMS_TOTAL_GROUP chunks of its segment
// (blockIdx.y picks the group; totals zero on entry). One thread per bucket of the level.
#define BMS_TOTAL_GROUP 32
extern "C" __global__ void bms_totals(const u32* __restrict__ partial, const u64* __restrict__ chunks,
                                      const u64* __restrict__ segs, u64 nsegs, u64 nb, u64* totals) {
    const u64 j = (u64)blockIdx.x * blockDim.x + threadIdx.x;
    if (j >= nb) return;
    u64 a = 0, b = nsegs;  // the last segment whose first bucket is <= j
    while (b - a > 1) {
        const u64 mid = (a + b) / 2;
        if (segs[(u64)SEG_WORDS * mid + 2] <= j) a = mid; else b = mid;
    }
    const u64* seg = segs + (u64)SEG_WORDS * a;
    const u64 local = j - seg[2];
    const u64 c0 = seg[4] + (u64)blockIdx.y * BMS_TOTAL_GROUP;
    const u64 c1 = c0 + BMS_TOTAL_GROUP < seg[5] ? c0 + BMS_TOTAL_GROUP : seg[5];
    u64 sum = 0;
#pragma unroll 4
    for (u64 c = c0; c < c1; ++c) sum += partial[chunks[(u64)CH_WORDS * c + 3] + local];
    if (sum) atomicAdd(&totals[j], sum);
}

// Exclusive prefix sum of one value a thread over the block (blockDim.x a multiple of 32, at
// most 1024); *total gets the sum. `warp_sums` holds 32 words. Collective.
__device__ __forceinline__ u64 bms_block_scan(u64 v, u64* warp_sums, u64* total) {
    const u32 lane = threadIdx.x & 31;
    const u32 warp = threadIdx.x / WARP_SIZE;
    const u32 warps = blockDim.x / WARP_SIZE;
    const u64 incl = warp::inclusive_sum(v);
    if (lane == 31) warp_sums[warp] = incl;
    __syncthreads();
    if (warp == 0) {
        const u64 w = lane < warps ? warp_sums[lane] : 0;
        const u64 wi = warp::inclusive_sum(w);
        if (lane < warps) warp_sums[lane] = wi - w;
        if (lane == 31) *total = wi;
    }
    __syncthreads();
    const u64 out = warp_sums[warp] + incl - v;
    __syncthreads();
    return out;
}

// The active index of bucket j: active buckets below it (mask bits, word prefix counts).
__device__ __forceinline__ u64 bms_active_rank(const u32* mask, const u32* prefix, u64 j) {
    const u64 w = j >> 5;
    const u32 below = (1u << (j & 31)) - 1u;
    return (u64)prefix[w] + (u64)__popc(mask[w] & below);
}

// One block of BMS_CHOOSE threads. From the nb bucket totals of a level and its r wanted ranks
// (ascending, distinct, below the total): starts[0..nb] the exclusive prefix sums, each rank's
// bucket (rank_bucket), the active buckets' bit mask and the exclusive prefix counts of its words
// (nb / 32 + 1 words, the last one covering index nb), and in `out` (2 + 4r words, read back by
// the host at once): out[0] = the number of active buckets, out[1] = the last bucket's total,
// then the active list act[2a] = bucket, act[2a + 1] = its total (act = out + 2), then
// info[2i] = rank i's active index, info[2i + 1] = its rank inside the bucket
// (info = out + 2 + 2r).
extern "C" __global__ void __launch_bounds__(BMS_CHOOSE)
    bms_choose(const u64* __restrict__ totals, u64 nb, const u64* __restrict__ ranks, u64 r, u64* __restrict__ starts,
               u64* __restrict__ rank_bucket, u32* __restrict__ mask, u32* __restrict__ prefix, u64* __restrict__ out) {
    u64* act_count = out;
    u64* act = out + 2;
    u64* info = out + 2 + 2 * r;
    if (threadIdx.x == 0) out[1] = totals[nb - 1];
    __shared__ u64 warp_sums[32];
    __shared__ u64 total;
    // Prefix sums of the totals: each thread a run of consecutive buckets.
    {
        const u64 per = (nb + blockDim.x - 1) / blockDim.x;
        const u64 lo = (u64)threadIdx.x * per < nb ? (u64)threadIdx.x * per : nb;
        const u64 hi = lo + per < nb ? lo + per : nb;
        u64 sum = 0;
        for (u64 i = lo; i < hi; ++i) sum += totals[i];
        u64 run = bms_block_scan(sum, warp_sums, &total);
        for (u64 i = lo; i < hi; ++i) {
            starts[i] = run;
            run += totals[i];
        }
        if (threadIdx.x == 0) starts[nb] = total;
    }
    const u64 words = nb / 32 + 1;
    for (u64 w = threadIdx.x; w < words; w += blockDim.x) mask[w] = 0;
    __syncthreads();
    for (u64 i = threadIdx.x; i < r; i += blockDim.x) {
        const u64 k = ranks[i];
        u64 a = 0, b = nb;  // the last bucket starting at or before k (empty ones start where the next does)
        while (b - a > 1) {
            const u64 mid = (a + b) / 2;
            if (starts[mid] <= k) a = mid; else b = mid;
        }
        rank_bucket[i] = a;
        atomicOr(&mask[a >> 5], 1u << (a & 31));
    }
    __syncthreads();
    {
        const u64 per = (words + blockDim.x - 1) / blockDim.x;
        const u64 lo = (u64)threadIdx.x * per < words ? (u64)threadIdx.x * per : words;
        const u64 hi = lo + per < words ? lo + per : words;
        u64 sum = 0;
        for (u64 w = lo; w < hi; ++w) sum += (u64)__popc(mask[w]);
        u64 run = bms_block_scan(sum, warp_sums, &total);
        for (u64 w = lo; w < hi; ++w) {
            prefix[w] = (u32)run;
            run += (u64)__popc(mask[w]);
        }
        if (threadIdx.x == 0) *act_count = total;
    }
    __syncthreads();
    for (u64 i = threadIdx.x; i < r; i += blockDim.x) {
        const u64 j = rank_bucket[i];
        const u64 a = bms_active_rank(mask, prefix, j);
        info[2 * i] = a;
        info[2 * i + 1] = ranks[i] - starts[j];
        if (i == 0 || rank_bucket[i - 1] != j) {
            act[2 * a] = j;
            act[2 * a + 1] = totals[j];
        }
    }
}

// The per-block segmented write: copies the keys of the chunk's elements whose bucket is active,
// with an active index in [a_lo, a_hi), to out[dest[a] + place], where each block reserves its
// places in an active bucket's region with one atomic on cursor[a] (by its count of that bucket)
// and places its elements with a shared counter. dest[a] == BMS_NONE skips bucket a (its ranks
// are known without its elements). `act` is the active list (act[2a] = bucket, ascending).
// Dynamic shared memory: (a_hi - a_lo) u64 bases and u32 counters, then a u16 slot per bucket
// of the segment (the window index of its active bucket, or BMS_NO_SLOT).
template <typename T>
__device__ void bms_write_impl(const T* __restrict__ x, const u64* __restrict__ chunks, const u64* __restrict__ segs,
                               const u64* __restrict__ ivs, const u32* __restrict__ partial,
                               const unsigned short* __restrict__ oracles, const u64* __restrict__ act,
                               u64 act_count, const u64* __restrict__ dest, u64* cursor,
                               typename KeyOf<T>::type* __restrict__ out, u64 a_lo, u64 a_hi) {
    typedef typename KeyOf<T>::type K;
    const int V = Vec16<T>::N;
    extern __shared__ u64 bms_dyn[];
    __shared__ IvTable<K> table;
    __shared__ u64 window[2];
    const u64* ch = chunks + (u64)CH_WORDS * blockIdx.x;
    const u64* seg = segs + (u64)SEG_WORDS * ch[2];
    const u64 first = seg[2];
    const u64 buckets = seg[3];
    const u64 cap = a_hi - a_lo;
    u64* base = bms_dyn;
    u32* taken = reinterpret_cast<u32*>(base + cap);
    unsigned short* slot = reinterpret_cast<unsigned short*>(taken + cap);
    for (u64 b = threadIdx.x; b < buckets; b += blockDim.x) slot[b] = (unsigned short)BMS_NO_SLOT;
    if (threadIdx.x == 0) {
        // The active buckets of the segment: [a0, a1) of the ascending list.
        u64 lo = 0, hi = act_count;
        while (lo < hi) {
            const u64 mid = (lo + hi) / 2;
            if (act[2 * mid] < first) lo = mid + 1; else hi = mid;
        }
        const u64 a0 = lo;
        hi = act_count;
        while (lo < hi) {
            const u64 mid = (lo + hi) / 2;
            if (act[2 * mid] < first + buckets) lo = mid + 1; else hi = mid;
        }
        window[0] = a0 > a_lo ? a0 : a_lo;
        window[1] = lo < a_hi ? lo : a_hi;
    }
    iv_load(table, ivs, seg);
    const u64 wlo = window[0];
    const u64 whi = window[1];
    if (wlo >= whi) return;  // no active bucket of this window in the segment (uniform)
    for (u64 l = threadIdx.x; l < whi - wlo; l += blockDim.x) {
        const u64 a = wlo + l;
        const u64 b = act[2 * a] - first;
        const u64 amount = partial[ch[3] + b];
        if (dest[a] != BMS_NONE && amount != 0) {
            base[l] = dest[a] + atomicAdd(&cursor[a], amount);
            taken[l] = 0;
            slot[b] = (unsigned short)l;
        }
    }
    __syncthreads();
    const u32 niv = table.count;
    const int U = BmsShape<T>::WRITE;
    const int E = U * V;
    const ChunkTrips<V, U> it(ch[0], ch[1]);
    if (oracles) {
        // The count pass stored every element's bucket: read the values of active ones only.
        for (u64 t = 0; t < it.trips(); ++t) {
            u32 o[E];
            bool valid[E];
            it.load_oracles(oracles, t, o, valid);
#pragma unroll
            for (int e = 0; e < E; ++e) {
                if (!valid[e]) continue;
                const u32 l = slot[o[e]];
                if (l == BMS_NO_SLOT) continue;
                const u32 place = atomicAdd(&taken[l], 1u);
                out[base[l] + place] = to_key(x[it.index(t, e)]);
            }
        }
        return;
    }
    for (u64 t = 0; t < it.trips(); ++t) {
        T v[E];
        bool valid[E];
        it.load(x, t, v, valid);
#pragma unroll
        for (int e = 0; e < E; ++e) {
            if (!valid[e]) continue;
            const K key = to_key(v[e]);
            const u32 l = slot[iv_bucket(table, niv, key)];
            if (l == BMS_NO_SLOT) continue;
            const u32 place = atomicAdd(&taken[l], 1u);
            out[base[l] + place] = key;
        }
    }
}

// The flag-based write: the keys of the chunk's elements whose bucket's bit is set in `keep`
// are appended to out (in no particular order), each warp staging them in shared memory and
// writing them out with one atomic on *out_count per few hundred.
template <typename T>
__device__ void bms_write_flags_impl(const T* __restrict__ x, const u64* __restrict__ chunks, const u64* __restrict__ segs,
                                     const u64* __restrict__ ivs, const unsigned short* __restrict__ oracles,
                                     const u32* __restrict__ keep, typename KeyOf<T>::type* __restrict__ out, u64 cap,
                                     u64* out_count) {
    typedef typename KeyOf<T>::type K;
    const int V = Vec16<T>::N;
    const int U = BmsShape<T>::WRITE;
    const int E = U * V;
    __shared__ IvTable<K> table;
    __shared__ K stages[BMS_WARPS][WARP_SIZE * E];
    K* stage = stages[threadIdx.x / WARP_SIZE];
    u32 staged = 0;
    const u64* ch = chunks + (u64)CH_WORDS * blockIdx.x;
    const u64* seg = segs + (u64)SEG_WORDS * ch[2];
    const u64 first = seg[2];
    iv_load(table, ivs, seg);
    const u32 niv = table.count;
    const ChunkTrips<V, U> it(ch[0], ch[1]);
    for (u64 t = 0; t < it.trips(); ++t) {
        K key[E];
        bool m[E];
        if (oracles) {
            u32 o[E];
            bool valid[E];
            it.load_oracles(oracles, t, o, valid);
#pragma unroll
            for (int e = 0; e < E; ++e) {
                const u64 b = first + o[e];
                m[e] = valid[e] && ((__ldg(&keep[b >> 5]) >> (b & 31)) & 1u);
                key[e] = m[e] ? to_key(x[it.index(t, e)]) : (K)0;
            }
        } else {
            T v[E];
            bool valid[E];
            it.load(x, t, v, valid);
#pragma unroll
            for (int e = 0; e < E; ++e) {
                key[e] = to_key(v[e]);
                const u64 b = first + iv_bucket(table, niv, key[e]);
                m[e] = valid[e] && ((__ldg(&keep[b >> 5]) >> (b & 31)) & 1u);
            }
        }
        warp_stage_append<K, E, WARP_SIZE * E>(stage, staged, out, cap, out_count, key, m);
    }
    warp_flush(stage, staged, out, cap, out_count);
}

// One block of BMS_SORT_THREADS per segment of at most CAP elements: job[4 * b] = its first
// element, [+1] its length, [+2, +3) the range of its wanted ranks in `inner` / `slots`. Sorts the
// segment's keys in shared memory and writes results[slots[q]] = the key of rank inner[q].
template <typename T, int CAP>
__device__ void bms_sort_select_impl(const T* __restrict__ x, const u64* __restrict__ jobs, const u64* __restrict__ inner,
                                     const u64* __restrict__ slots, typename KeyOf<T>::type* __restrict__ results) {
    typedef typename KeyOf<T>::type K;
    __shared__ K keys[CAP];
    const u64* job = jobs + 4 * (u64)blockIdx.x;
    const u64 start = job[0];
    const u64 len = job[1] < CAP ? job[1] : CAP;
    for (u32 i = threadIdx.x; i < CAP; i += blockDim.x) keys[i] = i < len ? to_key(x[start + i]) : (K)~(K)0;
    block_bitonic_sort<K, CAP>(keys);
    for (u64 q = job[2] + threadIdx.x; q < job[3]; q += blockDim.x) {
        const u64 k = inner[q];
        results[slots[q]] = keys[k < len ? k : len - 1];
    }
}

// As bms_sort_select_impl for CAP = BMS_SORT_BIG, the keys in dynamic shared memory
// (BMS_SORT_BIG keys).
#define BMS_SORT_BIG 16384
template <typename T>
__device__ void bms_sort_big_impl(const T* __restrict__ x, const u64* __restrict__ jobs, const u64* __restrict__ inner,
                                  const u64* __restrict__ slots, typename KeyOf<T>::type* __restrict__ results) {
    typedef typename KeyOf<T>::type K;
    extern __shared__ __align__(16) unsigned char bms_sort_dyn[];
    K* keys = reinterpret_cast<K*>(bms_sort_dyn);
    const u64* job = jobs + 4 * (u64)blockIdx.x;
    const u64 start = job[0];
    const u64 len = job[1] < BMS_SORT_BIG ? job[1] : BMS_SORT_BIG;
    for (u32 i = threadIdx.x; i < BMS_SORT_BIG; i += blockDim.x) keys[i] = i < len ? to_key(x[start + i]) : (K)~(K)0;
    block_bitonic_sort<K, BMS_SORT_BIG>(keys);
    for (u64 q = job[2] + threadIdx.x; q < job[3]; q += blockDim.x) {
        const u64 k = inner[q];
        results[slots[q]] = keys[k < len ? k : len - 1];
    }
}

// The smallest and largest keys of segments: block b reduces chunk b and combines into
// mm[2 * s], mm[2 * s + 1] (s = the chunk's segment word; the caller sets them to ~0 and 0).
template <typename K>
__device__ void bms_minmax_keys_impl(const K* __restrict__ keys, const u64* __restrict__ chunks, u64* mm) {
    __shared__ u64 red[2][32];
    const u64* ch = chunks + (u64)CH_WORDS * blockIdx.x;
    u64 lo = ~0ull, hi = 0;
    for (u64 i = ch[0] + threadIdx.x; i < ch[1]; i += blockDim.x) {
        const u64 k = (u64)keys[i];
        lo = k < lo ? k : lo;
        hi = k > hi ? k : hi;
    }
    warp::reduce_extremes(lo, hi);
    const u32 warp = threadIdx.x / WARP_SIZE;
    if ((threadIdx.x & 31) == 0) {
        red[0][warp] = lo;
        red[1][warp] = hi;
    }
    __syncthreads();
    if (threadIdx.x == 0) {
        for (u32 w = 1; w < blockDim.x / WARP_SIZE; ++w) {
            lo = red[0][w] < lo ? red[0][w] : lo;
            hi = red[1][w] > hi ? red[1][w] : hi;
        }
        atomicMin(&mm[2 * ch[2]], lo);
        atomicMax(&mm[2 * ch[2] + 1], hi);
    }
}

// stats[0] = the smallest key of x[0..n) (atomic min; ~0 on entry), stats[1] = the largest
// (atomic max; 0 on entry), stats[2] += the NaNs.
template <typename T>
__device__ void bms_minmax_impl(const T* __restrict__ x, u64 n, u64* stats) {
    const int V = Vec16<T>::N;
    __shared__ u64 red[3][32];
    u64 lo = ~0ull, hi = 0, nans = 0;
    for_each_trip(x, n, [&](T (&v)[V], bool (&valid)[V]) {
#pragma unroll
        for (int j = 0; j < V; ++j) {
            const u64 key = (u64)to_key(v[j]);
            lo = (valid[j] && key < lo) ? key : lo;
            hi = (valid[j] && key > hi) ? key : hi;
            nans += (valid[j] && is_nan_value(v[j])) ? 1u : 0u;
        }
    });
    warp::reduce_extremes(lo, hi, nans);
    const u32 warp = threadIdx.x / WARP_SIZE;
    if ((threadIdx.x & 31) == 0) {
        red[0][warp] = lo;
        red[1][warp] = hi;
        red[2][warp] = nans;
    }
    __syncthreads();
    if (threadIdx.x == 0) {
        for (u32 w = 1; w < blockDim.x / WARP_SIZE; ++w) {
            lo = red[0][w] < lo ? red[0][w] : lo;
            hi = red[1][w] > hi ? red[1][w] : hi;
            nans += red[2][w];
        }
        atomicMin(&stats[0], lo);
        atomicMax(&stats[1], hi);
        if (nans) atomicAdd(&stats[2], nans);
    }
}

// One block of BMS_SAMPLE threads: out[0..BMS_SAMPLE) = the sorted keys of a sample of x (n >=
// BMS_SAMPLE), one element from each of BMS_SAMPLE equal strides at a hashed offset.
template <typename T>
__device__ void bms_sample_impl(const T* __restrict__ x, u64 n, u64 seed, typename KeyOf<T>::type* out) {
    typedef typename KeyOf<T>::type K;
    __shared__ K keys[BMS_SAMPLE];
    for (u32 i = threadIdx.x; i < BMS_SAMPLE; i += blockDim.x) {
        keys[i] = to_key(x[sample_position(i, n, BMS_SAMPLE, seed)]);
    }
    block_bitonic_sort<K, BMS_SAMPLE>(keys);
    for (u32 i = threadIdx.x; i < BMS_SAMPLE; i += blockDim.x) out[i] = keys[i];
}

#define BUCKET_MULTISELECT_KERNELS(NAME, T)                                                          \
    extern "C" __global__ void __launch_bounds__(BMS_BLOCK)                                          \
        bms_count_##NAME(const T* x, const u64* chunks, const u64* segs, const u64* ivs,            \
                         u32* partial, unsigned short* oracles) {                                   \
        bms_count_impl<T>(x, chunks, segs, ivs, partial, oracles);                                   \
    }                                                                                                \
    extern "C" __global__ void __launch_bounds__(BMS_BLOCK)                                          \
        bms_write_##NAME(const T* x, const u64* chunks, const u64* segs, const u64* ivs,            \
                         const u32* partial, const unsigned short* oracles, const u64* act,         \
                         u64 act_count, const u64* dest, u64* cursor, KeyOf<T>::type* out,          \
                         u64 a_lo, u64 a_hi) {                                                       \
        bms_write_impl<T>(x, chunks, segs, ivs, partial, oracles, act, act_count, dest, cursor,    \
                          out, a_lo, a_hi);                                                          \
    }                                                                                                \
    extern "C" __global__ void __launch_bounds__(BMS_BLOCK)                                          \
        bms_write_flags_##NAME(const T* x, const u64* chunks, const u64* segs, const u64* ivs,      \
                               const unsigned short* oracles, const u32* keep, KeyOf<T>::type* out,  \
                               u64 cap, u64* out_count) {                                            \
        bms_write_flags_impl<T>(x, chunks, segs, ivs, oracles, keep, out, cap, out_count);           \
    }                                                                                                \
    extern "C" __global__ void __launch_bounds__(BMS_SORT_THREADS)                                   \
        bms_sort512_##NAME(const T* x, const u64* jobs, const u64* inner, const u64* slots,         \
                           KeyOf<T>::type* results) {                                                \
        bms_sort_select_impl<T, 512>(x, jobs, inner, slots, results);                                \
    }                                                                                                \
    extern "C" __global__ void __launch_bounds__(BMS_SORT_THREADS)                                   \
        bms_sort4096_##NAME(const T* x, const u64* jobs, const u64* inner, const u64* slots,        \
                            KeyOf<T>::type* results) {                                               \
        bms_sort_select_impl<T, 4096>(x, jobs, inner, slots, results);                               \
    }                                                                                                \
    extern "C" __global__ void __launch_bounds__(BMS_SORT_THREADS)                                   \
        bms_sort16384_##NAME(const T* x, const u64* jobs, const u64* inner, const u64* slots,       \
                             KeyOf<T>::type* results) {                                              \
        bms_sort_big_impl<T>(x, jobs, inner, slots, results);                                        \
    }                                                                                                \
    extern "C" __global__ void bms_minmax_##NAME(const T* x, u64 n, u64* stats) {                    \
        bms_minmax_impl<T>(x, n, stats);                                                             \
    }                                                                                                \
    extern "C" __global__ void __launch_bounds__(BMS_SAMPLE)                                         \
        bms_sample_##NAME(const T* x, u64 n, u64 seed, KeyOf<T>::type* out) {                        \
        bms_sample_impl<T>(x, n, seed, out);                                                         \
    }
KSELECT_FOR_EACH_TYPE(BUCKET_MULTISELECT_KERNELS)

#define BUCKET_MULTISELECT_KEY_KERNELS(NAME, K)                                                      \
    extern "C" __global__ void bms_minmax_keys_##NAME(const K* keys, const u64* chunks, u64* mm) {   \
        bms_minmax_keys_impl<K>(keys, chunks, mm);                                                   \
    }
KSELECT_FOR_EACH_KEY(BUCKET_MULTISELECT_KEY_KERNELS)
