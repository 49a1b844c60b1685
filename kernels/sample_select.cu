// SampleSelect (Ribizel & Anzt 2020). A level: one block sorts a sample (bitonic, in shared
// memory) and picks up to 127 distinct splitters, stored as an implicit binary search tree; the
// count kernel walks the tree for every candidate's key, stores its bucket as a one-byte oracle
// and counts the buckets per block; a scan gives every (bucket, block) its offset; a one-block
// kernel finds the bucket of each rank; the filter kernel copies the candidates of the selected
// buckets, each bucket to its own 16-byte aligned region. Small candidate sets are sorted on
// chip. Buckets: 2j is the open range between splitters j-1 and j, 2j+1 the equality bucket of
// splitter j (values equal to it), so a rank among repeated values ends at its splitter.
#include "common.cuh"

#define SS_BLOCK 256
#define SS_WARPS (SS_BLOCK / WARP_SIZE)
#define SS_SORT_THREADS 1024
#define SS_SAMPLE 2048                // sample size; also the largest set sorted on chip
#define SS_SPLITTERS 127              // splitter slots: a complete tree of depth 7
#define SS_DEPTH 7
#define SS_SLOTS 128                  // the slots padded to a power of two
#define SS_BUCKETS 256                // oracle values (2 * 127 + 1 = 255 are used)
#define SS_WORD_M (2 * SS_SLOTS)      // split[SS_WORD_M]: the number of distinct splitters
#define SS_WORD_AGG (2 * SS_SLOTS + 1)  // split[SS_WORD_AGG]: 1 when the sample has repeats
#define SS_NONE 0xffffffffffffffffull
#define SS_WRITE_ORACLES 1u
#define SS_COUNT_NANS 2u

// Layout of a level's `split` array of keys (SS_SPLIT_WORDS = 258):
//   [0, 127)    the 127 slots in heap order (node i has children 2i+1 and 2i+2)
//   [127]       unused (the largest key)
//   [128, 256)  the slots in ascending order: the m distinct splitters, then the largest key
//   [256]       m (1 <= m <= 127)
//   [257]       1 when the sample holds a repeated value (buckets are then likely to collide)

// The sorted position of heap node i (0 <= i < 127) of a complete tree of depth 7.
__device__ __forceinline__ u32 ss_inorder(u32 i) {
    const u32 depth = 31 - __clz(i + 1);
    const u32 p = i + 1 - (1u << depth);
    return ((2 * p + 1) << (SS_DEPTH - 1 - depth)) - 1;
}

// The bucket of `key`: walks the tree to the number j of slots <= key, ignores padding, and
// tells the open range (2j) from the equality bucket of splitter j-1 (2j-1).
template <typename K>
__device__ __forceinline__ u32 ss_bucket(const K* tree, const K* sorted, u32 m, K key) {
    u32 i = 0;
#pragma unroll
    for (int level = 0; level < SS_DEPTH; ++level) i = 2 * i + 1 + (tree[i] <= key ? 1u : 0u);
    u32 j = i - SS_SPLITTERS;
    j = j < m ? j : m;
    const bool equal = j > 0 && sorted[j - 1] == key;
    return 2 * j - (equal ? 1u : 0u);
}

// The sample of a level: s = min(n, SS_SAMPLE) keys, one from each of s equal strides at a
// hashed offset (all of x when n <= SS_SAMPLE), padded with the largest key.
template <typename T>
__device__ void ss_gather(const T* __restrict__ x, u64 n, u64 seed, typename KeyOf<T>::type* keys) {
    typedef typename KeyOf<T>::type K;
    const u64 s = n < SS_SAMPLE ? n : SS_SAMPLE;
    for (u32 i = threadIdx.x; i < SS_SAMPLE; i += blockDim.x) {
        if (i < s) {
            keys[i] = to_key(x[sample_position(i, n, s, seed)]);
        } else {
            keys[i] = (K)~(K)0;
        }
    }
}

