// The ggserve binary the integration tests run: this build's, or the one GGSERVE_TEST_BINARY names (the
// ThreadSanitizer step of scripts/test.sh runs these tests against its instrumented server).
#pragma once

#include <cstdlib>
#include <string>

inline std::string ggserve_binary() {
    const char* override_path = std::getenv("GGSERVE_TEST_BINARY");
    if (override_path && *override_path) return override_path;
    return std::string(GGSERVE_BIN_DIR) + "/ggserve";
}
