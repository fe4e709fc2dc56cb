#include "memory_pages.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>

#include "ggml/backend.h"

namespace ggml {

size_t drop_pages(const void* p, size_t n, size_t* first) {
    const uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
    const uintptr_t b = ((uintptr_t)p + page - 1) & ~(page - 1), e = ((uintptr_t)p + n) & ~(page - 1);
    if (first) *first = (size_t)(b - (uintptr_t)p);
    if (e <= b || madvise((void*)b, e - b, MADV_DONTNEED) != 0) return 0;
    return (size_t)(e - b);
}

size_t release_pages(Buffer& b) {
    if (!b.backend || !b.backend->is_host() || !b.base) return 0;
    return drop_pages(b.base, b.size);
}

}  // namespace ggml
