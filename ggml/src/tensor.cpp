// Tensor metadata, the Context arena and the shape-only op builders (views, reshapes, permutes).
#include <cstring>

#include "ggml/ggml.h"

namespace ggml {

size_t Tensor::nbytes() const {
    if (nelements() == 0) return 0;
    // Offset of the last element + its size; works for views and permutations.
    size_t bytes = type_size(type);
    const int64_t bs = block_size(type);
    bytes += (size_t)(ne[0] / bs - 1) * nb[0];
    for (int i = 1; i < kMaxDims; ++i) bytes += (size_t)(ne[i] - 1) * nb[i];
    return bytes;
}

bool Tensor::rows_contiguous() const { return nb[0] == type_size(type); }

bool Tensor::is_contiguous() const {
    size_t expect = type_size(type);
    if (nb[0] != expect) return false;
    expect = row_size(type, ne[0]);
    for (int i = 1; i < kMaxDims; ++i) {
        if (ne[i] != 1 && nb[i] != expect) return false;
        expect *= (size_t)ne[i];
    }
    return true;
}

int Tensor::n_dims() const {
    for (int i = kMaxDims - 1; i >= 1; --i)
        if (ne[i] > 1) return i + 1;
    return 1;
}

void Tensor::set_name(const std::string& n) {
    std::strncpy(name, n.c_str(), sizeof(name) - 1);
    name[sizeof(name) - 1] = 0;
}

bool same_shape(const Tensor* a, const Tensor* b) {
    for (int i = 0; i < kMaxDims; ++i)
        if (a->ne[i] != b->ne[i]) return false;
    return true;
}

Context::Context(size_t data_bytes, bool no_alloc) : data_size_(data_bytes), no_alloc_(no_alloc) {
    if (!no_alloc_ && data_size_ > 0) data_.reset(new char[data_size_]);
}

Context::~Context() = default;

Tensor* Context::alloc_tensor() { return &tensors_.emplace_back(); }

static void set_contiguous_strides(Tensor* t) {
    t->nb[0] = type_size(t->type);
    t->nb[1] = row_size(t->type, t->ne[0]);
    for (int i = 2; i < kMaxDims; ++i) t->nb[i] = t->nb[i - 1] * (size_t)t->ne[i - 1];
}

Tensor* Context::new_tensor(Type type, int n_dims, const int64_t* ne) {
    if (!type_traits(type).name) throw Error("new_tensor: unknown type");
    if (n_dims < 1 || n_dims > kMaxDims) throw Error("new_tensor: bad number of dimensions");
    Tensor* t = alloc_tensor();
    t->type = type;
    for (int i = 0; i < n_dims; ++i) {
        if (ne[i] < 0) throw Error("new_tensor: negative dimension");
        t->ne[i] = ne[i];
    }
    if (t->ne[0] % block_size(type) != 0) throw Error("new_tensor: row length not a multiple of the block size");
    set_contiguous_strides(t);
    if (!no_alloc_) {
        const size_t size = (t->nbytes() + 63) & ~size_t(63);
        if (data_used_ + size > data_size_) throw Error("Context: out of data memory");
        t->data = data_.get() + data_used_;
        data_used_ += size;
    }
    return t;
}

Tensor* Context::new_tensor_1d(Type type, int64_t ne0) { return new_tensor(type, 1, &ne0); }
Tensor* Context::new_tensor_2d(Type type, int64_t ne0, int64_t ne1) {
    const int64_t ne[2] = {ne0, ne1};
    return new_tensor(type, 2, ne);
}
Tensor* Context::new_tensor_3d(Type type, int64_t ne0, int64_t ne1, int64_t ne2) {
    const int64_t ne[3] = {ne0, ne1, ne2};
    return new_tensor(type, 3, ne);
}
Tensor* Context::new_tensor_4d(Type type, int64_t ne0, int64_t ne1, int64_t ne2, int64_t ne3) {
    const int64_t ne[4] = {ne0, ne1, ne2, ne3};
    return new_tensor(type, 4, ne);
}

}  // namespace ggml
