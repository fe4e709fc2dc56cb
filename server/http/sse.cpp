#include "server/http/sse.h"

namespace server::http {

std::string format_sse_event(std::string_view data, std::string_view event) {
    std::string out;
    out.reserve(data.size() + event.size() + 16);
    if (!event.empty()) {
        out += "event: ";
        out += event;
        out += '\n';
    }
    // Every line needs its own "data:" prefix, or the client would take it for a field name.
    std::size_t start = 0;
    while (true) {
        std::size_t end = data.find('\n', start);
        std::string_view line = data.substr(start, end == std::string_view::npos ? end : end - start);
        if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
        out += "data: ";
        out += line;
        out += '\n';
        if (end == std::string_view::npos) break;
        start = end + 1;
    }
    out += '\n';
    return out;
}

bool SseParser::feed(std::string_view bytes, const std::function<bool(SseEvent&)>& on_event) {
    for (char c : bytes) {
        if (c == '\n' && last_was_cr_) {  // second half of a CRLF
            last_was_cr_ = false;
            continue;
        }
        last_was_cr_ = c == '\r';
        if (c == '\r' || c == '\n') {
            if (!end_of_line(on_event)) return false;
        } else {
            line_ += c;
        }
    }
    return true;
}

bool SseParser::end_of_line(const std::function<bool(SseEvent&)>& on_event) {
    bool keep_going = true;
    if (line_.empty()) {  // blank line: dispatch
        if (has_data_) {
            if (!pending_.data.empty() && pending_.data.back() == '\n') pending_.data.pop_back();
            keep_going = on_event(pending_);
        }
        pending_ = SseEvent{};
        has_data_ = false;
        return keep_going;
    }
    std::string_view line = line_;
    if (line[0] != ':') {  // not a comment
        std::string_view field = line;
        std::string_view value;
        if (auto colon = line.find(':'); colon != std::string_view::npos) {
            field = line.substr(0, colon);
            value = line.substr(colon + 1);
            if (!value.empty() && value[0] == ' ') value.remove_prefix(1);
        }
        if (field == "data") {
            pending_.data += value;
            pending_.data += '\n';
            has_data_ = true;
        } else if (field == "event") {
            pending_.event = value;
        } else if (field == "id" && value.find('\0') == std::string_view::npos) {
            pending_.id = value;
        }
    }
    line_.clear();
    return keep_going;
}

}  // namespace server::http
