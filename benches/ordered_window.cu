// One pass over an array that copies the (key, index) pairs of the keys in a bracket to a
// workspace in index order, against a read of the array (the floor) and an append in no order
// (one atomic a warp and round). The ordered pass places each tile's pairs by a single-pass
// scan of the tiles' counts: tiles are taken in order by a ticket, each publishes its count at
// once, looks back over its predecessors' published counts until one has published its running
// total, and publishes its own; its pairs are then written at that total plus their rank in the
// tile. The pipelined variant takes its next tile and issues its loads before it looks back.
// With the pairs in index order, the sampled top-k and hard thresholding need no sort of the
// pairs by index (`bt_window_ordered` in kernels/batch_select.cu is this pass in the library).
// Magnitude keys of uniform f32 in [-1, 1), the bracket open above (the largest magnitudes),
// three shares kept; both ordered outputs are checked against the host's. CUDA events, median
// of 11 after one untimed run. PER: 16-byte loads of consecutive values a thread and round (4
// rounds). Built with the GPU machine's nvcc:
//
//     nvcc -O3 -std=c++17 -arch=sm_90 -DPER=2 benches/ordered_window.cu -o ordered_window
//     ./ordered_window 26 8        # 2^26 values, 8 blocks a multiprocessor
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <cuda_runtime.h>

typedef unsigned int u32;
typedef unsigned long long u64;

#define THREADS 256
#ifndef ROUNDS
#define ROUNDS 4
#endif
#ifndef PER
#define PER 2
#endif
#define TILE (THREADS * 4 * PER * ROUNDS)
#define FLAG_COUNT (1ull << 62)
#define FLAG_TOTAL (2ull << 62)
#define VALUE_MASK ((1ull << 62) - 1)

#define CHECK(call)                                                                    \
    do {                                                                               \
        cudaError_t e = (call);                                                        \
        if (e != cudaSuccess) {                                                        \
            fprintf(stderr, "%s:%d %s\n", __FILE__, __LINE__, cudaGetErrorString(e)); \
            exit(1);                                                                   \
        }                                                                              \
    } while (0)

__host__ __device__ inline u32 magnitude_key(float x) {
    u32 b;
    memcpy(&b, &x, 4);
    return b & 0x7fffffffu;
}

__global__ void generate(float* x, u64 n) {
    for (u64 i = (u64)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (u64)gridDim.x * blockDim.x) {
        u64 z = i * 0x9E3779B97F4A7C15ull + 0x5EEDull;
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
        z ^= z >> 31;
        x[i] = (float)((double)(z >> 11) / (double)(1ull << 53) * 2.0 - 1.0);
    }
}

// The floor: every value read once (their sum, so that nothing is left out).
__global__ void read_all(const float4* x, u64 n4, float* out) {
    float s = 0;
    for (u64 i = (u64)blockIdx.x * blockDim.x + threadIdx.x; i < n4; i += (u64)gridDim.x * blockDim.x) {
        const float4 v = x[i];
        s += v.x + v.y + v.z + v.w;
    }
    if (s == 12345.0f) out[0] = s;
}

// In no order: each warp reserves its round's pairs with one atomic.
__global__ void append_any_order(const float4* x, u64 n4, u32 lo_key, u32* keys, u32* idx, u64* count) {
    const u32 lane = threadIdx.x & 31;
    for (u64 base = (u64)blockIdx.x * blockDim.x; base < n4; base += (u64)gridDim.x * blockDim.x) {
        const u64 i = base + threadIdx.x;
        float v[4] = {0, 0, 0, 0};
        if (i < n4) {
            const float4 w = x[i];
            v[0] = w.x, v[1] = w.y, v[2] = w.z, v[3] = w.w;
        }
        u32 mine = 0;
        for (int j = 0; j < 4; ++j) mine += i < n4 && magnitude_key(v[j]) >= lo_key;
        u32 incl = mine;
        for (int d = 1; d < 32; d <<= 1) {
            const u32 up = __shfl_up_sync(0xffffffffu, incl, d);
            if (lane >= (u32)d) incl += up;
        }
        const u32 total = __shfl_sync(0xffffffffu, incl, 31);
        if (total == 0) continue;
        u64 at = 0;
        if (lane == 31) at = atomicAdd(count, (u64)total);
        at = __shfl_sync(0xffffffffu, at, 31) + incl - mine;
        for (int j = 0; j < 4; ++j) {
            if (i < n4 && magnitude_key(v[j]) >= lo_key) {
                keys[at] = magnitude_key(v[j]);
                idx[at] = (u32)(4 * i + j);
                ++at;
            }
        }
    }
}

