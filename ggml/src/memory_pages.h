// Giving memory back to the OS while keeping the address range (a sleeping server: --sleep-idle-seconds).
#pragma once

#include <cstddef>

namespace ggml {

// madvise(MADV_DONTNEED) on the whole pages inside [p, p + n): anonymous memory reads as zeros afterwards, a
// file mapping faults its pages back in from the file. Returns the bytes given back (0 on failure).
size_t drop_pages(const void* p, size_t n, size_t* first = nullptr);

}  // namespace ggml