// One block of SS_SORT_THREADS: sorts the sample and writes the level's split array.
template <typename T>
__device__ void ss_sample_impl(const T* __restrict__ x, u64 n, u64 seed, typename KeyOf<T>::type* split) {
    typedef typename KeyOf<T>::type K;
    __shared__ K keys[SS_SAMPLE];
    __shared__ K sorted[SS_SLOTS];
    __shared__ u32 m_shared;
    const u32 s = (u32)(n < SS_SAMPLE ? n : SS_SAMPLE);
    ss_gather<T>(x, n, seed, keys);
    block_bitonic_sort<K, SS_SAMPLE>(keys);
    bool repeat = false;
    for (u32 i = threadIdx.x + 1; i < s; i += blockDim.x) repeat = repeat || keys[i] == keys[i - 1];
    const int any_repeat = __syncthreads_or(repeat ? 1 : 0);
    if (threadIdx.x == 0) {
        u32 m = 0;
        for (u32 i = 0; i < SS_SPLITTERS; ++i) {
            const K splitter = keys[(i + 1) * s / (SS_SPLITTERS + 1)];
            if (m == 0 || sorted[m - 1] != splitter) sorted[m++] = splitter;
        }
        for (u32 i = m; i < SS_SLOTS; ++i) sorted[i] = (K)~(K)0;
        m_shared = m;
    }
    __syncthreads();
    if (threadIdx.x < SS_SLOTS) {
        const u32 i = threadIdx.x;
        split[SS_SLOTS + i] = sorted[i];
        split[i] = i < SS_SPLITTERS ? sorted[ss_inorder(i)] : (K)~(K)0;
    }
    if (threadIdx.x == 0) {
        split[SS_WORD_M] = (K)m_shared;
        split[SS_WORD_AGG] = any_repeat ? (K)1 : (K)0;
    }
}

// One block of SS_SORT_THREADS, n <= SS_SAMPLE: sorts all keys and, for each rank j,
// writes out[3j] = the key of rank ranks[j], out[3j+1] / out[3j+2] = the first / one past the
// last rank of that key. Adds the NaN count to *nans when `count_nans`.
template <typename T>
__device__ void ss_sort_select_impl(const T* __restrict__ x, u64 n, const u64* __restrict__ ranks, u64 r,
                                    u64* __restrict__ out, u64* nans, u32 count_nans) {
    typedef typename KeyOf<T>::type K;
    __shared__ K keys[SS_SAMPLE];
    u32 nan_total = 0;
    for (u32 i = threadIdx.x; i < SS_SAMPLE; i += blockDim.x) {
        const bool in = i < n;
        const T v = in ? x[i] : (T)0;
        keys[i] = in ? to_key(v) : (K)~(K)0;
        nan_total += __syncthreads_count(in && is_nan_value(v) ? 1 : 0);
    }
    if (count_nans && threadIdx.x == 0 && nan_total) atomicAdd(nans, (u64)nan_total);
    block_bitonic_sort<K, SS_SAMPLE>(keys);
    for (u64 j = threadIdx.x; j < r; j += blockDim.x) {
        const u64 k = ranks[j];
        const K key = keys[k];
        u32 a = 0, b = (u32)k;  // first position with keys[pos] == key
        while (a < b) {
            const u32 mid = (a + b) / 2;
            if (keys[mid] < key) a = mid + 1; else b = mid;
        }
        const u32 lo = a;
        a = (u32)k + 1;
        b = (u32)n;  // first position with keys[pos] > key, padding excluded
        while (a < b) {
            const u32 mid = (a + b) / 2;
            if (keys[mid] <= key) a = mid + 1; else b = mid;
        }
        out[3 * j] = (u64)key;
        out[3 * j + 1] = lo;
        out[3 * j + 2] = a;
    }
}

// Counts one bucket into the warp's histogram. A warp whose valid lanes share one bucket adds
// once (sorted input); otherwise, when the sample had repeats (`aggregate`), lanes with equal
// buckets are matched and add once per bucket, else every lane adds its own.
__device__ __forceinline__ void ss_count_bucket(u32* warp_hist, bool valid, u32 b, bool aggregate) {
    const u32 active = __ballot_sync(FULL_MASK, valid);
    if (active == 0) return;
    const int leader = __ffs(active) - 1;
    const u32 lead_b = __shfl_sync(FULL_MASK, b, leader);
    const u32 lane = threadIdx.x & 31;
    if (__all_sync(FULL_MASK, !valid || b == lead_b)) {
        if (lane == (u32)leader) atomicAdd(&warp_hist[lead_b], (u32)__popc(active));
    } else if (aggregate) {
        const u32 peers = __match_any_sync(FULL_MASK, valid ? b : 0xffffffffu);
        if (valid && lane == (u32)(__ffs(peers) - 1)) atomicAdd(&warp_hist[b], (u32)__popc(peers));
    } else if (valid) {
        atomicAdd(&warp_hist[b], 1u);
    }
}

