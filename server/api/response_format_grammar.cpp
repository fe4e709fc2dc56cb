#include "server/api/response_format_grammar.h"

#include "server/api/gbnf_prefix.h"

namespace api {

namespace {

// Character-class text for one character of a tag.
std::string class_char(char c) {
    switch (c) {
        case '\n': return "\\n";
        case '\t': return "\\t";
        case '\r': return "\\r";
        case '\\': return "\\\\";
        case ']': return "\\]";
        case '[': return "\\[";
        case '^': return "\\^";
        case '-': return "\\-";
        default: return std::string(1, c);
    }
}

// Any text that does not contain `stop`, as llama.cpp's "until" writes it: each prefix of the tag
// followed by a character other than the tag's next one.
std::string until(const std::string& stop) {
    std::string out;
    for (size_t i = 0; i < stop.size(); ++i) {
        if (i) out += " | ";
        if (i) out += gbnf_literal(stop.substr(0, i)) + " ";
        out += "[^" + class_char(stop[i]) + "]";
    }
    return "( " + out + " )*";
}

}  // namespace

std::string response_format_grammar(const std::string& schema_gbnf, ReasoningLead lead,
                                     const engine::chat::ReasoningTags& tags, const GbnfLiterals& lit) {
    // llama-server's grammar covers the generation prompt too and reads it first (its "prefill"), so what
    // is left for the reply depends on where the prompt ended: these are those remainders.
    const std::string after_block = "\"\\n\"? " + lit(tags.close) + " \"\\n\"? \"\\n\"?";
    std::string head;
    switch (lead) {
        case ReasoningLead::None: head = "space space "; break;
        case ReasoningLead::Optional:
            head = "space ( " + lit(tags.open) + " \"\\n\"? rf-think-text " + after_block + " )? space ";
            break;
        case ReasoningLead::Opened: head = "rf-think-text " + after_block + " space "; break;
        case ReasoningLead::Closed: head = "space "; break;
    }
    std::string g = "root ::= " + head +
                    "( \"```json\" space rf-root space \"```\" | space rf-root space )\n"
                    "space ::= ( \" \" | \"\\n\"{1,2} [ \\t]{0,20} )?\n";
    if (lead == ReasoningLead::Optional || lead == ReasoningLead::Opened)
        g += "rf-think-text ::= " + until(tags.close) + "\n";
    return g + prefix_gbnf_rules(schema_gbnf, "rf-");
}

}  // namespace api
