// Jinja parser: tokens to syntax tree, with jinja2's grammar and operator precedence
// (or < and < not < comparisons < + - < ~ < * / // % < ** < unary < filters/tests/calls).
#pragma once

#include <memory>
#include <string_view>

#include "engine/chat/jinja_ast.h"
#include "engine/chat/jinja_lexer.h"

namespace engine::jinja {

// Throws TemplateError (Kind::Syntax) with the line and column of the offending token.
std::unique_ptr<ast::Root> parse_template(std::string_view source, const LexerOptions& options = {});

}  // namespace engine::jinja
