// Robust regression on the GPU (src/regression/gpu): the residuals of many candidate fits (after
// the cuBLAS product X B, or of a few in one pass over the design), the sums of the LTS C-step
// over each candidate's h-subset (the Gram matrix X_H'X_H and X_H'r_H), their reduction in a
// fixed order, and the shortest window of h sorted residuals (the LMS intercept adjustment).
// Every value is a double.
#include "common.cuh"

// The most coefficients the Gram kernel handles (src/regression/gpu/kernels.rs: MAX_P).
#define RG_MAX_P 40
// Rows a Gram block stages in shared memory at a time.
#define RG_TILE 64
// Threads of a Gram block (src/regression/gpu/kernels.rs: GRAM_THREADS).
#define RG_THREADS 256
// (group, entry) items a Gram thread accumulates, at most: RG_SLOTS * RG_THREADS must hold the
// RG_MAX_P (RG_MAX_P + 3) / 2 entries of the largest model.
#define RG_SLOTS 4

// Row j < gridDim.y of v (rows of n values) holds x_i b_j; it becomes op(y_i - x_i b_j):
// op 0 the square, 1 the residual itself, 2 its absolute value.
extern "C" __global__ void rg_residuals_f64(double* __restrict__ v, const double* __restrict__ y,
                                            u64 n, u32 op) {
    double* row = v + (u64)blockIdx.y * n;
    const u64 stride = (u64)gridDim.x * blockDim.x;
    for (u64 i = (u64)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        const double r = y[i] - row[i];
        row[i] = op == 0 ? r * r : (op == 1 ? r : (r < 0.0 ? -r : r));
    }
}

// The most values a row of a warp's tile holds (the kernels that stage 32 rows at a time: at
// most 13 coefficients).
#define RG_TILE_MAX_P 13

// Lane `lane`'s values of a warp's tile of 32 rows of p <= RG_TILE_MAX_P values, `values` of
// them from `src` (contiguous): element e = lane + 32 q into staged[q], every load issued before
// the first is used (enough bytes in flight to stream the rows).
__device__ __forceinline__ void rg_load_tile(const double* __restrict__ src, u32 values, u32 lane,
                                             double (&staged)[RG_TILE_MAX_P]) {
#pragma unroll
    for (u32 q = 0; q < RG_TILE_MAX_P; ++q) {
        const u32 e = lane + WARP_SIZE * q;
        staged[q] = e < values ? src[e] : 0.0;
    }
}

// The values rg_load_tile loaded, stored in the warp's `tile`: element e (row e / p, column
// e % p) at tile[row * stride + column]; row_step and col_step are 32 / p and 32 % p.
__device__ __forceinline__ void rg_store_tile(const double (&staged)[RG_TILE_MAX_P], u32 values,
                                              u32 lane, u32 p, u32 stride, u32 row_step,
                                              u32 col_step, double* tile) {
    u32 r = lane / p, c = lane % p;
#pragma unroll
    for (u32 q = 0; q < RG_TILE_MAX_P; ++q) {
        if (lane + WARP_SIZE * q < values) tile[r * stride + c] = staged[q];
        r += row_step;
        c += col_step;
        if (c >= p) {
            c -= p;
            ++r;
        }
    }
}

// The most candidates and coefficients of rg_residuals_direct_f64, and its threads
// (src/device/cuda/kernels/regression.rs: DIRECT_MAX_COUNT, DIRECT_MAX_P, DIRECT_THREADS).
#define RD_MAX_COUNT 16
#define RD_MAX_P RG_TILE_MAX_P
#define RD_THREADS 256

