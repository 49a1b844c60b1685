// bucketSelect (Alabi et al. 2012): a linear projection of the values onto equal-width buckets
// between the smallest and the largest candidate, counted in shared memory; the bucket holding
// rank k becomes the next candidate set. Phase I copies that bucket out of the input (a
// block-aggregated append); Phase II shrinks the key range to the chosen bucket and counts the
// copy again, in place. The decisions of a level (which bucket, its key bounds, whether to go
// on) are taken on the device by a one-block kernel, so the next kernel reads them from the
// state without a host round trip.
//
// The projection (`Plan`, `bucket_of`) is the one of src/select/bucket/mod.rs, operation for
// operation, with explicitly rounded intrinsics so that no kernel contracts it into a fused
// multiply-add: every kernel computes the same bucket for the same value.
#include "common.cuh"

#define BKT_BLOCK 512
#define BKT_WARPS (BKT_BLOCK / WARP_SIZE)
#define BKT_CHOOSE 1024
#define BKT_CHOOSE_WARPS (BKT_CHOOSE / WARP_SIZE)

// Status of a selection.
#define BKT_ACTIVE 0ull  // levels go on
#define BKT_STOP 1ull    // no further level; the host finishes on the candidates
#define BKT_DONE 2ull    // the answer is `result`

// The state of one selection, 11 words (src/select/bucket/cuda.rs reads it by word index).
// The candidates are the elements of the current source whose keys lie in [lo, hi].
struct BktState {
    u64 lo;         // 0: smallest candidate key (widened)
    u64 hi;         // 1: largest candidate key
    u64 k;          // 2: the rank sought among the candidates
    u64 count;      // 3: how many candidates there are
    u64 status;     // 4: BKT_ACTIVE, BKT_STOP or BKT_DONE
    u64 bucket;     // 5: the bucket chosen by the last level
    u64 poor;       // 6: consecutive levels that kept more than half of their candidates
    u64 out_count;  // 7: elements appended by the copy kernel
    u64 out_min;    // 8: smallest key appended
    u64 out_max;    // 9: largest key appended
    u64 result;     // 10: the selected key when BKT_DONE
};

#define DBL_MAX_VALUE 1.7976931348623157e308

__device__ __forceinline__ bool finite_f64(double x) { return x >= -DBL_MAX_VALUE && x <= DBL_MAX_VALUE; }

// The value of an element as a double (exact for 32-bit types; rounded to nearest for 64-bit
// integers, a monotone map).
template <typename T> __device__ __forceinline__ double to_f64(T v) { return (double)v; }

// The projection of [min, max] onto `buckets` buckets (see Projection in bucket/mod.rs).
struct Plan {
    double min;    // min * half
    double scale;  // buckets / range
    double half;   // 0.5 when max - min overflows, else 1
    u32 last;      // buckets - 1
    bool valid;    // range > 0 and the scale is finite
};

__device__ __forceinline__ Plan make_plan(double min, double max, u32 buckets) {
    Plan p;
    p.half = finite_f64(__dsub_rn(max, min)) ? 1.0 : 0.5;
    const double range = __dsub_rn(__dmul_rn(max, p.half), __dmul_rn(min, p.half));
    p.scale = __ddiv_rn((double)buckets, range);
    p.min = __dmul_rn(min, p.half);
    p.last = buckets - 1;
    p.valid = range > 0.0 && finite_f64(p.scale);
    return p;
}

// The bucket of a finite value: min(floor((x * half - min) * scale), last), 0 below min.
__device__ __forceinline__ u32 bucket_of(const Plan& p, double x) {
    const double t = __dmul_rn(__dsub_rn(__dmul_rn(x, p.half), p.min), p.scale);
    if (!(t > 0.0)) return 0;
    if (t >= (double)p.last) return p.last;
    return (u32)t;
}

