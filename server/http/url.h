// Request-target handling: splitting path and query, percent-decoding, query-string parsing.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace server::http {

// Decodes %XX escapes (and '+' as space when `plus_is_space`, as in query strings). nullopt on a
// malformed escape.
std::optional<std::string> percent_decode(std::string_view text, bool plus_is_space = false);

// Encodes everything but unreserved characters (RFC 3986), for building targets on the client side.
std::string percent_encode(std::string_view text);

struct TargetParts {
    std::string raw_path;  // still percent-encoded; the router splits it before decoding segments
    std::string path;      // decoded
    std::string query_string;
};

// Splits an origin-form ("/a/b?x=1") or absolute-form ("http://host/a/b?x=1") target; the asterisk
// form "*" gives path "*". nullopt for anything else or for a path with a malformed escape or a NUL.
std::optional<TargetParts> split_target(std::string_view target);

// "a=1&b=x%20y&c" -> {{"a","1"},{"b","x y"},{"c",""}}. Malformed escapes are kept as written.
std::vector<std::pair<std::string, std::string>> parse_query(std::string_view query_string);

}  // namespace server::http
