// randomizedSelect's splitter selection alone (rnd_sample and rnd_splitters of
// kernels/randomized_select.cu, included as the library compiles them): both splitters checked
// against the host's sort of the sample, and their kernel timed with CUDA events (median of 30
// after one untimed run; the sample stays in L2 as in a selection). Inputs of 2^28 values:
// uniform, normal, 16 distinct values, and values sharing their first digit; ranks 0, n/100, n/2
// and n - 1. Built and run on the GPU machine:
//
//     nvcc -O3 -std=c++17 -arch=sm_90 -Ikernels benches/splitters.cu -o splitters && ./splitters
//     nvcc ... -DRND_SPLIT_LOADS=16 ...   # another number of loads a thread in flight
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <vector>
#include <cuda_runtime.h>
#include "randomized_select.cu"

// x[i] from a hash of i: kind 0 uniform in [0, 1), 1 normal, 2 one of 16 values, 3 values in
// [1, 1 + 2^-16) (one first digit).
template <typename T>
__global__ void generate(T* x, u64 n, int kind) {
    for (u64 i = blockIdx.x * (u64)blockDim.x + threadIdx.x; i < n; i += (u64)gridDim.x * blockDim.x) {
        u64 h = (i + 12345) * 0x9E3779B97F4A7C15ull;
        h ^= h >> 31;
        h *= 0xBF58476D1CE4E5B9ull;
        h ^= h >> 29;
        double u = (double)(h >> 11) / 9007199254740992.0;
        if (kind == 1) {
            u64 g = h * 0xD6E8FEB86659FD93ull;
            g ^= g >> 32;
            const double v = (double)(g >> 11) / 9007199254740992.0 + 1e-300;
            u = sqrt(-2 * log(v)) * cos(6.283185307179586 * u);
        }
        if (kind == 2) u = (double)(h % 16);
        if (kind == 3) u = 1.0 + (double)(h >> 48) / 4294967296.0;
        x[i] = (T)u;
    }
}

// The sample ranks of the splitters for rank k (src/select/randomized/cuda.rs's splitter_ranks).
static void splitter_ranks(u64 k, u64 n, u64 s, u64* lo, u64* hi) {
    const double sf = s, p = (k + 0.5) / n, w = 4.0 * sqrt(sf * p * (1 - p)) + 2.0;
    const double a = p * sf - w, b = p * sf + w;
    *lo = a >= 0 ? (u64)a : ~0ull;
    *hi = b < sf - 1 ? (u64)ceil(b) : ~0ull;
}

static int failures = 0;

template <typename T, typename K>
static void run(const char* type, const char* input, int kind, u64 k_of_n(u64),
                void (*sample_kernel)(const T*, u64, K*, u64, u64, u32*),
                void (*splitters_kernel)(const K*, u64, const u32*, u64, u64, K*, u64*)) {
    const u64 n = 1ull << 28, s = 1 << 16;
    T* x;
    K *sample, *bounds;
    u32* top;
    u64* counters;
    cudaMalloc(&x, n * sizeof(T));
    cudaMalloc(&sample, s * sizeof(K));
    cudaMalloc(&top, 2048 * sizeof(u32));
    cudaMalloc(&bounds, 2 * sizeof(K));
    cudaMalloc(&counters, RND_COUNTERS * sizeof(u64));
    generate<T><<<1024, 256>>>(x, n, kind);
    cudaMemset(top, 0, 2048 * sizeof(u32));
    sample_kernel<<<s / 256, 256>>>(x, n, sample, s, 0x5EED0F5A3F1Eull, top);
    const u64 k = k_of_n(n);
    u64 r_lo, r_hi;
    splitter_ranks(k, n, s, &r_lo, &r_hi);
    std::vector<K> sorted(s);
    cudaMemcpy(sorted.data(), sample, s * sizeof(K), cudaMemcpyDeviceToHost);
    std::sort(sorted.begin(), sorted.end());
    cudaEvent_t start, stop;
    cudaEventCreate(&start);
    cudaEventCreate(&stop);
    std::vector<float> us;
    for (int rep = 0; rep < 31; ++rep) {
        cudaEventRecord(start);
        splitters_kernel<<<2, RND_SPLIT_BLOCK>>>(sample, s, top, r_lo, r_hi, bounds, counters);
        cudaEventRecord(stop);
        cudaEventSynchronize(stop);
        float ms;
        cudaEventElapsedTime(&ms, start, stop);
        if (rep > 0) us.push_back(ms * 1000);
        K got[2];
        u64 dups[RND_COUNTERS];
        cudaMemcpy(got, bounds, sizeof(got), cudaMemcpyDeviceToHost);
        cudaMemcpy(dups, counters, sizeof(dups), cudaMemcpyDeviceToHost);
        const K want_lo = r_lo < s ? sorted[r_lo] : (K)0, want_hi = r_hi < s ? sorted[r_hi] : (K)~(K)0;
        const bool ok = got[0] == want_lo && got[1] == want_hi &&
                        (r_lo >= s || dups[RND_DUPS_LO] == (u64)std::count(sorted.begin(), sorted.end(), want_lo)) &&
                        (r_hi >= s || dups[RND_DUPS_HI] == (u64)std::count(sorted.begin(), sorted.end(), want_hi));
        if (!ok && failures++ < 10) {
            printf("MISMATCH %s %s k = %llu: got %llx %llx, want %llx %llx\n", type, input, k, (u64)got[0],
                   (u64)got[1], (u64)want_lo, (u64)want_hi);
        }
    }
    std::sort(us.begin(), us.end());
    printf("%s %-10s k = %-10llu splitters %6.1f us (min %.1f) %s\n", type, input, k, us[us.size() / 2], us[0],
           cudaGetErrorString(cudaGetLastError()));
    cudaFree(x);
    cudaFree(sample);
    cudaFree(top);
    cudaFree(bounds);
    cudaFree(counters);
}

int main() {
    printf("RND_SPLIT_LOADS %d, RND_SPLIT_BLOCK %d\n", RND_SPLIT_LOADS, RND_SPLIT_BLOCK);
    const char* inputs[] = {"uniform", "normal", "distinct16", "one-digit"};
    u64 (*ranks[])(u64) = {[](u64 n) { return n / 2; }, [](u64 n) { return n / 100; },
                           [](u64) { return (u64)0; }, [](u64 n) { return n - 1; }};
    for (int kind = 0; kind < 4; ++kind) {
        for (auto rank : ranks) {
            run<float, u32>("f32", inputs[kind], kind, rank, rnd_sample_f32, rnd_splitters_k32);
            run<double, u64>("f64", inputs[kind], kind, rank, rnd_sample_f64, rnd_splitters_k64);
        }
    }
    printf("%d mismatches\n", failures);
    return failures != 0;
}