// The plan of the key range [lo, hi] of element type T.
template <typename T>
__device__ __forceinline__ Plan plan_of_keys(u64 lo, u64 hi, u32 buckets) {
    typedef typename KeyOf<T>::type K;
    return make_plan(to_f64(from_key<T>((K)lo)), to_f64(from_key<T>((K)hi)), buckets);
}

// The bucket of the value whose key is `key` (monotone non-decreasing in the key between two
// keys of finite values).
template <typename T>
__device__ __forceinline__ u32 bucket_of_key(const Plan& p, u64 key) {
    typedef typename KeyOf<T>::type K;
    return bucket_of(p, to_f64(from_key<T>((K)key)));
}

// The keys of -inf and +inf (floats only).
template <typename T> struct Infinities { static const bool has = false; static const u64 neg = 0, pos = 0; };
template <> struct Infinities<float> {
    static const bool has = true;
    static const u64 neg = 0x007FFFFFull, pos = 0xFF800000ull;
};
template <> struct Infinities<double> {
    static const bool has = true;
    static const u64 neg = 0x000FFFFFFFFFFFFFull, pos = 0xFFF0000000000000ull;
};

// stats[0] = min (atomic) of the finite keys, stats[1] = max of them, stats[2] += NaNs,
// stats[3] += -inf, stats[4] += +inf. The caller initialises stats to {~0, 0, 0, 0, 0}.
template <typename T>
__device__ void bkt_minmax_impl(const T* __restrict__ x, u64 n, u64* stats) {
    typedef typename KeyOf<T>::type K;
    const int V = Vec16<T>::N;
    __shared__ u64 red[5][BKT_WARPS];
    u64 kmin = ~0ull, kmax = 0, nans = 0, ninf = 0, pinf = 0;
    for_each_trip(x, n, [&](T (&v)[V], bool (&valid)[V]) {
#pragma unroll
        for (int j = 0; j < V; ++j) {
            if (!valid[j]) continue;
            const u64 key = (u64)to_key(v[j]);
            if (is_nan_value(v[j])) {
                ++nans;
            } else if (Infinities<T>::has && key == Infinities<T>::neg) {
                ++ninf;
            } else if (Infinities<T>::has && key == Infinities<T>::pos) {
                ++pinf;
            } else {
                kmin = key < kmin ? key : kmin;
                kmax = key > kmax ? key : kmax;
            }
        }
    });
    warp::reduce_extremes(kmin, kmax, nans, ninf, pinf);
    const u32 warp = threadIdx.x / WARP_SIZE;
    if ((threadIdx.x & 31) == 0) {
        red[0][warp] = kmin;
        red[1][warp] = kmax;
        red[2][warp] = nans;
        red[3][warp] = ninf;
        red[4][warp] = pinf;
    }
    __syncthreads();
    if (threadIdx.x == 0) {
        for (int w = 1; w < BKT_WARPS; ++w) {
            kmin = red[0][w] < kmin ? red[0][w] : kmin;
            kmax = red[1][w] > kmax ? red[1][w] : kmax;
            nans += red[2][w];
            ninf += red[3][w];
            pinf += red[4][w];
        }
        if (kmin != ~0ull) atomicMin(&stats[0], kmin);
        if (kmax != 0) atomicMax(&stats[1], kmax);
        if (nans) atomicAdd(&stats[2], nans);
        if (ninf) atomicAdd(&stats[3], ninf);
        if (pinf) atomicAdd(&stats[4], pinf);
    }
}

// Starts a selection of rank k among the `count` elements of a source whose keys lie in
// [lo, hi]. One thread.
extern "C" __global__ void bkt_init(BktState* st, u64 lo, u64 hi, u64 k, u64 count) {
    if (threadIdx.x != 0 || blockIdx.x != 0) return;
    st->lo = lo;
    st->hi = hi;
    st->k = k;
    st->count = count;
    st->status = BKT_ACTIVE;
    st->bucket = 0;
    st->poor = 0;
    st->out_count = 0;
    st->out_min = ~0ull;
    st->out_max = 0;
    st->result = 0;
}

