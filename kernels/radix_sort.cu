// LSD radix sort of unsigned keys (32 or 64 bits), optionally carrying u32 values, 8 bits per
// pass. Each pass is three launches over a fixed grid of G blocks, block b owning the contiguous
// chunk [b * chunk, (b + 1) * chunk):
//   1. rs_histogram: digit counts of each block's chunk -> counts[digit * G + b], and each
//      digit's total over the blocks -> totals[digit] (zero before the pass);
//   2. rs_scan: one block a digit turns its row of the table into exclusive offsets (digit-major,
//      block-minor) from the totals of the smaller digits, so that block b's keys of digit d
//      start at offsets[d * G + b] (G <= 1024);
//   3. rs_scatter: each block walks its chunk tile by tile, ranks keys by digit with warp-level
//      multisplit (stable: warp order, then round order, then lane order) and writes them out.
#include "common.cuh"

#define RS_BLOCK 256
#define RS_WARPS (RS_BLOCK / WARP_SIZE)
#define RS_ITEMS 8
#define RS_TILE (RS_BLOCK * RS_ITEMS)
#define RS_RADIX 256

template <typename K>
__device__ void rs_histogram_impl(const K* __restrict__ keys, u64 n, u64 chunk, u32 shift, u64* __restrict__ counts,
                                  u64* __restrict__ totals) {
    __shared__ u32 hist[RS_WARPS][RS_RADIX];
    for (int i = threadIdx.x; i < RS_WARPS * RS_RADIX; i += blockDim.x) (&hist[0][0])[i] = 0;
    __syncthreads();
    const u32 warp = threadIdx.x / WARP_SIZE;
    const u64 begin = (u64)blockIdx.x * chunk;
    const u64 end = begin + chunk < n ? begin + chunk : n;
    for (u64 i = begin + threadIdx.x; i < end; i += blockDim.x) {
        u32 d = (u32)(keys[i] >> shift) & (RS_RADIX - 1);
        atomicAdd(&hist[warp][d], 1u);
    }
    __syncthreads();
    for (int d = threadIdx.x; d < RS_RADIX; d += blockDim.x) {
        u32 total = 0;
        for (int w = 0; w < RS_WARPS; ++w) total += hist[w][d];
        counts[(u64)d * gridDim.x + blockIdx.x] = total;
        if (total) atomicAdd(&totals[d], (u64)total);
    }
}

// Exclusive offsets of the count table in place (RS_RADIX rows of `blocks` <= 1024 entries):
// block d scans row d, one entry a thread, and adds the keys of every smaller digit (the row
// totals the histogram blocks summed into `totals`). Blocks of 1024 threads.
#define RS_SCAN_THREADS 1024
extern "C" __global__ void __launch_bounds__(RS_SCAN_THREADS) rs_scan(u64* counts, u64 blocks, const u64* totals) {
    __shared__ u64 warp_sums[RS_SCAN_THREADS / WARP_SIZE];
    __shared__ u64 base;
    const u32 d = blockIdx.x, t = threadIdx.x, lane = t & (WARP_SIZE - 1), warp = t / WARP_SIZE;
    // The keys of the digits below d.
    u64 below = t < d ? totals[t] : 0;
    for (int off = 16; off > 0; off /= 2) below += __shfl_xor_sync(FULL_MASK, below, off);
    if (lane == 0) warp_sums[warp] = below;
    __syncthreads();
    if (t == 0) {
        u64 sum = 0;
        for (u32 w = 0; w < RS_SCAN_THREADS / WARP_SIZE; ++w) sum += warp_sums[w];
        base = sum;
    }
    __syncthreads();
    // The row's exclusive prefix sums.
    u64* row = counts + (u64)d * blocks;
    const u64 v = t < blocks ? row[t] : 0;
    const u64 incl = warp::inclusive_sum(v);
    if (lane == WARP_SIZE - 1) warp_sums[warp] = incl;
    __syncthreads();
    if (t == 0) {
        u64 run = base;
        for (u32 w = 0; w < RS_SCAN_THREADS / WARP_SIZE; ++w) {
            const u64 c = warp_sums[w];
            warp_sums[w] = run;
            run += c;
        }
    }
    __syncthreads();
    if (t < blocks) row[t] = warp_sums[warp] + incl - v;
}

