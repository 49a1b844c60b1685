// Batched selection, top-k with indices and hard thresholding over spans: the rows of a
// row-major matrix or the segments of a flat array.
//
// Every span is described by `offsets` (segment s is [offsets[s], offsets[s+1])) or, when
// `offsets` is null, by rows of `cols` values `stride` apart. Values are compared through an
// order key (ascending order keys = the wanted order; ties by index), chosen by `mode`:
//   BT_ASCENDING          the element key (selection; smallest first)
//   BT_LARGEST            largest first, NaN before every number
//   BT_LARGEST_NAN_LOW    largest first, NaN after every number
//   BT_MAGNITUDE          largest |x| first, NaN first
//   BT_MAGNITUDE_NAN_LOW  largest |x| first, NaN last
// The order key of a number never collides with a NaN's: a non-NaN float's key is neither 0
// nor the largest key, and magnitudes are biased by one.
//
// Short spans (up to BT_SHORT values) take one block each, their keys in shared memory:
// 8-bit MSD radix selection in the block, an index-ordered compaction, a bitonic sort.
// Long spans are split into tiles (few tiles into parts, a block each): digit histograms per
// query over all tiles (`bt_hist`), a choice per query (`bt_choose`, or the histogram pass's
// last block for few queries), then for top-k the tiles' counts, their scan and an
// index-ordered compaction.

#define BT_ASCENDING 0
#define BT_LARGEST 1
#define BT_LARGEST_NAN_LOW 2
#define BT_MAGNITUDE 3
#define BT_MAGNITUDE_NAN_LOW 4

#define BT_THREADS 256
#define BT_SHORT 4096
#define BT_TILE 16384
// Values a thread loads at once in the tile passes.
#define BT_ROUND 8
// 16-byte loads a thread makes at once in the counting and copying passes.
#define BT_WINDOW_VECS 4
// Words of a long-span query's state: prefix, rank left, the span.
#define BT_STATE 4

// |x| as an unsigned key (floats: biased by one so that 0 stays free; NaN is handled apart).
__device__ __forceinline__ u32 magnitude_key(float x) { return (__float_as_uint(x) & 0x7fffffffu) + 1u; }
__device__ __forceinline__ u64 magnitude_key(double x) {
    return ((u64)__double_as_longlong(x) & 0x7fffffffffffffffull) + 1ull;
}
__device__ __forceinline__ u32 magnitude_key(i32 x) { return x < 0 ? 0u - (u32)x : (u32)x; }
__device__ __forceinline__ u64 magnitude_key(i64 x) { return x < 0 ? 0ull - (u64)x : (u64)x; }
__device__ __forceinline__ u32 magnitude_key(u32 x) { return x; }
__device__ __forceinline__ u64 magnitude_key(u64 x) { return x; }

template <typename T>
__device__ __forceinline__ typename KeyOf<T>::type order_key(T x, u32 mode) {
    typedef typename KeyOf<T>::type K;
    const K top = (K)~(K)0;
    if (mode == BT_ASCENDING) return to_key(x);
    const bool nan = is_nan_value(x);
    if (mode <= BT_LARGEST_NAN_LOW) {
        if (nan) return mode == BT_LARGEST ? (K)0 : top;
        return (K)~to_key(x);
    }
    if (nan) return mode == BT_MAGNITUDE ? (K)0 : top;
    return (K)~magnitude_key(x);
}

// The first index and the length of span s.
__device__ __forceinline__ void span_of(const u64* offsets, u64 cols, u64 stride, u64 s, u64& start, u64& len) {
    if (offsets) {
        start = offsets[s];
        len = offsets[s + 1] - start;
    } else {
        start = s * stride;
        len = cols;
    }
}

// Part p of `parts` (a power of two dividing BT_TILE) of a span's tile t: [lo, hi) inside the
// span of `len` values (empty past its end).
__device__ __forceinline__ void part_of_tile(u64 t, u32 p, u32 parts, u64 len, u64& lo, u64& hi) {
    const u64 part_len = BT_TILE / parts;
    lo = min(len, t * BT_TILE + (u64)p * part_len);
    hi = min(len, lo + part_len);
}

// The span of tile t: the last s with tile_first[s] <= t (tile_first has nspans + 1 entries).
__device__ __forceinline__ u64 span_of_tile(const u64* tile_first, u64 nspans, u64 t) {
    u64 lo = 0, hi = nspans;  // tile_first[lo] <= t < tile_first[hi]
    while (hi - lo > 1) {
        const u64 mid = (lo + hi) / 2;
        if (tile_first[mid] <= t) lo = mid; else hi = mid;
    }
    return lo;
}

// Block-wide exclusive sum (every thread calls it; `scratch` holds 32 words). Returns the
// prefix of this thread's value; `*total` gets the block's sum.
__device__ __forceinline__ u64 bt_exclusive_sum(u64 v, u64* scratch, u64* total) {
    const u32 lane = threadIdx.x & 31, warp = threadIdx.x >> 5, warps = (blockDim.x + 31) >> 5;
    u64 inc = warp::inclusive_sum(v);
    if (lane == 31) scratch[warp] = inc;
    __syncthreads();
    if (warp == 0) {
        u64 w = warp::inclusive_sum(lane < warps ? scratch[lane] : 0);
        scratch[lane] = w;  // inclusive sums of the warps
    }
    __syncthreads();
    const u64 before = (warp ? scratch[warp - 1] : 0) + inc - v;
    *total = scratch[warps - 1];
    __syncthreads();
    return before;
}

// The digit of a 256-bin histogram where rank r falls, by warp 0: writes the digit and the
// rank left inside it to out[0], out[1] (the caller synchronises).
__device__ __forceinline__ void bt_pick_digit(const u32* hist, u64 r, u64* out) {
    if (threadIdx.x >= 32) return;
    const u32 lane = threadIdx.x;
    u64 mine = 0;
#pragma unroll
    for (int j = 0; j < 8; ++j) mine += hist[lane * 8 + j];
    u64 inc = mine;
#pragma unroll
    for (int d = 1; d < 32; d <<= 1) {
        const u64 o = __shfl_up_sync(FULL_MASK, inc, d);
        if (lane >= (u32)d) inc += o;
    }
    const u64 before = inc - mine;
    const u32 hit = __ballot_sync(FULL_MASK, before <= r && r < inc);
    if (hit == 0) {
        // Rank past the counts: cannot happen for valid ranks; keep the top digit.
        if (lane == 0) {
            out[0] = 255;
            out[1] = 0;
        }
        return;
    }
    if (lane == (u32)(__ffs(hit) - 1)) {
        u64 below = before;
        u32 digit = lane * 8;
        for (int j = 0; j < 8; ++j) {
            const u64 c = hist[lane * 8 + j];
            if (r < below + c) {
                digit = lane * 8 + j;
                break;
            }
            below += c;
        }
        out[0] = digit;
        out[1] = r - below;
    }
}

// The key of rank r among keys[0..len) in shared memory (8-bit digits from the top) and how
// many keys equal to it rank at or below r among those equal (`*take`, at least 1).
// With `copies` histograms of 256 counts in `hist` (1, or one a warp: the first digits of
// magnitudes fall in a few bins, where one histogram makes the warps wait on each other's
// increments), summed into the first before each choice.
template <typename K, u32 copies>
__device__ K bt_block_select_copies(const K* keys, u32 len, u64 r, u32* hist, u64* pick, u64* take) {
    const u32 own = copies > 1 ? (threadIdx.x >> 5) % copies : 0;
    K prefix = 0, mask = 0;
    for (int shift = (int)sizeof(K) * 8 - 8; shift >= 0; shift -= 8) {
        for (u32 i = threadIdx.x; i < 256 * copies; i += blockDim.x) hist[i] = 0;
        __syncthreads();
        for (u32 i = threadIdx.x; i < len; i += blockDim.x) {
            const K v = keys[i];
            if ((v & mask) == prefix) atomicAdd(&hist[own * 256 + ((u32)(v >> shift) & 255u)], 1u);
        }
        __syncthreads();
        if (copies > 1) {
            for (u32 i = threadIdx.x; i < 256; i += blockDim.x) {
                u32 c = 0;
                for (u32 w = 0; w < copies; ++w) c += hist[w * 256 + i];
                hist[i] = c;
            }
            __syncthreads();
        }
        bt_pick_digit(hist, r, pick);
        __syncthreads();
        prefix |= (K)pick[0] << shift;
        mask |= (K)255 << shift;
        r = pick[1];
        __syncthreads();
    }
    *take = r + 1;
    return prefix;
}

// With one histogram of 256 counts.
template <typename K>
__device__ K bt_block_select(const K* keys, u32 len, u64 r, u32* hist, u64* pick, u64* take) {
    return bt_block_select_copies<K, 1>(keys, len, r, hist, pick, take);
}

// Sorts p (a power of two) pairs ascending by (key, idx) in shared memory.
template <typename K>
__device__ void bt_bitonic(K* key, u32* idx, u32 p) {
    bitonic::network(p, [&](u32 lo, u32 hi, bool up) {
        const K a = key[lo], b = key[hi];
        const u32 ia = idx[lo], ib = idx[hi];
        const bool greater = a > b || (a == b && ia > ib);
        if (greater == up) {
            key[lo] = b;
            key[hi] = a;
            idx[lo] = ib;
            idx[hi] = ia;
        }
    });
}

__device__ __forceinline__ u32 bt_pow2(u32 v) {
    u32 p = 1;
    while (p < v) p <<= 1;
    return p;
}

// ---------------------------------------------------------------------------------------------
// Short spans: one block a span.

// Loads span s's order keys into shared memory and counts its NaNs.
template <typename T>
__device__ u32 bt_load_short(const T* x, u64 start, u32 len, u32 mode, typename KeyOf<T>::type* keys,
                             u32* nan_block) {
    u32 nans = 0;
    for (u32 i = threadIdx.x; i < len; i += blockDim.x) {
        const T v = x[start + i];
        keys[i] = order_key(v, mode);
        nans += is_nan_value(v) ? 1u : 0u;
    }
    if (HasNan<T>::value) {
        nans = __reduce_add_sync(FULL_MASK, nans);
        if ((threadIdx.x & 31) == 0 && nans) atomicAdd(nan_block, nans);
    }
    __syncthreads();
    return *nan_block;
}

// The start of span s's block: its first index, its order keys in shared memory and its NaN
// count written; returns its length.
template <typename T>
__device__ u32 bt_begin_short(const T* x, const u64* offsets, u64 cols, u64 stride, u64 s, u32 mode,
                              typename KeyOf<T>::type* keys, u32* nan_block, u64* nan_counts, u64& start) {
    u64 len;
    span_of(offsets, cols, stride, s, start, len);
    if (threadIdx.x == 0) *nan_block = 0;
    __syncthreads();
    const u32 nans = bt_load_short(x, start, (u32)len, mode, keys, nan_block);
    if (threadIdx.x == 0) nan_counts[s] = nans;
    return (u32)len;
}

// One block a span: the ranks' values by radix selection in shared memory, or, for more than 8
// ranks, from a bitonic sort of the span. Dynamic shared memory: the span's keys, or a power of
// two of keys and their 32-bit places for the sort (`short_config` on the host).
template <typename T>
__device__ void bt_select_short_impl(const T* __restrict__ x, const u64* offsets, u64 cols, u64 stride,
                                     u64 nspans, const u64* __restrict__ ranks, u32 m, u32 one_per_span,
                                     T* __restrict__ out, u64* __restrict__ nan_counts) {
    typedef typename KeyOf<T>::type K;
    extern __shared__ __align__(16) unsigned char bt_dyn[];
    K* keys = reinterpret_cast<K*>(bt_dyn);
    __shared__ u32 hist[256];
    __shared__ u64 pick[2];
    __shared__ u32 nan_block;
    for (u64 s = blockIdx.x; s < nspans; s += gridDim.x) {
        u64 start;
        const u32 len = bt_begin_short(x, offsets, cols, stride, s, BT_ASCENDING, keys, &nan_block, nan_counts, start);
        if (len == 0) {
            __syncthreads();
            continue;
        }
        // Many ranks: sort the span once (its keys and their places) and read them off.
        const u32 p = bt_pow2(len);
        if (!one_per_span && m > 8) {
            u32* places = reinterpret_cast<u32*>(keys + p);
            for (u32 i = threadIdx.x; i < p; i += blockDim.x) {
                if (i >= len) keys[i] = (K)~(K)0;
                places[i] = i;
            }
            __syncthreads();
            bt_bitonic(keys, places, p);
            for (u32 j = threadIdx.x; j < m; j += blockDim.x) {
                const u64 r = ranks[j];
                out[s * m + j] = from_key<T>(keys[r < len ? r : len - 1]);
            }
            __syncthreads();
            continue;
        }
        for (u32 j = 0; j < (one_per_span ? 1u : m); ++j) {
            const u64 r = one_per_span ? ranks[s] : ranks[j];
            u64 take;
            const K key = bt_block_select(keys, len, r < len ? r : len - 1, hist, pick, &take);
            if (threadIdx.x == 0) out[one_per_span ? s : s * m + j] = from_key<T>(key);
        }
        __syncthreads();
    }
}