// Counts one bucket per lane into the block's histogram. The lanes that share the first valid
// lane's bucket add with one atomic (all-equal data, and the one crowded bucket of a bucket
// killer, would otherwise serialise on one counter); the others add one each.
__device__ __forceinline__ void count_bucket(u32* hist, bool valid, u32 b) {
    const u32 active = __ballot_sync(FULL_MASK, valid);
    if (active == 0) return;
    const int leader = __ffs(active) - 1;
    const u32 lead_b = __shfl_sync(FULL_MASK, b, leader);
    const u32 same = __ballot_sync(FULL_MASK, valid && b == lead_b);
    if ((threadIdx.x & 31) == (u32)leader) {
        atomicAdd(&hist[lead_b], (u32)__popc(same));
    } else if (valid && b != lead_b) {
        atomicAdd(&hist[b], 1u);
    }
}

// One level's count: hist[b] += the candidates (keys in [lo, hi]) of x[0..n) in bucket b.
// Shared memory: `buckets` u32 counters (dynamic), merged into the global u64 histogram.
template <typename T>
__device__ void bkt_count_impl(const T* __restrict__ x, u64 n, const BktState* st, u64* hist, u32 buckets) {
    typedef typename KeyOf<T>::type K;
    extern __shared__ u32 block_hist[];
    const int V = Vec16<T>::N;
    if (st->status != BKT_ACTIVE) return;  // block-uniform
    const K lo = (K)st->lo;
    const K hi = (K)st->hi;
    const Plan p = plan_of_keys<T>(lo, hi, buckets);
    if (!p.valid) return;  // block-uniform; bkt_choose stops the selection
    for (u32 i = threadIdx.x; i < buckets; i += blockDim.x) block_hist[i] = 0;
    __syncthreads();
    for_each_trip(x, n, [&](T (&v)[V], bool (&valid)[V]) {
#pragma unroll
        for (int j = 0; j < V; ++j) {
            const K key = valid[j] ? to_key(v[j]) : (K)0;
            const bool in = valid[j] && key >= lo && key <= hi;
            const u32 b = in ? bucket_of(p, to_f64(v[j])) : 0u;
            count_bucket(block_hist, in, b);
        }
    });
    __syncthreads();
    for (u32 i = threadIdx.x; i < buckets; i += blockDim.x) {
        const u32 c = block_hist[i];
        if (c) atomicAdd(&hist[i], (u64)c);
    }
}

// The smallest key in [lo, hi] whose bucket is at least `target`, where the bucket of hi is
// (precondition). A search by one warp: 32 keys a step, so the interval shrinks 32-fold.
template <typename T>
__device__ u64 first_at_least(const Plan& p, u64 lo, u64 hi, u32 target) {
    const u32 lane = threadIdx.x & 31;
    for (int step_no = 0; step_no < 32 && lo < hi; ++step_no) {
        const u64 span = hi - lo;
        const u64 step = span / 32 + 1;
        const u64 off = step * lane;  // <= 31 * (span / 32 + 1): no overflow
        const u64 point = off >= span ? hi : lo + off;
        const bool ok = bucket_of_key<T>(p, point) >= target;
        const u32 mask = __ballot_sync(FULL_MASK, ok);
        if (mask == 0) {
            // Every point is below the answer; lane 31's point is below hi.
            lo = __shfl_sync(FULL_MASK, point, 31) + 1;
        } else {
            const int j = __ffs(mask) - 1;
            const u64 at = __shfl_sync(FULL_MASK, point, j);
            const u64 before = __shfl_sync(FULL_MASK, point, j > 0 ? j - 1 : 0);
            lo = j > 0 ? before + 1 : lo;
            hi = at;
        }
    }
    return lo;
}

