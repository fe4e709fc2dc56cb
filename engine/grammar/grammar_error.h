// Errors in a grammar's text (GBNF syntax, undefined rules, left recursion, ...). The server turns
// them into HTTP 400 responses, so each carries where in the text it happened and why.
#pragma once

#include <stdexcept>
#include <string>

namespace engine {

struct GrammarError : std::runtime_error {
    // 1-based; line counts '\n', column counts code points. Errors about the grammar as a whole
    // (e.g. a missing root rule) point at line 1, column 1.
    int line;
    int column;
    std::string message;  // the reason, without the position

    GrammarError(int line_, int column_, std::string message_)
        : std::runtime_error("line " + std::to_string(line_) + ", column " + std::to_string(column_) + ": " +
                             message_),
          line(line_),
          column(column_),
          message(std::move(message_)) {}
};

// A grammar that is legal but too costly to match: one step of the matcher needed more work (stacks
// built) than its budget, or the matcher's caches outgrew their bound. The request's fault (a 400).
struct GrammarBudgetError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

}  // namespace engine