// Writes the k first of span s (in the order of the order keys, ties by index) to
// out[s*k..], in index order: keys below the k-th key, then the first `take` equal to it.
// `keys` hold the span's order keys; every thread takes a contiguous run of indices.
template <typename T, typename K>
__device__ void bt_compact_short(const T* x, u64 start, u32 len, const K* keys, K kth, u64 take, u64 k, u64 s,
                                 u64* scratch, T* out_values, u64* out_idx) {
    const u32 per = (len + blockDim.x - 1) / blockDim.x;
    const u32 lo = min(len, threadIdx.x * per), hi = min(len, lo + per);
    u32 below = 0, equal = 0;
    for (u32 i = lo; i < hi; ++i) {
        below += keys[i] < kth ? 1u : 0u;
        equal += keys[i] == kth ? 1u : 0u;
    }
    u64 total;
    const u64 packed = bt_exclusive_sum(((u64)below << 32) | equal, scratch, &total);
    u64 b = packed >> 32, e = packed & 0xffffffffull;
    for (u32 i = lo; i < hi; ++i) {
        const K v = keys[i];
        const bool eq = v == kth;
        if (v < kth || (eq && e < take)) {
            const u64 at = s * k + b + (e < take ? e : take);
            out_values[at] = x[start + i];
            out_idx[at] = i;
        }
        b += v < kth ? 1 : 0;
        e += eq ? 1 : 0;
    }
}

// Sorts span s's k results (already in out, by index) by (order key, index), in shared memory
// (`keys` room for 2 * pow2(k) keys' worth).
template <typename T>
__device__ void bt_sort_results(u64 s, u64 k, u32 mode, typename KeyOf<T>::type* keys, T* out_values,
                                u64* out_idx) {
    typedef typename KeyOf<T>::type K;
    const u32 p = bt_pow2((u32)k);
    u32* places = reinterpret_cast<u32*>(keys + p);
    for (u32 i = threadIdx.x; i < p; i += blockDim.x) {
        keys[i] = i < k ? order_key(out_values[s * k + i], mode) : (K)~(K)0;
        places[i] = i < k ? (u32)out_idx[s * k + i] : 0xffffffffu;
    }
    __syncthreads();
    bt_bitonic(keys, places, p);
    // The values by their places, parked in the keys' room (no longer needed) until every
    // thread has read the unsorted results: the places are span indices and the unsorted
    // results are in index order, so a binary search finds each one's value.
    T* held = reinterpret_cast<T*>(keys);
    for (u32 i = threadIdx.x; i < k; i += blockDim.x) {
        const u64 where = places[i];
        u64 lo = 0, hi = k;
        while (hi - lo > 1) {
            const u64 mid = (lo + hi) / 2;
            if (out_idx[s * k + mid] <= where) lo = mid; else hi = mid;
        }
        held[i] = out_values[s * k + lo];
    }
    __syncthreads();
    for (u32 i = threadIdx.x; i < k; i += blockDim.x) {
        out_values[s * k + i] = held[i];
        out_idx[s * k + i] = places[i];
    }
    __syncthreads();
}

// One block a span, its order keys in dynamic shared memory. `copies` histograms: 1 (static
// shared memory), or one a warp placed after `room` keys (the longest span) in the dynamic
// shared memory.
template <typename T, u32 copies>
__device__ void bt_topk_short_impl(const T* __restrict__ x, const u64* offsets, u64 cols, u64 stride, u64 nspans,
                                   u64 k, u32 mode, u32 sorted, T* out_values, u64* out_idx,
                                   u64* __restrict__ nan_counts, u64 room) {
    typedef typename KeyOf<T>::type K;
    extern __shared__ __align__(16) unsigned char bt_dyn[];
    K* keys = reinterpret_cast<K*>(bt_dyn);
    __shared__ u32 one_hist[256];
    u32* hist = copies > 1 ? reinterpret_cast<u32*>(keys + room) : one_hist;
    __shared__ u64 pick[2];
    __shared__ u64 scratch[32];
    __shared__ u32 nan_block;
    for (u64 s = blockIdx.x; s < nspans; s += gridDim.x) {
        u64 start;
        const u32 len = bt_begin_short(x, offsets, cols, stride, s, mode, keys, &nan_block, nan_counts, start);
        if (len < k || k == 0 || len > room) {
            __syncthreads();
            continue;  // refused by the host before the launch
        }
        u64 take;
        const K kth = bt_block_select_copies<K, copies>(keys, len, k - 1, hist, pick, &take);
        bt_compact_short(x, start, len, keys, kth, take, k, s, scratch, out_values, out_idx);
        __syncthreads();
        if (sorted) bt_sort_results<T>(s, k, mode, keys, out_values, out_idx);
        __syncthreads();
    }
}

// ---------------------------------------------------------------------------------------------
// Rows of up to BT_WARP_SPAN values: one warp a span, its order keys in registers (16-byte
// groups of values, see bt_warp_place). The k-th key's bits below the span's common leading
// bits are fixed 8 at a time from a histogram a warp, stopping as soon as the chosen digit's
// keys are exactly the ones still wanted; a scan of each lane's counts a group gives every
// kept value its place in index order. Sorted results of up to BT_WARP_SORT a span are
// gathered in the warp's shared memory and sorted in its registers.

#define BT_WARP_SPAN 1024
#define BT_WARP_ITEMS (BT_WARP_SPAN / 32)
#define BT_WARP_SORT 256
#define BT_WARP_THREADS 256
// Resident blocks a multiprocessor: the registers of 32 keys a thread, 4 or 8 bytes each.
#define BT_WARP_BLOCKS(T) (sizeof(T) == 4 ? 4 : 2)

// A warp's shared memory: its digit histogram, later its kept keys and places for the sort.
template <typename K>
union __align__(16) BtWarpShared {
    u32 hist[256];
    struct {
        K keys[BT_WARP_SORT];
        u32 places[BT_WARP_SORT];
    } sort;
};

template <typename K>
__device__ __forceinline__ K bt_warp_min(K v) {
#pragma unroll
    for (int d = 16; d > 0; d >>= 1) {
        const K o = __shfl_xor_sync(FULL_MASK, v, d);
        v = o < v ? o : v;
    }
    return v;
}

template <typename K>
__device__ __forceinline__ K bt_warp_max(K v) {
#pragma unroll
    for (int d = 16; d > 0; d >>= 1) {
        const K o = __shfl_xor_sync(FULL_MASK, v, d);
        v = o > v ? o : v;
    }
    return v;
}

// The bin of a warp's 256-bin histogram where rank r falls: its digit and the rank left inside
// it (`*r`), its count returned; every lane gets the same answer.
__device__ __forceinline__ u32 bt_warp_pick(const u32* hist, u32* r, u32* digit) {
    const u32 lane = threadIdx.x & 31;
    const uint4 q0 = reinterpret_cast<const uint4*>(hist)[lane * 2];
    const uint4 q1 = reinterpret_cast<const uint4*>(hist)[lane * 2 + 1];
    const u32 c[8] = {q0.x, q0.y, q0.z, q0.w, q1.x, q1.y, q1.z, q1.w};
    u32 mine = 0;
#pragma unroll
    for (int j = 0; j < 8; ++j) mine += c[j];
    u32 inc = mine;
#pragma unroll
    for (int d = 1; d < 32; d <<= 1) {
        const u32 o = __shfl_up_sync(FULL_MASK, inc, d);
        if (lane >= (u32)d) inc += o;
    }
    const u32 want = *r;
    u32 below = inc - mine;
    const u32 hit = __ballot_sync(FULL_MASK, below <= want && want < inc);
    const u32 owner = hit ? (u32)(__ffs(hit) - 1) : 31u;
    u32 d = lane * 8 + 7, count = 0;
#pragma unroll
    for (int j = 0; j < 8; ++j) {
        if (count == 0 && want < below + c[j]) {
            d = lane * 8 + j;
            count = c[j];
        } else if (count == 0) {
            below += c[j];
        }
    }
    *digit = __shfl_sync(FULL_MASK, d, owner);
    *r = want - __shfl_sync(FULL_MASK, below, owner);
    return __shfl_sync(FULL_MASK, count, owner);
}

// The place of register r of a lane among a span's values: registers come in 16-byte groups
// of V values, group j of lane `lane` holding values j * 32 * V + lane * V + [0, V).
template <typename T>
__device__ __forceinline__ u32 bt_warp_place(int r, u32 lane) {
    constexpr int V = Vec16<T>::N;
    return (u32)(r / V) * 32 * V + lane * V + (u32)(r % V);
}

// The value of order key `key` at place i of the span at x + start: from the key itself where
// the order is invertible (ascending, or largest first for all but NaN), else read again.
template <typename T>
__device__ __forceinline__ T bt_warp_value(const T* __restrict__ x, u64 start, u32 i, typename KeyOf<T>::type key,
                                           u32 mode) {
    typedef typename KeyOf<T>::type K;
    if (mode == BT_ASCENDING) return from_key<T>(key);
    const bool maybe_nan = HasNan<T>::value && (key == 0 || key == (K)~(K)0);
    if (mode <= BT_LARGEST_NAN_LOW && !maybe_nan) return from_key<T>((K)~key);
    return x[start + i];
}

// Sorts a warp's k kept (key, place) pairs in shared memory (k at most 32 * E) by a bitonic
// network in registers, E consecutive pairs a lane (the largest key and place past k), and
// writes them to out[s*k..] with their values.
template <typename T, int E>
__device__ __forceinline__ void bt_warp_sort(const T* __restrict__ x, u64 start, u64 s, u64 k, u32 mode,
                                             BtWarpShared<typename KeyOf<T>::type>& sh, T* out_values,
                                             u64* out_idx) {
    typedef typename KeyOf<T>::type K;
    constexpr int LOG = 5 + (E >= 2) + (E >= 4) + (E >= 8) + (E >= 16);
    const u32 lane = threadIdx.x & 31;
    K a[E];
    u32 b[E];
#pragma unroll
    for (int e = 0; e < E; ++e) {
        const u32 i = lane * E + e;
        a[e] = i < k ? sh.sort.keys[i] : (K)~(K)0;
        b[e] = i < k ? sh.sort.places[i] : 0xffffffffu;
    }
#pragma unroll
    for (int level = 1; level <= LOG; ++level) {
        const u32 size = 1u << level;
#pragma unroll
        for (int step = level - 1; step >= 0; --step) {
            const u32 stride = 1u << step;
            if (stride >= (u32)E) {
                const u32 d = stride / E;
                const bool lower = (lane & d) == 0;
#pragma unroll
                for (int e = 0; e < E; ++e) {
                    const K ok = __shfl_xor_sync(FULL_MASK, a[e], d);
                    const u32 ob = __shfl_xor_sync(FULL_MASK, b[e], d);
                    const bool ascending = ((lane * E + e) & size) == 0;
                    const bool greater = a[e] > ok || (a[e] == ok && b[e] > ob);
                    if (greater == (lower == ascending)) {
                        a[e] = ok;
                        b[e] = ob;
                    }
                }
            } else {
#pragma unroll
                for (int e = 0; e < E; ++e) {
                    if ((e & stride) == 0) {
                        const int f = e | (int)stride;
                        const bool ascending = ((lane * E + e) & size) == 0;
                        const bool greater = a[e] > a[f] || (a[e] == a[f] && b[e] > b[f]);
                        if (greater == ascending) {
                            const K tk = a[e];
                            const u32 tb = b[e];
                            a[e] = a[f];
                            b[e] = b[f];
                            a[f] = tk;
                            b[f] = tb;
                        }
                    }
                }
            }
        }
    }
#pragma unroll
    for (int e = 0; e < E; ++e) {
        const u32 i = lane * E + e;
        if (i < k) {
            out_values[s * k + i] = bt_warp_value(x, start, b[e], a[e], mode);
            out_idx[s * k + i] = b[e];
        }
    }
    __syncwarp();
}

