#include "server/api/build_info.h"

// Set by server/CMakeLists.txt on this file only, so that a new commit recompiles one file.
#ifndef GGSERVE_VERSION
#define GGSERVE_VERSION "0.0.0"
#endif
#ifndef GGSERVE_BUILD_COMMIT
#define GGSERVE_BUILD_COMMIT "unknown"
#endif
#ifndef GGSERVE_BUILD_COMPILER
#define GGSERVE_BUILD_COMPILER "unknown"
#endif
#ifndef GGSERVE_BUILD_TARGET
#define GGSERVE_BUILD_TARGET "unknown"
#endif

namespace api {

const char* build_version() {
    return GGSERVE_VERSION;
}
const char* build_commit() {
    return GGSERVE_BUILD_COMMIT;
}
const char* build_compiler() {
    return GGSERVE_BUILD_COMPILER;
}
const char* build_target() {
    return GGSERVE_BUILD_TARGET;
}
const char* build_info() {
    return "b" GGSERVE_VERSION "-" GGSERVE_BUILD_COMMIT;
}

}  // namespace api