// One block of BKT_CHOOSE threads: finds the bucket holding rank k in the histogram, updates
// the state and clears the histogram. Phase I (`refine` = 0) records the bucket for the copy
// kernel. Phase II (`refine` = 1) narrows [lo, hi] to the bucket's exact key range (the keys
// whose bucket it is: a contiguous range, the projection being monotone), so that the next
// count, on the same copy, sees only its candidates; it ends the selection when that range is
// one key (BKT_DONE), when at most `finish` candidates remain, or when two levels in a row kept
// more than half of theirs (BKT_STOP).
template <typename T>
__device__ void bkt_choose_impl(BktState* st, u64* hist, u32 buckets, u32 refine, u64 finish) {
    __shared__ u64 warp_excl[BKT_CHOOSE_WARPS];
    __shared__ u64 found[3];  // bucket (~0 when none), candidates before it, its count
    __shared__ u64 total;
    if (st->status != BKT_ACTIVE) return;  // block-uniform
    const u64 lo = st->lo;
    const u64 hi = st->hi;
    const u64 k = st->k;
    const Plan p = plan_of_keys<T>(lo, hi, buckets);
    if (!p.valid) {
        // Nothing was counted (bkt_count saw the same plan): the host finishes.
        if (threadIdx.x == 0) st->status = BKT_STOP;
        return;
    }
    const u32 lane = threadIdx.x & 31;
    const u32 warp = threadIdx.x / WARP_SIZE;
    const u32 per = buckets / BKT_CHOOSE;  // buckets is a multiple of BKT_CHOOSE
    const u32 base = threadIdx.x * per;
    u64 mine = 0;
    for (u32 i = 0; i < per; ++i) mine += hist[base + i];
    const u64 incl = warp::inclusive_sum(mine);
    if (lane == 31) warp_excl[warp] = incl;
    if (threadIdx.x == 0) found[0] = ~0ull;
    __syncthreads();
    if (warp == 0) {
        const u64 w = warp_excl[lane];  // BKT_CHOOSE_WARPS == 32
        const u64 s = warp::inclusive_sum(w);
        warp_excl[lane] = s - w;
        if (lane == 31) total = s;
    }
    __syncthreads();
    const u64 before_me = warp_excl[warp] + incl - mine;
    if (mine > 0 && before_me <= k && k - before_me < mine) {
        u64 run = before_me;
        for (u32 i = 0; i < per; ++i) {
            const u64 c = hist[base + i];
            if (k - run < c) {
                found[0] = base + i;
                found[1] = run;
                found[2] = c;
                break;
            }
            run += c;
        }
    }
    __syncthreads();
    for (u32 i = 0; i < per; ++i) hist[base + i] = 0;
    const u64 b = found[0];
    if (b == ~0ull) {
        // The counts do not hold rank k (cannot happen with a consistent state): stop, the
        // host finishes on the candidates, which the state still describes.
        if (threadIdx.x == 0) st->status = BKT_STOP;
        return;
    }
    const u64 before = found[1];
    const u64 c = found[2];
    if (!refine) {
        if (threadIdx.x == 0) {
            st->k = k - before;
            st->count = c;
            st->bucket = b;
        }
        return;
    }
    if (warp != 0) return;
    // Warp 0: the key range of bucket b, then the decisions (lane 0).
    const u64 new_lo = first_at_least<T>(p, lo, hi, (u32)b);
    const u64 new_hi = bucket_of_key<T>(p, hi) <= (u32)b ? hi : first_at_least<T>(p, lo, hi, (u32)b + 1) - 1;
    if (lane == 0) {
        st->lo = new_lo;
        st->hi = new_hi;
        st->k = k - before;
        st->count = c;
        st->bucket = b;
        if (new_lo == new_hi) {
            st->status = BKT_DONE;
            st->result = new_lo;
        } else if (c <= finish) {
            st->status = BKT_STOP;
        } else if (c > total - c) {
            const u64 poor = st->poor + 1;
            st->poor = poor;
            if (poor >= 2) st->status = BKT_STOP;
        } else {
            st->poor = 0;
        }
    }
}

