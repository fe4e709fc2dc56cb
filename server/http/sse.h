// Server-sent events (text/event-stream): formatting on the server, incremental parsing on the client.
#pragma once

#include <chrono>
#include <functional>
#include <string>
#include <string_view>

namespace server::http {

// "event: <event>\n" (if any) + one "data: <line>\n" per line of `data` + "\n".
std::string format_sse_event(std::string_view data, std::string_view event = {});

struct SseEvent {
    std::string event;  // empty for the default "message" type
    std::string data;   // data lines joined with '\n'
    std::string id;
    std::chrono::steady_clock::time_point received{};  // set by the client when the bytes arrived
};

// Incremental parser following the WHATWG event-stream rules (LF, CRLF or CR line ends, comments,
// multi-line data, events without data are not dispatched).
class SseParser {
  public:
    // Parses `bytes` and calls `on_event` for every complete event; stops and returns false as soon as
    // `on_event` returns false.
    bool feed(std::string_view bytes, const std::function<bool(SseEvent&)>& on_event);

  private:
    bool end_of_line(const std::function<bool(SseEvent&)>& on_event);

    std::string line_;
    bool last_was_cr_ = false;
    SseEvent pending_;
    bool has_data_ = false;
};

}  // namespace server::http