// A warp's order keys of span [start, start + len) in the order family of `mode` (FAMILY:
// BT_ASCENDING, BT_LARGEST or BT_MAGNITUDE, their NaN placement from `mode`), the largest key
// past the span's end; its NaN count and the smallest and largest of its keys returned.
template <typename T, u32 FAMILY>
__device__ __forceinline__ void bt_warp_keys(const T* __restrict__ x, u64 start, u32 len, u32 mode,
                                             typename KeyOf<T>::type (&key)[BT_WARP_ITEMS], u32& nans,
                                             typename KeyOf<T>::type& lo, typename KeyOf<T>::type& hi) {
    typedef typename KeyOf<T>::type K;
    constexpr int V = Vec16<T>::N;
    const u32 lane = threadIdx.x & 31;
    const bool aligned = ((size_t)(x + start) & 15) == 0;
    const K nan_key = mode == BT_LARGEST || mode == BT_MAGNITUDE ? (K)0 : (K)~(K)0;
#pragma unroll
    for (int j = 0; j < BT_WARP_ITEMS / V; ++j) {
        const u32 first = bt_warp_place<T>(j * V, lane);
        T v[V];
        if (aligned && first + V <= len) {
            load16(x + start + first, v);
        } else {
#pragma unroll
            for (int u = 0; u < V; ++u) v[u] = first + u < len ? x[start + first + u] : (T)0;
        }
#pragma unroll
        for (int u = 0; u < V; ++u) {
            K kk;
            if (FAMILY == BT_ASCENDING) kk = to_key(v[u]);
            else if (FAMILY == BT_LARGEST) kk = (K)~to_key(v[u]);
            else kk = (K)~magnitude_key(v[u]);
            const bool nan = is_nan_value(v[u]);
            if (FAMILY != BT_ASCENDING) kk = nan ? nan_key : kk;
            nans += nan && first + u < len ? 1u : 0u;
            kk = first + u < len ? kk : (K)~(K)0;
            key[j * V + u] = kk;
            lo = kk < lo ? kk : lo;
            hi = kk > hi ? kk : hi;
        }
    }
}

// Span s's k first by one warp (see above). Places past the span's end hold the largest key:
// they rank after every value of the span (equal keys by index), so that k <= len never keeps
// them and the digit counts need no bound.
template <typename T>
__device__ void bt_topk_warp_span(const T* __restrict__ x, u64 start, u32 len, u64 s, u64 k, u32 mode,
                                  u32 sorted, BtWarpShared<typename KeyOf<T>::type>& sh, T* out_values,
                                  u64* out_idx, u64* nan_counts) {
    typedef typename KeyOf<T>::type K;
    constexpr int BITS = (int)sizeof(K) * 8;
    constexpr int V = Vec16<T>::N;
    const u32 lane = threadIdx.x & 31;
    K key[BT_WARP_ITEMS];
    u32 nans = 0;
    K lo = (K)~(K)0, hi = 0;
    if (mode == BT_ASCENDING) bt_warp_keys<T, BT_ASCENDING>(x, start, len, mode, key, nans, lo, hi);
    else if (mode <= BT_LARGEST_NAN_LOW) bt_warp_keys<T, BT_LARGEST>(x, start, len, mode, key, nans, lo, hi);
    else bt_warp_keys<T, BT_MAGNITUDE>(x, start, len, mode, key, nans, lo, hi);
    if (HasNan<T>::value) nans = __reduce_add_sync(FULL_MASK, nans);
    if (lane == 0) nan_counts[s] = nans;
    lo = bt_warp_min(lo);
    hi = bt_warp_max(hi);
    // The kept keys: (key & mask) below prefix, and the first `take` equal to it.
    K prefix = lo, mask = (K)~(K)0;
    u32 r = (u32)k - 1;
    if (lo != hi) {
        int bit = 64 - __clzll((long long)(lo ^ hi));  // the bits below the common leading ones
        mask = bit == BITS ? (K)0 : (K)((K)~(K)0 << bit);
        prefix = lo & mask;
        while (bit > 0) {
            const int shift = bit > 8 ? bit - 8 : 0;
            const u32 width = (u32)(bit - shift);
#pragma unroll
            for (int j = 0; j < 8; ++j) sh.hist[j * 32 + lane] = 0;
            __syncwarp();
#pragma unroll
            for (int j = 0; j < BT_WARP_ITEMS; ++j) {
                if ((key[j] & mask) == prefix) atomicAdd(&sh.hist[(u32)(key[j] >> shift) & ((1u << width) - 1u)], 1u);
            }
            __syncwarp();
            u32 digit;
            const u32 count = bt_warp_pick(sh.hist, &r, &digit);
            __syncwarp();
            prefix |= (K)digit << shift;
            mask |= (K)((1u << width) - 1u) << shift;
            bit = shift;
            if (count == r + 1) break;  // every key of the digit is kept
        }
    }
    const u32 take = r + 1;
    const bool in_shared = sorted && k <= BT_WARP_SORT;
    // Register r's bit in `below` / `equal`: its masked key below / equal to the prefix.
    u32 below = 0, equal = 0;
#pragma unroll
    for (int j = 0; j < BT_WARP_ITEMS; ++j) {
        const K m = key[j] & mask;
        below |= (m < prefix ? 1u : 0u) << j;
        equal |= (m == prefix ? 1u : 0u) << j;
    }
    // Index order within a group: lane by lane, then a lane's V values; each lane's counts of
    // both (16 bits each) summed over the lanes before it.
    constexpr u32 GROUP = (1u << V) - 1u;
    u32 below_seen = 0, equal_seen = 0;
#pragma unroll
    for (int j = 0; j < BT_WARP_ITEMS / V; ++j) {
        if (below_seen + min(equal_seen, take) >= k) break;
        const u32 b = (below >> (j * V)) & GROUP, e = (equal >> (j * V)) & GROUP;
        const u32 mine = ((u32)__popc(b) << 16) | (u32)__popc(e);
        u32 inc = mine;
#pragma unroll
        for (int d = 1; d < 32; d <<= 1) {
            const u32 o = __shfl_up_sync(FULL_MASK, inc, d);
            if (lane >= (u32)d) inc += o;
        }
        const u32 total = __shfl_sync(FULL_MASK, inc, 31);
        const u32 b0 = below_seen + ((inc - mine) >> 16), e0 = equal_seen + ((inc - mine) & 0xffffu);
        for (u32 kept = b | e; kept; kept &= kept - 1) {
            const u32 u = (u32)__ffs(kept) - 1, before = (1u << u) - 1u;
            const u32 ordinal = e0 + (u32)__popc(e & before);
            if (((b >> u) & 1u) || ordinal < take) {
                const u32 at = b0 + (u32)__popc(b & before) + min(ordinal, take);
                const u32 i = bt_warp_place<T>(j * V, lane) + u;
                const T value = x[start + i];
                if (in_shared) {
                    sh.sort.keys[at] = order_key(value, mode);
                    sh.sort.places[at] = i;
                } else {
                    out_values[s * k + at] = value;
                    out_idx[s * k + at] = i;
                }
            }
        }
        below_seen += total >> 16;
        equal_seen += total & 0xffffu;
    }
    if (!in_shared) return;
    if (k <= 32) bt_warp_sort<T, 1>(x, start, s, k, mode, sh, out_values, out_idx);
    else bt_warp_sort<T, BT_WARP_SORT / 32>(x, start, s, k, mode, sh, out_values, out_idx);
}

// One warp a span of at most BT_WARP_SPAN values (`k` at most its length, checked by the host).
template <typename T>
__device__ void bt_topk_warp_impl(const T* __restrict__ x, const u64* offsets, u64 cols, u64 stride, u64 nspans,
                                  u64 k, u32 mode, u32 sorted, T* out_values, u64* out_idx, u64* nan_counts) {
    typedef typename KeyOf<T>::type K;
    __shared__ BtWarpShared<K> shared[BT_WARP_THREADS / 32];
    const u32 warp = threadIdx.x >> 5;
    const u64 warps = (u64)gridDim.x * (BT_WARP_THREADS / 32);
    for (u64 s = (u64)blockIdx.x * (BT_WARP_THREADS / 32) + warp; s < nspans; s += warps) {
        u64 start, len;
        span_of(offsets, cols, stride, s, start, len);
        if (len < k || k == 0 || len > BT_WARP_SPAN) continue;  // refused by the host before the launch
        bt_topk_warp_span<T>(x, start, (u32)len, s, k, mode, sorted, shared[warp], out_values, out_idx,
                             nan_counts);
    }
}

// ---------------------------------------------------------------------------------------------
// Mid-length spans alone on the device (a solver's one vector of up to 128 KB of keys):
// one block of BT_RESIDENT_THREADS a span, its keys in shared memory, each digit counted into
// a histogram a warp (the first digit of magnitudes falls in a few bins, where one histogram
// would make the warps wait on each other's increments), then the index-ordered compaction.

#define BT_RESIDENT_THREADS 1024

// ---------------------------------------------------------------------------------------------
// Long spans: tiles of BT_TILE values; one query (a span and a rank) per state.

// Queries q0, q0 + step, ... below nq, one block: the digit of each one's rank, the prefix and
// rank narrowed, the histogram cleared for the next pass.
__device__ void bt_choose_queries(u64* state, u32* hist, u64 q0, u64 nq, u64 step, u32 shift) {
    __shared__ u64 pick[2];
    for (u64 q = q0; q < nq; q += step) {
        u32* h = hist + q * 256;
        bt_pick_digit(h, state[q * BT_STATE + 1], pick);
        __syncthreads();
        if (threadIdx.x == 0) {
            state[q * BT_STATE] |= pick[0] << shift;
            state[q * BT_STATE + 1] = pick[1];
        }
        for (u32 i = threadIdx.x; i < 256; i += blockDim.x) h[i] = 0;
        __syncthreads();
    }
}

// One block a query (see bt_choose_queries).
template <typename K>
__device__ void bt_choose_impl(u64* state, u32* hist, u64 nq, u32 shift) {
    bt_choose_queries(state, hist, blockIdx.x, nq, gridDim.x, shift);
}