// A tile's values: round r of thread k holds the 4 PER values from 4 PER (r THREADS + k) of
// the tile, so that index order is (round, thread, value).
struct Tile {
    float v[ROUNDS][4 * PER];
};

__device__ __forceinline__ u64 first_vec(u64 t, int r) {
    return t * (TILE / 4) + ((u64)r * THREADS + threadIdx.x) * PER;
}

__device__ __forceinline__ void load_tile(const float4* x, u64 n4, u64 t, Tile& tile) {
    for (int r = 0; r < ROUNDS; ++r) {
        const u64 first = first_vec(t, r);
        for (int p = 0; p < PER; ++p) {
            float4 w = make_float4(0, 0, 0, 0);
            if (first + p < n4) w = x[first + p];
            tile.v[r][4 * p] = w.x, tile.v[r][4 * p + 1] = w.y, tile.v[r][4 * p + 2] = w.z, tile.v[r][4 * p + 3] = w.w;
        }
    }
}

__device__ __forceinline__ bool kept(const Tile& tile, int r, int j, u64 t, u64 n4, u32 lo_key) {
    return first_vec(t, r) + j / 4 < n4 && magnitude_key(tile.v[r][j]) >= lo_key;
}

// The tile's kept values counted: each thread's place among them by round (16-bit fields of
// `exclusive`: a round keeps at most 4 PER THREADS values), where each round starts, and the
// tile's count. Ends with the block's barrier.
__device__ __forceinline__ u64 scan_tile(const Tile& tile, u64 t, u64 n4, u32 lo_key, u64* warp_sums,
                                         u64& exclusive, u64 (&round_start)[ROUNDS]) {
    const u32 lane = threadIdx.x & 31, warp = threadIdx.x / 32;
    u64 packed = 0;
    for (int r = 0; r < ROUNDS; ++r) {
        u32 c = 0;
        for (int j = 0; j < 4 * PER; ++j) c += kept(tile, r, j, t, n4, lo_key);
        packed += (u64)c << (16 * r);
    }
    u64 incl = packed;
    for (int d = 1; d < 32; d <<= 1) {
        const u64 up = __shfl_up_sync(0xffffffffu, incl, d);
        if (lane >= (u32)d) incl += up;
    }
    if (lane == 31) warp_sums[warp] = incl;
    __syncthreads();
    u64 before_warp = 0, fields = 0;
    for (u32 w = 0; w < THREADS / 32; ++w) {
        if (w < warp) before_warp += warp_sums[w];
        fields += warp_sums[w];
    }
    exclusive = before_warp + incl - packed;
    u64 count = 0;
    for (int r = 0; r < ROUNDS; ++r) {
        round_start[r] = count;
        count += (fields >> (16 * r)) & 0xffff;
    }
    __syncthreads();
    return count;
}

// Warp 0: tile t's count published before (`status[t]`), the sum of the counts of the tiles
// before it, looking back over their published words until one holds a running total; then
// tile t's running total published.
__device__ __forceinline__ u64 look_back(u64* status, u64 t, u64 count) {
    const u32 lane = threadIdx.x & 31;
    u64 sum = 0;
    if (t == 0) return 0;
    u64 look = t;  // lane l reads tile look - 1 - l
    for (;;) {
        u64 word = 0;
        const bool real = look > lane;
        do {
            word = real ? *(volatile u64*)&status[look - 1 - lane] : FLAG_TOTAL;
        } while (__any_sync(0xffffffffu, (word >> 62) == 0));
        const u32 totals = __ballot_sync(0xffffffffu, (word & FLAG_TOTAL) != 0 && real);
        const u32 stop = totals ? (u32)__ffs(totals) - 1 : 32;
        u64 part = real && lane <= stop ? (word & VALUE_MASK) : 0;
        for (int d = 16; d > 0; d >>= 1) part += __shfl_down_sync(0xffffffffu, part, d);
        sum += __shfl_sync(0xffffffffu, part, 0);
        if (totals || look <= 32) break;
        look -= 32;
    }
    if (lane == 0) *(volatile u64*)&status[t] = FLAG_TOTAL | (sum + count);
    return sum;
}

