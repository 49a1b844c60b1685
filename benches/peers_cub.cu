// CUB's top-k as a benchmark peer: cub::DeviceBatchedTopK over the rows of a matrix and
// cub::DeviceTopK over one array, timed the way benches/peers_batch.py times torch.topk.
//
//   nvcc -O3 -std=c++17 -arch=sm_90 -I<CCCL include> benches/peers_cub.cu -o peers_cub
//   ./peers_cub --json cub.json                       # the default cases (below)
//   ./peers_cub --case 65536x1024:16,256 --case 1x268435456:32,1024,65536 --json cub.json
//   ./peers_cub --shapes 65536x1024,1024x1048576 --ks-short 16,256 --ks-long 32,1024,65536
//   ./peers_cub --dry-run                             # the cases it would time; no GPU
//
// benches/peers_cub.sh builds and runs it. It needs CCCL 3.6 or later: DeviceBatchedTopK first
// appears in 3.5.0 with rows of one thread block at most; 3.6 takes rows of up to 2^21 values
// (thread-block clusters, sm_90 and later) and sorts the output for k up to what one block sorts.
// A case beyond that is recorded with its reason in "error" and the run goes on.
//
// Inputs: each ROWSxCOLS matrix (row-major, rows contiguous) of uniform values in [0, 1) made on
// the GPU by a counter-based hash (seeded; 24 random bits for f32, 53 for f64). A matrix of
// more than one row goes to DeviceBatchedTopK, one segment a row; a 1xN shape (one array) to
// DeviceTopK. Each input is rotated among copies totalling >= 512 MiB (at most 8) so that L2
// never holds it. For every k: the k largest and the k smallest, keys only ({Max,Min}Keys) and
// keys with their int32 column index ({Max,Min}Pairs, the values being a counting iterator), the
// output unsorted and (DeviceBatchedTopK only) sorted. All calls ask for what
// CUB implements: cuda::execution::require(determinism::not_guaranteed, tie_break::unspecified
// (DeviceBatchedTopK only), output_ordering::unsorted or sorted).
//
// Timing: temporary storage queried and allocated once per case, outside the timings; the call
// is checked once on the first copy, then two warm-up calls, one more whose time decides the
// number of runs (--slow-reps for a call slower than 100 ms), then --reps runs, each between
// CUDA events on the default stream, rotating among the copies; median and minimum. The floor,
// cub::DeviceReduce::Sum over the same array (one read), is timed the same way in the same run.
//
// Checks (on the first copy's output): DeviceBatchedTopK, --check-rows rows spread over the
// matrix: the keys returned, sorted, equal the k largest (smallest) of the row found on the host
// with std::nth_element; with indices, each index is in the row, distinct, and points at the key
// returned beside it; sorted output is in order. DeviceTopK: the k-th value t is the least
// (greatest) key returned; a kernel counts the values beyond t and equal to t and gathers those
// beyond it; the keys returned must be those values and k - (their count) copies of t, with t
// present at least that often; with indices, the values at the indices (gathered on the GPU) are
// the keys returned, the indices distinct. "correct" is false on any mismatch (the run goes on).
//
// JSON (rewritten after each case, so a run cut short keeps what it finished):
//   {"benchmark": "peers_cub", "device", "arch", "date", "command", "cccl", "cccl_version",
//    "cuda_runtime", "cuda_driver", "nvcc", "timing", "floor", "requirements", "results": [...]}
// Each result:
//   {"peer": "cub.DeviceBatchedTopK.MaxPairs", "api": "DeviceBatchedTopK", "case": "top-k",
//    "dtype": "f32", "type": "f32", "dist": "uniform", "shape": "65536x1024", "rows": 65536,
//    "cols": 1024, "k": 16, "largest": true, "sorted": false, "with_indices": true,
//    "bytes": 268435456, "copies": 2, "seg_bound": 1024, "k_bound": null, "temp_bytes": 1,
//    "median_ms": 0.41, "min_ms": 0.40, "reps": 21, "floor_ms": 0.09, "ratio_to_floor": 4.5,
//    "correct": true, "checked": "8 rows against std::nth_element", "device": "NVIDIA H100 ..."}
// The floor of each input is a result too: peer "cub.DeviceReduce.Sum", case "floor", k, largest,
// sorted and with_indices null. Sorted cases add ".sorted" to the peer's name and give k_bound,
// the compile-time bound of k they were called with (seg_bound is that of the row's length). A
// wrong result adds "mismatch", what differed. A case that could not run has "error" (CUB's or
// CUDA's message, or the limit it exceeds) in place of the timings and "correct": null.
//
// The default cases (f32, 76 top-k cases and 5 floors) take under a minute on an H100 or H200
// (the batch inputs of scripts/headline.sh: 5 s on an H200, 2026-11-28); the build takes minutes
// (about 3 on the 2-core development machine with -DPEERS_CUB_F64=0; -DPEERS_CUB_F64=0 and
// -DPEERS_CUB_SORTED=0 shorten it).

#define CUB_DISABLE_TOPK_UNSUPPORTED_ARCH_ASSERT 1

#include <cub/device/device_batched_topk.cuh>
#include <cub/device/device_reduce.cuh>
#include <cub/device/device_topk.cuh>
#include <cub/version.cuh>

#include <cuda/__execution/determinism.h>
#include <cuda/__execution/output_ordering.h>
#include <cuda/__execution/require.h>
#include <cuda/__execution/tie_break.h>
#include <cuda/argument>
#include <cuda/iterator>
#include <cuda/std/__execution/env.h>

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <functional>
#include <limits>
#include <sstream>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include <cuda_runtime.h>

// DeviceBatchedTopK first appears in CCCL 3.5.0, with rows of one thread block at most and no
// sorted output; 3.6 added rows of up to 2^21 values (thread-block clusters, sm_90 and later)
// and sorted output. This program needs 3.6.
#if !defined(CCCL_VERSION) || CCCL_VERSION < 3006000
#  error "peers_cub.cu needs CCCL 3.6.0 or later (cub::DeviceBatchedTopK with its cluster backend); pass its include directory with -I"
#endif

// f64 doubles the instantiations (and the build time); -DPEERS_CUB_F64=0 leaves it out.
#ifndef PEERS_CUB_F64
#  define PEERS_CUB_F64 1
#endif
// Sorted output (CCCL >= 3.6) is most of the instantiations; -DPEERS_CUB_SORTED=0 leaves it out.
#ifndef PEERS_CUB_SORTED
#  define PEERS_CUB_SORTED 1
#endif

