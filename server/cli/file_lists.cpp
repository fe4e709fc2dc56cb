#include "server/cli/file_lists.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>

#include "server/cli/args.h"

namespace cli {

std::vector<std::string> split_list(const std::string& v) {
    std::vector<std::string> out;
    size_t start = 0;
    while (start <= v.size()) {
        const size_t comma = std::min(v.find(',', start), v.size());
        if (comma > start) out.push_back(v.substr(start, comma - start));
        start = comma + 1;
    }
    return out;
}

std::vector<std::string> split_file_list(const std::string& v) {
    std::vector<std::string> out;
    size_t start = 0;
    for (;;) {
        const size_t comma = v.find(',', start);
        const std::string item =
            v.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
        if (item.empty()) throw ArgError("empty file name in '" + v + "'");
        out.push_back(item);
        if (comma == std::string::npos) return out;
        start = comma + 1;
    }
}

std::vector<std::pair<std::string, float>> parse_scaled_files(const std::string& opt, const std::string& v) {
    auto scale_of = [&](const std::string& s) {
        char* end = nullptr;
        const double x = std::strtod(s.c_str(), &end);
        if (s.empty() || *end != '\0' || !std::isfinite(x)) throw ArgError(opt + ": bad scale '" + s + "'");
        return (float)x;
    };
    std::vector<std::pair<std::string, float>> out;
    if (const size_t nl = v.find('\n'); nl != std::string::npos) {
        out.emplace_back(v.substr(0, nl), scale_of(v.substr(nl + 1)));
        return out;
    }
    for (const std::string& item : split_file_list(v)) {
        const size_t colon = item.rfind(':');
        if (colon == std::string::npos || colon == 0)
            throw ArgError(opt + " takes FNAME SCALE or FNAME:SCALE, got '" + item + "'");
        out.emplace_back(item.substr(0, colon), scale_of(item.substr(colon + 1)));
    }
    return out;
}

}  // namespace cli
