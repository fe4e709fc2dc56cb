// Pieces of static file serving: content negotiation (gzip, If-None-Match), gzip decoding, content
// types, and confining URL paths to a directory (--path).
#pragma once

#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "server/http/headers.h"

namespace webui {

// Whether Accept-Encoding allows gzip ("gzip", "x-gzip" or "*", with a q-value above 0).
bool accepts_gzip(const server::http::Headers& request_headers);
// Whether If-None-Match names `etag` (weak comparison) or is "*".
bool etag_matches(const server::http::Headers& request_headers, std::string_view etag);
// Decodes one gzip member (RFC 1952); throws std::runtime_error on malformed data or a bad length/CRC.
std::string gunzip(std::span<const unsigned char> gz);
// Content-Type for a file name, from its extension ("application/octet-stream" when unknown).
std::string_view content_type_for(std::string_view name);

// The regular file that the decoded URL `path` names under `root` (an absolute, canonical directory):
// a directory gives its index.html. Refused (nullopt): "." and ".." segments and any segment starting
// with '.', backslashes and NUL bytes, anything whose real path (symbolic links resolved) leaves `root`,
// and whatever is not a regular file.
std::optional<std::filesystem::path> resolve_under(const std::filesystem::path& root, std::string_view path);

}  // namespace webui
