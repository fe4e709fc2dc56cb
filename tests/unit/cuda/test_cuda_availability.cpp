// What a caller sees about CUDA on any machine: with no device (or no CUDA support in the build) asking
// for a CUDA backend fails with a clear message; with devices, an index out of range does.
#include "cuda_test_util.h"

using namespace cuda_test;

TEST_CASE("make_cuda_backend fails clearly when the device cannot be had", "[cuda][availability]") {
    const int n = cuda_device_count();
    const std::string status = cuda_status();
    REQUIRE(!status.empty());
    if (n == 0) {
        // No device, no driver, or a build without CUDA: the status says which, and so does the error.
        REQUIRE_THAT(status, Catch::Contains("this build has no CUDA support") ||
                                 Catch::Contains("no usable CUDA device") ||
                                 Catch::Contains("no CUDA device found"));
        REQUIRE_THROWS_WITH(make_cuda_backend(0),
                            Catch::Contains("cannot use a CUDA device") && Catch::Contains(status));
    } else {
        REQUIRE_THAT(status, Catch::Contains("CUDA0"));
    }
    REQUIRE_THROWS_WITH(make_cuda_backend(n),
                        Catch::Contains("does not exist") || Catch::Contains("cannot use"));
    REQUIRE_THROWS_WITH(make_cuda_backend(-1),
                        Catch::Contains("does not exist") || Catch::Contains("cannot use"));
}