// Query q: state[q*BT_STATE + 0] = the prefix fixed so far, + 1 = the rank left among the keys
// with that prefix, + 2 = its span. Queries of one span are consecutive: span s's queries are
// q_first[s]..q_first[s+1] (q_first == null: one query a span). hist[q*256 + digit].
// Each tile is cut into `parts` parts, a block each (tile_hist must then be null: few tiles
// still fill the device). A tile's single query counts into a histogram a warp (8 copies:
// the first digits of magnitudes fall in few bins, and the warps then do not wait on each
// other's increments), summed at the end. With `done` (a zeroed counter; few queries) the
// last block to finish also makes the choice of every one of the `nq` queries
// (bt_choose_queries) and zeroes the counter again, so that no second launch is needed.
template <typename T>
__device__ void bt_hist_impl(const T* __restrict__ x, const u64* offsets, u64 cols, u64 stride, u64 nspans,
                             const u64* __restrict__ tile_first, const u64* __restrict__ q_first, u32 mode,
                             u64* state, u32* hist, u32 shift, u64* nan_counts, u32* tile_hist, u32 parts,
                             u32* done, u64 nq_total) {
    typedef typename KeyOf<T>::type K;
    __shared__ u32 local[8][256];
    const u64 tiles = tile_first[nspans];
    const int bits = (int)sizeof(K) * 8;
    const K mask = shift + 8 >= (u32)bits ? (K)0 : (K)(~(K)0 << (shift + 8));
    for (u64 w = blockIdx.x; w < tiles * parts; w += gridDim.x) {
        const u64 t = w / parts;
        const u64 s = span_of_tile(tile_first, nspans, t);
        const u64 q0 = q_first ? q_first[s] : s, q1 = q_first ? q_first[s + 1] : s + 1;
        const u32 nq = (u32)(q1 - q0);
        u64 start, len;
        span_of(offsets, cols, stride, s, start, len);
        u64 lo, hi;
        part_of_tile(t - tile_first[s], (u32)(w % parts), parts, len, lo, hi);
        for (u32 g = 0; g < nq; g += 8) {
            const u32 ng = min(8u, nq - g);
            // One query: a copy a warp (blockDim.x is BT_THREADS, 8 warps).
            const bool per_warp = ng == 1;
            const u32 own = per_warp ? (threadIdx.x / 32) % 8 : 0;
            const u32 cleared = per_warp ? 8 * 256 : 256 * ng;
            for (u32 i = threadIdx.x; i < cleared; i += blockDim.x) local[i / 256][i % 256] = 0;
            __syncthreads();
            K prefix[8];
            for (u32 j = 0; j < ng; ++j) prefix[j] = (K)state[(q0 + g + j) * BT_STATE];
            u32 nans = 0;
            for (u64 r0 = lo; r0 < hi; r0 += (u64)BT_ROUND * blockDim.x) {
                T v[BT_ROUND];
#pragma unroll
                for (int u = 0; u < BT_ROUND; ++u) {
                    const u64 i = r0 + (u64)u * blockDim.x + threadIdx.x;
                    v[u] = i < hi ? x[start + i] : (T)0;
                }
#pragma unroll
                for (int u = 0; u < BT_ROUND; ++u) {
                    if (r0 + (u64)u * blockDim.x + threadIdx.x >= hi) continue;
                    const K key = order_key(v[u], mode);
                    nans += is_nan_value(v[u]) ? 1u : 0u;
                    for (u32 j = 0; j < ng; ++j)
                        if ((key & mask) == prefix[j]) atomicAdd(&local[j + own][(u32)(key >> shift) & 255u], 1u);
                }
            }
            if (HasNan<T>::value && g == 0 && shift + 8 == (u32)bits) {
                nans = __reduce_add_sync(FULL_MASK, nans);
                if ((threadIdx.x & 31) == 0 && nans) atomicAdd(&nan_counts[s], (u64)nans);
            }
            __syncthreads();
            for (u32 i = threadIdx.x; i < 256 * ng; i += blockDim.x) {
                u32 c = local[i / 256][i % 256];
                if (per_warp)
                    for (u32 copy = 1; copy < 8; ++copy) c += local[copy][i];
                if (c) atomicAdd(&hist[(q0 + g + i / 256) * 256 + i % 256], c);
                if (tile_hist && i < 256) tile_hist[t * 256 + i] = c;
            }
            __syncthreads();
        }
    }
    if (done) {
        __shared__ bool last;
        __threadfence();
        __syncthreads();
        if (threadIdx.x == 0) last = atomicAdd(done, 1u) == gridDim.x - 1;
        __syncthreads();
        if (last) {
            __threadfence();
            bt_choose_queries(state, hist, 0, nq_total, 1, shift);
            if (threadIdx.x == 0) *done = 0;
        }
    }
}

// Each span's NaNs (for selections of no rank, which still apply the NaN policy).
template <typename T>
__device__ void bt_nan_counts_impl(const T* __restrict__ x, const u64* offsets, u64 cols, u64 stride, u64 nspans,
                                   const u64* __restrict__ tile_first, u64* nan_counts) {
    const u64 tiles = tile_first[nspans];
    for (u64 t = blockIdx.x; t < tiles; t += gridDim.x) {
        const u64 s = span_of_tile(tile_first, nspans, t);
        u64 start, len;
        span_of(offsets, cols, stride, s, start, len);
        const u64 lo = (t - tile_first[s]) * BT_TILE;
        const u64 hi = min(len, lo + BT_TILE);
        u32 nans = 0;
        for (u64 i = lo + threadIdx.x; i < hi; i += blockDim.x) nans += is_nan_value(x[start + i]) ? 1u : 0u;
        nans = __reduce_add_sync(FULL_MASK, nans);
        if ((threadIdx.x & 31) == 0 && nans) atomicAdd(&nan_counts[s], (u64)nans);
    }
}


// V (16 bytes' worth) values at offset o of a tile of n values starting at q (16-byte aligned
// when `aligned`); zeros past the end.
template <typename T>
__device__ __forceinline__ void bt_load_at(const T* q, u32 o, u32 n, bool aligned, T (&v)[16 / sizeof(T)]) {
    const int V = 16 / (int)sizeof(T);
    if (aligned && o + V <= n) {
        load16(q + o, v);
    } else {
#pragma unroll
        for (int j = 0; j < V; ++j) v[j] = o + j < n ? q[o + j] : (T)0;
    }
}

// Per tile: the keys below the span's k-th key and those equal to it, packed (high, low).
template <typename T>
__device__ void bt_tile_counts_impl(const T* __restrict__ x, const u64* offsets, u64 cols, u64 stride,
                                    u64 nspans, const u64* __restrict__ tile_first, u32 mode,
                                    const u64* __restrict__ state, u64* tile_counts, u32 parts) {
    typedef typename KeyOf<T>::type K;
    const int V = 16 / (int)sizeof(T);
    __shared__ u64 scratch[32];
    const u64 tiles = tile_first[nspans];
    for (u64 w = blockIdx.x; w < tiles * parts; w += gridDim.x) {
        const u64 t = w / parts;
        const u64 s = span_of_tile(tile_first, nspans, t);
        u64 start, len;
        span_of(offsets, cols, stride, s, start, len);
        const K kth = (K)state[s * BT_STATE];
        u64 lo, hi;
        part_of_tile(t - tile_first[s], (u32)(w % parts), parts, len, lo, hi);
        const T* q = x + start + lo;
        const u32 n = (u32)(hi - lo);
        const bool aligned = ((size_t)q & 15) == 0;
        u64 packed = 0;
        for (u32 b0 = 0; b0 < n; b0 += (u32)(BT_WINDOW_VECS * V) * blockDim.x) {
            T v[BT_WINDOW_VECS][16 / sizeof(T)];
#pragma unroll
            for (int g = 0; g < BT_WINDOW_VECS; ++g)
                bt_load_at(q, b0 + ((u32)g * blockDim.x + threadIdx.x) * V, n, aligned, v[g]);
#pragma unroll
            for (int g = 0; g < BT_WINDOW_VECS; ++g) {
                const u32 o = b0 + ((u32)g * blockDim.x + threadIdx.x) * V;
#pragma unroll
                for (int j = 0; j < V; ++j) {
                    const K key = order_key(v[g][j], mode);
                    if (o + j < n) packed += key < kth ? (1ull << 32) : (key == kth ? 1ull : 0ull);
                }
            }
        }
        u64 total;
        bt_exclusive_sum(packed, scratch, &total);
        if (threadIdx.x == 0) tile_counts[w] = total;
    }
}

// One block a span: the counts of its tiles' parts turned into exclusive prefixes (below,
// equal) within it.
__device__ void bt_tile_scan_impl(const u64* tile_first, u64 nspans, u64* tile_counts, u32 parts) {
    __shared__ u64 scratch[32];
    __shared__ u64 carry;
    for (u64 s = blockIdx.x; s < nspans; s += gridDim.x) {
        if (threadIdx.x == 0) carry = 0;
        __syncthreads();
        const u64 first = tile_first[s] * parts, end = tile_first[s + 1] * parts;
        for (u64 t0 = first; t0 < end; t0 += blockDim.x) {
            const u64 t = t0 + threadIdx.x;
            const u64 v = t < end ? tile_counts[t] : 0;
            u64 total;
            const u64 before = bt_exclusive_sum(v, scratch, &total);
            if (t < end) tile_counts[t] = carry + before;
            __syncthreads();
            if (threadIdx.x == 0) carry += total;
            __syncthreads();
        }
    }
}

