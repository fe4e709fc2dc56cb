#include "server/api/response_format_grammar.h"

#include <algorithm>
#include <string_view>

#include "server/api/gbnf_prefix.h"

namespace api {

namespace {

// Character-class text for one character (a whole UTF-8 sequence) of a tag.
std::string class_char(std::string_view c) {
    if (c.size() != 1) return std::string(c);
    switch (c[0]) {
        case '\n': return "\\n";
        case '\t': return "\\t";
        case '\r': return "\\r";
        case '\\': return "\\\\";
        case ']': return "\\]";
        case '[': return "\\[";
        case '^': return "\\^";
        case '-': return "\\-";
        default: return std::string(c);
    }
}

// The length of the UTF-8 sequence starting with byte b (1 for a stray continuation byte).
size_t sequence_length(unsigned char b) {
    return b >= 0xF0 ? 4 : b >= 0xE0 ? 3 : b >= 0xC0 ? 2 : 1;
}

// Any text that does not contain `stop`, as llama.cpp's "until" writes it: each prefix of the tag
// followed by a character other than the tag's next one (characters, not bytes).
std::string until(const std::string& stop) {
    std::string out;
    for (size_t i = 0; i < stop.size();) {
        const size_t n = std::min(sequence_length((unsigned char)stop[i]), stop.size() - i);
        if (i) out += " | " + gbnf_literal(stop.substr(0, i)) + " ";
        out += "[^" + class_char(std::string_view(stop).substr(i, n)) + "]";
        i += n;
    }
    return "( " + out + " )*";
}

}  // namespace

ReasoningLead reasoning_lead(std::string_view prompt, bool extract_reasoning, bool opened,
                             const engine::chat::ReasoningTags& tags) {
    if (!extract_reasoning || tags.open.empty() || tags.close.empty()) return ReasoningLead::None;
    if (opened) return ReasoningLead::Opened;
    while (!prompt.empty() && (prompt.back() == '\n' || prompt.back() == ' ')) prompt.remove_suffix(1);
    return prompt.ends_with(tags.close) ? ReasoningLead::Closed : ReasoningLead::Optional;
}

std::string response_format_grammar(const std::string& schema_gbnf, ReasoningLead lead,
                                     const engine::chat::ReasoningTags& tags, const GbnfLiterals& lit) {
    // llama-server's grammar covers the generation prompt too and reads it first (its "prefill"), so what
    // is left for the reply depends on where the prompt ended: these are those remainders.
    const std::string after_block = "\"\\n\"? " + lit(tags.close) + " \"\\n\"? \"\\n\"?";
    std::string head;
    if (lead == ReasoningLead::Harmony) {
        // The reply's messages after the prompt's <|start|>assistant: the reasoning the model wants, then the
        // answer where gpt-oss gives it (engine/chat/harmony.h reads the value from there).
        std::string g = "root ::= ( " + lit("<|channel|>analysis<|message|>") + " rf-think-text " +
                        lit("<|end|><|start|>assistant") + " )? " + lit("<|channel|>final<|message|>") +
                        " ( \"```json\" space rf-root space \"```\" | space rf-root space )\n"
                        "space ::= ( \" \" | \"\\n\"{1,2} [ \\t]{0,20} )?\n"
                        "rf-think-text ::= " + until("<|end|>") + "\n";
        return g + prefix_gbnf_rules(schema_gbnf, "rf-");
    }
    switch (lead) {
        case ReasoningLead::None: head = "space space "; break;
        case ReasoningLead::Optional:
            head = "space ( " + lit(tags.open) + " \"\\n\"? rf-think-text " + after_block + " )? space ";
            break;
        case ReasoningLead::Opened: head = "rf-think-text " + after_block + " space "; break;
        case ReasoningLead::Closed: head = "space "; break;
        case ReasoningLead::Harmony: break;  // above
    }
    std::string g = "root ::= " + head +
                    "( \"```json\" space rf-root space \"```\" | space rf-root space )\n"
                    "space ::= ( \" \" | \"\\n\"{1,2} [ \\t]{0,20} )?\n";
    if (lead == ReasoningLead::Optional || lead == ReasoningLead::Opened)
        g += "rf-think-text ::= " + until(tags.close) + "\n";
    return g + prefix_gbnf_rules(schema_gbnf, "rf-");
}

}  // namespace api
