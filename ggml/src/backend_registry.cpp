// Putting tensors on backends: placement in a backend buffer and host copies in and out, whichever
// backend holds them. Also what a build without CUDA support answers about CUDA, so that callers need
// no #ifdefs (with GGML_USE_CUDA the answers come from src/cuda/cuda_backend.cpp).
#include <cstring>

#include "ggml/backend.h"

namespace ggml {

namespace {

constexpr size_t kTensorAlign = 256;  // device-friendly; a multiple of every block size in bytes

void check_range(const Tensor* t, size_t offset, size_t size, const char* what) {
    const size_t n = t->nbytes();
    if (offset > n || size > n - offset)
        throw Error(std::string(what) + ": bytes [" + std::to_string(offset) + ", " +
                    std::to_string(offset + size) + ") exceed tensor '" + t->name + "' of " +
                    std::to_string(n) + " bytes");
    if (!t->data && size > 0) throw Error(std::string(what) + ": tensor '" + t->name + "' has no memory");
}

}  // namespace

std::unique_ptr<Buffer> alloc_tensors(Backend& backend, std::span<Tensor* const> tensors) {
    size_t total = 0;
    for (const Tensor* t : tensors) {
        if (t->data || t->view_src)
            throw Error(std::string("alloc_tensors: tensor '") + t->name + "' already has memory");
        total += (t->nbytes() + kTensorAlign - 1) / kTensorAlign * kTensorAlign;
    }
    std::unique_ptr<Buffer> buf = backend.alloc_buffer(total);
    size_t off = 0;
    for (Tensor* t : tensors) {
        t->data = (char*)buf->base + off;
        t->buffer = buf.get();
        off += (t->nbytes() + kTensorAlign - 1) / kTensorAlign * kTensorAlign;
    }
    return buf;
}

void tensor_set(Tensor* t, const void* src, size_t offset, size_t size) {
    check_range(t, offset, size, "tensor_set");
    if (size == 0) return;
    if (t->buffer && t->buffer->backend)
        t->buffer->backend->tensor_set(t, src, offset, size);
    else
        std::memcpy((char*)t->data + offset, src, size);
}

void tensor_get(const Tensor* t, void* dst, size_t offset, size_t size) {
    check_range(t, offset, size, "tensor_get");
    if (size == 0) return;
    if (t->buffer && t->buffer->backend)
        t->buffer->backend->tensor_get(t, dst, offset, size);
    else
        std::memcpy(dst, (const char*)t->data + offset, size);
}

#ifndef GGML_USE_CUDA
int cuda_device_count() {
    return 0;
}

std::string cuda_status() {
    return "this build has no CUDA support (rebuild with -DGGML_CUDA=ON)";
}

std::unique_ptr<Backend> make_cuda_backend(int, const CudaOptions&) {
    throw Error("cannot use a CUDA device: " + cuda_status());
}
#endif

}  // namespace ggml