__device__ __forceinline__ void write_tile(const Tile& tile, u64 t, u64 n4, u32 lo_key, u64 base, u64 exclusive,
                                           const u64 (&round_start)[ROUNDS], u32* keys, u32* idx) {
    for (int r = 0; r < ROUNDS; ++r) {
        u64 at = base + round_start[r] + ((exclusive >> (16 * r)) & 0xffff);
        const u64 first = first_vec(t, r);
        for (int j = 0; j < 4 * PER; ++j) {
            if (kept(tile, r, j, t, n4, lo_key)) {
                keys[at] = magnitude_key(tile.v[r][j]);
                idx[at] = (u32)(4 * first + j);
                ++at;
            }
        }
    }
}

// In index order: see the header. `status` (one word a tile) and `ticket` start at zero. With
// PIPELINED, a block takes its next tile and issues its loads before it looks back for the
// current one, so that the loads overlap the wait.
template <bool PIPELINED>
__global__ void __launch_bounds__(THREADS) append_in_order(const float4* x, u64 n4, u32 lo_key, u32* keys,
                                                           u32* idx, u64* status, u32* ticket, u64 tiles) {
    __shared__ u64 warp_sums[THREADS / 32];
    __shared__ u32 ticket_of_block;
    __shared__ u64 before_tile;
    if (threadIdx.x == 0) ticket_of_block = atomicAdd(ticket, 1u);
    __syncthreads();
    u64 t = ticket_of_block;
    Tile tile, next;
    if (t < tiles) load_tile(x, n4, t, tile);
    while (t < tiles) {
        u64 exclusive, round_start[ROUNDS];
        const u64 count = scan_tile(tile, t, n4, lo_key, warp_sums, exclusive, round_start);
        if (threadIdx.x == 0) {
            *(volatile u64*)&status[t] = (t == 0 ? FLAG_TOTAL : FLAG_COUNT) | count;
            if (PIPELINED) ticket_of_block = atomicAdd(ticket, 1u);
        }
        __syncthreads();
        const u64 t_next = PIPELINED ? ticket_of_block : 0;
        if (PIPELINED && t_next < tiles) load_tile(x, n4, t_next, next);
        if (threadIdx.x < 32) {
            const u64 sum = look_back(status, t, count);
            if (threadIdx.x == 0) before_tile = sum;
        }
        __syncthreads();
        write_tile(tile, t, n4, lo_key, before_tile, exclusive, round_start, keys, idx);
        __syncthreads();
        if (PIPELINED) {
            t = t_next;
            tile = next;
        } else {
            if (threadIdx.x == 0) ticket_of_block = atomicAdd(ticket, 1u);
            __syncthreads();
            t = ticket_of_block;
            if (t < tiles) load_tile(x, n4, t, tile);
        }
    }
}

template <typename F>
float median_ms(F launch, int reps) {
    cudaEvent_t a, b;
    CHECK(cudaEventCreate(&a));
    CHECK(cudaEventCreate(&b));
    launch();
    std::vector<float> t;
    for (int r = 0; r < reps; ++r) {
        CHECK(cudaEventRecord(a));
        launch();
        CHECK(cudaEventRecord(b));
        CHECK(cudaEventSynchronize(b));
        float ms;
        CHECK(cudaEventElapsedTime(&ms, a, b));
        t.push_back(ms);
    }
    std::sort(t.begin(), t.end());
    return t[t.size() / 2];
}

