// Whether AMX can run here: CPUID reports AMX-TILE and AMX-INT8, and Linux grants this process the tile
// data state. Linux enables AMX per process on request (arch_prctl ARCH_REQ_XCOMP_PERM); a tile
// instruction before the request faults with SIGILL. The request is made once per thread (it is cheap
// and idempotent; the permission it grants is the process's).
#include "kernels_levels.h"

#if defined(__x86_64__)
#include <cpuid.h>
#if defined(__linux__)
#include <sys/syscall.h>
#include <unistd.h>
#endif
#endif

namespace ggml::cpu::amx {

namespace {

#if defined(__x86_64__) && defined(__linux__)
constexpr int kArchGetXcompPerm = 0x1022;
constexpr int kArchReqXcompPerm = 0x1023;
constexpr unsigned long kXfeatureXtiledata = 18;
#endif

bool cpuid_has_amx_int8() {
#if defined(__x86_64__)
    unsigned a = 0, b = 0, c = 0, d = 0;
    if (!__get_cpuid_count(7, 0, &a, &b, &c, &d)) return false;
    const bool tile = (d >> 24) & 1, int8 = (d >> 25) & 1;
    return tile && int8;
#else
    return false;
#endif
}

bool ask_os() {
#if defined(__x86_64__) && defined(__linux__)
    if (syscall(SYS_arch_prctl, kArchReqXcompPerm, kXfeatureXtiledata) != 0) return false;
    unsigned long features = 0;
    if (syscall(SYS_arch_prctl, kArchGetXcompPerm, &features) != 0) return false;
    return (features >> kXfeatureXtiledata) & 1;
#else
    return false;
#endif
}

}  // namespace

bool request_permission() {
    thread_local const bool granted = cpuid_has_amx_int8() && ask_os();
    return granted;
}

bool supported() {
    static const bool ok = cpuid_has_amx_int8() && request_permission();
    return ok;
}

}  // namespace ggml::cpu::amx
