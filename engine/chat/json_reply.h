// The content of a chat reply written under a response format (a JSON Schema): llama-server's chat
// grammar lets the model write whitespace and a "```json" fence before the JSON value and whitespace and the
// closing fence after it, and its reply's content is the value alone. An unfinished value (the token limit
// cut it) is content as far as it goes; a reply cut before any value is its text as written.
#pragma once

#include <string>
#include <string_view>

namespace engine::chat {

// The JSON value in `text`. `growing`: more text may follow, so an unfinished fence is held back (it may
// still be the fence) and what is returned only ever grows as the text does.
std::string json_reply_content(std::string_view text, bool growing);

}  // namespace engine::chat