// Per tile, in rounds of V values a thread (16 bytes, consecutive): each kept value's place
// from the tile's prefix and a block scan of the round (skipped when the round keeps nothing).
template <typename T>
__device__ void bt_compact_long_impl(const T* __restrict__ x, const u64* offsets, u64 cols, u64 stride,
                                     u64 nspans, const u64* __restrict__ tile_first, u32 mode,
                                     const u64* __restrict__ state, const u64* __restrict__ tile_counts, u64 k,
                                     T* out_values, u64* out_idx, u32 parts) {
    typedef typename KeyOf<T>::type K;
    const int V = 16 / (int)sizeof(T);
    __shared__ u64 scratch[32];
    const u64 tiles = tile_first[nspans];
    for (u64 w = blockIdx.x; w < tiles * parts; w += gridDim.x) {
        const u64 t = w / parts;
        const u64 s = span_of_tile(tile_first, nspans, t);
        u64 start, len;
        span_of(offsets, cols, stride, s, start, len);
        const K kth = (K)state[s * BT_STATE];
        const u64 take = state[s * BT_STATE + 1] + 1;
        u64 lo, hi;
        part_of_tile(t - tile_first[s], (u32)(w % parts), parts, len, lo, hi);
        const T* q = x + start + lo;
        const u32 n = (u32)(hi - lo);
        const bool aligned = ((size_t)q & 15) == 0;
        u64 b = tile_counts[w] >> 32, e = tile_counts[w] & 0xffffffffull;
        const int G = BT_WINDOW_VECS;
        for (u32 r0 = 0; r0 < n; r0 += (u32)(G * V) * blockDim.x) {
            // A thread's run: G vectors of consecutive values, so that runs in thread order are
            // in index order.
            const u32 o = r0 + (u32)(G * V) * threadIdx.x;
            T v[BT_WINDOW_VECS][16 / sizeof(T)];
#pragma unroll
            for (int g = 0; g < G; ++g) bt_load_at(q, o + (u32)(g * V), n, aligned, v[g]);
            u32 below = 0, equal = 0;
#pragma unroll
            for (int g = 0; g < G; ++g) {
#pragma unroll
                for (int j = 0; j < V; ++j) {
                    const K key = order_key(v[g][j], mode);
                    const bool valid = o + (u32)(g * V + j) < n;
                    below |= (valid && key < kth ? 1u : 0u) << (g * V + j);
                    equal |= (valid && key == kth ? 1u : 0u) << (g * V + j);
                }
            }
            if (!__syncthreads_or(below | equal)) continue;
            u64 total;
            const u64 packed = bt_exclusive_sum(((u64)__popc(below) << 32) | (u64)__popc(equal), scratch, &total);
            u64 mb = b + (packed >> 32), me = e + (packed & 0xffffffffull);
#pragma unroll
            for (int g = 0; g < G; ++g) {
#pragma unroll
                for (int j = 0; j < V; ++j) {
                    const bool is_below = (below >> (g * V + j)) & 1u, is_equal = (equal >> (g * V + j)) & 1u;
                    if (is_below || (is_equal && me < take)) {
                        const u64 at = s * k + mb + (me < take ? me : take);
                        out_values[at] = v[g][j];
                        out_idx[at] = lo + o + (u32)(g * V + j);
                    }
                    mb += is_below ? 1 : 0;
                    me += is_equal ? 1 : 0;
                }
            }
            b += total >> 32;
            e += total & 0xffffffffull;
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Long spans, filtered: after each digit pass (which also keeps each tile's histogram) the
// tiles count what a filter would keep; once that is few enough, the values whose digits so
// far are at most (top-k) or equal to (selection) the chosen ones are copied, in index order,
// as (order key, index in span) pairs, and the rest of the work runs on them.

// Per tile after the digit at `shift` (one warp a tile): how many of its values a filter now
// would keep — those whose digits so far equal the chosen ones (equal_only), or are at most
// them — in tile_counts; `below` (zero before the first digit) carries the values whose digits
// so far are below the chosen ones, updated for the next digit.
__device__ void bt_filter_counts_impl(const u64* tile_first, u64 nspans, const u32* tile_hist, const u64* state,
                                      u32 shift, u32 equal_only, u64* below, u64* tile_counts) {
    const u64 tiles = tile_first[nspans];
    const u32 lane = threadIdx.x & 31;
    const u64 warps = (u64)gridDim.x * (blockDim.x >> 5);
    for (u64 t = (u64)blockIdx.x * (blockDim.x >> 5) + (threadIdx.x >> 5); t < tiles; t += warps) {
        const u64 s = span_of_tile(tile_first, nspans, t);
        const u32 digit = (u32)(state[s * BT_STATE] >> shift) & 255u;
        u32 less = 0, equal = 0;
        for (u32 b = lane; b < 256; b += 32) {
            const u32 c = tile_hist[t * 256 + b];
            less += b < digit ? c : 0u;
            equal += b == digit ? c : 0u;
        }
        less = __reduce_add_sync(FULL_MASK, less);
        equal = __reduce_add_sync(FULL_MASK, equal);
        if (lane == 0) {
            const u64 before = below[t];
            tile_counts[t] = equal_only ? (u64)equal : before + less + equal;
            below[t] = before + less;
        }
    }
}

// Per tile, in rounds of blockDim values: the kept values' (key, index) pairs at the tile's
// place (tile_counts holds the exclusive prefixes over all tiles).
template <typename T>
__device__ void bt_filter_impl(const T* __restrict__ x, const u64* offsets, u64 cols, u64 stride, u64 nspans,
                               const u64* __restrict__ tile_first, u32 mode, const u64* __restrict__ state,
                               u32 shift, u32 equal_only, const u64* __restrict__ tile_counts,
                               typename KeyOf<T>::type* ckeys, u32* cidx) {
    typedef typename KeyOf<T>::type K;
    __shared__ u32 round_counts[BT_ROUND * (BT_THREADS / 32)];
    __shared__ u32 round_total;
    const u64 tiles = tile_first[nspans];
    for (u64 t = blockIdx.x; t < tiles; t += gridDim.x) {
        const u64 s = span_of_tile(tile_first, nspans, t);
        u64 start, len;
        span_of(offsets, cols, stride, s, start, len);
        // The digits chosen so far, from the top down to `shift`.
        const K chosen = (K)(state[s * BT_STATE] >> shift);
        const u64 lo = (t - tile_first[s]) * BT_TILE;
        const u64 hi = min(len, lo + BT_TILE);
        u64 at = tile_counts[t];
        // Rounds of BT_ROUND values a thread (coalesced: value j of a thread is j blocks on);
        // kept values take their places in index order: a ballot per warp and value, the
        // (value, warp) counts scanned by warp 0.
        const u32 lane = threadIdx.x & 31, warp = threadIdx.x >> 5, warps = blockDim.x >> 5;
        for (u64 r0 = lo; r0 < hi; r0 += (u64)BT_ROUND * blockDim.x) {
            K key[BT_ROUND];
            bool keep[BT_ROUND];
            bool any = false;
#pragma unroll
            for (int j = 0; j < BT_ROUND; ++j) {
                const u64 i = r0 + (u64)j * blockDim.x + threadIdx.x;
                key[j] = i < hi ? order_key(x[start + i], mode) : (K)0;
                const K high = (K)(key[j] >> shift);
                keep[j] = i < hi && (high == chosen || (!equal_only && high < chosen));
                any |= keep[j];
            }
            if (!__syncthreads_or(any)) continue;
            u32 votes[BT_ROUND];
#pragma unroll
            for (int j = 0; j < BT_ROUND; ++j) {
                votes[j] = __ballot_sync(FULL_MASK, keep[j]);
                if (lane == 0) round_counts[j * warps + warp] = __popc(votes[j]);
            }
            __syncthreads();
            if (warp == 0) {
                // Exclusive scan of the (value, warp) counts in index order.
                u32 carry = 0;
                for (u32 c0 = 0; c0 < BT_ROUND * warps; c0 += 32) {
                    const u32 c = c0 + lane < BT_ROUND * warps ? round_counts[c0 + lane] : 0;
                    u32 inc = warp::inclusive_sum(c);
                    if (c0 + lane < BT_ROUND * warps) round_counts[c0 + lane] = carry + inc - c;
                    carry += __shfl_sync(FULL_MASK, inc, 31);
                }
                if (lane == 0) round_total = carry;
            }
            __syncthreads();
#pragma unroll
            for (int j = 0; j < BT_ROUND; ++j) {
                if (keep[j]) {
                    const u64 place = at + round_counts[j * warps + warp] + __popc(votes[j] & lanemask_lt());
                    ckeys[place] = key[j];
                    cidx[place] = (u32)(r0 + (u64)j * blockDim.x + threadIdx.x);
                }
            }
            at += round_total;
            __syncthreads();
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Long spans, sampled: a sample of each span's order keys brackets the wanted rank between two
// of the sample's order statistics; one pass over the data counts each span's keys below the
// bracket and copies the keys inside it (with their indices) to the span's region; the rest
// runs on those few. The host checks that the rank fell inside every bracket and that no
// region overflowed, and otherwise runs the exact digit passes.

// Consecutive values a sample chunk takes (one 32-byte sector of 32-bit values).
#define BT_CHUNK 8

// m sample keys a span (m a multiple of BT_CHUNK, m <= len): m / BT_CHUNK evenly spaced chunks
// of consecutive values.
template <typename T>
__device__ void bt_sample_impl(const T* __restrict__ x, const u64* offsets, u64 cols, u64 stride, u64 nspans,
                               u32 m, u32 mode, typename KeyOf<T>::type* samples) {
    const u64 chunks = m / BT_CHUNK;
    for (u64 i = (u64)blockIdx.x * blockDim.x + threadIdx.x; i < nspans * m; i += (u64)gridDim.x * blockDim.x) {
        const u64 s = i / m, j = i % m;
        u64 start, len;
        span_of(offsets, cols, stride, s, start, len);
        samples[i] = order_key(x[start + (j / BT_CHUNK) * (len / chunks) + j % BT_CHUNK], mode);
    }
}

// One block a span: the sample keys of ranks brackets[2s] (the lower bound) and
// brackets[2s + 1] (the upper one), by radix selection in shared memory (m keys). A rank of
// BT_NO_BOUND leaves that side open: the smallest key below, the largest above.
#define BT_NO_BOUND 0xffffffffu
// Threads a block of bt_sample_bounds (BOUNDS_THREADS on the host): a block is alone on its
// multiprocessor, so more threads hide more of the shared memory's latency.
#define BT_BOUNDS_THREADS 1024
template <typename K>
__device__ void bt_sample_bounds_impl(const K* __restrict__ samples, u64 nspans, u32 m,
                                      const u32* __restrict__ brackets, K* bounds) {
    extern __shared__ __align__(16) unsigned char bt_dyn[];
    K* keys = reinterpret_cast<K*>(bt_dyn);
    __shared__ u32 hist[256];
    __shared__ u64 pick[2];
    for (u64 s = blockIdx.x; s < nspans; s += gridDim.x) {
        for (u32 i = threadIdx.x; i < m; i += blockDim.x) keys[i] = samples[s * m + i];
        __syncthreads();
        for (u32 b = 0; b < 2; ++b) {
            const u32 j = brackets[2 * s + b];
            K key = b == 0 ? (K)0 : (K)~(K)0;
            if (j != BT_NO_BOUND) {
                u64 take;
                key = bt_block_select(keys, m, j, hist, pick, &take);
            }
            if (threadIdx.x == 0) bounds[2 * s + b] = key;
        }
        __syncthreads();
    }
}

// One round of bt_window for a thread: its BT_WINDOW_VECS 16-byte loads of the tile at q (n
// values, from b0), the keys below lo_key and the NaNs counted, and keep[i] for the values inside
// [lo_key, lo_key + width] (none when `none`: an empty bracket) with item[i] their offset in the
// span (first: the tile's). FULL: the round lies inside the tile and the tile is 16-byte aligned,
// so no load or value needs a bound check.
template <bool FULL, typename T>
__device__ __forceinline__ void bt_window_round(const T* q, u32 b0, u32 n, bool aligned, u32 first, u32 mode,
                                                typename KeyOf<T>::type lo_key, typename KeyOf<T>::type width,
                                                bool none, u32& below, u32& nans,
                                                u32 (&item)[BT_WINDOW_VECS * (16 / sizeof(T))],
                                                bool (&keep)[BT_WINDOW_VECS * (16 / sizeof(T))]) {
    typedef typename KeyOf<T>::type K;
    const int V = 16 / (int)sizeof(T), G = BT_WINDOW_VECS;
    T v[BT_WINDOW_VECS][16 / sizeof(T)];
#pragma unroll
    for (int g = 0; g < G; ++g) {
        const u32 o = b0 + ((u32)g * blockDim.x + threadIdx.x) * V;
        if (FULL) {
            load16(q + o, v[g]);
        } else {
            bt_load_at(q, o, n, aligned, v[g]);
        }
    }
#pragma unroll
    for (int g = 0; g < G; ++g) {
        const u32 o = b0 + ((u32)g * blockDim.x + threadIdx.x) * V;
#pragma unroll
        for (int j = 0; j < V; ++j) {
            const bool valid = FULL || o + j < n;
            const K key = order_key(v[g][j], mode);
            if (HasNan<T>::value) nans += valid && is_nan_value(v[g][j]) ? 1u : 0u;
            below += valid && key < lo_key ? 1u : 0u;
            keep[g * V + j] = valid && !none && (K)(key - lo_key) <= width;
            item[g * V + j] = first + o + j;
        }
    }
}

// Per tile, in rounds of BT_WINDOW_VECS 16-byte loads a thread (coalesced): the keys below the
// span's bracket are counted (counts[2s]) and those inside it appended to the span's region
// region[s]..region[s + 1] (keys, and indices when cidx is given) through each warp's stage in
// shared memory, a place reserved per stage (no block barrier); the region's count (counts[2s + 1]) goes on past its end when it overflows,
// the copy stops. Also each span's NaNs.
template <typename T>
__device__ void bt_window_impl(const T* __restrict__ x, const u64* offsets, u64 cols, u64 stride, u64 nspans,
                               const u64* __restrict__ tile_first, u32 mode,
                               const typename KeyOf<T>::type* __restrict__ bounds, const u64* __restrict__ region,
                               u64* counts, u64* nan_counts, typename KeyOf<T>::type* ckeys, u32* cidx) {
    typedef typename KeyOf<T>::type K;
    const int V = 16 / (int)sizeof(T), G = BT_WINDOW_VECS;
    const int STAGE = WARP_SIZE * G * V;
    __shared__ u32 stages[BT_THREADS / WARP_SIZE][STAGE];
    u32* stage = stages[threadIdx.x / WARP_SIZE];
    const u64 tiles = tile_first[nspans];
    for (u64 t = blockIdx.x; t < tiles; t += gridDim.x) {
        const u64 s = span_of_tile(tile_first, nspans, t);
        u64 start, len;
        span_of(offsets, cols, stride, s, start, len);
        const K lo_key = bounds[2 * s], hi_key = bounds[2 * s + 1];
        const u64 r0 = region[s], cap = region[s + 1] - r0;
        const u64 lo = (t - tile_first[s]) * BT_TILE, hi = min(len, lo + BT_TILE);
        const T* q = x + start + lo;
        const u32 n = (u32)(hi - lo);
        const bool aligned = ((size_t)q & 15) == 0;
        u32 below = 0, nans = 0, staged = 0;
        // A stage goes to the span's region: the keys (re-read from the data, still in cache)
        // and their offsets in the span; places from `cap` on are counted only.
        const auto flush = [&](u32 count) {
            warp_flush_with(count, &counts[2 * s + 1], [&](u32 i, u64 at) {
                if (at < cap) {
                    const u32 off = stage[i];
                    ckeys[r0 + at] = order_key(x[start + off], mode);
                    if (cidx) cidx[r0 + at] = off;
                }
            });
        };
        // The bracket [lo_key, hi_key] as one subtraction and one comparison a key.
        const bool none = hi_key < lo_key;
        const K width = hi_key - lo_key;
        const u32 round = (u32)(G * V) * blockDim.x;
        for (u32 b0 = 0; b0 < n; b0 += round) {
            u32 item[G * V];
            bool keep[G * V];
            if (aligned && b0 + round <= n) {
                bt_window_round<true>(q, b0, n, aligned, (u32)lo, mode, lo_key, width, none, below, nans, item, keep);
            } else {
                bt_window_round<false>(q, b0, n, aligned, (u32)lo, mode, lo_key, width, none, below, nans, item, keep);
            }
            warp_stage_append_with<u32, G * V, STAGE>(stage, staged, item, keep, flush);
        }
        flush(staged);
        below = __reduce_add_sync(FULL_MASK, below);
        if ((threadIdx.x & 31) == 0 && below) atomicAdd(&counts[2 * s], (u64)below);
        if (HasNan<T>::value) {
            nans = __reduce_add_sync(FULL_MASK, nans);
            if ((threadIdx.x & 31) == 0 && nans) atomicAdd(&nan_counts[s], (u64)nans);
        }
    }
}

// The window pass of one span with its keys copied in index order (`bt_window_ordered`): each
// block takes tiles in order by a ticket, counts the tile's keys inside the bracket, publishes
// the count in the tile's status word at once, adds its predecessors' published counts back to
// the first running total (each tile publishes its own after), and writes the tile's (key,
// offset) pairs at that total plus their rank in the tile: the copy is in index order with no
// sort. A thread holds BT_ORDER_VECS 16-byte loads of consecutive values a round; index order
// in a tile is (round, thread, value).
#define BT_ORDER_ROUNDS 4
#define BT_ORDER_VECS 2
#define BT_ORDER_TILE_BYTES (BT_THREADS * BT_ORDER_ROUNDS * BT_ORDER_VECS * 16)
// A status word: its tile's count, or the running total through it, in the low 62 bits.
#define BT_STATUS_COUNT (1ull << 62)
#define BT_STATUS_TOTAL (2ull << 62)
#define BT_STATUS_VALUE ((1ull << 62) - 1)

// The sum of the counts of the tiles before tile t, by warp 0 (the others get 0): it looks back
// over their status words until one holds a running total, then publishes tile t's own (its
// count `count` published before).
__device__ __forceinline__ u64 bt_tiles_before(u64* status, u64 t, u64 count) {
    const u32 lane = threadIdx.x & 31;
    u64 sum = 0;
    if (t == 0) return 0;
    for (u64 look = t;;) {
        // Lane l reads tile look - 1 - l; a tile not yet counted is read again.
        const bool real = look > lane;
        u64 word;
        do {
            word = real ? *(volatile u64*)&status[look - 1 - lane] : BT_STATUS_TOTAL;
        } while (__any_sync(FULL_MASK, (word >> 62) == 0));
        const u32 totals = __ballot_sync(FULL_MASK, real && (word & BT_STATUS_TOTAL) != 0);
        const u32 stop = totals ? (u32)__ffs(totals) - 1 : 31;
        const u64 part = warp::inclusive_sum<u64>(real && lane <= stop ? word & BT_STATUS_VALUE : 0);
        sum += __shfl_sync(FULL_MASK, part, 31);
        if (totals || look <= 32) break;
        look -= 32;
    }
    if (lane == 0) *(volatile u64*)&status[t] = BT_STATUS_TOTAL | (sum + count);
    return sum;
}

template <typename T>
__device__ void bt_window_ordered_impl(const T* __restrict__ x, const u64* offsets, u64 cols, u64 stride,
                                       u32 mode, const typename KeyOf<T>::type* __restrict__ bounds, u64 cap,
                                       u64* counts, u64* nan_counts, typename KeyOf<T>::type* ckeys, u32* cidx,
                                       u64* status, u32* ticket, u64 given_tiles) {
    typedef typename KeyOf<T>::type K;
    constexpr int V = 16 / (int)sizeof(T), E = BT_ORDER_VECS * V, R = BT_ORDER_ROUNDS;
    static_assert(R * E <= 32, "a thread's values of a tile are the bits of one word");
    const u32 tile_len = BT_ORDER_TILE_BYTES / sizeof(T);
    __shared__ u64 warp_sums[BT_THREADS / WARP_SIZE];
    // The block's tile, and where its keys go (apart: a thread may still read the second when
    // thread 0 takes the next tile).
    __shared__ u64 tile_word, base_word;
    const u32 lane = threadIdx.x & 31, warp = threadIdx.x / WARP_SIZE;
    u64 start, len;
    span_of(offsets, cols, stride, 0, start, len);
    // The launcher checked `status` against `given_tiles`: never past it.
    const u64 tiles = min(given_tiles, (len + tile_len - 1) / tile_len);
    const K lo_key = bounds[0], hi_key = bounds[1];
    const bool aligned = ((size_t)(x + start) & 15) == 0;
    u32 below = 0, nans = 0;
    u64 inside = 0;
    for (;;) {
        if (threadIdx.x == 0) tile_word = atomicAdd(ticket, 1u);
        __syncthreads();
        const u64 t = tile_word;
        if (t >= tiles) break;
        const T* q = x + start + t * tile_len;
        const u32 n = (u32)min((u64)tile_len, len - t * tile_len);
        // Bit r E + e: the thread's value e of round r is inside the bracket. The values are
        // not kept in registers past the count: those inside are read again (from the cache)
        // once the tile's place is known.
        u32 keep = 0;
        u64 packed = 0;  // the round's count in bits 16 r: at most E BT_THREADS a round
#pragma unroll
        for (int r = 0; r < R; ++r) {
            const u32 o = ((u32)r * BT_THREADS + threadIdx.x) * E;
            T v[BT_ORDER_VECS][16 / sizeof(T)];
#pragma unroll
            for (int p = 0; p < BT_ORDER_VECS; ++p) bt_load_at(q, o + (u32)p * V, n, aligned, v[p]);
            u32 c = 0;
#pragma unroll
            for (int e = 0; e < E; ++e) {
                const T value = v[e / V][e % V];
                const bool valid = o + e < n;
                const K key = order_key(value, mode);
                if (HasNan<T>::value) nans += valid && is_nan_value(value) ? 1u : 0u;
                below += valid && key < lo_key ? 1u : 0u;
                const bool in = valid && key >= lo_key && key <= hi_key;
                keep |= (u32)in << (r * E + e);
                c += in ? 1u : 0u;
            }
            packed += (u64)c << (16 * r);
        }
        const u64 incl = warp::inclusive_sum<u64>(packed);
        if (lane == 31) warp_sums[warp] = incl;
        __syncthreads();
        u64 before_warp = 0, fields = 0;
        for (u32 w = 0; w < BT_THREADS / WARP_SIZE; ++w) {
            if (w < warp) before_warp += warp_sums[w];
            fields += warp_sums[w];
        }
        const u64 exclusive = before_warp + incl - packed;
        u64 count = 0;
#pragma unroll
        for (int r = 0; r < R; ++r) count += (fields >> (16 * r)) & 0xffff;
        inside += count;
        if (warp == 0) {
            if (lane == 0) *(volatile u64*)&status[t] = (t == 0 ? BT_STATUS_TOTAL : BT_STATUS_COUNT) | count;
            const u64 sum = bt_tiles_before(status, t, count);
            if (lane == 0) base_word = sum;
        }
        __syncthreads();
        // The thread's values inside, in index order (round, then value): each round's place
        // is the tile's, plus the rounds before it, plus the threads before this one.
        const u64 base = base_word;
        int round = -1;
        u64 at = 0;
        for (u32 bits = keep; bits; bits &= bits - 1) {
            const int b = __ffs(bits) - 1, r = b / E, e = b % E;
            if (r != round) {
                round = r;
                at = base + ((exclusive >> (16 * r)) & 0xffff);
                for (int before = 0; before < r; ++before) at += (fields >> (16 * before)) & 0xffff;
            }
            const u32 o = ((u32)r * BT_THREADS + threadIdx.x) * E + (u32)e;
            if (at < cap) {
                ckeys[at] = order_key(q[o], mode);
                cidx[at] = (u32)(t * tile_len + o);
            }
            ++at;
        }
    }
    below = __reduce_add_sync(FULL_MASK, below);
    if (lane == 0 && below) atomicAdd(&counts[0], (u64)below);
    if (threadIdx.x == 0 && inside) atomicAdd(&counts[1], inside);
    if (HasNan<T>::value) {
        nans = __reduce_add_sync(FULL_MASK, nans);
        if (lane == 0 && nans) atomicAdd(&nan_counts[0], (u64)nans);
    }
}

// The regions' entries packed one after another (span s's at first[s]..first[s + 1], at most
// its region's size).
template <typename K>
__device__ void bt_gather_window_impl(const K* __restrict__ ckeys, const u64* __restrict__ region,
                                      const u64* __restrict__ first, u64 nspans, K* out) {
    const u64 total = first[nspans];
    for (u64 i = (u64)blockIdx.x * blockDim.x + threadIdx.x; i < total; i += (u64)gridDim.x * blockDim.x) {
        const u64 s = span_of_tile(first, nspans, i);
        out[i] = ckeys[region[s] + i - first[s]];
    }
}

// Sorts p (a power of two) words ascending in shared memory.
__device__ void bt_bitonic_words(u64* w, u32 p) { bitonic::sort(w, p); }

// One block a span, 32-bit keys: the k first of the span's candidates (all keys up to the
// bracket's top, with their indices), as (key << 32 | index) words in shared memory — distinct,
// so the k-th word by radix selection splits them exactly — sorted by (key, index) or by
// index; values read from x. Dynamic shared memory: the largest region's words, then pow2(k).
template <typename T>
__device__ void bt_topk_window_impl(const T* __restrict__ x, const u64* offsets, u64 cols, u64 stride, u64 nspans,
                                    const u64* __restrict__ region, const u64* __restrict__ counts, u64 max_region,
                                    const u32* __restrict__ ckeys, const u32* __restrict__ cidx, u64 k, u32 sorted,
                                    T* out_values, u64* out_idx) {
    extern __shared__ __align__(16) unsigned char bt_dyn[];
    u64* words = reinterpret_cast<u64*>(bt_dyn);
    u64* chosen = words + max_region;
    __shared__ u32 hist[256];
    __shared__ u64 pick[2];
    __shared__ u32 taken;
    const u32 p = bt_pow2((u32)k);
    for (u64 s = blockIdx.x; s < nspans; s += gridDim.x) {
        const u64 r0 = region[s];
        const u32 c = (u32)min(counts[2 * s + 1], region[s + 1] - r0);
        for (u32 i = threadIdx.x; i < c; i += blockDim.x) words[i] = ((u64)ckeys[r0 + i] << 32) | cidx[r0 + i];
        if (threadIdx.x == 0) taken = 0;
        for (u32 i = (u32)k + threadIdx.x; i < p; i += blockDim.x) chosen[i] = ~0ull;
        __syncthreads();
        u64 take;
        const u64 kth = bt_block_select(words, c, k - 1, hist, pick, &take);
        for (u32 i = threadIdx.x; i < c; i += blockDim.x) {
            const u64 w = words[i];
            if (w <= kth) chosen[atomicAdd(&taken, 1u)] = sorted ? w : (w << 32) | (w >> 32);
        }
        __syncthreads();
        bt_bitonic_words(chosen, p);
        u64 start, len;
        span_of(offsets, cols, stride, s, start, len);
        for (u32 i = threadIdx.x; i < k; i += blockDim.x) {
            const u64 w = chosen[i];
            const u32 at = sorted ? (u32)w : (u32)(w >> 32);
            out_idx[s * k + i] = at;
            out_values[s * k + i] = x[start + at];
        }
        __syncthreads();
    }
}

// Per span, how many of its packed candidates lie below its selected key (`kth[s]`).
template <typename K>
__device__ void bt_count_below_impl(const K* __restrict__ keys, const u64* __restrict__ first, u64 nspans,
                                    const u64* __restrict__ kth, u64* below) {
    const u64 total = first[nspans];
    for (u64 i = (u64)blockIdx.x * blockDim.x + threadIdx.x; i < total; i += (u64)gridDim.x * blockDim.x) {
        const u64 s = span_of_tile(first, nspans, i);
        const bool is_below = (u64)keys[i] < kth[s];
        // One atomic a span a warp: the lanes of one span add their count through the lowest.
        const u32 active = __activemask();
        const u32 peers = __match_any_sync(active, s);
        const u32 n = __popc(__ballot_sync(active, is_below) & peers);
        if (n && (threadIdx.x & 31) == (u32)(__ffs(peers) - 1)) atomicAdd(&below[s], (u64)n);
    }
}

// Results on candidates mapped back: the candidate positions the inner top-k returned become
// the spans' indices, and the values are read from x.
template <typename T>
__device__ void bt_map_results_impl(const T* __restrict__ x, const u64* offsets, u64 cols, u64 stride, u64 k,
                                    u64 total, const u64* __restrict__ cand_first, const u32* __restrict__ cidx,
                                    const u64* __restrict__ positions, T* out_values, u64* out_idx) {
    for (u64 i = (u64)blockIdx.x * blockDim.x + threadIdx.x; i < total; i += (u64)gridDim.x * blockDim.x) {
        const u64 s = i / k;
        u64 start, len;
        span_of(offsets, cols, stride, s, start, len);
        const u64 at = cidx[cand_first[s] + positions[i]];
        out_idx[i] = at;
        out_values[i] = x[start + at];
    }
}

// Order keys of results (for the sort of many results), with the span above them when it
// fits: key64[i] = (span << 32) | order key for 32-bit keys (with_span), the key otherwise.
template <typename T>
__device__ void bt_result_keys_impl(const T* values, u64 total, u64 k, u32 mode, u32 with_span, u64* key64) {
    for (u64 i = (u64)blockIdx.x * blockDim.x + threadIdx.x; i < total; i += (u64)gridDim.x * blockDim.x) {
        const u64 key = (u64)order_key(values[i], mode);
        key64[i] = with_span ? (((i / k) << 32) | key) : key;
    }
}

// out[i] = in[perm[i]] for values and indices (the sorted results' gather).
template <typename T>
__device__ void bt_permute_impl(const T* values, const u64* idx, const u32* perm, u64 total, T* out_values,
                                u64* out_idx) {
    for (u64 i = (u64)blockIdx.x * blockDim.x + threadIdx.x; i < total; i += (u64)gridDim.x * blockDim.x) {
        const u32 p = perm[i];
        out_values[i] = values[p];
        out_idx[i] = idx[p];
    }
}

// One block a span: its k results (by index) sorted by (order key, index); k <= BT_SHORT.
template <typename T>
__device__ void bt_sort_small_impl(u64 nspans, u64 k, u32 mode, T* out_values, u64* out_idx) {
    typedef typename KeyOf<T>::type K;
    extern __shared__ __align__(16) unsigned char bt_dyn[];
    K* keys = reinterpret_cast<K*>(bt_dyn);
    for (u64 s = blockIdx.x; s < nspans; s += gridDim.x) bt_sort_results<T>(s, k, mode, keys, out_values, out_idx);
}

// The span of each sorted result: out[i] = perm[i] / k.
__device__ void bt_span_ids_impl(const u32* perm, u64 total, u64 k, u32* out) {
    for (u64 i = (u64)blockIdx.x * blockDim.x + threadIdx.x; i < total; i += (u64)gridDim.x * blockDim.x)
        out[i] = (u32)(perm[i] / k);
}

// x[idx[i]] = values[i]: the kept entries written back after the zeroing.
template <typename T>
__device__ void bt_scatter_impl(const T* values, const u64* idx, u64 total, T* x) {
    for (u64 i = (u64)blockIdx.x * blockDim.x + threadIdx.x; i < total; i += (u64)gridDim.x * blockDim.x)
        x[idx[i]] = values[i];
}

// Sorted results of many spans, one block a span (BT_SEG_THREADS threads): a stable LSD radix
// sort of the span's k (order key, place) pairs by 8-bit digits in global scratch (`keys`,
// `places`: two buffers of nspans * k each, `a` and `b`), then the results gathered in order.
// Each warp owns a contiguous chunk of the span: it counts its chunk's digits, the block scans
// the counts (digit-major, warp-minor) into each warp's first place per digit, and the warp
// walks its chunk again in order, placing lanes of equal digit by their rank among the lanes
// below — so equal keys keep their order (by index, as the results come). A digit that every
// key of the span shares is skipped.
#define BT_SEG_THREADS 512
#define BT_SEG_WARPS (BT_SEG_THREADS / 32)

// Groups of 32 keys a warp counts at once (loads in flight), and a warp's groups in a tile.
#define BT_SEG_GROUPS 8
#define BT_SEG_TILE_GROUPS 4
#define BT_SEG_TILE (BT_SEG_THREADS * BT_SEG_TILE_GROUPS)

// The sum of the digit counts below `digit`: where the digit's run starts.
__device__ __forceinline__ u32 bt_count_before(const u32* counts, u32 digit) {
    u32 start = 0;
    for (u32 d = 0; d < digit; ++d) start += counts[d];
    return start;
}

// Shared memory of a span's sort: per-warp digit counts, the tile's digit counts and starts, the
// span's next place per digit, the tile's keys and places in digit order.
template <typename K> struct SegShared {
    u32 hist[BT_SEG_WARPS][256];
    u32 tile_count[256];
    u32 tile_start[256];
    u32 next[256];
    u32 skip;
    K keys[BT_SEG_TILE];
    u32 places[BT_SEG_TILE];
};

// One digit of a span's sort, from (keys_in, places_in) to (keys_out, places_out): the span's
// digit counts (false in `sh.skip` unless one digit holds every key: the pass is then skipped),
// then tile by tile (BT_SEG_TILE pairs, warp w taking the tile's w-th run of 32 *
// BT_SEG_TILE_GROUPS in order) each pair's stable place in the tile — its digit's start, the
// earlier warps' pairs of that digit, the earlier lanes' and groups' of its warp — the tile
// reordered by digit in shared memory and written out run by run (consecutive addresses).
template <typename K>
__device__ __forceinline__ void bt_seg_pass(const K* keys_in, const u32* places_in, K* keys_out, u32* places_out,
                                            u64 len, u32 shift, SegShared<K>& sh) {
    const u32 lane = threadIdx.x & 31, warp = threadIdx.x / 32;
    const u64 chunk = (len + BT_SEG_WARPS - 1) / BT_SEG_WARPS;
    const u64 lo = min(len, (u64)warp * chunk), hi = min(len, lo + chunk);
    for (u32 i = threadIdx.x; i < BT_SEG_WARPS * 256; i += BT_SEG_THREADS) sh.hist[i / 256][i % 256] = 0;
    if (threadIdx.x == 0) sh.skip = 0;
    __syncthreads();
    for (u64 at = lo; at < hi; at += 32 * BT_SEG_GROUPS) {
        u32 digit[BT_SEG_GROUPS];
#pragma unroll
        for (int g = 0; g < BT_SEG_GROUPS; ++g) {
            const u64 i = at + g * 32 + lane;
            digit[g] = i < hi ? (u32)(keys_in[i] >> shift) & 255u : 256u;
        }
#pragma unroll
        for (int g = 0; g < BT_SEG_GROUPS; ++g) {
            const u32 peers = __match_any_sync(FULL_MASK, digit[g]);
            if (digit[g] < 256u && (peers & lanemask_lt()) == 0) sh.hist[warp][digit[g]] += __popc(peers);
            __syncwarp();
        }
    }
    __syncthreads();
    if (threadIdx.x < 256) {
        u32 sum = 0;
        for (u32 w = 0; w < BT_SEG_WARPS; ++w) sum += sh.hist[w][threadIdx.x];
        sh.tile_count[threadIdx.x] = sum;
        if (sum == len) sh.skip = 1;
    }
    __syncthreads();
    if (sh.skip) return;
    if (threadIdx.x < 256) sh.next[threadIdx.x] = bt_count_before(sh.tile_count, threadIdx.x);
    for (u64 t0 = 0; t0 < len; t0 += BT_SEG_TILE) {
        const u32 n = (u32)min((u64)BT_SEG_TILE, len - t0);
        for (u32 i = threadIdx.x; i < BT_SEG_WARPS * 256; i += BT_SEG_THREADS) sh.hist[i / 256][i % 256] = 0;
        K key[BT_SEG_TILE_GROUPS];
        u32 place[BT_SEG_TILE_GROUPS], digit[BT_SEG_TILE_GROUPS], rank[BT_SEG_TILE_GROUPS];
#pragma unroll
        for (int g = 0; g < BT_SEG_TILE_GROUPS; ++g) {
            const u32 i = (warp * BT_SEG_TILE_GROUPS + g) * 32 + lane;
            key[g] = i < n ? keys_in[t0 + i] : (K)0;
            place[g] = i < n ? places_in[t0 + i] : 0u;
            digit[g] = i < n ? (u32)(key[g] >> shift) & 255u : 256u;
        }
        __syncthreads();
#pragma unroll
        for (int g = 0; g < BT_SEG_TILE_GROUPS; ++g) {
            const u32 peers = __match_any_sync(FULL_MASK, digit[g]);
            const u32 before = digit[g] < 256u ? sh.hist[warp][digit[g]] : 0u;
            rank[g] = before + __popc(peers & lanemask_lt());
            __syncwarp();
            if (digit[g] < 256u && (peers & lanemask_lt()) == 0) sh.hist[warp][digit[g]] = before + __popc(peers);
            __syncwarp();
        }
        __syncthreads();
        if (threadIdx.x < 256) {
            u32 run = 0;
            for (u32 w = 0; w < BT_SEG_WARPS; ++w) {
                const u32 c = sh.hist[w][threadIdx.x];
                sh.hist[w][threadIdx.x] = run;
                run += c;
            }
            sh.tile_count[threadIdx.x] = run;
        }
        __syncthreads();
        if (threadIdx.x < 256) sh.tile_start[threadIdx.x] = bt_count_before(sh.tile_count, threadIdx.x);
        __syncthreads();
#pragma unroll
        for (int g = 0; g < BT_SEG_TILE_GROUPS; ++g) {
            if (digit[g] < 256u) {
                const u32 at = sh.tile_start[digit[g]] + sh.hist[warp][digit[g]] + rank[g];
                sh.keys[at] = key[g];
                sh.places[at] = place[g];
            }
        }
        __syncthreads();
        for (u32 j = threadIdx.x; j < n; j += BT_SEG_THREADS) {
            const K k = sh.keys[j];
            const u32 d = (u32)(k >> shift) & 255u;
            const u32 to = sh.next[d] + (j - sh.tile_start[d]);
            keys_out[to] = k;
            places_out[to] = sh.places[j];
        }
        __syncthreads();
        if (threadIdx.x < 256) sh.next[threadIdx.x] += sh.tile_count[threadIdx.x];
        __syncthreads();
    }
}

template <typename T>
__device__ void bt_sort_spans_impl(const T* values, const u64* idx, u64 nspans, u64 k, u32 mode,
                                   typename KeyOf<T>::type* keys_a, u32* places_a,
                                   typename KeyOf<T>::type* keys_b, u32* places_b, T* out_values, u64* out_idx) {
    typedef typename KeyOf<T>::type K;
    __shared__ SegShared<K> sh;
    for (u64 s = blockIdx.x; s < nspans; s += gridDim.x) {
        const u64 base = s * k;
        K* kin = keys_a + base;
        u32* pin = places_a + base;
        K* kout = keys_b + base;
        u32* pout = places_b + base;
#pragma unroll 4
        for (u64 i = threadIdx.x; i < k; i += BT_SEG_THREADS) {
            kin[i] = order_key(values[base + i], mode);
            pin[i] = (u32)i;
        }
        __syncthreads();
        for (u32 shift = 0; shift < 8 * sizeof(K); shift += 8) {
            bt_seg_pass<K>(kin, pin, kout, pout, k, shift, sh);
            const bool skipped = sh.skip != 0;
            __syncthreads();
            if (!skipped) {
                K* kt = kin; kin = kout; kout = kt;
                u32* pt = pin; pin = pout; pout = pt;
            }
        }
#pragma unroll 4
        for (u64 i = threadIdx.x; i < k; i += BT_SEG_THREADS) {
            const u64 from = base + pin[i];
            out_values[base + i] = values[from];
            out_idx[base + i] = idx[from];
        }
        __syncthreads();
    }
}

// The threshold of hard thresholding among k index-ordered results: pass 0 takes the largest
// order key into out[0] (the entry taken last has it), pass 1 the last place holding that key,
// plus one, into out[1] (ties are taken by index, so the last of them is taken last); pass 2
// (one thread) puts that entry's key (`to_key`) in out[2], its index in out[3] and the NaN count
// nans[0] in out[4], so that the host reads all it needs in one copy.
template <typename T>
__device__ void bt_last_taken_impl(const T* values, const u64* indices, const u64* nans, u64 k, u32 mode,
                                   u32 pass, u64* out) {
    if (pass == 2) {
        if (blockIdx.x == 0 && threadIdx.x == 0) {
            // Pass 1 found pass 0's key among the values: out[1] is at least 1.
            const u64 place = out[1] - 1;
            out[2] = (u64)to_key(values[place]);
            out[3] = indices[place];
            out[4] = nans[0];
        }
        return;
    }
    __shared__ unsigned long long best;
    if (threadIdx.x == 0) best = 0;
    __syncthreads();
    unsigned long long mine = 0;
    const u64 wanted = pass ? out[0] : 0;
    for (u64 i = (u64)blockIdx.x * blockDim.x + threadIdx.x; i < k; i += (u64)gridDim.x * blockDim.x) {
        const u64 key = (u64)order_key(values[i], mode);
        if (pass == 0) mine = key > mine ? key : mine;
        else if (key == wanted) mine = i + 1;
    }
    atomicMax(&best, mine);
    __syncthreads();
    if (threadIdx.x == 0) atomicMax((unsigned long long*)&out[pass], best);
}

#define BATCH_SELECT_KERNELS(NAME, T)                                                                         \
    extern "C" __global__ void __launch_bounds__(BT_THREADS)                                                  \
        bt_select_short_##NAME(const T* x, const u64* offsets, u64 cols, u64 stride, u64 nspans,             \
                               const u64* ranks, u32 m, u32 one_per_span, T* out, u64* nan_counts) {         \
        bt_select_short_impl<T>(x, offsets, cols, stride, nspans, ranks, m, one_per_span, out, nan_counts);   \
    }                                                                                                         \
    extern "C" __global__ void __launch_bounds__(BT_THREADS)                                                  \
        bt_topk_short_##NAME(const T* x, const u64* offsets, u64 cols, u64 stride, u64 nspans, u64 room,     \
                             u64 k, u32 mode, u32 sorted, T* out_values, u64* out_idx, u64* nan_counts) {    \
        bt_topk_short_impl<T, 1>(x, offsets, cols, stride, nspans, k, mode, sorted, out_values, out_idx,      \
                                 nan_counts, room);                                                           \
    }                                                                                                         \
    extern "C" __global__ void __launch_bounds__(BT_WARP_THREADS, BT_WARP_BLOCKS(T))                          \
        bt_topk_warp_##NAME(const T* x, const u64* offsets, u64 cols, u64 stride, u64 nspans, u64 k, u32 mode, \
                            u32 sorted, T* out_values, u64* out_idx, u64* nan_counts) {                       \
        bt_topk_warp_impl<T>(x, offsets, cols, stride, nspans, k, mode, sorted, out_values, out_idx,          \
                             nan_counts);                                                                     \
    }                                                                                                         \
    extern "C" __global__ void __launch_bounds__(BT_RESIDENT_THREADS)                                         \
        bt_topk_resident_##NAME(const T* x, const u64* offsets, u64 cols, u64 stride, u64 nspans, u64 room,  \
                                u64 k, u32 mode, u32 sorted, T* out_values, u64* out_idx, u64* nan_counts) {  \
        bt_topk_short_impl<T, BT_RESIDENT_THREADS / 32>(x, offsets, cols, stride, nspans, k, mode, sorted,    \
                                                        out_values, out_idx, nan_counts, room);               \
    }                                                                                                         \
    extern "C" __global__ void __launch_bounds__(BT_THREADS)                                                  \
        bt_hist_##NAME(const T* x, const u64* offsets, u64 cols, u64 stride, u64 nspans,                     \
                       const u64* tile_first, const u64* q_first, u32 mode, u64* state, u32* hist,            \
                       u32 shift, u64* nan_counts, u32* tile_hist, u32 parts, u32* done, u64 nq) {            \
        bt_hist_impl<T>(x, offsets, cols, stride, nspans, tile_first, q_first, mode, state, hist, shift,      \
                        nan_counts, tile_hist, parts, done, nq);                                              \
    }                                                                                                         \
    extern "C" __global__ void __launch_bounds__(BT_THREADS)                                                  \
        bt_nan_counts_##NAME(const T* x, const u64* offsets, u64 cols, u64 stride, u64 nspans,               \
                             const u64* tile_first, u64* nan_counts) {                                        \
        bt_nan_counts_impl<T>(x, offsets, cols, stride, nspans, tile_first, nan_counts);                      \
    }                                                                                                         \
    extern "C" __global__ void __launch_bounds__(BT_THREADS)                                                  \
        bt_filter_##NAME(const T* x, const u64* offsets, u64 cols, u64 stride, u64 nspans,                   \
                         const u64* tile_first, u32 mode, const u64* state, u32 shift, u32 equal_only,        \
                         const u64* tile_counts, typename KeyOf<T>::type* ckeys, u32* cidx) {                 \
        bt_filter_impl<T>(x, offsets, cols, stride, nspans, tile_first, mode, state, shift, equal_only,       \
                          tile_counts, ckeys, cidx);                                                          \
    }                                                                                                         \
    extern "C" __global__ void bt_map_results_##NAME(const T* x, const u64* offsets, u64 cols, u64 stride,   \
                                                     u64 k, u64 total, const u64* cand_first,                \
                                                     const u32* cidx, const u64* positions, T* out_values,   \
                                                     u64* out_idx) {                                          \
        bt_map_results_impl<T>(x, offsets, cols, stride, k, total, cand_first, cidx, positions, out_values,   \
                               out_idx);                                                                      \
    }                                                                                                         \
    extern "C" __global__ void __launch_bounds__(BT_THREADS)                                                  \
        bt_tile_counts_##NAME(const T* x, const u64* offsets, u64 cols, u64 stride, u64 nspans,              \
                              const u64* tile_first, u32 mode, const u64* state, u64* tile_counts,            \
                              u32 parts) {                                                                    \
        bt_tile_counts_impl<T>(x, offsets, cols, stride, nspans, tile_first, mode, state, tile_counts, parts); \
    }                                                                                                         \
    extern "C" __global__ void __launch_bounds__(BT_THREADS, 4)                                               \
        bt_compact_long_##NAME(const T* x, const u64* offsets, u64 cols, u64 stride, u64 nspans,             \
                               const u64* tile_first, u32 mode, const u64* state, const u64* tile_counts,     \
                               u64 k, T* out_values, u64* out_idx, u32 parts) {                               \
        bt_compact_long_impl<T>(x, offsets, cols, stride, nspans, tile_first, mode, state, tile_counts, k,    \
                                out_values, out_idx, parts);                                                  \
    }                                                                                                         \
    extern "C" __global__ void bt_result_keys_##NAME(const T* values, u64 total, u64 k, u32 mode,            \
                                                     u32 with_span, u64* key64) {                             \
        bt_result_keys_impl<T>(values, total, k, mode, with_span, key64);                                     \
    }                                                                                                         \
    extern "C" __global__ void bt_permute_##NAME(const T* values, const u64* idx, const u32* perm, u64 total, \
                                                 T* out_values, u64* out_idx) {                               \
        bt_permute_impl<T>(values, idx, perm, total, out_values, out_idx);                                    \
    }                                                                                                         \
    extern "C" __global__ void __launch_bounds__(BT_THREADS)                                                  \
        bt_sort_small_##NAME(u64 nspans, u64 k, u32 mode, T* out_values, u64* out_idx) {                     \
        bt_sort_small_impl<T>(nspans, k, mode, out_values, out_idx);                                          \
    }                                                                                                         \
    extern "C" __global__ void bt_scatter_##NAME(const T* values, const u64* idx, u64 total, T* x) {         \
        bt_scatter_impl<T>(values, idx, total, x);                                                            \
    }                                                                                                         \
    extern "C" __global__ void __launch_bounds__(BT_SEG_THREADS, 2)                                           \
        bt_sort_spans_##NAME(const T* values, const u64* idx, u64 nspans, u64 k, u32 mode,                   \
                             typename KeyOf<T>::type* keys_a, u32* places_a, typename KeyOf<T>::type* keys_b, \
                             u32* places_b, T* out_values, u64* out_idx) {                                    \
        bt_sort_spans_impl<T>(values, idx, nspans, k, mode, keys_a, places_a, keys_b, places_b, out_values,   \
                              out_idx);                                                                       \
    }                                                                                                         \
    extern "C" __global__ void __launch_bounds__(BT_THREADS)                                                  \
        bt_last_taken_##NAME(const T* values, const u64* indices, const u64* nans, u64 k, u32 mode, u32 pass, \
                             u64* out) {                                                                      \
        bt_last_taken_impl<T>(values, indices, nans, k, mode, pass, out);                                     \
    }                                                                                                         \
    extern "C" __global__ void bt_sample_##NAME(const T* x, const u64* offsets, u64 cols, u64 stride,        \
                                                u64 nspans, u32 m, u32 mode, typename KeyOf<T>::type* samples) { \
        bt_sample_impl<T>(x, offsets, cols, stride, nspans, m, mode, samples);                                \
    }                                                                                                         \
    extern "C" __global__ void __launch_bounds__(BT_THREADS, 4)                                               \
        bt_window_##NAME(const T* x, const u64* offsets, u64 cols, u64 stride, u64 nspans,                   \
                         const u64* tile_first, u32 mode, const typename KeyOf<T>::type* bounds,              \
                         const u64* region, u64* counts, u64* nan_counts, typename KeyOf<T>::type* ckeys,     \
                         u32* cidx) {                                                                         \
        bt_window_impl<T>(x, offsets, cols, stride, nspans, tile_first, mode, bounds, region, counts,         \
                          nan_counts, ckeys, cidx);                                                           \
    }                                                                                                         \
    extern "C" __global__ void __launch_bounds__(BT_THREADS)                                                  \
        bt_window_ordered_##NAME(const T* x, const u64* offsets, u64 cols, u64 stride, u64 nspans, u32 mode,  \
                                 const typename KeyOf<T>::type* bounds, u64 cap, u64* counts, u64* nan_counts,  \
                                 typename KeyOf<T>::type* ckeys, u32* cidx, u64* status, u32* ticket,       \
                                 u64 tiles) {                                                                 \
        bt_window_ordered_impl<T>(x, offsets, cols, stride, mode, bounds, cap, counts, nan_counts, ckeys, cidx, \
                                  status, ticket, tiles);                                                     \
    }                                                                                                         \
    extern "C" __global__ void __launch_bounds__(BT_THREADS)                                                  \
        bt_topk_window_##NAME(const T* x, const u64* offsets, u64 cols, u64 stride, u64 nspans,              \
                              const u64* region, const u64* counts, u64 max_region, const u32* ckeys,         \
                              const u32* cidx, u64 k, u32 sorted, T* out_values, u64* out_idx) {              \
        bt_topk_window_impl<T>(x, offsets, cols, stride, nspans, region, counts, max_region, ckeys, cidx, k,  \
                               sorted, out_values, out_idx);                                                  \
    }
