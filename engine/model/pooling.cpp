#include "engine/model/pooling.h"

#include <cmath>
#include <stdexcept>

namespace engine {

std::optional<Pooling> parse_pooling(const std::string& s) {
    if (s == "none") return Pooling::None;
    if (s == "mean") return Pooling::Mean;
    if (s == "cls") return Pooling::Cls;
    if (s == "last") return Pooling::Last;
    if (s == "rank") return Pooling::Rank;
    return std::nullopt;
}

const char* pooling_name(Pooling p) {
    switch (p) {
        case Pooling::None:
            return "none";
        case Pooling::Mean:
            return "mean";
        case Pooling::Cls:
            return "cls";
        case Pooling::Last:
            return "last";
        case Pooling::Rank:
            return "rank";
        case Pooling::Unspecified:
            break;
    }
    return "unspecified";
}

std::vector<float> pool_rows(const float* rows, size_t n_tokens, size_t n_embd, Pooling p) {
    if (n_tokens == 0) throw std::invalid_argument("pooling an empty sequence");
    switch (p) {
        case Pooling::Cls:
            return std::vector<float>(rows, rows + n_embd);
        case Pooling::Last:
            return std::vector<float>(rows + (n_tokens - 1) * n_embd, rows + n_tokens * n_embd);
        case Pooling::Mean: {
            std::vector<double> sum(n_embd, 0.0);
            for (size_t t = 0; t < n_tokens; ++t)
                for (size_t i = 0; i < n_embd; ++i) sum[i] += rows[t * n_embd + i];
            std::vector<float> out(n_embd);
            for (size_t i = 0; i < n_embd; ++i) out[i] = (float)(sum[i] / (double)n_tokens);
            return out;
        }
        default:
            break;
    }
    throw std::invalid_argument(std::string("pooling '") + pooling_name(p) + "' does not pool rows");
}

void normalize_embedding(std::vector<float>& v, int norm) {
    if (norm < 0) return;
    double s = 0.0;
    if (norm == 0) {
        for (float x : v) s = std::max(s, (double)std::fabs(x));
        s /= 32760.0;  // int16 range, as llama.cpp's max-abs
    } else if (norm == 1) {
        for (float x : v) s += std::fabs(x);
    } else if (norm == 2) {
        for (float x : v) s += (double)x * x;
        s = std::sqrt(s);
    } else {
        for (float x : v) s += std::pow(std::fabs((double)x), norm);
        s = std::pow(s, 1.0 / norm);
    }
    if (s <= 0.0) return;
    const double inv = 1.0 / s;
    for (float& x : v) x = (float)(x * inv);
}

}  // namespace engine
