// The local passes of distributed selection (kernels/distributed.cu) timed on one GPU, kernel by
// kernel: a read of the data (the floor), the statistics, the first pass's count (with and
// without each input's bucket written), the totals, the offsets, and the reduction to the
// active buckets of 101 percentiles (from the buckets written, and recomputing them), on 2^L
// uniform f32 with the plan DIBMS's root makes from a 1024-key sample (16 intervals of 512
// buckets, value projections). CUDA events, median of 11 after one untimed run. The checks
// line (hashes of the counts, the buckets and the extremes) lets two versions of the kernels
// be compared for equal results. Built with the GPU machine's nvcc:
//
//     cp kernels/distributed.cu kernels/common.cuh /tmp/k/
//     nvcc -O3 -std=c++17 -arch=sm_90 -I /tmp/k benches/distributed_passes.cu -o passes
//     ./passes 30          # L = 30: 2^30 values
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>
#include <algorithm>
#include <cuda_runtime.h>
#include "distributed.cu"
#define COUNT(IDS) dist_count_f32<<<blocks, BLOCK, buckets * 4>>>(x, n, iv, p, buckets, 1, partial, IDS)
#define REDUCE_IDS dist_reduce_ids_f32<<<blocks, BLOCK>>>(x, ids, n, buckets, dslot, a, offsets, out, ext)
#define REDUCE dist_reduce_f32<<<blocks, BLOCK>>>(x, n, iv, p, dslot, a, offsets, out, ext)

__host__ __device__ unsigned long long hbits(unsigned long long i) {
    unsigned long long z = i * 0x9E3779B97F4A7C15ull + 0x12345678ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}
__global__ void gen(float* out, unsigned long long n) {
    for (unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; i < n;
         i += (unsigned long long)gridDim.x * blockDim.x)
        out[i] = (float)(hbits(i) >> 40) / 16777216.0f;
}
__global__ void readsum(const float4* x, unsigned long long n4, float* out) {
    float s = 0;
    for (unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; i < n4;
         i += (unsigned long long)gridDim.x * blockDim.x) { float4 v = x[i]; s += v.x + v.y + v.z + v.w; }
    if (s == 12345.f) *out = s;
}
__global__ void idsum(const unsigned short* ids, unsigned long long n, unsigned long long* out) {
    unsigned long long s = 0;
    for (unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; i < n;
         i += (unsigned long long)gridDim.x * blockDim.x) s += (unsigned long long)ids[i] * (i % 1000003 + 1);
    atomicAdd(out, s);
}
static unsigned key_of(float f) { unsigned u; memcpy(&u, &f, 4); return (u & 0x80000000u) ? ~u : (u | 0x80000000u); }
static float val_of(unsigned k) { unsigned u = (k & 0x80000000u) ? (k & 0x7fffffffu) : ~k; float f; memcpy(&f, &u, 4); return f; }



#define CK(x) do { cudaError_t e = (x); if (e) { printf("%s: %s\n", #x, cudaGetErrorString(e)); exit(1); } } while (0)

template <typename F> float timeit(F f, int reps = 11) {
    cudaEvent_t a, b; cudaEventCreate(&a); cudaEventCreate(&b);
    std::vector<float> t;
    f();
    for (int r = 0; r < reps; ++r) { cudaEventRecord(a); f(); cudaEventRecord(b); cudaEventSynchronize(b); float ms; cudaEventElapsedTime(&ms, a, b); t.push_back(ms); }
    std::sort(t.begin(), t.end()); return t[t.size() / 2];
}