// Rows j < count of v (rows of n values) become op(y_i - x_i b_j), op as rg_residuals_f64's,
// for the coefficients b_j = coef[j p .. (j + 1) p) of count <= RD_MAX_COUNT candidates and
// p <= RD_MAX_P: x (n x p row-major) is read once for all of them. A warp takes tiles of 32 rows,
// whose 32 p values are contiguous (one coalesced load a lane per 32 values), stages them in
// shared memory (rows an odd number of doubles apart: no bank conflicts), and lane l takes row l
// into registers and computes its residuals, y_i - x_i0 b_0 - x_i1 b_1 - ... in that order
// (rg_gram_warp_f64's).
extern "C" __global__ void __launch_bounds__(RD_THREADS, 3)
rg_residuals_direct_f64(const double* __restrict__ x, const double* __restrict__ y, u64 n, u32 p,
                        const double* __restrict__ coef, u32 count, u32 op,
                        double* __restrict__ v) {
    __shared__ double b[RD_MAX_COUNT][RD_MAX_P];
    __shared__ double tiles[RD_THREADS / WARP_SIZE][WARP_SIZE * (RD_MAX_P + 1)];
    for (u32 k = threadIdx.x; k < count * p; k += blockDim.x) b[k / p][k % p] = coef[k];
    __syncthreads();
    const u32 lane = threadIdx.x & 31, warp = threadIdx.x >> 5, warps = blockDim.x >> 5;
    const u32 stride = p | 1;
    double* tile = tiles[warp];
    // Element e = lane + 32 q of a tile is row e / p, column e % p.
    const u32 row_step = WARP_SIZE / p, col_step = WARP_SIZE % p;
    const u64 step = (u64)WARP_SIZE * gridDim.x * warps;
    for (u64 start = (u64)WARP_SIZE * ((u64)blockIdx.x * warps + warp); start < n; start += step) {
        const u32 m = (u32)(n - start < WARP_SIZE ? n - start : WARP_SIZE);
        const u32 values = m * p;
        const double* src = x + start * p;
        double staged[RG_TILE_MAX_P];
        rg_load_tile(src, values, lane, staged);
        const double yi = lane < m ? y[start + lane] : 0.0;
        __syncwarp();  // the previous tile is consumed
        rg_store_tile(staged, values, lane, p, stride, row_step, col_step, tile);
        __syncwarp();
        if (lane < m) {
            double own[RD_MAX_P];
#pragma unroll
            for (u32 a = 0; a < RD_MAX_P; ++a) own[a] = a < p ? tile[lane * stride + a] : 0.0;
            double* out = v + start + lane;
            for (u32 j = 0; j < count; ++j) {
                double res = yi;
#pragma unroll
                for (u32 a = 0; a < RD_MAX_P; ++a)
                    if (a < p) res -= own[a] * b[j][a];
                out[(u64)j * n] = op == 0 ? res * res : (op == 1 ? res : fabs(res));
            }
        }
    }
}

// The columns (a, b) of Gram entry e < p (p + 3) / 2 of p coefficients: the upper triangle of
// X'X row by row (a <= b < p), then X'r (b == p standing for the residual).
__device__ __forceinline__ void rg_entry(u32 e, u32 p, u32* a_out, u32* b_out) {
    const u32 tri = p * (p + 1) / 2;
    if (e < tri) {
        u32 a = 0;
        while (e >= p - a) {
            e -= p - a;
            ++a;
        }
        *a_out = a;
        *b_out = a + e;
    } else {
        *a_out = e - tri;
        *b_out = p;
    }
}