// Stores the oracles of one trip: a thread's V buckets as one V-byte word (vector trips), or
// the tail bytes (the tail trip of block 0).
template <int V>
__device__ __forceinline__ void ss_store_oracles(unsigned char* oracles, u64 n, u64 first, u64 threads,
                                                 u64 vtrips, u64 t, const u32 (&b)[V], const bool (&valid)[V]) {
    const u64 nvec = n / V;
    if (t < vtrips) {
        const u64 i = first + t * threads + threadIdx.x;
        if (i < nvec) {
            u32 word = 0;
#pragma unroll
            for (int j = 0; j < V; ++j) word |= (b[j] & 0xffu) << (8 * j);
            if (V == 4) {
                *reinterpret_cast<u32*>(oracles + i * V) = word;
            } else {
                *reinterpret_cast<unsigned short*>(oracles + i * V) = (unsigned short)word;
            }
        }
    } else {
#pragma unroll
        for (int j = 0; j < V; ++j)
            if (valid[j]) oracles[nvec * V + j] = (unsigned char)b[j];
    }
}

// The oracles of one trip (the same elements as ss_store_oracles stored); invalid ones are 0.
template <int V>
__device__ __forceinline__ void ss_load_oracles(const unsigned char* oracles, u64 n, u64 first, u64 threads,
                                                u64 vtrips, u64 t, u32 (&o)[V], bool (&valid)[V], u64 (&idx)[V]) {
    const u64 nvec = n / V;
    if (t < vtrips) {
        const u64 i = first + t * threads + threadIdx.x;
        const bool in = i < nvec;
        u32 word = 0;
        if (in) {
            if (V == 4) {
                word = *reinterpret_cast<const u32*>(oracles + i * V);
            } else {
                word = *reinterpret_cast<const unsigned short*>(oracles + i * V);
            }
        }
#pragma unroll
        for (int j = 0; j < V; ++j) {
            valid[j] = in;
            o[j] = (word >> (8 * j)) & 0xffu;
            idx[j] = i * V + j;
        }
    } else {
#pragma unroll
        for (int j = 0; j < V; ++j) {
            idx[j] = nvec * V + j;
            valid[j] = threadIdx.x == 0 && idx[j] < n;
            o[j] = valid[j] ? oracles[idx[j]] : 0u;
        }
    }
}

// The count kernel: the bucket of every element of x[0..n), stored as an oracle when
// `flags & SS_WRITE_ORACLES`; the block's bucket counts to partial[b * gridDim.x + blockIdx.x]
// (all SS_BUCKETS of them); the NaNs added to *nans when `flags & SS_COUNT_NANS`.
// Block-uniform loops (load_trip), so the warp collectives see whole warps.
template <typename T>
__device__ void ss_count_impl(const T* __restrict__ x, u64 n, const typename KeyOf<T>::type* __restrict__ split,
                              unsigned char* __restrict__ oracles, u64* __restrict__ partial, u64* nans, u32 flags) {
    typedef typename KeyOf<T>::type K;
    const int V = Vec16<T>::N;
    __shared__ K tree[SS_SLOTS];
    __shared__ K sorted[SS_SLOTS];
    __shared__ u32 hist[SS_WARPS][SS_BUCKETS];
    __shared__ u32 meta[2];
    for (u32 i = threadIdx.x; i < SS_SLOTS; i += blockDim.x) {
        tree[i] = split[i];
        sorted[i] = split[SS_SLOTS + i];
    }
    for (u32 i = threadIdx.x; i < SS_WARPS * SS_BUCKETS; i += blockDim.x) (&hist[0][0])[i] = 0;
    if (threadIdx.x == 0) {
        meta[0] = (u32)split[SS_WORD_M];
        meta[1] = (u32)split[SS_WORD_AGG];
    }
    __syncthreads();
    const u32 m = meta[0];
    const bool aggregate = meta[1] != 0;
    const bool write_oracles = (flags & SS_WRITE_ORACLES) != 0;
    u32* my_hist = hist[threadIdx.x / WARP_SIZE];
    const u64 threads = (u64)gridDim.x * blockDim.x;
    const u64 first = (u64)blockIdx.x * blockDim.x;
    const u64 trips = trip_count<V>(n, first, threads);
    const u64 vtrips = vector_trips<V>(n, first, threads);
    u32 nan_count = 0;
    for (u64 t = 0; t < trips; ++t) {
        T v[V];
        bool valid[V];
        load_trip<T, V>(x, n, first, threads, vtrips, t, v, valid);
        u32 b[V];
#pragma unroll
        for (int j = 0; j < V; ++j) {
            const K key = valid[j] ? to_key(v[j]) : (K)0;
            b[j] = ss_bucket<K>(tree, sorted, m, key);
            nan_count += (valid[j] && is_nan_value(v[j])) ? 1u : 0u;
        }
#pragma unroll
        for (int j = 0; j < V; ++j) ss_count_bucket(my_hist, valid[j], b[j], aggregate);
        if (write_oracles) ss_store_oracles<V>(oracles, n, first, threads, vtrips, t, b, valid);
    }
    if (flags & SS_COUNT_NANS) {
        for (int off = WARP_SIZE / 2; off > 0; off /= 2) nan_count += __shfl_down_sync(FULL_MASK, nan_count, off);
        if ((threadIdx.x & 31) == 0 && nan_count) atomicAdd(nans, (u64)nan_count);
    }
    __syncthreads();
    for (u32 b = threadIdx.x; b < SS_BUCKETS; b += blockDim.x) {
        u32 total = 0;
        for (int w = 0; w < SS_WARPS; ++w) total += hist[w][b];
        partial[(u64)b * gridDim.x + blockIdx.x] = (u64)total;
    }
}

