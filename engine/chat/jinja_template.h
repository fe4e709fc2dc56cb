// Public entry point of the Jinja interpreter: parse a template once, render it many times.
//
//   engine::jinja::Template t("Hello {{ name | upper }}!");
//   t.render({{"name", "world"}});  // "Hello WORLD!"
//
// Semantics follow jinja2 as HF transformers configures it for chat templates: trim_blocks,
// lstrip_blocks, loop controls, the {% generation %} tag, raise_exception and strftime_now.
// Deliberate differences: no autoescaping or Markup strings (so `"x"|safe + s` does not HTML-escape
// s), mutating methods such as list.append and dict.update work (HF's sandbox refuses them, but
// shipped templates call them), and filters like map/select return lists rather than generators.
#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "engine/chat/jinja_error.h"
#include "engine/chat/jinja_lexer.h"
#include "engine/chat/jinja_value.h"

namespace engine::jinja {

namespace ast {
struct Root;
}

struct RenderOptions {
    // The clock strftime_now() reads; the current time when unset. Set it for reproducible output.
    std::optional<std::chrono::system_clock::time_point> now;
    int max_call_depth = 200;  // macro / recursive-loop nesting before rendering fails
};

class Template {
  public:
    // Throws TemplateError (Kind::Syntax) when the source does not parse.
    explicit Template(std::string_view source, const LexerOptions& options = {});

    // `context` must be a JSON object; its keys become template variables. Throws TemplateError.
    std::string render(const Json& context, const RenderOptions& options = {}) const;
    std::string render(const std::vector<std::pair<std::string, Value>>& context,
                       const RenderOptions& options = {}) const;

  private:
    std::shared_ptr<const ast::Root> root_;
};

}  // namespace engine::jinja
