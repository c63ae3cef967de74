// RAII owners of CUDA resources: device memory (DeviceBuffer<T>), pinned host memory
// (PinnedBuffer<T>), events (CudaEvent) and the two-phase temporary storage that CUB asks for
// (CubTemp). Move-only; destructors never throw.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>
#include <utility>

#include "gpu/cuda_check.cuh"

namespace hoshi::gpu {

// Where a CudaArray's memory lives: device memory, or page-locked (pinned) host memory.
struct DeviceMemory {
  static void allocate(void** p, std::size_t bytes) { HOSHI_CUDA_CHECK(cudaMalloc(p, bytes)); }
  static cudaError_t free(void* p) noexcept { return cudaFree(p); }
};
struct PinnedMemory {
  static void allocate(void** p, std::size_t bytes) { HOSHI_CUDA_CHECK(cudaMallocHost(p, bytes)); }
  static cudaError_t free(void* p) noexcept { return cudaFreeHost(p); }
};

// A typed array owned through Memory. resize() keeps the allocation when it is large enough
// (contents are then unspecified), so buffers reused every step allocate once; an allocation
// outgrown takes 25% headroom, so that a size creeping up from step to step (the tree's node
// count in a collapse) reallocates rarely (pinned memory: ~13 GB at 4e8 particles, seconds).
template <class T, class Memory>
class CudaArray {
 public:
  CudaArray() = default;
  explicit CudaArray(std::size_t n) { resize(n); }
  ~CudaArray() { release(); }
  CudaArray(const CudaArray&) = delete;
  CudaArray& operator=(const CudaArray&) = delete;
  CudaArray(CudaArray&& o) noexcept
      : p_(std::exchange(o.p_, nullptr)),
        size_(std::exchange(o.size_, 0)),
        capacity_(std::exchange(o.capacity_, 0)) {}
  CudaArray& operator=(CudaArray&& o) noexcept {
    if (this != &o) {
      release();
      p_ = std::exchange(o.p_, nullptr);
      size_ = std::exchange(o.size_, 0);
      capacity_ = std::exchange(o.capacity_, 0);
    }
    return *this;
  }

  void resize(std::size_t n) {
    if (n > capacity_) {
      std::size_t want = capacity_ > 0 ? std::max(n, capacity_ + capacity_ / 4) : n;
      release();
      void* p = nullptr;  // p_ stays null if the allocation fails
      try {
        Memory::allocate(&p, want * sizeof(T));
      } catch (const CudaError&) {
        if (want == n) throw;
        (void)cudaGetLastError();  // the headroom did not fit: exactly n (which may fail too)
        want = n;
        Memory::allocate(&p, want * sizeof(T));
      }
      p_ = static_cast<T*>(p);
      capacity_ = want;
    }
    size_ = n;
  }
  void release() noexcept {
    // An error here is not this buffer's to report; clear it so that it is not blamed on the
    // next checked launch.
    if (p_ && Memory::free(p_) != cudaSuccess) (void)cudaGetLastError();
    p_ = nullptr;
    size_ = capacity_ = 0;
  }

  T* data() { return p_; }
  const T* data() const { return p_; }
  std::size_t size() const { return size_; }
  std::size_t bytes() const { return size_ * sizeof(T); }
  bool empty() const { return size_ == 0; }

 private:
  T* p_ = nullptr;
  std::size_t size_ = 0;
  std::size_t capacity_ = 0;
};

// A typed array in device memory, with the copies to and from the host.
template <class T>
class DeviceBuffer : public CudaArray<T, DeviceMemory> {
 public:
  using CudaArray<T, DeviceMemory>::CudaArray;
  using CudaArray<T, DeviceMemory>::data;
  using CudaArray<T, DeviceMemory>::resize;

  // Host -> device of n elements (resizes to n).
  void upload(const T* h, std::size_t n, cudaStream_t stream = nullptr) {
    resize(n);
    if (n)
      HOSHI_CUDA_CHECK(cudaMemcpyAsync(data(), h, n * sizeof(T), cudaMemcpyHostToDevice, stream));
  }
  // Device -> host of the first n elements; synchronises the stream.
  void download(T* h, std::size_t n, cudaStream_t stream = nullptr) const {
    download_async(h, n, stream);
    if (n) HOSHI_CUDA_CHECK(cudaStreamSynchronize(stream));
  }
  // Device -> host of the first n elements, queued on `stream` without waiting: h must stay
  // valid until the stream is synchronised (asynchronous only into pinned memory).
  void download_async(T* h, std::size_t n, cudaStream_t stream = nullptr) const {
    if (n)
      HOSHI_CUDA_CHECK(cudaMemcpyAsync(h, data(), n * sizeof(T), cudaMemcpyDeviceToHost, stream));
  }
};

// A typed array in page-locked (pinned) host memory, the staging area of per-step transfers:
// copies from and to it run at the full PCIe rate and can be asynchronous, where a pageable
// array is copied through the driver's own staging buffers. data() is an ordinary host pointer.
template <class T>
using PinnedBuffer = CudaArray<T, PinnedMemory>;

// CUB's temporary storage, grown on demand and reused: the second phase of CUB's two-phase
// pattern (first call with nullptr asks for the size, second call runs).
class CubTemp {
 public:
  void* get(std::size_t bytes) {
    buf_.resize(bytes > 0 ? bytes : 1);
    return buf_.data();
  }
  // A device slot for a reduction's result (kept, like the temporary storage: a buffer made
  // per call cost a cudaMalloc and a synchronising cudaFree per energy or max|a| reduction).
  void* result(std::size_t bytes) {
    out_.resize(bytes > 0 ? bytes : 1);
    return out_.data();
  }

 private:
  DeviceBuffer<unsigned char> buf_;
  DeviceBuffer<unsigned char> out_;
};

// A CUDA event (for timing device work).
class CudaEvent {
 public:
  CudaEvent() { HOSHI_CUDA_CHECK(cudaEventCreate(&e_)); }
  ~CudaEvent() {
    if (e_) (void)cudaEventDestroy(e_);
  }
  CudaEvent(const CudaEvent&) = delete;
  CudaEvent& operator=(const CudaEvent&) = delete;
  void record(cudaStream_t s = nullptr) { HOSHI_CUDA_CHECK(cudaEventRecord(e_, s)); }
  void synchronize() { HOSHI_CUDA_CHECK(cudaEventSynchronize(e_)); }
  // Milliseconds from `start` to this event (both recorded; synchronises on this one).
  float ms_since(const CudaEvent& start) {
    synchronize();
    float ms = 0;
    HOSHI_CUDA_CHECK(cudaEventElapsedTime(&ms, start.e_, e_));
    return ms;
  }
  cudaEvent_t get() const { return e_; }

 private:
  cudaEvent_t e_ = nullptr;
};

// Multiprocessor count of the current device.
inline int sm_count() {
  int dev = 0, n = 0;
  HOSHI_CUDA_CHECK(cudaGetDevice(&dev));
  HOSHI_CUDA_CHECK(cudaDeviceGetAttribute(&n, cudaDevAttrMultiProcessorCount, dev));
  return n;
}

}  // namespace hoshi::gpu