// SS_BUCKETS blocks of SS_BLOCK threads: block b turns row b of partial (the counts of bucket
// b in each of `blocks` count blocks) into its exclusive prefix sums, and writes the row's sum
// to totals[b].
extern "C" __global__ void __launch_bounds__(SS_BLOCK) ss_scan(u64* partial, u64 blocks, u64* totals) {
    __shared__ u64 warp_sum[SS_WARPS];
    __shared__ u64 chunk_sum;
    u64* row = partial + (u64)blockIdx.x * blocks;
    const u32 lane = threadIdx.x & 31;
    const u32 warp = threadIdx.x / WARP_SIZE;
    u64 carry = 0;
    for (u64 base = 0; base < blocks; base += blockDim.x) {
        const u64 i = base + threadIdx.x;
        const u64 v = i < blocks ? row[i] : 0;
        u64 incl = warp::inclusive_sum(v);
        if (lane == 31) warp_sum[warp] = incl;
        __syncthreads();
        if (threadIdx.x == 0) {
            chunk_sum = serial::exclusive_sum(warp_sum, SS_WARPS);
        }
        __syncthreads();
        if (i < blocks) row[i] = carry + warp_sum[warp] + (incl - v);
        carry += chunk_sum;
        __syncthreads();
    }
    if (threadIdx.x == 0) totals[blockIdx.x] = carry;
}

// Exclusive prefix sum over the SS_BUCKETS threads of a block (blockDim.x == SS_BUCKETS).
__device__ __forceinline__ u64 ss_exclusive_scan(u64 v, u64* scratch) {
    const u64 incl = block::inclusive_sum<SS_BUCKETS>(v, scratch);
    __syncthreads();
    return incl - v;
}

// One block of SS_BUCKETS threads. For each rank j of ranks[0..r): info[256 + 3j] = its
// bucket, info[256 + 3j + 1] = its rank inside the bucket, info[256 + 3j + 2] = the splitter's
// key when the bucket is an equality bucket (else 0). info[0..256) = the bucket totals.
// dest[b] = the start of range bucket b's region in the filter's output when a rank falls into
// it (regions in bucket order, each rounded up to 16 bytes), else SS_NONE.
template <typename K>
__device__ void ss_choose_impl(const u64* __restrict__ totals, const K* __restrict__ split,
                               const u64* __restrict__ ranks, u64 r, u64* __restrict__ info,
                               u64* __restrict__ dest) {
    __shared__ u64 starts[SS_BUCKETS];
    __shared__ u64 scratch[SS_BUCKETS];
    __shared__ u32 selected[SS_BUCKETS];
    const u32 d = threadIdx.x;
    const u64 c = totals[d];
    selected[d] = 0;
    starts[d] = ss_exclusive_scan(c, scratch);
    info[d] = c;
    __syncthreads();
    for (u64 j = d; j < r; j += blockDim.x) {
        const u64 k = ranks[j];
        // The last bucket starting at or before k holds it (empty buckets start where the next does).
        u32 a = 0, b = SS_BUCKETS;
        while (a < b) {
            const u32 mid = (a + b) / 2;
            if (starts[mid] <= k) a = mid + 1; else b = mid;
        }
        const u32 bucket = a - 1;
        info[SS_BUCKETS + 3 * j] = bucket;
        info[SS_BUCKETS + 3 * j + 1] = k - starts[bucket];
        info[SS_BUCKETS + 3 * j + 2] = (bucket & 1) ? (u64)split[SS_SLOTS + (bucket - 1) / 2] : 0;
        if ((bucket & 1) == 0) selected[bucket] = 1;
    }
    __syncthreads();
    const u64 align = 16 / sizeof(K);
    const u64 size = selected[d] ? (c + align - 1) / align * align : 0;
    const u64 start = ss_exclusive_scan(size, scratch);
    dest[d] = selected[d] ? start : SS_NONE;
}

