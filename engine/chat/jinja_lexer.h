// Jinja lexer: splits a template into text and tag tokens, applying whitespace control the way HF
// transformers configures jinja2 (trim_blocks, lstrip_blocks, `-` and `+` modifiers, one trailing
// newline dropped). Comments vanish here; {% raw %} content comes out as text.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace engine::jinja {

enum class TokenType {
    Text,        // literal template text, whitespace control already applied
    VarBegin,    // {{
    VarEnd,      // }}
    BlockBegin,  // {%
    BlockEnd,    // %}
    Name,
    String,  // text holds the unescaped value
    Integer,
    Float,
    Operator,  // text holds the operator: + - * / // % ** ~ == != < <= > >= = ( ) [ ] { } , . : |
    End,
};

struct Token {
    TokenType type = TokenType::End;
    std::string text;
    int64_t int_value = 0;
    double float_value = 0;
    int line = 1;
    int column = 1;
};

struct LexerOptions {
    bool trim_blocks = true;
    bool lstrip_blocks = true;
    bool keep_trailing_newline = false;
};

// Throws TemplateError (Kind::Syntax) with the position of the offending character.
std::vector<Token> tokenize(std::string_view source, const LexerOptions& options = {});

}  // namespace engine::jinja