// Appends the candidates of x[0..n) (keys in [lo, hi] and, when `by_bucket`, in the chosen
// bucket) to out (capacity `cap`) and records their count and extreme keys. Runs only when
// the candidates fit (count <= cap) and the selection is not done; with `by_bucket` (Phase I),
// only while it is active.
template <typename T>
__device__ void bkt_copy_impl(const T* __restrict__ x, u64 n, BktState* st, T* __restrict__ out, u64 cap,
                              u32 buckets, u32 by_bucket) {
    typedef typename KeyOf<T>::type K;
    const int V = Vec16<T>::N;
    __shared__ u32 warp_offset[BKT_WARPS];
    __shared__ u64 block_base;
    __shared__ u64 red_min[BKT_WARPS];
    __shared__ u64 red_max[BKT_WARPS];
    const u64 status = st->status;
    if (status == BKT_DONE || (by_bucket && status != BKT_ACTIVE) || st->count > cap) return;  // block-uniform
    const K lo = (K)st->lo;
    const K hi = (K)st->hi;
    const u32 target = (u32)st->bucket;
    const Plan p = plan_of_keys<T>(lo, hi, buckets);
    if (by_bucket && !p.valid) return;  // block-uniform (bkt_choose has stopped the selection)
    u64 kmin = ~0ull, kmax = 0;
    for_each_trip(x, n, [&](T (&v)[V], bool (&valid)[V]) {
        bool m[V];
#pragma unroll
        for (int j = 0; j < V; ++j) {
            const K key = valid[j] ? to_key(v[j]) : (K)0;
            bool in = valid[j] && key >= lo && key <= hi;
            if (in && by_bucket) in = bucket_of(p, to_f64(v[j])) == target;
            m[j] = in;
            if (in) {
                kmin = (u64)key < kmin ? (u64)key : kmin;
                kmax = (u64)key > kmax ? (u64)key : kmax;
            }
        }
        block_append<BKT_WARPS>(out, cap, &st->out_count, v, m, warp_offset, &block_base);
    });
    warp::reduce_extremes(kmin, kmax);
    const u32 warp = threadIdx.x / WARP_SIZE;
    if ((threadIdx.x & 31) == 0) {
        red_min[warp] = kmin;
        red_max[warp] = kmax;
    }
    __syncthreads();
    if (threadIdx.x == 0) {
        for (int w = 1; w < BKT_WARPS; ++w) {
            kmin = red_min[w] < kmin ? red_min[w] : kmin;
            kmax = red_max[w] > kmax ? red_max[w] : kmax;
        }
        // The sentinels are neutral for the atomics, so a block without candidates may skip.
        if (kmin != ~0ull) atomicMin(&st->out_min, kmin);
        if (kmax != 0) atomicMax(&st->out_max, kmax);
    }
}

#define BUCKET_SELECT_KERNELS(NAME, T)                                                            \
    extern "C" __global__ void __launch_bounds__(BKT_BLOCK) bkt_minmax_##NAME(const T* x, u64 n, u64* stats) { \
        bkt_minmax_impl<T>(x, n, stats);                                                          \
    }                                                                                             \
    extern "C" __global__ void __launch_bounds__(BKT_BLOCK)                                       \
        bkt_count_##NAME(const T* x, u64 n, const BktState* st, u64* hist, u32 buckets) {         \
        bkt_count_impl<T>(x, n, st, hist, buckets);                                               \
    }                                                                                             \
    extern "C" __global__ void __launch_bounds__(BKT_CHOOSE)                                      \
        bkt_choose_##NAME(BktState* st, u64* hist, u32 buckets, u32 refine, u64 finish) {         \
        bkt_choose_impl<T>(st, hist, buckets, refine, finish);                                    \
    }                                                                                             \
    extern "C" __global__ void __launch_bounds__(BKT_BLOCK)                                       \
        bkt_copy_##NAME(const T* x, u64 n, BktState* st, T* out, u64 cap, u32 buckets, u32 by_bucket) { \
        bkt_copy_impl<T>(x, n, st, out, cap, buckets, by_bucket);                                 \
    }
KSELECT_FOR_EACH_TYPE(BUCKET_SELECT_KERNELS)