// The filter kernel (same grid as the count kernel over the same x): copies every element whose
// oracle is a bucket with dest[b] != SS_NONE to out[dest[b] + the block's offset + its place in
// the block]. Lanes of a warp with the same bucket take their places with one shared atomic.
template <typename T>
__device__ void ss_filter_impl(const T* __restrict__ x, u64 n, const unsigned char* __restrict__ oracles,
                               const u64* __restrict__ partial, const u64* __restrict__ dest, T* __restrict__ out) {
    const int V = Vec16<T>::N;
    __shared__ u64 base[SS_BUCKETS];
    __shared__ u32 taken[SS_BUCKETS];
    for (u32 b = threadIdx.x; b < SS_BUCKETS; b += blockDim.x) {
        const u64 d = dest[b];
        base[b] = d == SS_NONE ? SS_NONE : d + partial[(u64)b * gridDim.x + blockIdx.x];
        taken[b] = 0;
    }
    __syncthreads();
    const u32 lane = threadIdx.x & 31;
    const u64 threads = (u64)gridDim.x * blockDim.x;
    const u64 first = (u64)blockIdx.x * blockDim.x;
    const u64 trips = trip_count<V>(n, first, threads);
    const u64 vtrips = vector_trips<V>(n, first, threads);
    for (u64 t = 0; t < trips; ++t) {
        u32 o[V];
        bool valid[V];
        u64 idx[V];
        ss_load_oracles<V>(oracles, n, first, threads, vtrips, t, o, valid, idx);
#pragma unroll
        for (int j = 0; j < V; ++j) {
            const bool sel = valid[j] && base[o[j]] != SS_NONE;
            if (__ballot_sync(FULL_MASK, sel) == 0) continue;
            const u32 peers = __match_any_sync(FULL_MASK, sel ? o[j] : 0xffffffffu);
            const int leader = __ffs(peers) - 1;
            u32 place = 0;
            if (sel && lane == (u32)leader) place = atomicAdd(&taken[o[j]], (u32)__popc(peers));
            place = __shfl_sync(FULL_MASK, place, leader);
            if (sel) out[base[o[j]] + place + __popc(peers & lanemask_lt())] = x[idx[j]];
        }
    }
}

#define SAMPLE_SELECT_KERNELS(NAME, T)                                                               \
    extern "C" __global__ void __launch_bounds__(SS_SORT_THREADS)                                    \
        ss_sample_##NAME(const T* x, u64 n, u64 seed, KeyOf<T>::type* split) {                      \
        ss_sample_impl<T>(x, n, seed, split);                                                        \
    }                                                                                                \
    extern "C" __global__ void __launch_bounds__(SS_SORT_THREADS)                                    \
        ss_sort_select_##NAME(const T* x, u64 n, const u64* ranks, u64 r, u64* out, u64* nans,      \
                              u32 count_nans) {                                                      \
        ss_sort_select_impl<T>(x, n, ranks, r, out, nans, count_nans);                               \
    }                                                                                                \
    extern "C" __global__ void __launch_bounds__(SS_BLOCK)                                           \
        ss_count_##NAME(const T* x, u64 n, const KeyOf<T>::type* split, unsigned char* oracles,     \
                        u64* partial, u64* nans, u32 flags) {                                        \
        ss_count_impl<T>(x, n, split, oracles, partial, nans, flags);                                \
    }                                                                                                \
    extern "C" __global__ void __launch_bounds__(SS_BLOCK)                                           \
        ss_filter_##NAME(const T* x, u64 n, const unsigned char* oracles, const u64* partial,       \
                         const u64* dest, T* out) {                                                  \
        ss_filter_impl<T>(x, n, oracles, partial, dest, out);                                        \
    }
KSELECT_FOR_EACH_TYPE(SAMPLE_SELECT_KERNELS)

#define SAMPLE_CHOOSE_KERNELS(NAME, K)                                                               \
    extern "C" __global__ void __launch_bounds__(SS_BUCKETS)                                         \
        ss_choose_##NAME(const u64* totals, const K* split, const u64* ranks, u64 r, u64* info,     \
                         u64* dest) {                                                                \
        ss_choose_impl<K>(totals, split, ranks, r, info, dest);                                      \
    }
KSELECT_FOR_EACH_KEY(SAMPLE_CHOOSE_KERNELS)