int main(int argc, char** argv) {
    int log2n = argc > 1 ? atoi(argv[1]) : 30;
    unsigned long long n = 1ull << log2n;
    const unsigned B = 8192, BLOCK = 256;
    int sms; cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
    float* x; CK(cudaMalloc(&x, n * 4));
    gen<<<4096, 256>>>(x, n); CK(cudaDeviceSynchronize());
    float* junk; cudaMalloc(&junk, 4);
    float t_read = timeit([&] { readsum<<<sms * 8, 256>>>((const float4*)x, n / 4, junk); });
    // stats
    unsigned long long* st; cudaMalloc(&st, 32);
    unsigned long long init[4] = {0, ~0ull, ~0ull, 0};
    unsigned sblocks = std::min<unsigned long long>((n + 8 * 256 - 1) / (8 * 256), sms * 8);
    float t_stats = timeit([&] { cudaMemcpyAsync(st, init, 32, cudaMemcpyHostToDevice); dist_stats_f32<<<sblocks, 256>>>(x, n, 0, st); });
    unsigned long long s[4]; cudaMemcpy(s, st, 32, cudaMemcpyDeviceToHost);
    // sample and plan (as sampled_plan: 16 intervals, B/16 buckets each, value projections)
    std::vector<unsigned> sample;
    unsigned long long z = 77;
    for (int i = 0; i < 1024; ++i) { z = hbits(z); unsigned long long pos = z % n; sample.push_back(key_of((float)(hbits(pos) >> 40) / 16777216.0f)); }
    std::sort(sample.begin(), sample.end());
    unsigned long long mn = s[2], mx = s[3];
    std::vector<unsigned long long> cuts = {mn};
    for (int j = 1; j < 16; ++j) { unsigned long long c = sample[j * 1024 / 16]; if (c > cuts.back() && c < mx) cuts.push_back(c); }
    unsigned per = B / cuts.size();
    std::vector<unsigned long long> words;
    unsigned first = 0;
    for (size_t j = 0; j < cuts.size(); ++j) {
        unsigned long long lo = cuts[j], hi = j + 1 < cuts.size() ? cuts[j + 1] - 1 : mx;
        double lv = val_of(lo), hv = val_of(hi), scale = per / (hv - lv);
        unsigned long long lb, sb; memcpy(&lb, &lv, 8); memcpy(&sb, &scale, 8);
        unsigned long long w[8] = {lo, hi, 0, 0, lb, sb, first | ((unsigned long long)per << 32), 1};
        words.insert(words.end(), w, w + 8);
        first += per;
    }
    unsigned p = cuts.size(), buckets = first;
    unsigned long long* iv; cudaMalloc(&iv, words.size() * 8); cudaMemcpy(iv, words.data(), words.size() * 8, cudaMemcpyHostToDevice);
    unsigned blocks = std::min<unsigned long long>((n + 8 * BLOCK - 1) / (8 * BLOCK), std::min(4 * sms, 1024));
    unsigned* partial; cudaMalloc(&partial, (size_t)blocks * buckets * 4);
    unsigned short* ids; CK(cudaMalloc(&ids, n * 2));
    unsigned long long* counts; cudaMalloc(&counts, buckets * 8);
    float t_count = timeit([&] { COUNT(ids); });
    CK(cudaGetLastError());
    float t_count_noids = timeit([&] { COUNT(nullptr); });
    float t_totals = timeit([&] { dist_totals<<<(buckets + 255) / 256, 256>>>(partial, blocks, buckets, counts); });
    COUNT(ids);
    dist_totals<<<(buckets + 255) / 256, 256>>>(partial, blocks, buckets, counts);
    std::vector<unsigned long long> c(buckets); cudaMemcpy(c.data(), counts, buckets * 8, cudaMemcpyDeviceToHost);
    unsigned long long hsum = 0, total = 0; for (unsigned b = 0; b < buckets; ++b) { hsum = hsum * 1000003 + c[b]; total += c[b]; }
    unsigned long long* ids_sum; cudaMalloc(&ids_sum, 8); cudaMemset(ids_sum, 0, 8);
    idsum<<<1024, 256>>>(ids, n, ids_sum); unsigned long long isum; cudaMemcpy(&isum, ids_sum, 8, cudaMemcpyDeviceToHost);
    // active buckets of 101 percentiles
    std::vector<unsigned> slot(buckets, ~0u), active;
    unsigned long long run = 0, kept = 0; int t = 0;
    for (unsigned b = 0; b < buckets; ++b) {
        unsigned long long end = run + c[b]; bool act = false;
        while (t <= 100 && (unsigned long long)((double)t / 100 * (n - 1)) < end) { act = true; ++t; }
        // linear method also needs the next rank
        if (act || (t <= 100 && (unsigned long long)((double)t / 100 * (n - 1)) + 1 < end && (unsigned long long)((double)t / 100 * (n - 1)) + 1 >= run)) { slot[b] = active.size(); active.push_back(b); kept += c[b]; }
        run = end;
    }
    unsigned a = active.size();
    unsigned *dslot, *dlist; cudaMalloc(&dslot, buckets * 4); cudaMalloc(&dlist, a * 4);
    cudaMemcpy(dslot, slot.data(), buckets * 4, cudaMemcpyHostToDevice); cudaMemcpy(dlist, active.data(), a * 4, cudaMemcpyHostToDevice);
    unsigned long long* offsets; cudaMalloc(&offsets, (blocks + 1) * 8);
    float t_offsets = timeit([&] { dist_offsets<<<1, 1024>>>(partial, blocks, buckets, dlist, a, offsets); });
    unsigned* out; cudaMalloc(&out, kept * 4 + 4);
    unsigned long long* ext; cudaMalloc(&ext, 16 * a);
    float t_reduce_ids = timeit([&] { cudaMemsetAsync(ext, 0, 16 * a); REDUCE_IDS; });
    std::vector<unsigned long long> e(2 * a); cudaMemcpy(e.data(), ext, 16 * a, cudaMemcpyDeviceToHost);
    unsigned long long esum = 0; for (auto v : e) esum = esum * 31 + v;
    float t_reduce = timeit([&] { cudaMemsetAsync(ext, 0, 16 * a); REDUCE; });
    cudaMemcpy(e.data(), ext, 16 * a, cudaMemcpyDeviceToHost);
    unsigned long long esum2 = 0; for (auto v : e) esum2 = esum2 * 31 + v;
    CK(cudaDeviceSynchronize());
    printf("n=2^%d p=%u buckets=%u blocks=%u active=%u kept=%llu total=%llu\n", log2n, p, buckets, blocks, a, kept, total);
    printf("read %.3f ms | stats %.3f | count(ids) %.3f | count %.3f | totals %.3f | offsets %.3f | reduce_ids %.3f | reduce %.3f\n",
           t_read, t_stats, t_count, t_count_noids, t_totals, t_offsets, t_reduce_ids, t_reduce);
    printf("checks: hist %llx ids %llx ext %llx ext2 %llx\n", hsum, isum, esum, esum2);
    return 0;
}
