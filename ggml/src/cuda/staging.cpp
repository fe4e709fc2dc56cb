#include "staging.h"

#include <algorithm>
#include <cstring>

#include "error.h"

namespace ggml::cuda {

Staging::~Staging() {
    for (Half& h : halves_) {
        if (h.done) {
            cudaEventSynchronize(h.done);
            cudaEventDestroy(h.done);
        }
        if (h.ptr) cudaFreeHost(h.ptr);
    }
}

Staging::Half& Staging::next() {
    Half& h = halves_[next_];
    next_ ^= 1;
    if (!h.ptr) {
        CUDA_CHECK(cudaMallocHost(&h.ptr, kChunk));
        CUDA_CHECK(cudaEventCreateWithFlags(&h.done, cudaEventDisableTiming));
    }
    if (h.pending) CUDA_CHECK(cudaEventSynchronize(h.done));
    h.pending = false;
    return h;
}

void Staging::upload(void* dst_device, const void* src_host, size_t size, cudaStream_t stream) {
    for (size_t off = 0; off < size; off += kChunk) {
        const size_t n = std::min(kChunk, size - off);
        Half& h = next();
        std::memcpy(h.ptr, (const char*)src_host + off, n);
        CUDA_CHECK(cudaMemcpyAsync((char*)dst_device + off, h.ptr, n, cudaMemcpyHostToDevice, stream));
        CUDA_CHECK(cudaEventRecord(h.done, stream));
        h.pending = true;
    }
}

void Staging::download(void* dst_host, const void* src_device, size_t size, cudaStream_t stream) {
    for (size_t off = 0; off < size; off += kChunk) {
        const size_t n = std::min(kChunk, size - off);
        Half& h = next();
        CUDA_CHECK(cudaMemcpyAsync(h.ptr, (const char*)src_device + off, n, cudaMemcpyDeviceToHost, stream));
        CUDA_CHECK(cudaEventRecord(h.done, stream));
        CUDA_CHECK(cudaEventSynchronize(h.done));
        std::memcpy((char*)dst_host + off, h.ptr, n);
    }
}

}  // namespace ggml::cuda
