#include "engine/chat/json_reply.h"

#include "engine/chat/text_scan.h"

namespace engine::chat {

namespace {

constexpr std::string_view kFence = "```json";

}  // namespace

void JsonReplyReader::advance(std::string_view s) {
    while (pos_ < s.size() && phase_ != Phase::Done) {
        const char c = s[pos_];
        switch (phase_) {
            case Phase::Lead:
            case Phase::AfterFence:
                if (is_space(c)) {
                    ++pos_;
                    break;
                }
                if (phase_ == Phase::Lead && c == '`') {
                    const std::string_view rest = s.substr(pos_);
                    if (rest.substr(0, kFence.size()) == kFence) {
                        pos_ += kFence.size();
                        phase_ = Phase::AfterFence;
                        break;
                    }
                    if (kFence.substr(0, rest.size()) == rest) return;  // maybe the fence: wait for more
                }
                start_ = pos_;
                phase_ = Phase::Value;
                // A number or a literal ends where a character that cannot continue it comes; objects,
                // arrays and strings where their nesting closes (the grammar made the text valid JSON as
                // far as it goes).
                scalar_ = c != '{' && c != '[' && c != '"';
                break;
            case Phase::Value:
                if (scalar_) {
                    if (is_space(c) || c == '`') {
                        end_ = pos_;
                        phase_ = Phase::Done;
                        break;
                    }
                } else if (in_string_) {
                    if (escaped_) {
                        escaped_ = false;
                    } else if (c == '\\') {
                        escaped_ = true;
                    } else if (c == '"') {
                        in_string_ = false;
                        if (depth_ == 0) end_ = pos_ + 1;  // a top-level string
                    }
                } else if (c == '"') {
                    in_string_ = true;
                } else if (c == '{' || c == '[') {
                    ++depth_;
                } else if ((c == '}' || c == ']') && --depth_ == 0) {
                    end_ = pos_ + 1;
                }
                ++pos_;
                if (end_ != std::string_view::npos) phase_ = Phase::Done;
                break;
            case Phase::Done: break;
        }
    }
}

std::string JsonReplyReader::content(std::string_view text, bool growing) {
    advance(text);
    // No value yet: nothing while the text grows; a reply that ended so is its text as written (as
    // llama-server answers when its parse finds no value).
    if (start_ == std::string_view::npos) return growing ? std::string() : std::string(text);
    return std::string(end_ == std::string_view::npos ? text.substr(start_) : text.substr(start_, end_ - start_));
}

std::string json_reply_content(std::string_view text, bool growing) {
    return JsonReplyReader().content(text, growing);
}

}  // namespace engine::chat
