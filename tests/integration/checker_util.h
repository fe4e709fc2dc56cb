// Runs one of the independent Python checkers (tests/integration/checkers) on a JSON list of cases and
// returns its JSON verdicts. The checker must exit 0; its output and the cases are shown otherwise.
#pragma once

#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdio>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

inline nlohmann::json run_checker(const std::string& script, const nlohmann::json& cases) {
    char path[] = "/tmp/ggserve_checker_XXXXXX";
    const int fd = mkstemp(path);
    REQUIRE(fd >= 0);
    const std::string text = cases.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    REQUIRE(write(fd, text.data(), text.size()) == (ssize_t)text.size());
    close(fd);
    // The source directory comes from CMake: __FILE__ may be relative (ccache base_dir, other builds).
    const std::filesystem::path checker =
        std::filesystem::path(GGSERVE_SOURCE_DIR) / "tests" / "integration" / "checkers" / script;
    const std::string cmd = "python3 '" + checker.string() + "' '" + path + "'";
    std::string out;
    FILE* p = popen(cmd.c_str(), "r");
    REQUIRE(p != nullptr);
    char buf[4096];
    for (size_t n; (n = fread(buf, 1, sizeof buf, p)) > 0;) out.append(buf, n);
    const int status = pclose(p);
    std::remove(path);
    INFO(cmd << "\n" << text << "\n" << out);
    REQUIRE(status == 0);
    return nlohmann::json::parse(out);
}
