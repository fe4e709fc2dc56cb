#include "engine/chat/jinja_template.h"

#include "engine/chat/jinja_ast.h"
#include "engine/chat/jinja_env.h"
#include "engine/chat/jinja_globals.h"
#include "engine/chat/jinja_parser.h"

namespace engine::jinja {

Template::Template(std::string_view source, const LexerOptions& options)
    : root_(parse_template(source, options)) {}

std::string Template::render(const Json& context, const RenderOptions& options) const {
    RenderArena arena;  // the context's containers are this render's too
    if (!context.is_object() && !context.is_null()) {
        throw TemplateError(TemplateError::Kind::Runtime, "the render context must be a JSON object");
    }
    std::vector<std::pair<std::string, Value>> vars;
    if (context.is_object()) {
        for (const auto& [k, v] : context.items()) vars.emplace_back(k, Value::from_json(v));
    }
    return render(vars, options);
}

std::string Template::render(const std::vector<std::pair<std::string, Value>>& context,
                             const RenderOptions& options) const {
    RenderArena arena;  // what the template makes is emptied when it is done (jinja_value.h)
    RenderState state(options);
    auto frame = state.make_frame(make_global_frame(state));
    for (const auto& [k, v] : context) frame->set(k, v);
    std::string out;
    Env env{frame, &out, &state};
    ast::exec_body(root_->body, env);
    return out;
}

}  // namespace engine::jinja