KSELECT_FOR_EACH_TYPE(BATCH_SELECT_KERNELS)

#define BATCH_SELECT_KEY_KERNELS(NAME, K)                                                        \
    extern "C" __global__ void __launch_bounds__(BT_THREADS)                                     \
        bt_choose_##NAME(u64* state, u32* hist, u64 nq, u32 shift) {                            \
        bt_choose_impl<K>(state, hist, nq, shift);                                               \
    }                                                                                            \
    extern "C" __global__ void __launch_bounds__(BT_BOUNDS_THREADS)                              \
        bt_sample_bounds_##NAME(const K* samples, u64 nspans, u32 m, const u32* brackets,       \
                                K* bounds) {                                                     \
        bt_sample_bounds_impl<K>(samples, nspans, m, brackets, bounds);                          \
    }                                                                                            \
    extern "C" __global__ void bt_gather_window_##NAME(const K* ckeys, const u64* region,       \
                                                       const u64* first, u64 nspans, K* out) {   \
        bt_gather_window_impl<K>(ckeys, region, first, nspans, out);                             \
    }                                                                                            \
    extern "C" __global__ void bt_count_below_##NAME(const K* keys, const u64* first,           \
                                                     u64 nspans, const u64* kth, u64* below) {   \
        bt_count_below_impl<K>(keys, first, nspans, kth, below);                                 \
    }