// The sums of one C-step for candidate j = row0 + blockIdx.y (blockIdx.y < count) over the rows
// of this block's chunk, [blockIdx.x * chunk, min(n, (blockIdx.x + 1) * chunk)), that the
// candidate keeps: with `mask` (n flags, or null), the rows flagged; otherwise, with s (the
// squared residuals, rows of n) and t = thresholds[j], the rows with s_i < t and those with
// s_i == t and i < cuts[j].
//
// x is n x p row-major, coef holds the candidates' p coefficients one after the other. Entries
// (E = p (p + 1) / 2 + p + 3) of partial[(blockIdx.y * gridDim.x + blockIdx.x) * E ..]: the upper
// triangle of sum x_i x_i' row by row, sum x_i r_i with r_i = y_i - x_i b_j, then (without a
// mask) the number of rows with s_i < t, the number with s_i == t (all of them) and the sum of
// s_i < t. Every sum runs in a fixed order: the results do not depend on timing.
extern "C" __global__ void __launch_bounds__(RG_THREADS)
rg_gram_f64(const double* __restrict__ x, const double* __restrict__ y, u64 n, u32 p,
            const double* __restrict__ s, const unsigned char* __restrict__ mask,
            const double* __restrict__ coef, const double* __restrict__ thresholds,
            const u64* __restrict__ cuts, u64 row0, u32 count, u64 chunk,
            double* __restrict__ partial) {
    if (blockIdx.y >= count) return;  // the whole block: no candidate
    __shared__ double sx[RG_TILE * RG_MAX_P];
    __shared__ double sr[RG_TILE];
    __shared__ unsigned char keep[RG_TILE];
    __shared__ double sb[RG_MAX_P];
    __shared__ double red[RG_SLOTS * RG_THREADS];

    const u32 tid = threadIdx.x;
    const u64 j = row0 + blockIdx.y;
    const u32 tri = p * (p + 1) / 2;
    const u32 gram = tri + p;
    const u32 entries = gram + 3;
    // The rows of a tile are split among `groups` groups, each summing every Gram entry.
    const u32 groups = gram <= blockDim.x ? blockDim.x / gram : 1;
    const u32 items = groups * gram;

    // This thread's items: (group, column a, column b), b == p standing for the residual.
    u32 it_group[RG_SLOTS], it_a[RG_SLOTS], it_b[RG_SLOTS];
    double acc[RG_SLOTS];
#pragma unroll
    for (int q = 0; q < RG_SLOTS; ++q) {
        const u32 w = tid + q * blockDim.x;
        acc[q] = 0.0;
        it_group[q] = w < items ? w / gram : groups;  // groups: no item
        rg_entry(w % gram, p, &it_a[q], &it_b[q]);
    }

    if (tid < p) sb[tid] = coef[j * p + tid];
    const double t = mask ? 0.0 : thresholds[j];
    const u64 cut = mask ? 0 : cuts[j];
    double below = 0.0, equal = 0.0, sum_below = 0.0;

    const u64 begin = (u64)blockIdx.x * chunk;
    const u64 end = begin + chunk < n ? begin + chunk : n;
    for (u64 start = begin; start < end; start += RG_TILE) {
        const u32 m = (u32)(end - start < RG_TILE ? end - start : RG_TILE);
        __syncthreads();  // the previous tile is consumed; sb is written
        for (u32 k = tid; k < m * p; k += blockDim.x) sx[k] = x[start * p + k];
        __syncthreads();
        if (tid < m) {
            const u64 i = start + tid;
            bool kept;
            if (mask) {
                kept = mask[i] != 0;
            } else {
                const double v = s[j * n + i];
                if (v < t) {
                    below += 1.0;
                    sum_below += v;
                    kept = true;
                } else if (v == t) {
                    equal += 1.0;
                    kept = i < cut;
                } else {
                    kept = false;
                }
            }
            double r = y[i];
            for (u32 a = 0; a < p; ++a) r -= sx[tid * p + a] * sb[a];
            sr[tid] = r;
            keep[tid] = kept ? 1 : 0;
        }
        __syncthreads();
#pragma unroll
        for (int q = 0; q < RG_SLOTS; ++q) {
            if (it_group[q] >= groups) continue;
            const u32 a = it_a[q], b = it_b[q];
            double sum = acc[q];
            for (u32 k = it_group[q]; k < m; k += groups) {
                if (keep[k]) sum += sx[k * p + a] * (b == p ? sr[k] : sx[k * p + b]);
            }
            acc[q] = sum;
        }
    }

    // The groups' sums, added group by group.
    double* out = partial + ((u64)blockIdx.y * gridDim.x + blockIdx.x) * entries;
    __syncthreads();
#pragma unroll
    for (int q = 0; q < RG_SLOTS; ++q) {
        const u32 w = tid + q * blockDim.x;
        if (w < items) red[w] = acc[q];
    }
    __syncthreads();
    for (u32 e = tid; e < gram; e += blockDim.x) {
        double total = 0.0;
        for (u32 g = 0; g < groups; ++g) total += red[g * gram + e];
        out[e] = total;
    }
    // The counts of the row threads (tid < RG_TILE), added in thread order.
    __syncthreads();
    red[tid] = below;
    red[blockDim.x + tid] = equal;
    red[2 * blockDim.x + tid] = sum_below;
    __syncthreads();
    if (tid < 3) {
        double total = 0.0;
        for (u32 k = 0; k < RG_TILE; ++k) total += red[tid * blockDim.x + k];
        out[gram + tid] = total;
    }
}

