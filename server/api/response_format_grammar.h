// The grammar of a chat reply under a response format (response_format, or the json_schema field), as
// llama-server 2026 builds it from the template: the reasoning block the template has, if any, then the
// JSON value, either bare or in a "```json" fence, with the schema converter's whitespace rule before and
// after each part. The reply's content is then the value alone (engine/chat/json_reply.h). Same language,
// same tokens: a model writes what it would under llama-server.
#pragma once

#include <string>
#include <string_view>

#include "engine/chat/chat_parser.h"
#include "server/api/tool_syntax.h"

namespace api {

// Where the reply starts with respect to the template's reasoning block.
enum class ReasoningLead {
    None,      // the template has none (or reasoning is not extracted): whitespace, then the value
    Optional,  // the reply may open one before the value
    Opened,    // the prompt opened it: the reply starts inside and closes it
    Closed,    // the prompt holds a whole (empty) one, as templates write it with thinking off
    Harmony,   // gpt-oss: an optional analysis message, then the value on the final channel
};

// Where a rendered prompt leaves the reasoning block: Opened when it ends inside one (`opened`), Closed when
// it ends with the closing tag (and whitespace), Optional otherwise; None without reasoning to extract.
ReasoningLead reasoning_lead(std::string_view prompt, bool extract_reasoning, bool opened,
                             const engine::chat::ReasoningTags& tags);

// `schema_gbnf`: the value's grammar (JSON Schema -> GBNF, rule root). `lit` writes the tags (as token
// references where they are control tokens).
std::string response_format_grammar(const std::string& schema_gbnf, ReasoningLead lead,
                                     const engine::chat::ReasoningTags& tags, const GbnfLiterals& lit);

}  // namespace api