int main(int argc, char** argv) {
    const int log2n = argc > 1 ? atoi(argv[1]) : 26;
    const u64 n = 1ull << log2n, n4 = n / 4, tiles = (n + TILE - 1) / TILE;
    float *x, *dummy;
    u32 *keys, *idx, *ticket;
    u64 *count, *status;
    CHECK(cudaMalloc(&x, n * 4));
    CHECK(cudaMalloc(&dummy, 4));
    CHECK(cudaMalloc(&keys, n * 4));
    CHECK(cudaMalloc(&idx, n * 4));
    CHECK(cudaMalloc(&count, 8));
    CHECK(cudaMalloc(&status, tiles * 8));
    CHECK(cudaMalloc(&ticket, 4));
    generate<<<1024, 256>>>(x, n);
    std::vector<float> host(n);
    CHECK(cudaMemcpy(host.data(), x, n * 4, cudaMemcpyDeviceToHost));
    int sms;
    CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
    const int blocks = sms * (argc > 2 ? atoi(argv[2]) : 8);
    const float floor_ms = median_ms([&] { read_all<<<blocks, THREADS>>>((const float4*)x, n4, dummy); }, 11);
    printf("n=2^%d tiles=%llu floor %.4f ms\n", log2n, tiles, floor_ms);
    bool all_ok = true;
    for (double share : {0.003, 0.015, 0.25}) {
        const u32 lo_key = magnitude_key((float)(1.0 - share));
        const float any_ms = median_ms(
            [&] {
                CHECK(cudaMemsetAsync(count, 0, 8));
                append_any_order<<<blocks, THREADS>>>((const float4*)x, n4, lo_key, keys, idx, count);
            },
            11);
        // The host's pairs, in index order.
        std::vector<u32> want_key, want_idx;
        for (u64 i = 0; i < n; ++i) {
            if (magnitude_key(host[i]) >= lo_key) {
                want_key.push_back(magnitude_key(host[i]));
                want_idx.push_back((u32)i);
            }
        }
        float ordered_ms[2];
        bool ok = true;
        for (int pipelined = 0; pipelined < 2; ++pipelined) {
            CHECK(cudaMemset(keys, 0xff, n * 4));
            CHECK(cudaMemset(idx, 0xff, n * 4));
            ordered_ms[pipelined] = median_ms(
                [&] {
                    CHECK(cudaMemsetAsync(status, 0, tiles * 8));
                    CHECK(cudaMemsetAsync(ticket, 0, 4));
                    if (pipelined)
                        append_in_order<true><<<blocks, THREADS>>>((const float4*)x, n4, lo_key, keys, idx, status,
                                                                   ticket, tiles);
                    else
                        append_in_order<false><<<blocks, THREADS>>>((const float4*)x, n4, lo_key, keys, idx, status,
                                                                    ticket, tiles);
                },
                11);
            CHECK(cudaGetLastError());
            CHECK(cudaDeviceSynchronize());
            u64 last = 0;
            CHECK(cudaMemcpy(&last, status + tiles - 1, 8, cudaMemcpyDeviceToHost));
            std::vector<u32> got_key(want_key.size()), got_idx(want_idx.size());
            CHECK(cudaMemcpy(got_key.data(), keys, got_key.size() * 4, cudaMemcpyDeviceToHost));
            CHECK(cudaMemcpy(got_idx.data(), idx, got_idx.size() * 4, cudaMemcpyDeviceToHost));
            ok &= (last >> 62) == 2 && (last & VALUE_MASK) == want_key.size() && got_key == want_key &&
                  got_idx == want_idx;
        }
        all_ok &= ok;
        printf("kept %.3f (%zu pairs): any order %.4f ms (%.2fx floor), index order %.4f ms (%.2fx), pipelined "
               "%.4f ms (%.2fx) %s\n",
               share, want_key.size(), any_ms, any_ms / floor_ms, ordered_ms[0], ordered_ms[0] / floor_ms,
               ordered_ms[1], ordered_ms[1] / floor_ms, ok ? "both equal to the host's" : "DIFFERENT FROM THE HOST'S");
    }
    return all_ok ? 0 : 1;
}