// The most coefficients of rg_gram_warp_f64, the Gram entries each lane of it holds (the
// p (p + 3) / 2 entries of p = 13 fit 32 lanes of 4) and the candidates a block sums
// (src/regression/gpu/kernels.rs: WARP_GRAM_MAX_P, WARP_GRAM_GROUP).
#define RG_WARP_MAX_P RG_TILE_MAX_P
#define RG_WARP_SLOTS 4
#define RG_WARP_GROUP 4

// rg_gram_f64 for p <= RG_WARP_MAX_P, with the same output, for candidates row0 + G blockIdx.y
// + g, g < G = RG_WARP_GROUP, of the `count` from row0: each tile of x is read once for the
// block's candidates. The block's chunk is split into tiles of 32 rows, tile t taken by warp
// t % warps, with no block-wide barrier until the end. A warp stages its tile in its part of the
// dynamic shared memory (32 rows of p + G doubles: x_i, then r_i of each candidate); one lane a
// row computes the candidates' r_i and whether they keep the row (a ballot each); then lane l
// adds, for each candidate, x_a x_b (b = p: x_a r_i) of every row it keeps, for the entries
// e = l + 32 q (the upper triangle row by row, then X'r: the entry order of rg_gram_f64).
// Dynamic shared memory: max(32 (p + G), G (32 RG_WARP_SLOTS + 3)) doubles a warp. Every sum
// runs in a fixed order.
extern "C" __global__ void __launch_bounds__(RG_THREADS, 2)
rg_gram_warp_f64(const double* __restrict__ x, const double* __restrict__ y, u64 n, u32 p,
                 const double* __restrict__ s, const unsigned char* __restrict__ mask,
                 const double* __restrict__ coef, const double* __restrict__ thresholds,
                 const u64* __restrict__ cuts, u64 row0, u32 count, u64 chunk,
                 double* __restrict__ partial) {
    extern __shared__ double rg_warp_smem[];
    __shared__ double b[RG_WARP_GROUP][RG_WARP_MAX_P];
    __shared__ double thr[RG_WARP_GROUP];
    __shared__ u64 cut[RG_WARP_GROUP];
    const u32 lane = threadIdx.x & 31, warp = threadIdx.x >> 5, warps = blockDim.x >> 5;
    const u32 stride = p + RG_WARP_GROUP;
    const u32 sums = RG_WARP_GROUP * (32 * RG_WARP_SLOTS + 3);
    const u32 per_warp = 32 * stride > sums ? 32 * stride : sums;
    double* tile = rg_warp_smem + (u64)warp * per_warp;
    const u32 first = RG_WARP_GROUP * blockIdx.y;  // of the count candidates
    const u32 cands = count - first < RG_WARP_GROUP ? count - first : RG_WARP_GROUP;
    const u32 gram = p * (p + 1) / 2 + p;
    const u32 entries = gram + 3;

    // This lane's entries (a, b) in the staged rows, b = p for the residual column of the
    // candidate; entries past the last read (0, 0).
    u32 ea[RG_WARP_SLOTS], eb[RG_WARP_SLOTS];
#pragma unroll
    for (int q = 0; q < RG_WARP_SLOTS; ++q) {
        const u32 e = lane + 32 * q;
        ea[q] = 0;
        eb[q] = 0;
        if (e < gram) rg_entry(e, p, &ea[q], &eb[q]);
    }
    double acc[RG_WARP_GROUP][RG_WARP_SLOTS];
    double sum_below[RG_WARP_GROUP];
    u64 below[RG_WARP_GROUP], equal[RG_WARP_GROUP];
#pragma unroll
    for (int g = 0; g < RG_WARP_GROUP; ++g) {
        sum_below[g] = 0.0;
        below[g] = 0;
        equal[g] = 0;
#pragma unroll
        for (int q = 0; q < RG_WARP_SLOTS; ++q) acc[g][q] = 0.0;
    }
    for (u32 k = threadIdx.x; k < RG_WARP_GROUP * RG_WARP_MAX_P; k += blockDim.x) {
        const u32 g = k / RG_WARP_MAX_P, c = k % RG_WARP_MAX_P;
        b[g][c] = g < cands && c < p ? coef[(row0 + first + g) * p + c] : 0.0;
    }
    if (threadIdx.x < RG_WARP_GROUP) {
        const u32 g = threadIdx.x;
        thr[g] = !mask && g < cands ? thresholds[row0 + first + g] : 0.0;
        cut[g] = !mask && g < cands ? cuts[row0 + first + g] : 0;
    }
    __syncthreads();
    // The tile loads: element e = lane + 32 i of a tile is row e / p, column e % p.
    const u32 row_step = 32 / p, col_step = 32 % p;

    const u64 begin = (u64)blockIdx.x * chunk;
    const u64 end = begin + chunk < n ? begin + chunk : n;
    for (u64 start = begin + 32 * (u64)warp; start < end; start += 32 * (u64)warps) {
        const u32 m = (u32)(end - start < 32 ? end - start : 32);
        // Every load of the tile is issued before the first is stored: enough bytes in flight
        // to stream the rows.
        const u64 i = start + lane;
        const bool row = lane < m;
        const double yi = row ? y[i] : 0.0;
        const bool flagged = row && mask && mask[i] != 0;
        const double* src = x + start * p;
        const u32 values = m * p;
        double staged[RG_TILE_MAX_P];
        rg_load_tile(src, values, lane, staged);
        __syncwarp();  // the previous tile is consumed
        rg_store_tile(staged, values, lane, p, stride, row_step, col_step, tile);
        __syncwarp();
        u32 keep[RG_WARP_GROUP];
#pragma unroll
        for (int g = 0; g < RG_WARP_GROUP; ++g) {
            bool kept = false, lower = false, tie = false;
            if (row && g < cands) {
                if (mask) {
                    kept = flagged;
                } else {
                    const double v = s[(row0 + first + g) * n + i];
                    lower = v < thr[g];
                    tie = v == thr[g];
                    kept = lower || (tie && i < cut[g]);
                    if (lower) sum_below[g] += v;
                }
                double res = yi;
                const double* own = tile + lane * stride;
#pragma unroll
                for (u32 a = 0; a < RG_WARP_MAX_P; ++a)
                    if (a < p) res -= own[a] * b[g][a];
                tile[lane * stride + p + g] = res;
            }
            keep[g] = __ballot_sync(0xffffffffu, kept);
            below[g] += __popc(__ballot_sync(0xffffffffu, lower));
            equal[g] += __popc(__ballot_sync(0xffffffffu, tie));
        }
        __syncwarp();
#pragma unroll
        for (int g = 0; g < RG_WARP_GROUP; ++g) {
            u32 rows = keep[g];
            while (rows) {
                const u32 k = __ffs(rows) - 1;
                rows &= rows - 1;
                const double* staged_row = tile + k * stride;
#pragma unroll
                for (int q = 0; q < RG_WARP_SLOTS; ++q)
                    acc[g][q] += staged_row[ea[q]] * staged_row[eb[q] == p ? p + g : eb[q]];
            }
        }
    }

    // Each warp's entries and counts (the sums below added lane by lane, in a fixed tree), then
    // the warps' added warp by warp.
    __syncwarp();
#pragma unroll
    for (int g = 0; g < RG_WARP_GROUP; ++g) {
#pragma unroll
        for (int o = 16; o > 0; o >>= 1)
            sum_below[g] += __shfl_xor_sync(0xffffffffu, sum_below[g], o);
        double* mine = tile + g * (32 * RG_WARP_SLOTS + 3);
#pragma unroll
        for (int q = 0; q < RG_WARP_SLOTS; ++q) mine[lane + 32 * q] = acc[g][q];
        if (lane == 0) {
            mine[32 * RG_WARP_SLOTS] = (double)below[g];
            mine[32 * RG_WARP_SLOTS + 1] = (double)equal[g];
            mine[32 * RG_WARP_SLOTS + 2] = sum_below[g];
        }
    }
    __syncthreads();
    for (u32 k = threadIdx.x; k < cands * entries; k += blockDim.x) {
        const u32 g = k / entries, e = k % entries;
        const u32 at = g * (32 * RG_WARP_SLOTS + 3) + (e < gram ? e : 32 * RG_WARP_SLOTS + (e - gram));
        double total = 0.0;
        for (u32 w = 0; w < warps; ++w) total += rg_warp_smem[(u64)w * per_warp + at];
        partial[((u64)(first + g) * gridDim.x + blockIdx.x) * entries + e] = total;
    }
}

