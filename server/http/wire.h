// HTTP/1.1 wire format of what the server writes: status line and header block, chunk framing.
#pragma once

#include <string>
#include <string_view>

#include "server/http/headers.h"

namespace server::http {

// "Not Found" for 404; "Unknown" for codes without a standard phrase.
std::string_view reason_phrase(int status);

// Whether a response with this status may carry a body (not 1xx, 204, 304).
bool status_allows_body(int status);

// "HTTP/1.1 <status> <reason>\r\n" + "Name: value\r\n"... + "\r\n". CR and LF inside names or values are
// replaced by spaces so a handler can never inject header lines.
std::string serialize_head(int status, const Headers& headers);

// One chunk of a chunked body: "<hex size>\r\n<data>\r\n". `data` must not be empty.
std::string frame_chunk(std::string_view data);
inline constexpr std::string_view kLastChunk = "0\r\n\r\n";

}  // namespace server::http