namespace
{

// --- Errors ------------------------------------------------------------------------------------

struct Failure : std::runtime_error
{
  using std::runtime_error::runtime_error;
};

std::string cuda_text(cudaError_t e)
{
  return std::string(cudaGetErrorName(e)) + ": " + cudaGetErrorString(e);
}

void check(cudaError_t e, const char* what)
{
  if (e != cudaSuccess)
  {
    if (e == cudaErrorMemoryAllocation)
    {
      (void) cudaGetLastError();
      throw Failure("out of memory");
    }
    throw Failure(std::string(what) + ": " + cuda_text(e));
  }
}

#define CK(call) check((call), #call)

// Device memory freed on scope exit.
struct DeviceBuffer
{
  void* ptr    = nullptr;
  size_t bytes = 0;
  DeviceBuffer() = default;
  explicit DeviceBuffer(size_t n)
      : bytes(n)
  {
    check(cudaMalloc(&ptr, n == 0 ? 1 : n), "cudaMalloc");
  }
  DeviceBuffer(const DeviceBuffer&)            = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  DeviceBuffer(DeviceBuffer&& o) noexcept
      : ptr(o.ptr)
      , bytes(o.bytes)
  {
    o.ptr = nullptr;
  }
  DeviceBuffer& operator=(DeviceBuffer&& o) noexcept
  {
    if (this != &o)
    {
      if (ptr)
      {
        cudaFree(ptr);
      }
      ptr   = o.ptr;
      bytes = o.bytes;
      o.ptr = nullptr;
    }
    return *this;
  }
  ~DeviceBuffer()
  {
    if (ptr)
    {
      cudaFree(ptr);
    }
  }
  template <class T>
  T* as() const
  {
    return static_cast<T*>(ptr);
  }
};

// --- Types ---------------------------------------------------------------------------------------

enum class DType
{
  f32,
  f64
};

const char* dtype_name(DType t)
{
  return t == DType::f32 ? "f32" : "f64";
}

size_t dtype_bytes(DType t)
{
  return t == DType::f32 ? 4 : 8;
}

// --- Input generation and check kernels ---------------------------------------------------------

__host__ __device__ inline uint64_t splitmix64(uint64_t x)
{
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

__device__ inline float unit_value(uint64_t h, float*)
{
  return static_cast<float>(h >> 40) * 0x1p-24f; // 24 bits: [0, 1)
}

__device__ inline double unit_value(uint64_t h, double*)
{
  return static_cast<double>(h >> 11) * 0x1p-53; // 53 bits: [0, 1)
}

template <class T>
__global__ void fill_uniform(T* out, size_t n, uint64_t seed)
{
  const size_t stride = size_t(gridDim.x) * blockDim.x;
  for (size_t i = size_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride)
  {
    out[i] = unit_value(splitmix64(seed ^ (i * 0xD1B54A32D192ED03ull)), static_cast<T*>(nullptr));
  }
}

// counts[0]: values beyond t (greater for the largest, less for the smallest), counts[1]: values
// equal to t; the values beyond t are gathered into beyond[0, cap).
template <class T>
__global__ void count_beyond(const T* x, size_t n, T t, bool largest, unsigned long long* counts, T* beyond, size_t cap)
{
  unsigned long long n_beyond = 0, n_equal = 0;
  const size_t stride         = size_t(gridDim.x) * blockDim.x;
  for (size_t i = size_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride)
  {
    const T v = x[i];
    if (largest ? v > t : v < t)
    {
      ++n_beyond;
      const unsigned long long at = atomicAdd(&counts[2], 1ull);
      if (at < cap)
      {
        beyond[at] = v;
      }
    }
    else if (v == t)
    {
      ++n_equal;
    }
  }
  for (int off = 16; off > 0; off /= 2)
  {
    n_beyond += __shfl_down_sync(0xffffffffu, n_beyond, off);
    n_equal += __shfl_down_sync(0xffffffffu, n_equal, off);
  }
  if ((threadIdx.x & 31) == 0)
  {
    atomicAdd(&counts[0], n_beyond);
    atomicAdd(&counts[1], n_equal);
  }
}

template <class T>
__global__ void gather_keys(const T* x, const int* idx, int k, T* out)
{
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < k)
  {
    out[i] = x[idx[i]];
  }
}

int grid_for(size_t n, int block = 256)
{
  const size_t blocks = (n + block - 1) / block;
  return static_cast<int>(std::min<size_t>(std::max<size_t>(blocks, 1), 132 * 32));
}

template <class T>
void fill_input(void* p, size_t n, uint64_t seed)
{
  fill_uniform<T><<<grid_for(n), 256>>>(static_cast<T*>(p), n, seed);
  CK(cudaGetLastError());
}

// --- The CUB calls -----------------------------------------------------------------------------

// One call of the two-phase API: with temp == nullptr it writes the temporary storage needed.
using CallFn = std::function<cudaError_t(void* temp, size_t& temp_bytes, int copy)>;

// Compile-time upper bounds of the segment size (the smallest that holds the row is used; the
// default shapes' rows are exactly one of them) and of k for sorted output.
constexpr int kSegBounds[] = {1024, 4096, 16384, 131072, 262144, 1048576, 1 << 21};
constexpr int kNumSegBounds = sizeof(kSegBounds) / sizeof(kSegBounds[0]);
constexpr int kKBounds[]    = {16, 64, 256, 1024, 4096, 8192};
constexpr int kNumKBounds   = sizeof(kKBounds) / sizeof(kKBounds[0]);
constexpr int kMaxSegBound = 1 << 21; // the largest segment DeviceBatchedTopK takes (CCCL 3.6)

using BatchedFn = cudaError_t (*)(void*, size_t&, const void*, void*, int*, int, int, int);

template <class T, bool Max, bool Pairs, bool Sorted, int SegBound, int KBound>
cudaError_t batched_entry(void* temp, size_t& temp_bytes, const void* in, void* keys_out, int* values_out, int rows,
                          int cols, int k)
{
  const auto d_keys_in =
    cuda::make_strided_iterator(cuda::make_counting_iterator(static_cast<const T*>(in)), static_cast<ptrdiff_t>(cols));
  const auto d_keys_out =
    cuda::make_strided_iterator(cuda::make_counting_iterator(static_cast<T*>(keys_out)), static_cast<ptrdiff_t>(k));
  const auto segment_sizes = cuda::args::immediate{cols, cuda::args::bounds<1, SegBound>()};
  const auto order = [] {
    if constexpr (Sorted)
    {
      return cuda::execution::output_ordering::sorted;
    }
    else
    {
      return cuda::execution::output_ordering::unsorted;
    }
  }();
  const auto env = cuda::std::execution::env{cuda::execution::require(
    cuda::execution::determinism::not_guaranteed, cuda::execution::tie_break::unspecified, order)};
  const auto k_arg = [k] {
    if constexpr (Sorted)
    {
      return cuda::args::immediate{k, cuda::args::bounds<1, KBound>()};
    }
    else
    {
      return k;
    }
  }();
  if constexpr (Pairs)
  {
    // Each segment's values are its column indices 0, 1, ...
    const auto d_values_in = cuda::make_constant_iterator(cuda::make_counting_iterator(0));
    const auto d_values_out =
      cuda::make_strided_iterator(cuda::make_counting_iterator(values_out), static_cast<ptrdiff_t>(k));
    if constexpr (Max)
    {
      return cub::DeviceBatchedTopK::MaxPairs(
        temp, temp_bytes, d_keys_in, d_keys_out, d_values_in, d_values_out, segment_sizes, k_arg, rows, env);
    }
    else
    {
      return cub::DeviceBatchedTopK::MinPairs(
        temp, temp_bytes, d_keys_in, d_keys_out, d_values_in, d_values_out, segment_sizes, k_arg, rows, env);
    }
  }
  else
  {
    (void) values_out;
    if constexpr (Max)
    {
      return cub::DeviceBatchedTopK::MaxKeys(temp, temp_bytes, d_keys_in, d_keys_out, segment_sizes, k_arg, rows, env);
    }
    else
    {
      return cub::DeviceBatchedTopK::MinKeys(temp, temp_bytes, d_keys_in, d_keys_out, segment_sizes, k_arg, rows, env);
    }
  }
}

// The largest k whose sorted output one block of CUB's sort holds (0: no sorted output).
template <class T, bool Pairs>
constexpr long long sorted_k_max()
{
#if PEERS_CUB_SORTED
  using value_t = std::conditional_t<Pairs, int, cub::NullType>;
  return static_cast<long long>(cub::detail::batched_topk::sort_covered_max<T, value_t>());
#else
  return 0;
#endif
}

template <class T, bool Max, bool Pairs, int SegBound, int KBound>
BatchedFn sorted_entry_or_null()
{
#if PEERS_CUB_SORTED
  if constexpr (KBound <= SegBound && KBound <= sorted_k_max<T, Pairs>())
  {
    return &batched_entry<T, Max, Pairs, true, SegBound, KBound>;
  }
#endif
  return nullptr;
}

template <class T, bool Max, bool Pairs, int SegBound, size_t... K>
BatchedFn pick_sorted(int ki, std::index_sequence<K...>)
{
  BatchedFn f = nullptr;
  ((ki == static_cast<int>(K) ? (void) (f = sorted_entry_or_null<T, Max, Pairs, SegBound, kKBounds[K]>()) : (void) 0),
   ...);
  return f;
}

template <class T, bool Max, bool Pairs, int SegBound>
BatchedFn batched_for_bound(bool sorted, int ki)
{
  if constexpr (SegBound > kMaxSegBound)
  {
    return nullptr;
  }
  else
  {
    if (!sorted)
    {
      return &batched_entry<T, Max, Pairs, false, SegBound, 0>;
    }
    return pick_sorted<T, Max, Pairs, SegBound>(ki, std::make_index_sequence<kNumKBounds>{});
  }
}

template <class T, bool Max, bool Pairs, size_t... S>
BatchedFn pick_batched(bool sorted, int si, int ki, std::index_sequence<S...>)
{
  BatchedFn f = nullptr;
  ((si == static_cast<int>(S) ? (void) (f = batched_for_bound<T, Max, Pairs, kSegBounds[S]>(sorted, ki)) : (void) 0),
   ...);
  return f;
}

template <class T>
BatchedFn batched_fn_t(bool largest, bool pairs, bool sorted, int si, int ki)
{
  const auto seq = std::make_index_sequence<kNumSegBounds>{};
  if (largest)
  {
    return pairs ? pick_batched<T, true, true>(sorted, si, ki, seq) : pick_batched<T, true, false>(sorted, si, ki, seq);
  }
  return pairs ? pick_batched<T, false, true>(sorted, si, ki, seq) : pick_batched<T, false, false>(sorted, si, ki, seq);
}

BatchedFn batched_fn(DType t, bool largest, bool pairs, bool sorted, int si, int ki)
{
#if PEERS_CUB_F64
  if (t == DType::f64)
  {
    return batched_fn_t<double>(largest, pairs, sorted, si, ki);
  }
#endif
  return t == DType::f32 ? batched_fn_t<float>(largest, pairs, sorted, si, ki) : nullptr;
}

long long sorted_limit(DType t, bool pairs)
{
#if PEERS_CUB_F64
  if (t == DType::f64)
  {
    return pairs ? sorted_k_max<double, true>() : sorted_k_max<double, false>();
  }
#endif
  return pairs ? sorted_k_max<float, true>() : sorted_k_max<float, false>();
}

using TopKFn = cudaError_t (*)(void*, size_t&, const void*, void*, int*, int, int);

template <class T, bool Max, bool Pairs>
cudaError_t topk_entry(void* temp, size_t& temp_bytes, const void* in, void* keys_out, int* values_out, int n, int k)
{
  const auto env = cuda::std::execution::env{
    cuda::execution::require(cuda::execution::determinism::not_guaranteed, cuda::execution::output_ordering::unsorted)};
  const T* d_in = static_cast<const T*>(in);
  T* d_out      = static_cast<T*>(keys_out);
  if constexpr (Pairs)
  {
    const auto d_values_in = cuda::make_counting_iterator(0);
    if constexpr (Max)
    {
      return cub::DeviceTopK::MaxPairs(temp, temp_bytes, d_in, d_out, d_values_in, values_out, n, k, env);
    }
    else
    {
      return cub::DeviceTopK::MinPairs(temp, temp_bytes, d_in, d_out, d_values_in, values_out, n, k, env);
    }
  }
  else
  {
    (void) values_out;
    if constexpr (Max)
    {
      return cub::DeviceTopK::MaxKeys(temp, temp_bytes, d_in, d_out, n, k, env);
    }
    else
    {
      return cub::DeviceTopK::MinKeys(temp, temp_bytes, d_in, d_out, n, k, env);
    }
  }
}

template <class T>
TopKFn topk_fn_t(bool largest, bool pairs)
{
  if (largest)
  {
    return pairs ? &topk_entry<T, true, true> : &topk_entry<T, true, false>;
  }
  return pairs ? &topk_entry<T, false, true> : &topk_entry<T, false, false>;
}

TopKFn topk_fn(DType t, bool largest, bool pairs)
{
#if PEERS_CUB_F64
  if (t == DType::f64)
  {
    return topk_fn_t<double>(largest, pairs);
  }
#endif
  return t == DType::f32 ? topk_fn_t<float>(largest, pairs) : nullptr;
}

template <class T>
cudaError_t sum_entry(void* temp, size_t& temp_bytes, const void* in, void* out, size_t n)
{
  const T* d_in = static_cast<const T*>(in);
  if (n <= static_cast<size_t>(INT_MAX))
  {
    return cub::DeviceReduce::Sum(temp, temp_bytes, d_in, static_cast<T*>(out), static_cast<int>(n));
  }
  return cub::DeviceReduce::Sum(temp, temp_bytes, d_in, static_cast<T*>(out), static_cast<int64_t>(n));
}

cudaError_t sum_call(DType t, void* temp, size_t& temp_bytes, const void* in, void* out, size_t n)
{
  return t == DType::f32 ? sum_entry<float>(temp, temp_bytes, in, out, n)
                         : sum_entry<double>(temp, temp_bytes, in, out, n);
}

// --- Timing --------------------------------------------------------------------------------------

constexpr double kSlowMs = 100.0;

struct Timing
{
  double median_ms = 0, min_ms = 0;
  int reps = 0;
};

struct Events
{
  cudaEvent_t begin{}, end{};
  Events()
  {
    CK(cudaEventCreate(&begin));
    CK(cudaEventCreate(&end));
  }
  ~Events()
  {
    cudaEventDestroy(begin);
    cudaEventDestroy(end);
  }
};

void run_call(const CallFn& fn, void* temp, size_t temp_bytes, int copy)
{
  size_t bytes = temp_bytes;
  check(fn(temp, bytes, copy), "the call");
}

// Two warm-up calls, one whose time decides the runs, then the timed runs from copy `start`.
Timing timed(const CallFn& fn, void* temp, size_t temp_bytes, int copies, int reps, int slow_reps, int start)
{
  Events ev;
  for (int i = 0; i < 2; ++i)
  {
    run_call(fn, temp, temp_bytes, i % copies);
  }
  CK(cudaDeviceSynchronize());
  CK(cudaEventRecord(ev.begin));
  run_call(fn, temp, temp_bytes, 0);
  CK(cudaEventRecord(ev.end));
  CK(cudaEventSynchronize(ev.end));
  float ms = 0;
  CK(cudaEventElapsedTime(&ms, ev.begin, ev.end));
  if (ms > kSlowMs)
  {
    reps = std::min(reps, slow_reps);
  }
  reps = std::max(reps, 1);
  std::vector<double> times;
  for (int r = 0; r < reps; ++r)
  {
    CK(cudaEventRecord(ev.begin));
    run_call(fn, temp, temp_bytes, (start + r) % copies);
    CK(cudaEventRecord(ev.end));
    CK(cudaEventSynchronize(ev.end));
    CK(cudaEventElapsedTime(&ms, ev.begin, ev.end));
    times.push_back(ms);
  }
  std::vector<double> sorted = times;
  std::sort(sorted.begin(), sorted.end());
  const size_t m = sorted.size();
  Timing t;
  t.median_ms = m % 2 ? sorted[m / 2] : 0.5 * (sorted[m / 2 - 1] + sorted[m / 2]);
  t.min_ms    = sorted.front();
  t.reps      = reps;
  return t;
}

// --- JSON ---------------------------------------------------------------------------------------

std::string jstr(const std::string& s)
{
  std::string o = "\"";
  for (unsigned char c : s)
  {
    switch (c)
    {
      case '"':
        o += "\\\"";
        break;
      case '\\':
        o += "\\\\";
        break;
      case '\n':
        o += "\\n";
        break;
      case '\t':
        o += "\\t";
        break;
      default:
        if (c < 0x20)
        {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", c);
          o += buf;
        }
        else
        {
          o += static_cast<char>(c);
        }
    }
  }
  return o + "\"";
}

std::string jnum(double v)
{
  if (!std::isfinite(v))
  {
    return "null";
  }
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.9g", v);
  return buf;
}

std::string jint(long long v)
{
  return std::to_string(v);
}

std::string jbool(bool v)
{
  return v ? "true" : "false";
}

const std::string jnull = "null";

// An object whose fields keep their order; set() replaces a field or adds it at the end.
struct JObject
{
  std::vector<std::pair<std::string, std::string>> fields;
  JObject& set(const std::string& key, const std::string& raw)
  {
    for (auto& f : fields)
    {
      if (f.first == key)
      {
        f.second = raw;
        return *this;
      }
    }
    fields.emplace_back(key, raw);
    return *this;
  }
  bool has(const std::string& key) const
  {
    for (const auto& f : fields)
    {
      if (f.first == key)
      {
        return true;
      }
    }
    return false;
  }
  std::string dump() const
  {
    std::string o = "{";
    for (size_t i = 0; i < fields.size(); ++i)
    {
      o += (i ? ", " : "") + jstr(fields[i].first) + ": " + fields[i].second;
    }
    return o + "}";
  }
};

// --- Options ------------------------------------------------------------------------------------

struct Shape
{
  long long rows = 0, cols = 0;
  std::vector<long long> ks;
};

struct Options
{
  std::vector<Shape> shapes;
  std::vector<DType> types{DType::f32};
  std::vector<bool> orders{true, false}; // largest, smallest
  std::vector<bool> outputs{true, false}; // pairs, keys
  std::vector<bool> sortings{false, true}; // unsorted, sorted
  int reps = 21, slow_reps = 3, check_rows = 8;
  uint64_t seed = 1234;
  size_t rotation_bytes = size_t(512) << 20;
  int max_copies        = 8;
  std::string json;
  bool dry_run = false;
  std::string command;
};

[[noreturn]] void usage(const std::string& why)
{
  std::fprintf(stderr,
               "peers_cub: %s\n"
               "usage: peers_cub [--case RxC:K1,K2,...]... [--shapes RxC,... --ks-short K,... --ks-long K,...\n"
               "                 --long-cols N] [--types f32,f64] [--orders largest,smallest]\n"
               "                 [--outputs pairs,keys] [--sorting unsorted,sorted] [--reps N] [--slow-reps N]\n"
               "                 [--check-rows N] [--seed N] [--rotation-mib N] [--json PATH] [--dry-run]\n",
               why.c_str());
  std::exit(2);
}

std::vector<std::string> split(const std::string& s, char sep)
{
  std::vector<std::string> out;
  std::string cur;
  std::istringstream in(s);
  while (std::getline(in, cur, sep))
  {
    size_t a = cur.find_first_not_of(" \t"), b = cur.find_last_not_of(" \t");
    if (a != std::string::npos)
    {
      out.push_back(cur.substr(a, b - a + 1));
    }
  }
  return out;
}

long long parse_int(const std::string& s, const char* what)
{
  // Plain integers, or 2^E.
  try
  {
    size_t caret = s.find('^');
    if (caret != std::string::npos)
    {
      const long long base = std::stoll(s.substr(0, caret));
      const long long e    = std::stoll(s.substr(caret + 1));
      long long v          = 1;
      for (long long i = 0; i < e; ++i)
      {
        v *= base;
      }
      return v;
    }
    size_t used       = 0;
    const long long v = std::stoll(s, &used);
    if (used != s.size())
    {
      throw std::invalid_argument(s);
    }
    return v;
  }
  catch (const std::exception&)
  {
    usage(std::string("not a number for ") + what + ": '" + s + "'");
  }
}

std::vector<long long> parse_ks(const std::string& s)
{
  std::vector<long long> ks;
  for (const auto& x : split(s, ','))
  {
    ks.push_back(parse_int(x, "k"));
  }
  return ks;
}

std::pair<long long, long long> parse_dims(const std::string& s)
{
  const size_t x = s.find_first_of("xX");
  if (x == std::string::npos)
  {
    usage("a shape is ROWSxCOLS: '" + s + "'");
  }
  return {parse_int(s.substr(0, x), "rows"), parse_int(s.substr(x + 1), "cols")};
}

// The default cases: rows of 1024, long rows, LLM-sampling shapes, one array of 2^28.
std::vector<Shape> default_shapes()
{
  return {{65536, 1024, {16, 256}},
          {1024, 1048576, {32, 1024}},
          {128, 131072, {50, 1000}},
          {128, 262144, {50, 1000}},
          {1, 268435456, {32, 1024, 65536}}};
}

Options parse(int argc, char** argv)
{
  Options o;
  std::vector<Shape> cases;
  std::string shapes_opt;
  bool shapes_given = false;
  std::vector<long long> ks_short{16, 256}, ks_long{32, 1024, 65536};
  long long long_cols = 65536;
  for (int i = 0; i < argc; ++i)
  {
    o.command += (i ? " " : "") + std::string(argv[i]);
  }
  for (int i = 1; i < argc; ++i)
  {
    const std::string a = argv[i];
    auto value          = [&]() -> std::string {
      if (i + 1 >= argc)
      {
        usage(a + " needs a value");
      }
      return argv[++i];
    };
    if (a == "--case")
    {
      const std::string v = value();
      const size_t colon   = v.find(':');
      if (colon == std::string::npos)
      {
        usage("--case is RxC:K1,K2,...: '" + v + "'");
      }
      const auto dims = parse_dims(v.substr(0, colon));
      cases.push_back({dims.first, dims.second, parse_ks(v.substr(colon + 1))});
    }
    else if (a == "--shapes")
    {
      shapes_opt   = value();
      shapes_given = true;
    }
    else if (a == "--ks-short")
    {
      ks_short = parse_ks(value());
    }
    else if (a == "--ks-long")
    {
      ks_long = parse_ks(value());
    }
    else if (a == "--long-cols")
    {
      long_cols = parse_int(value(), "--long-cols");
    }
    else if (a == "--types")
    {
      o.types.clear();
      for (const auto& t : split(value(), ','))
      {
        if (t == "f32")
        {
          o.types.push_back(DType::f32);
        }
        else if (t == "f64")
        {
          o.types.push_back(DType::f64);
        }
        else
        {
          usage("unknown type '" + t + "' (f32, f64)");
        }
      }
    }
    else if (a == "--orders")
    {
      o.orders.clear();
      for (const auto& t : split(value(), ','))
      {
        if (t != "largest" && t != "smallest")
        {
          usage("unknown order '" + t + "' (largest, smallest)");
        }
        o.orders.push_back(t == "largest");
      }
    }
    else if (a == "--outputs")
    {
      o.outputs.clear();
      for (const auto& t : split(value(), ','))
      {
        if (t != "pairs" && t != "keys")
        {
          usage("unknown output '" + t + "' (pairs, keys)");
        }
        o.outputs.push_back(t == "pairs");
      }
    }
    else if (a == "--sorting")
    {
      o.sortings.clear();
      for (const auto& t : split(value(), ','))
      {
        if (t != "unsorted" && t != "sorted")
        {
          usage("unknown sorting '" + t + "' (unsorted, sorted)");
        }
        o.sortings.push_back(t == "sorted");
      }
    }
    else if (a == "--reps")
    {
      o.reps = static_cast<int>(parse_int(value(), "--reps"));
    }
    else if (a == "--slow-reps")
    {
      o.slow_reps = static_cast<int>(parse_int(value(), "--slow-reps"));
    }
    else if (a == "--check-rows")
    {
      o.check_rows = static_cast<int>(parse_int(value(), "--check-rows"));
    }
    else if (a == "--seed")
    {
      o.seed = static_cast<uint64_t>(parse_int(value(), "--seed"));
    }
    else if (a == "--rotation-mib")
    {
      o.rotation_bytes = static_cast<size_t>(parse_int(value(), "--rotation-mib")) << 20;
    }
    else if (a == "--json")
    {
      o.json = value();
    }
    else if (a == "--dry-run")
    {
      o.dry_run = true;
    }
    else if (a == "-h" || a == "--help")
    {
      usage("the options");
    }
    else
    {
      usage("unknown option '" + a + "'");
    }
  }
  if (shapes_given)
  {
    for (const auto& s : split(shapes_opt, ','))
    {
      const auto dims = parse_dims(s);
      cases.push_back({dims.first, dims.second, dims.second >= long_cols ? ks_long : ks_short});
    }
  }
  o.shapes = (cases.empty() && !shapes_given) ? default_shapes() : cases;
  for (const auto& s : o.shapes)
  {
    if (s.rows < 1 || s.cols < 1)
    {
      usage("a shape needs at least one row and one column");
    }
  }
  return o;
}

// --- Cases --------------------------------------------------------------------------------------

struct Case
{
  long long k;
  bool largest, pairs, sorted;
};

std::string peer_name(bool batched, const Case& c)
{
  std::string name = batched ? "cub.DeviceBatchedTopK." : "cub.DeviceTopK.";
  name += c.largest ? "Max" : "Min";
  name += c.pairs ? "Pairs" : "Keys";
  return name + (c.sorted ? ".sorted" : "");
}

// The index of the smallest bound of `bounds` that holds v, or -1.
int bound_index(const int* bounds, int count, long long v)
{
  for (int i = 0; i < count; ++i)
  {
    if (v <= bounds[i])
    {
      return i;
    }
  }
  return -1;
}

// The cases of one input, and why a case cannot run ("" where it can).
std::vector<Case> cases_of(const Options& o, const Shape& s)
{
  std::vector<Case> out;
  for (long long k : s.ks)
  {
    if (k < 1 || k > s.cols)
    {
      std::fprintf(stderr, "skipped: k = %lld for rows of %lld\n", k, s.cols);
      continue;
    }
    for (bool largest : o.orders)
    {
      for (bool pairs : o.outputs)
      {
        for (bool sorted : o.sortings)
        {
          if (sorted && s.rows == 1)
          {
            continue; // DeviceTopK has unsorted output only
          }
          out.push_back({k, largest, pairs, sorted});
        }
      }
    }
  }
  return out;
}

std::string limit_of(DType t, const Shape& s, const Case& c)
{
#if !PEERS_CUB_F64
  if (t == DType::f64)
  {
    return "f64 not compiled in (-DPEERS_CUB_F64=0)";
  }
#endif
  const bool batched = s.rows > 1;
  if (!batched)
  {
    if (s.cols > INT_MAX)
    {
      return "DeviceTopK is called with int num_items here: at most 2^31 - 1 values";
    }
    return "";
  }
  if (s.rows > INT_MAX)
  {
    return "DeviceBatchedTopK takes at most 2^31 - 1 segments";
  }
  if (s.cols > kMaxSegBound)
  {
    return "DeviceBatchedTopK takes segments of at most 2^21 values";
  }
  if (c.sorted)
  {
#if !PEERS_CUB_SORTED
    return "sorted output not compiled in (-DPEERS_CUB_SORTED=0)";
#else
    const long long limit = sorted_limit(t, c.pairs);
    if (c.k > limit)
    {
      return "DeviceBatchedTopK's sorted output takes k <= " + std::to_string(limit) + " here (one block's sort)";
    }
#endif
  }
  return "";
}

// --- Checks -------------------------------------------------------------------------------------

template <class T>
bool same_bits(T a, T b)
{
  return std::memcmp(&a, &b, sizeof(T)) == 0;
}

// The rows checked: `count` rows spread evenly, the first and the last among them.
std::vector<long long> rows_to_check(long long rows, int count)
{
  std::vector<long long> out;
  if (count <= 0)
  {
    return out;
  }
  if (count == 1 || rows == 1)
  {
    return {0};
  }
  for (int i = 0; i < count; ++i)
  {
    out.push_back(static_cast<long long>((static_cast<double>(rows - 1) * i) / (count - 1) + 0.5));
  }
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

// Compares the output of a DeviceBatchedTopK call on `in` against the host's answer; "" if right.
template <class T>
std::string check_rows(const Options& o, const void* in, const void* keys_out, const int* values_out, long long rows,
                       long long cols, const Case& c)
{
  const long long k = c.k;
  std::vector<T> row(cols), want, got(k);
  std::vector<int> idx(k);
  for (long long r : rows_to_check(rows, o.check_rows))
  {
    CK(cudaMemcpy(row.data(), static_cast<const T*>(in) + r * cols, cols * sizeof(T), cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(got.data(), static_cast<const T*>(keys_out) + r * k, k * sizeof(T), cudaMemcpyDeviceToHost));
    const std::string where = "row " + std::to_string(r) + ": ";
    if (c.pairs)
    {
      CK(cudaMemcpy(idx.data(), values_out + r * k, k * sizeof(int), cudaMemcpyDeviceToHost));
      for (long long j = 0; j < k; ++j)
      {
        if (idx[j] < 0 || idx[j] >= cols)
        {
          return where + "index " + std::to_string(idx[j]) + " outside the row";
        }
        if (!same_bits(row[idx[j]], got[j]))
        {
          return where + "the key at index " + std::to_string(idx[j]) + " is not the key returned beside it";
        }
      }
      std::vector<int> distinct = idx;
      std::sort(distinct.begin(), distinct.end());
      if (std::adjacent_find(distinct.begin(), distinct.end()) != distinct.end())
      {
        return where + "an index returned twice";
      }
    }
    auto before = [&](T a, T b) {
      return c.largest ? a > b : a < b;
    };
    if (c.sorted && !std::is_sorted(got.begin(), got.end(), before))
    {
      return where + "sorted output out of order";
    }
    want = row;
    std::nth_element(want.begin(), want.begin() + (k - 1), want.end(), before);
    want.resize(k);
    std::sort(want.begin(), want.end(), before);
    std::sort(got.begin(), got.end(), before);
    for (long long j = 0; j < k; ++j)
    {
      if (!same_bits(want[j], got[j]))
      {
        return where + "the keys differ from the k " + (c.largest ? "largest" : "smallest");
      }
    }
  }
  return "";
}

// Checks a DeviceTopK output over the whole array on the GPU (see the head of the file).
template <class T>
std::string check_array(const void* in, const void* keys_out, const int* values_out, long long n, const Case& c)
{
  const long long k = c.k;
  std::vector<T> got(k);
  CK(cudaMemcpy(got.data(), keys_out, k * sizeof(T), cudaMemcpyDeviceToHost));
  if (c.pairs)
  {
    std::vector<int> idx(k);
    CK(cudaMemcpy(idx.data(), values_out, k * sizeof(int), cudaMemcpyDeviceToHost));
    for (long long j = 0; j < k; ++j)
    {
      if (idx[j] < 0 || idx[j] >= n)
      {
        return "index " + std::to_string(idx[j]) + " outside the array";
      }
    }
    std::vector<int> distinct = idx;
    std::sort(distinct.begin(), distinct.end());
    if (std::adjacent_find(distinct.begin(), distinct.end()) != distinct.end())
    {
      return "an index returned twice";
    }
    DeviceBuffer d_idx(k * sizeof(int)), d_at(k * sizeof(T));
    CK(cudaMemcpy(d_idx.ptr, idx.data(), k * sizeof(int), cudaMemcpyHostToDevice));
    gather_keys<T><<<static_cast<int>((k + 255) / 256), 256>>>(static_cast<const T*>(in), d_idx.as<int>(),
                                                          static_cast<int>(k), d_at.as<T>());
    CK(cudaGetLastError());
    std::vector<T> at(k);
    CK(cudaMemcpy(at.data(), d_at.ptr, k * sizeof(T), cudaMemcpyDeviceToHost));
    for (long long j = 0; j < k; ++j)
    {
      if (!same_bits(at[j], got[j]))
      {
        return "the key at index " + std::to_string(idx[j]) + " is not the key returned beside it";
      }
    }
  }
  auto before = [&](T a, T b) {
    return c.largest ? a > b : a < b;
  };
  std::sort(got.begin(), got.end(), before);
  const T t = got.back(); // the k-th value, if the keys are right
  DeviceBuffer d_counts(3 * sizeof(unsigned long long)), d_beyond(k * sizeof(T));
  CK(cudaMemset(d_counts.ptr, 0, d_counts.bytes));
  count_beyond<T><<<grid_for(n), 256>>>(static_cast<const T*>(in), static_cast<size_t>(n), t, c.largest,
                                        d_counts.as<unsigned long long>(), d_beyond.as<T>(), static_cast<size_t>(k));
  CK(cudaGetLastError());
  unsigned long long counts[3];
  CK(cudaMemcpy(counts, d_counts.ptr, sizeof counts, cudaMemcpyDeviceToHost));
  const unsigned long long n_beyond = counts[0], n_equal = counts[1];
  if (n_beyond >= static_cast<unsigned long long>(k))
  {
    return std::to_string(n_beyond) + " values beyond the least kept key: it is not the k-th";
  }
  if (n_beyond + n_equal < static_cast<unsigned long long>(k))
  {
    return "the least kept key occurs fewer times than returned";
  }
  std::vector<T> want(n_beyond);
  CK(cudaMemcpy(want.data(), d_beyond.ptr, n_beyond * sizeof(T), cudaMemcpyDeviceToHost));
  std::sort(want.begin(), want.end(), before);
  want.resize(k, t);
  for (long long j = 0; j < k; ++j)
  {
    if (!same_bits(want[j], got[j]))
    {
      return std::string("the keys differ from the k ") + (c.largest ? "largest" : "smallest");
    }
  }
  return "";
}

// --- The run ------------------------------------------------------------------------------------

struct Run
{
  Options opt;
  std::string device = "unknown device", arch;
  std::vector<JObject> results;
  JObject doc;

  void write() const
  {
    if (opt.json.empty())
    {
      return;
    }
    const std::string tmp = opt.json + ".tmp";
    FILE* f               = std::fopen(tmp.c_str(), "w");
    if (!f)
    {
      std::fprintf(stderr, "peers_cub: cannot write %s\n", tmp.c_str());
      return;
    }
    std::string text = "{";
    for (const auto& fld : doc.fields)
    {
      text += "\n " + jstr(fld.first) + ": " + fld.second + ",";
    }
    text += "\n \"results\": [";
    for (size_t i = 0; i < results.size(); ++i)
    {
      text += (i ? ",\n  " : "\n  ") + results[i].dump();
    }
    text += "\n ]\n}\n";
    std::fputs(text.c_str(), f);
    std::fclose(f);
    std::rename(tmp.c_str(), opt.json.c_str());
  }

  void record(JObject row)
  {
    row.set("device", jstr(device));
    results.push_back(std::move(row));
    write();
  }
};

std::string today()
{
  const std::time_t now = std::time(nullptr);
  char buf[16];
  std::strftime(buf, sizeof buf, "%Y-%m-%d", std::gmtime(&now));
  return buf;
}

std::string version_text(int v)
{
  // CUDA's 13000 is 13.0.
  return std::to_string(v / 1000) + "." + std::to_string((v % 1000) / 10);
}

JObject base_row(const std::string& peer, DType t, const Shape& s, size_t bytes, int copies)
{
  JObject r;
  r.set("peer", jstr(peer))
    .set("api", jstr(peer.substr(4, peer.find('.', 4) - 4)))
    .set("case", jstr("top-k"))
    .set("dtype", jstr(dtype_name(t)))
    .set("type", jstr(dtype_name(t)))
    .set("dist", jstr("uniform"))
    .set("shape", jstr(std::to_string(s.rows) + "x" + std::to_string(s.cols)))
    .set("rows", jint(s.rows))
    .set("cols", jint(s.cols))
    .set("k", jnull)
    .set("largest", jnull)
    .set("sorted", jnull)
    .set("with_indices", jnull)
    .set("bytes", jint(static_cast<long long>(bytes)))
    .set("copies", jint(copies));
  return r;
}

std::string label(DType t, const Shape& s, const std::string& what)
{
  char buf[160];
  std::snprintf(buf, sizeof buf, "%4s %16s %-44s", dtype_name(t),
                (std::to_string(s.rows) + "x" + std::to_string(s.cols)).c_str(), what.c_str());
  return buf;
}

// Whether the CUDA context still works after an error (an illegal address or a kernel fault
// leaves it broken: every later call fails).
bool context_alive()
{
  (void) cudaGetLastError();
  if (cudaDeviceSynchronize() != cudaSuccess)
  {
    return false;
  }
  void* p = nullptr;
  if (cudaMalloc(&p, 16) != cudaSuccess)
  {
    (void) cudaGetLastError();
    return false;
  }
  cudaFree(p);
  return true;
}

int copies_for(const Options& o, size_t bytes)
{
  const size_t want = (o.rotation_bytes + bytes - 1) / bytes;
  return static_cast<int>(std::max<size_t>(1, std::min<size_t>(o.max_copies, want)));
}

// Times every case of one input; false once the CUDA context is broken.
bool run_input(Run& run, DType t, const Shape& s, const std::vector<Case>& cases)
{
  const Options& o    = run.opt;
  const size_t n      = static_cast<size_t>(s.rows) * static_cast<size_t>(s.cols);
  const size_t bytes  = n * dtype_bytes(t);
  int copies          = copies_for(o, bytes);
  const bool batched  = s.rows > 1;
  const std::string floor_peer = "cub.DeviceReduce.Sum";

  // The copies, as many as fit beside the largest case's outputs and 1 GiB to spare.
  std::vector<DeviceBuffer> inputs;
  JObject floor_row = base_row(floor_peer, t, s, bytes, copies);
  floor_row.set("case", jstr("floor"));
  try
  {
    size_t free_bytes = 0, total = 0;
    CK(cudaMemGetInfo(&free_bytes, &total));
    const size_t spare = (size_t(1) << 30) + bytes / 4;
    while (copies > 1 && copies * bytes + spare > free_bytes)
    {
      --copies;
    }
    floor_row.set("copies", jint(copies));
    for (int i = 0; i < copies; ++i)
    {
      inputs.emplace_back(bytes);
    }
    if (t == DType::f32)
    {
      fill_input<float>(inputs[0].ptr, n, o.seed);
    }
    else
    {
      fill_input<double>(inputs[0].ptr, n, o.seed);
    }
    for (int i = 1; i < copies; ++i)
    {
      CK(cudaMemcpy(inputs[i].ptr, inputs[0].ptr, bytes, cudaMemcpyDeviceToDevice));
    }
    CK(cudaDeviceSynchronize());
  }
  catch (const Failure& e)
  {
    floor_row.set("error", jstr(e.what())).set("correct", jnull);
    std::printf("%s  error: %s\n", label(t, s, floor_peer + " (floor)").c_str(), e.what());
    run.record(floor_row);
    return context_alive();
  }

  // The floor: one read of the same array.
  double floor_ms = NAN;
  try
  {
    DeviceBuffer out(8);
    size_t temp_bytes = 0;
    CK(sum_call(t, nullptr, temp_bytes, inputs[0].ptr, out.ptr, n));
    DeviceBuffer temp(temp_bytes);
    const CallFn fn = [&](void* tp, size_t& tb, int copy) {
      return sum_call(t, tp, tb, inputs[copy].ptr, out.ptr, n);
    };
    run_call(fn, temp.ptr, temp_bytes, 0);
    CK(cudaDeviceSynchronize());
    const Timing tm = timed(fn, temp.ptr, temp_bytes, copies, o.reps, o.slow_reps, 1);
    floor_ms        = tm.median_ms;
    floor_row.set("temp_bytes", jint(static_cast<long long>(temp_bytes)))
      .set("median_ms", jnum(tm.median_ms))
      .set("min_ms", jnum(tm.min_ms))
      .set("reps", jint(tm.reps))
      .set("floor_ms", jnum(tm.median_ms))
      .set("ratio_to_floor", jnum(1.0))
      .set("correct", jnull);
    std::printf("%s %10.3f ms\n", label(t, s, floor_peer + " (floor)").c_str(), tm.median_ms);
  }
  catch (const Failure& e)
  {
    floor_row.set("error", jstr(e.what())).set("correct", jnull);
    std::printf("%s  error: %s\n", label(t, s, floor_peer + " (floor)").c_str(), e.what());
  }
  run.record(floor_row);
  std::fflush(stdout);
  if (std::isnan(floor_ms) && !context_alive())
  {
    return false;
  }

  const int si = batched ? bound_index(kSegBounds, kNumSegBounds, s.cols) : -1;
  for (const Case& c : cases)
  {
    const std::string peer = peer_name(batched, c);
    JObject row            = base_row(peer, t, s, bytes, copies);
    row.set("k", jint(c.k))
      .set("largest", jbool(c.largest))
      .set("sorted", jbool(c.sorted))
      .set("with_indices", jbool(c.pairs))
      .set("seg_bound", batched && si >= 0 ? jint(kSegBounds[si]) : jnull)
      .set("k_bound", jnull);
    std::string what = peer + " k=" + std::to_string(c.k);
    const std::string limit = limit_of(t, s, c);
    if (!limit.empty())
    {
      row.set("error", jstr(limit)).set("correct", jnull);
      std::printf("%s  error: %s\n", label(t, s, what).c_str(), limit.c_str());
      run.record(row);
      continue;
    }
    CallFn fn;
    DeviceBuffer keys_out, values_out;
    try
    {
      const size_t outs = static_cast<size_t>(s.rows) * static_cast<size_t>(c.k);
      keys_out          = DeviceBuffer(outs * dtype_bytes(t));
      values_out        = DeviceBuffer(c.pairs ? outs * sizeof(int) : 0);
      void* kout        = keys_out.ptr;
      int* vout         = c.pairs ? values_out.as<int>() : nullptr;
      const int rows = static_cast<int>(s.rows), cols = static_cast<int>(s.cols), k = static_cast<int>(c.k);
      if (batched)
      {
        const int ki = c.sorted ? bound_index(kKBounds, kNumKBounds, c.k) : 0;
        if (c.sorted && ki >= 0)
        {
          row.set("k_bound", jint(kKBounds[ki]));
        }
        const BatchedFn f = (si >= 0 && ki >= 0) ? batched_fn(t, c.largest, c.pairs, c.sorted, si, ki) : nullptr;
        if (!f)
        {
          throw Failure("no instantiation for these bounds in this build");
        }
        fn = [&inputs, f, kout, vout, rows, cols, k](void* tp, size_t& tb, int copy) {
          return f(tp, tb, inputs[copy].ptr, kout, vout, rows, cols, k);
        };
      }
      else
      {
        const TopKFn f = topk_fn(t, c.largest, c.pairs);
        if (!f)
        {
          throw Failure("no instantiation for this type in this build");
        }
        fn = [&inputs, f, kout, vout, cols, k](void* tp, size_t& tb, int copy) {
          return f(tp, tb, inputs[copy].ptr, kout, vout, cols, k);
        };
      }
      size_t temp_bytes = 0;
      check(fn(nullptr, temp_bytes, 0), "the temporary-storage query");
      DeviceBuffer temp(temp_bytes);
      row.set("temp_bytes", jint(static_cast<long long>(temp_bytes)));

      // Checked once on the first copy, then timed from the second.
      run_call(fn, temp.ptr, temp_bytes, 0);
      CK(cudaDeviceSynchronize());
      std::string wrong, checked;
      if (batched)
      {
        const auto checked_rows = rows_to_check(s.rows, o.check_rows).size();
        checked = std::to_string(checked_rows) + " rows against std::nth_element";
        wrong   = t == DType::f32 ? check_rows<float>(o, inputs[0].ptr, kout, vout, s.rows, s.cols, c)
                                  : check_rows<double>(o, inputs[0].ptr, kout, vout, s.rows, s.cols, c);
      }
      else
      {
        checked = "the k-th value and the values beyond it over the whole array";
        wrong   = t == DType::f32 ? check_array<float>(inputs[0].ptr, kout, vout, s.cols, c)
                                  : check_array<double>(inputs[0].ptr, kout, vout, s.cols, c);
      }
      const Timing tm = timed(fn, temp.ptr, temp_bytes, copies, o.reps, o.slow_reps, 1);
      row.set("median_ms", jnum(tm.median_ms))
        .set("min_ms", jnum(tm.min_ms))
        .set("reps", jint(tm.reps))
        .set("floor_ms", jnum(floor_ms))
        .set("ratio_to_floor", jnum(tm.median_ms / floor_ms))
        .set("correct", jbool(wrong.empty()))
        .set("checked", jstr(checked));
      if (!wrong.empty())
      {
        row.set("mismatch", jstr(wrong));
      }
      std::printf("%s %10.3f ms  floor %8.3f ms  x%7.2f  %s\n", label(t, s, what).c_str(), tm.median_ms, floor_ms,
                  tm.median_ms / floor_ms, wrong.empty() ? "ok" : ("MISMATCH: " + wrong).c_str());
    }
    catch (const Failure& e)
    {
      row.set("error", jstr(e.what())).set("correct", jnull);
      std::printf("%s  error: %s\n", label(t, s, what).c_str(), e.what());
    }
    run.record(row);
    std::fflush(stdout);
    if (row.has("error") && !context_alive())
    {
      return false;
    }
  }
  return true;
}

void dry_run(const Options& o)
{
  size_t count = 0;
  for (DType t : o.types)
  {
    for (const Shape& s : o.shapes)
    {
      const size_t bytes = static_cast<size_t>(s.rows) * s.cols * dtype_bytes(t);
      std::printf("%4s %16s  %10.1f MiB  x%d copies  %s\n", dtype_name(t),
                  (std::to_string(s.rows) + "x" + std::to_string(s.cols)).c_str(), bytes / 1048576.0,
                  copies_for(o, bytes), s.rows > 1 ? "DeviceBatchedTopK" : "DeviceTopK");
      std::printf("%30s%s\n", "", "cub.DeviceReduce.Sum (floor)");
      ++count;
      for (const Case& c : cases_of(o, s))
      {
        const std::string limit = limit_of(t, s, c);
        std::printf("%30s%s k=%lld%s%s\n", "", peer_name(s.rows > 1, c).c_str(), c.k, limit.empty() ? "" : "  -- ",
                    limit.c_str());
        ++count;
      }
    }
  }
  std::printf("%zu cases (CCCL %d.%d.%d)\n", count, CCCL_MAJOR_VERSION, CCCL_MINOR_VERSION, CCCL_PATCH_VERSION);
}

} // namespace

int main(int argc, char** argv)
{
  Run run;
  run.opt = parse(argc, argv);
  const Options& o = run.opt;
  if (o.dry_run)
  {
    dry_run(o);
    return 0;
  }

  int dev = 0, runtime = 0, driver = 0;
  cudaDeviceProp prop{};
  const cudaError_t e = cudaGetDevice(&dev);
  if (e != cudaSuccess || cudaGetDeviceProperties(&prop, dev) != cudaSuccess)
  {
    std::fprintf(stderr, "peers_cub: no CUDA device: %s\n", cuda_text(e == cudaSuccess ? cudaGetLastError() : e).c_str());
    return 1;
  }
  cudaRuntimeGetVersion(&runtime);
  cudaDriverGetVersion(&driver);
  run.device = prop.name;
  run.arch   = "sm_" + std::to_string(prop.major) + std::to_string(prop.minor);
  char cccl[32];
  std::snprintf(cccl, sizeof cccl, "%d.%d.%d", CCCL_MAJOR_VERSION, CCCL_MINOR_VERSION, CCCL_PATCH_VERSION);
  const std::string nvcc = std::to_string(__CUDACC_VER_MAJOR__) + "." + std::to_string(__CUDACC_VER_MINOR__) + "."
                         + std::to_string(__CUDACC_VER_BUILD__);
  run.doc.set("benchmark", jstr("peers_cub"))
    .set("device", jstr(run.device))
    .set("arch", jstr(run.arch))
    .set("date", jstr(today()))
    .set("command", jstr(o.command))
    .set("cccl", jstr(cccl))
    .set("cccl_version", jint(CCCL_VERSION))
    .set("cuda_runtime", jstr(version_text(runtime)))
    .set("cuda_driver", jstr(version_text(driver)))
    .set("nvcc", jstr(nvcc))
    .set("timing",
         jstr("CUDA events around each call after warm-up; median of --reps runs; inputs rotated among copies "
              "totalling >= 512 MiB; temporary storage allocated outside the timings"))
    .set("floor", jstr("cub::DeviceReduce::Sum over the same array, in its own dtype"))
    .set("requirements",
         jstr("determinism::not_guaranteed, tie_break::unspecified (DeviceBatchedTopK), output_ordering::unsorted "
              "or sorted"));
  std::printf("peers_cub: %s (%s), CCCL %s, CUDA runtime %s, driver %s, nvcc %s\n", run.device.c_str(),
              run.arch.c_str(), cccl, version_text(runtime).c_str(), version_text(driver).c_str(), nvcc.c_str());
  run.write();

  bool alive = true;
  for (DType t : o.types)
  {
    for (const Shape& s : o.shapes)
    {
      const std::vector<Case> cases = cases_of(o, s);
      if (!alive)
      {
        JObject row = base_row("cub.DeviceReduce.Sum", t, s, static_cast<size_t>(s.rows) * s.cols * dtype_bytes(t), 0);
        row.set("case", jstr("floor")).set("error", jstr("not run: the CUDA context broke earlier")).set("correct", jnull);
        run.record(row);
        continue;
      }
      alive = run_input(run, t, s, cases);
    }
  }
  run.write();
  size_t bad = 0, failed = 0;
  for (const auto& r : run.results)
  {
    for (const auto& f : r.fields)
    {
      bad += f.first == "correct" && f.second == "false";
      failed += f.first == "error";
    }
  }
  std::printf("%zu results: %zu mismatched, %zu failed\n", run.results.size(), bad, failed);
  return alive ? 0 : 1;
}