// out[j * entries + e] = the sum over b < blocks of partial[(j * blocks + b) * entries + e]; one
// block a row j. Entries go 32 at a time, one a lane: warp w adds blocks w, w + W, ... (W warps)
// in that order, then lane e of warp 0 adds the W warps' sums in warp order, so every sum runs in
// the same order on every launch of the same shape.
extern "C" __global__ void rg_reduce_f64(const double* __restrict__ partial, u64 blocks, u32 entries,
                                         double* __restrict__ out) {
    __shared__ double by_warp[32][WARP_SIZE + 1];
    const u32 lane = threadIdx.x & 31, warp = threadIdx.x >> 5, warps = blockDim.x >> 5;
    const double* row = partial + (u64)blockIdx.x * blocks * entries;
    for (u32 base = 0; base < entries; base += WARP_SIZE) {
        const u32 e = base + lane;
        double total = 0.0;
        if (e < entries) {
#pragma unroll 4
            for (u64 b = warp; b < blocks; b += warps) total += row[b * entries + e];
        }
        by_warp[warp][lane] = total;
        __syncthreads();
        if (warp == 0 && e < entries) {
            double sum = 0.0;
            for (u32 w = 0; w < warps; ++w) sum += by_warp[w][lane];
            out[(u64)blockIdx.x * entries + e] = sum;
        }
        __syncthreads();
    }
}

