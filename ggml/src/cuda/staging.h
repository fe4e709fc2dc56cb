// Host-pinned staging for copies between host memory and the device. Pageable memory cannot be copied
// asynchronously, so data goes through two pinned chunks used in turn: the host fills one while the
// copy engine drains the other. Uploads return once the caller's memory has been read (the device copy
// may still be in flight on the stream); downloads return when the data has arrived.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>

namespace ggml::cuda {

class Staging {
  public:
    static constexpr size_t kChunk = size_t(16) << 20;

    Staging() = default;
    ~Staging();
    Staging(const Staging&) = delete;
    Staging& operator=(const Staging&) = delete;

    void upload(void* dst_device, const void* src_host, size_t size, cudaStream_t stream);
    void download(void* dst_host, const void* src_device, size_t size, cudaStream_t stream);

  private:
    struct Half {
        char* ptr = nullptr;
        cudaEvent_t done = nullptr;  // the last copy through this chunk
        bool pending = false;
    };
    Half& next();  // the chunk to use next, once its previous copy has finished

    Half halves_[2];
    int next_ = 0;
};

}  // namespace ggml::cuda