KSELECT_FOR_EACH_KEY(BATCH_SELECT_KEY_KERNELS)

extern "C" __global__ void __launch_bounds__(BT_THREADS) bt_tile_scan(const u64* tile_first, u64 nspans,
                                                                      u64* tile_counts, u32 parts) {
    bt_tile_scan_impl(tile_first, nspans, tile_counts, parts);
}

extern "C" __global__ void bt_iota(u64 total, u32* out) {
    for (u64 i = (u64)blockIdx.x * blockDim.x + threadIdx.x; i < total; i += (u64)gridDim.x * blockDim.x)
        out[i] = (u32)i;
}

// The indices of results narrowed to 32 bits (every span is shorter than 2^32).
extern "C" __global__ void bt_narrow(const u64* in, u64 total, u32* out) {
    for (u64 i = (u64)blockIdx.x * blockDim.x + threadIdx.x; i < total; i += (u64)gridDim.x * blockDim.x)
        out[i] = (u32)in[i];
}

extern "C" __global__ void bt_span_ids(const u32* perm, u64 total, u64 k, u32* out) {
    bt_span_ids_impl(perm, total, k, out);
}

extern "C" __global__ void __launch_bounds__(BT_THREADS)
    bt_filter_counts(const u64* tile_first, u64 nspans, const u32* tile_hist, const u64* state, u32 shift,
                     u32 equal_only, u64* below, u64* tile_counts) {
    bt_filter_counts_impl(tile_first, nspans, tile_hist, state, shift, equal_only, below, tile_counts);
}