template <typename K, bool PAIRS>
__device__ void rs_scatter_impl(const K* __restrict__ keys_in, K* __restrict__ keys_out,
                                const u32* __restrict__ vals_in, u32* __restrict__ vals_out, u64 n,
                                u64 chunk, u32 shift, const u64* __restrict__ offsets) {
    // warp_count[w][d]: keys of digit d in warp w's part of the tile, then (after the prefix
    // step) the start of warp w's keys of digit d relative to the tile's base for d.
    __shared__ u32 warp_count[RS_WARPS][RS_RADIX];
    // tile_base[d]: where this tile's keys of digit d start in the output.
    __shared__ u64 tile_base[RS_RADIX];
    __shared__ u32 tile_total[RS_RADIX];
    for (int d = threadIdx.x; d < RS_RADIX; d += blockDim.x)
        tile_base[d] = offsets[(u64)d * gridDim.x + blockIdx.x];
    const u32 warp = threadIdx.x / WARP_SIZE;
    const u32 lane = threadIdx.x & (WARP_SIZE - 1);
    const u64 begin = (u64)blockIdx.x * chunk;
    const u64 end = begin + chunk < n ? begin + chunk : n;
    for (u64 tile = begin; tile < end; tile += RS_TILE) {
        for (int i = threadIdx.x; i < RS_WARPS * RS_RADIX; i += blockDim.x) (&warp_count[0][0])[i] = 0;
        __syncthreads();
        K key[RS_ITEMS];
        u32 val[RS_ITEMS];
        u32 digit[RS_ITEMS];
        u32 pos[RS_ITEMS];
#pragma unroll
        for (int r = 0; r < RS_ITEMS; ++r) {
            const u64 i = tile + (u64)warp * (WARP_SIZE * RS_ITEMS) + r * WARP_SIZE + lane;
            const bool valid = i < end;
            key[r] = valid ? keys_in[i] : (K)0;
            val[r] = (PAIRS && valid) ? vals_in[i] : 0u;
            digit[r] = valid ? ((u32)(key[r] >> shift) & (RS_RADIX - 1)) : RS_RADIX;
            const u32 peers = __match_any_sync(FULL_MASK, digit[r]);
            const u32 rank = __popc(peers & lanemask_lt());
            const u32 before = valid ? warp_count[warp][digit[r]] : 0u;
            __syncwarp();
            if (valid && rank == 0) warp_count[warp][digit[r]] = before + __popc(peers);
            __syncwarp();
            pos[r] = before + rank;
        }
        __syncthreads();
        for (int d = threadIdx.x; d < RS_RADIX; d += blockDim.x) {
            u32 run = 0;
            for (int w = 0; w < RS_WARPS; ++w) {
                const u32 c = warp_count[w][d];
                warp_count[w][d] = run;
                run += c;
            }
            tile_total[d] = run;
        }
        __syncthreads();
#pragma unroll
        for (int r = 0; r < RS_ITEMS; ++r) {
            if (digit[r] < RS_RADIX) {
                const u64 out = tile_base[digit[r]] + warp_count[warp][digit[r]] + pos[r];
                keys_out[out] = key[r];
                if (PAIRS) vals_out[out] = val[r];
            }
        }
        __syncthreads();
        for (int d = threadIdx.x; d < RS_RADIX; d += blockDim.x) tile_base[d] += tile_total[d];
        // The next tile's first barrier orders these updates before their use.
    }
}

#define RADIX_SORT_KERNELS(NAME, K)                                                               \
    extern "C" __global__ void __launch_bounds__(RS_BLOCK)                                        \
        rs_histogram_##NAME(const K* keys, u64 n, u64 chunk, u32 shift, u64* counts, u64* totals) { \
        rs_histogram_impl<K>(keys, n, chunk, shift, counts, totals);                              \
    }                                                                                             \
    extern "C" __global__ void __launch_bounds__(RS_BLOCK)                                        \
        rs_scatter_##NAME(const K* keys_in, K* keys_out, u64 n, u64 chunk, u32 shift,             \
                          const u64* offsets) {                                                   \
        rs_scatter_impl<K, false>(keys_in, keys_out, 0, 0, n, chunk, shift, offsets);             \
    }                                                                                             \
    extern "C" __global__ void __launch_bounds__(RS_BLOCK)                                        \
        rs_scatter_pairs_##NAME(const K* keys_in, K* keys_out, const u32* vals_in, u32* vals_out, \
                                u64 n, u64 chunk, u32 shift, const u64* offsets) {                \
        rs_scatter_impl<K, true>(keys_in, keys_out, vals_in, vals_out, n, chunk, shift, offsets); \
    }
KSELECT_FOR_EACH_KEY(RADIX_SORT_KERNELS)
