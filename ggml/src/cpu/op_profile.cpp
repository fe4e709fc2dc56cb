// GGML_CPU_PROFILE: per-op time of the CPU backend's graphs, printed at exit (op_profile.h).
#include "op_profile.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <vector>

#include "ggml/types.h"

namespace ggml::cpu {

namespace {

struct Row {
    int64_t ns = 0;
    int64_t steps = 0;
};

// The table, printed when the process ends (a static's destructor: after main returns or exit()).
struct Table {
    std::mutex mu;
    std::map<std::string, Row> rows;
    ~Table() {
        if (rows.empty()) return;
        std::vector<std::pair<std::string, Row>> v(rows.begin(), rows.end());
        std::sort(v.begin(), v.end(), [](const auto& a, const auto& b) { return a.second.ns > b.second.ns; });
        int64_t total = 0;
        for (const auto& [k, r] : v) total += r.ns;
        std::fprintf(stderr, "GGML_CPU_PROFILE: CPU graph time by op (wall time of each step, all graphs)\n");
        std::fprintf(stderr, "%-40s %12s %7s %10s\n", "op", "ms", "share", "steps");
        for (const auto& [k, r] : v)
            std::fprintf(stderr, "%-40s %12.1f %6.1f%% %10lld\n", k.c_str(), double(r.ns) / 1e6,
                         total ? 100.0 * double(r.ns) / double(total) : 0.0, (long long)r.steps);
        std::fprintf(stderr, "%-40s %12.1f\n", "total", double(total) / 1e6);
    }
};

Table& table() {
    static Table t;
    return t;
}

}  // namespace

bool op_profile_enabled() {
    static const bool on = [] {
        const char* v = std::getenv("GGML_CPU_PROFILE");
        const bool enabled = v && *v && std::strcmp(v, "0") != 0;
        if (enabled) table();  // constructed now, so it is destroyed (and printed) after its users
        return enabled;
    }();
    return on;
}

std::string op_profile_key(const Tensor* node) {
    std::string key = op_name(node->op);
    if (node->op == Op::MulMat || node->op == Op::MulMatId) {
        const Tensor* w = node->src[0];
        const Tensor* a = node->src[1];
        key += std::string(" ") + type_name(w->type) + " x " + type_name(a->type);
        if (node->op == Op::MulMat) key += a->ne[1] > 1 ? " n>1" : " n=1";
    }
    return key;
}

void op_profile_add(const std::string& key, int64_t ns) {
    Table& t = table();
    std::lock_guard<std::mutex> lock(t.mu);
    Row& r = t.rows[key];
    r.ns += ns;
    ++r.steps;
}

int64_t op_profile_now() {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(
               std::chrono::steady_clock::now().time_since_epoch())
        .count();
}

}  // namespace ggml::cpu
