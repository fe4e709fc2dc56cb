#include "server/http/router.h"

#include <algorithm>
#include <stdexcept>

#include "server/http/url.h"

namespace server::http {

// "/a/b/" -> {"a", "b", ""}; "/" -> {""}. A trailing slash is a distinct, empty segment.
static std::vector<std::string_view> split_segments(std::string_view path) {
    std::vector<std::string_view> out;
    if (path.empty() || path.front() != '/') return out;
    std::size_t start = 1;
    while (true) {
        std::size_t end = path.find('/', start);
        out.push_back(path.substr(start, end == std::string_view::npos ? end : end - start));
        if (end == std::string_view::npos) break;
        start = end + 1;
    }
    return out;
}

std::vector<std::pair<std::string, std::string>> Router::list() const {
    std::vector<std::pair<std::string, std::string>> out;
    for (const auto& r : routes_) out.emplace_back(r.method, r.pattern);
    return out;
}

void Router::add(std::string_view method, std::string_view pattern, Handler handler) {
    if (method.empty() || pattern.empty() || pattern.front() != '/') {
        throw std::invalid_argument("route pattern must start with '/': " + std::string(pattern));
    }
    Route route{std::string(method), std::string(pattern), {}, std::move(handler)};
    for (std::string_view seg : split_segments(pattern)) {
        bool open = seg.find('{') != std::string_view::npos, close = seg.find('}') != std::string_view::npos;
        if (open || close) {
            if (seg.size() < 3 || seg.front() != '{' || seg.back() != '}' ||
                seg.substr(1, seg.size() - 2).find_first_of("{}") != std::string_view::npos) {
                throw std::invalid_argument("a parameter must be a whole segment '{name}': " +
                                            std::string(pattern));
            }
            route.segments.push_back({std::string(seg.substr(1, seg.size() - 2)), true});
        } else {
            route.segments.push_back({std::string(seg), false});
        }
    }
    for (const Route& r : routes_) {
        if (r.method == route.method && r.pattern == route.pattern) {
            throw std::invalid_argument("duplicate route " + route.method + " " + route.pattern);
        }
    }
    routes_.push_back(std::move(route));
}

bool Router::matches(const Route& route, const std::vector<std::string>& segments,
                     std::map<std::string, std::string, std::less<>>* params) {
    if (route.segments.size() != segments.size()) return false;
    for (std::size_t i = 0; i < segments.size(); ++i) {
        const Segment& s = route.segments[i];
        if (s.is_param) {
            if (segments[i].empty()) return false;
            if (params) (*params)[s.text] = segments[i];
        } else if (s.text != segments[i]) {
            return false;
        }
    }
    return true;
}

// Earlier literal segments make a route more specific: "/slots/stats" beats "/slots/{id}".
bool Router::more_specific(const Route& a, const Route& b) {
    for (std::size_t i = 0; i < a.segments.size() && i < b.segments.size(); ++i) {
        if (a.segments[i].is_param != b.segments[i].is_param) return !a.segments[i].is_param;
    }
    return false;
}

Router::Match Router::match(std::string_view method, std::string_view raw_path) const {
    std::vector<std::string> segments;
    for (std::string_view seg : split_segments(raw_path)) {
        auto decoded = percent_decode(seg);
        if (!decoded) return {};
        segments.push_back(std::move(*decoded));
    }
    if (segments.empty()) return {};

    const Route* best = nullptr;
    const Route* best_get = nullptr;  // for HEAD
    std::vector<std::string> allowed;
    for (const Route& r : routes_) {
        if (!matches(r, segments, nullptr)) continue;
        if (std::find(allowed.begin(), allowed.end(), r.method) == allowed.end()) allowed.push_back(r.method);
        if (r.method == method && (!best || more_specific(r, *best))) best = &r;
        if (r.method == "GET" && (!best_get || more_specific(r, *best_get))) best_get = &r;
    }
    if (!best && method == "HEAD") best = best_get;
    Match m;
    if (best) {
        m.kind = Match::Kind::found;
        m.handler = &best->handler;
        matches(*best, segments, &m.params);
    } else if (!allowed.empty()) {
        m.kind = Match::Kind::method_not_allowed;
        if (best_get && std::find(allowed.begin(), allowed.end(), "HEAD") == allowed.end()) {
            allowed.push_back("HEAD");
        }
        std::sort(allowed.begin(), allowed.end());
        m.allowed = std::move(allowed);
    }
    return m;
}

}  // namespace server::http
