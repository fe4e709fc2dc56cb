// Routing table: method + path pattern -> handler. Patterns are literal segments and `{name}`
// parameters ("/slots/{id}"); a literal segment wins over a parameter at the same place.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "server/http/message.h"

namespace server::http {

class Router {
  public:
    // Throws std::invalid_argument for a malformed pattern or a duplicate (method, pattern).
    void add(std::string_view method, std::string_view pattern, Handler handler);

    struct Match {
        enum class Kind { found, method_not_allowed, not_found };
        Kind kind = Kind::not_found;
        const Handler* handler = nullptr;                        // when found
        std::map<std::string, std::string, std::less<>> params;  // when found
        std::vector<std::string> allowed;                        // when method_not_allowed (for Allow)
    };

    // `raw_path` is the still percent-encoded path, so that an encoded '/' stays inside its segment.
    // HEAD falls back to the GET route.
    Match match(std::string_view method, std::string_view raw_path) const;

    bool empty() const { return routes_.empty(); }
    // (method, pattern) of every route, in the order they were added.
    std::vector<std::pair<std::string, std::string>> list() const;

  private:
    struct Segment {
        std::string text;  // literal text, or the parameter name
        bool is_param = false;
    };
    struct Route {
        std::string method;
        std::string pattern;
        std::vector<Segment> segments;
        Handler handler;
    };

    static bool matches(const Route& route, const std::vector<std::string>& segments,
                        std::map<std::string, std::string, std::less<>>* params);
    static bool more_specific(const Route& a, const Route& b);

    std::vector<Route> routes_;
};

}  // namespace server::http
