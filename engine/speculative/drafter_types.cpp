#include <stdexcept>

#include "engine/speculative/drafter.h"

namespace engine::spec {

namespace {

struct NameRow {
    DrafterType type;
    std::string_view name;
};
// The first name of a type is the one printed; the others are accepted aliases.
constexpr NameRow kNames[] = {
    {DrafterType::DraftModel, "draft-simple"}, {DrafterType::DraftModel, "draft"},
    {DrafterType::NgramSimple, "ngram-simple"}, {DrafterType::NgramMapK, "ngram-map-k"},
    {DrafterType::NgramMapK4v, "ngram-map-k4v"}, {DrafterType::NgramMod, "ngram-mod"},
    {DrafterType::NgramCache, "ngram-cache"}, {DrafterType::Lookahead, "lookahead"},
};

std::string_view trim(std::string_view s) {
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
    return s;
}

}  // namespace

std::string_view drafter_name(DrafterType t) {
    for (const auto& r : kNames)
        if (r.type == t) return r.name;
    return "unknown";
}

bool parse_drafter_name(std::string_view name, DrafterType& out) {
    for (const auto& r : kNames)
        if (r.name == name) {
            out = r.type;
            return true;
        }
    return false;
}

std::vector<DrafterType> parse_drafter_list(std::string_view list) {
    std::vector<DrafterType> out;
    size_t start = 0;
    while (start <= list.size()) {
        const size_t comma = list.find(',', start);
        const std::string_view item = trim(list.substr(start, comma == std::string_view::npos ? list.npos : comma - start));
        DrafterType t;
        if (!parse_drafter_name(item, t)) {
            std::string known;
            for (const auto& r : kNames) known += (known.empty() ? "" : ", ") + std::string(r.name);
            throw std::invalid_argument("unknown speculative type '" + std::string(item) + "' (known: " + known +
                                        ")");
        }
        for (DrafterType seen : out)
            if (seen == t)
                throw std::invalid_argument("speculative type '" + std::string(item) + "' is listed twice");
        out.push_back(t);
        if (comma == std::string_view::npos) break;
        start = comma + 1;
    }
    return out;
}

std::string drafter_list_string(const std::vector<DrafterType>& types) {
    std::string s;
    for (DrafterType t : types) s += (s.empty() ? "" : ",") + std::string(drafter_name(t));
    return s;
}

}  // namespace engine::spec