// For row j = blockIdx.x of `sorted` (rows of n ascending values): the first k <= n - h with the
// smallest width sorted[k + h - 1] - sorted[k]. out[2 j] = sorted[k], out[2 j + 1] =
// sorted[k + h - 1]; both NaN when no width is a number.
extern "C" __global__ void rg_shortest_window_f64(const double* __restrict__ sorted, u64 n, u64 h,
                                                  double* __restrict__ out) {
    __shared__ double width_of[32];
    __shared__ u64 at_of[32];
    const double* v = sorted + (u64)blockIdx.x * n;
    const double inf = __longlong_as_double(0x7ff0000000000000ll);
    double best = inf;
    u64 at = ~0ull;
    for (u64 k = threadIdx.x; k + h <= n; k += blockDim.x) {
        const double w = v[k + h - 1] - v[k];
        if (w < best) {  // k grows: the first of equal widths stays
            best = w;
            at = k;
        }
    }
    // (width, k) in lexicographic order: the warp's, then the block's smallest.
    for (int off = WARP_SIZE / 2; off > 0; off /= 2) {
        const double ob = __shfl_down_sync(FULL_MASK, best, off);
        const u64 oa = __shfl_down_sync(FULL_MASK, at, off);
        if (ob < best || (ob == best && oa < at)) {
            best = ob;
            at = oa;
        }
    }
    const u32 warp = threadIdx.x / WARP_SIZE;
    if ((threadIdx.x & (WARP_SIZE - 1)) == 0) {
        width_of[warp] = best;
        at_of[warp] = at;
    }
    __syncthreads();
    if (threadIdx.x == 0) {
        for (u32 w = 1; w < blockDim.x / WARP_SIZE; ++w) {
            if (width_of[w] < best || (width_of[w] == best && at_of[w] < at)) {
                best = width_of[w];
                at = at_of[w];
            }
        }
        const double nan = __longlong_as_double(0x7ff8000000000000ll);
        out[2 * blockIdx.x] = at == ~0ull ? nan : v[at];
        out[2 * blockIdx.x + 1] = at == ~0ull ? nan : v[at + h - 1];
    }
}
