// Statement execution. Scoping follows jinja2: {% if %} shares its scope, every for-loop
// iteration and macro call gets a fresh one (so {% set %} inside a loop does not leak out;
// templates use namespace() for that), and macros see the scope they were defined in.
#include "engine/chat/jinja_ast.h"
#include "engine/chat/jinja_env.h"
#include "engine/chat/jinja_error.h"
#include "engine/chat/jinja_ops.h"

namespace engine::jinja::ast {

namespace {

template <typename F>
Flow located(const Node& node, F&& f) {
    try {
        return f();
    } catch (TemplateError& e) {
        if (!e.has_location()) e.set_location(node.line, node.column);
        throw;
    }
}

// Switch the current scope for the lifetime of the guard.
class FrameGuard {
  public:
    FrameGuard(Env& env, std::shared_ptr<Frame> frame) : env_(env), saved_(std::move(env.frame)) {
        env_.frame = std::move(frame);
    }
    ~FrameGuard() { env_.frame = std::move(saved_); }
    FrameGuard(const FrameGuard&) = delete;
    FrameGuard& operator=(const FrameGuard&) = delete;

  private:
    Env& env_;
    std::shared_ptr<Frame> saved_;
};

std::shared_ptr<Frame> child_of(Env& env) {
    return env.state->make_frame(env.frame);
}

void unpack_into(Frame& frame, const std::vector<std::string>& names, const Value& value) {
    const std::vector<Value> parts = iterate(value);
    if (parts.size() != names.size()) {
        fail(parts.size() > names.size()
                 ? "too many values to unpack (expected " + std::to_string(names.size()) + ")"
                 : "not enough values to unpack (expected " + std::to_string(names.size()) + ", got " +
                       std::to_string(parts.size()) + ")");
    }
    for (size_t i = 0; i < names.size(); ++i) frame.set(names[i], parts[i]);
}

void assign(Env& env, const Target& target, Value value) {
    if (!target.attr.empty()) {
        const Value ns = env.lookup(target.names[0]);
        if (!ns.is_namespace()) fail("cannot assign attribute on non-namespace object");
        ns.as_object().set(Value(target.attr), std::move(value));
    } else if (target.unpack) {
        unpack_into(*env.frame, target.names, value);
    } else {
        env.frame->set(target.names[0], std::move(value));
    }
}

// Bind macro/caller arguments: positional, then keyword, then defaults (evaluated in the new
// scope, so they may refer to earlier parameters). Extras land in varargs / kwargs.
void bind_params(Env& env, const std::vector<Param>& params, const CallArgs& args,
                 const std::string& macro_name) {
    Frame& frame = *env.frame;
    std::vector<Value> varargs;
    for (size_t i = params.size(); i < args.positional.size(); ++i) varargs.push_back(args.positional[i]);
    Value kwargs = Value::object();
    for (const auto& [name, v] : args.named) {
        bool is_param = name == "caller";
        for (const auto& p : params) is_param = is_param || p.name == name;
        if (!is_param) kwargs.as_object().set(Value(name), v);
        if (name == "caller") frame.set("caller", v);
    }
    for (size_t i = 0; i < params.size(); ++i) {
        const Param& p = params[i];
        if (const Value* v = args.find(i, p.name)) {
            frame.set(p.name, *v);
        } else if (p.default_value) {
            frame.set(p.name, p.default_value->eval(env));
        } else {
            frame.set(p.name, Value::undefined("parameter '" + p.name + "' was not provided to '" +
                                               macro_name + "'"));
        }
    }
    frame.set("varargs", Value::tuple(std::move(varargs)));
    frame.set("kwargs", std::move(kwargs));
}

// A callable that renders `body` in a fresh scope under `closure` and returns the text.
Value make_renderer(Env& env, std::string name, const std::vector<Param>* params, const Body* body) {
    RenderState* state = env.state;
    std::shared_ptr<Frame> closure = env.frame;
    return Value::function(name, [state, closure, params, body, name](const CallArgs& args) {
        CallDepthGuard depth(*state);
        std::string out;
        Env sub{state->make_frame(closure), &out, state};
        bind_params(sub, *params, args, name);
        exec_body(*body, sub);
        return Value(std::move(out));
    });
}

struct LoopRunner {
    const For& node;
    Env& env;

    // Runs the loop over `iterable` at recursion `depth` (1 for the outermost call).
    void run(const Value& iterable, int64_t depth) {
        std::vector<Value> items = iterate(iterable);
        if (node.filter) {
            std::vector<Value> kept;
            for (Value& item : items) {
                FrameGuard scope(env, child_of(env));
                bind(item);
                if (node.filter->eval(env).truthy()) kept.push_back(std::move(item));
            }
            items = std::move(kept);
        }
        if (items.empty()) {
            exec_body(node.else_body, env);
            return;
        }
        const auto n = static_cast<int64_t>(items.size());
        auto last_changed = std::make_shared<std::optional<Value>>();
        for (int64_t i = 0; i < n; ++i) {
            FrameGuard scope(env, child_of(env));
            bind(items[static_cast<size_t>(i)]);
            env.frame->set("loop", loop_object(items, i, depth, last_changed));
            const Flow flow = exec_body(node.body, env);
            if (flow == Flow::Break) break;
        }
    }

    void bind(const Value& item) {
        if (node.target.unpack) {
            unpack_into(*env.frame, node.target.names, item);
        } else {
            env.frame->set(node.target.names[0], item);
        }
    }

    Value loop_object(const std::vector<Value>& items, int64_t i, int64_t depth,
                      const std::shared_ptr<std::optional<Value>>& last_changed) {
        const auto n = static_cast<int64_t>(items.size());
        Value loop = Value::object();
        auto& o = loop.as_object();
        o.set(Value("index"), Value(i + 1));
        o.set(Value("index0"), Value(i));
        o.set(Value("revindex"), Value(n - i));
        o.set(Value("revindex0"), Value(n - i - 1));
        o.set(Value("first"), Value(i == 0));
        o.set(Value("last"), Value(i == n - 1));
        o.set(Value("length"), Value(n));
        o.set(Value("depth"), Value(depth));
        o.set(Value("depth0"), Value(depth - 1));
        if (i > 0) o.set(Value("previtem"), items[static_cast<size_t>(i - 1)]);
        if (i + 1 < n) o.set(Value("nextitem"), items[static_cast<size_t>(i + 1)]);
        o.set(Value("cycle"), Value::function("cycle", [i](const CallArgs& a) {
                  if (a.positional.empty()) fail("no items for cycling given");
                  return a.positional[static_cast<size_t>(i) % a.positional.size()];
              }));
        o.set(Value("changed"), Value::function("changed", [last_changed](const CallArgs& a) {
                  Value now = Value::array(a.positional);
                  if (*last_changed && (*last_changed)->equals(now)) return Value(false);
                  *last_changed = now;
                  return Value(true);
              }));
        if (node.recursive) {
            const For* for_node = &node;
            RenderState* state = env.state;
            std::shared_ptr<Frame> outer = env.frame->parent;
            o.call = [for_node, state, outer, depth](const CallArgs& a) {
                if (a.positional.size() != 1) fail("loop() takes exactly one argument");
                CallDepthGuard guard(*state);
                std::string out;
                Env sub{outer, &out, state};
                LoopRunner{*for_node, sub}.run(a.positional[0], depth + 1);
                return Value(std::move(out));
            };
        }
        return loop;
    }
};

}  // namespace

Flow exec_body(const Body& body, Env& env) {
    for (const auto& stmt : body) {
        const Flow flow = stmt->exec(env);
        if (flow != Flow::Normal) return flow;
    }
    return Flow::Normal;
}

Flow Text::exec(Env& env) const {
    *env.out += text;
    return Flow::Normal;
}

Flow Output::exec(Env& env) const {
    return located(*this, [&] {
        *env.out += expr->eval(env).str();
        return Flow::Normal;
    });
}

Flow If::exec(Env& env) const {
    return located(*this, [&] {
        for (const auto& [cond, body] : branches) {
            if (cond->eval(env).truthy()) return exec_body(body, env);
        }
        return exec_body(else_body, env);
    });
}

Flow For::exec(Env& env) const {
    return located(*this, [&] {
        LoopRunner{*this, env}.run(iterable->eval(env), 1);
        return Flow::Normal;
    });
}

Flow Set::exec(Env& env) const {
    return located(*this, [&] {
        assign(env, target, value->eval(env));
        return Flow::Normal;
    });
}

Flow SetBlock::exec(Env& env) const {
    return located(*this, [&] {
        Value v(env.capture([&] { exec_body(body, env); }));
        for (const auto& f : filters) v = f->apply(env, std::move(v));
        assign(env, target, std::move(v));
        return Flow::Normal;
    });
}

Flow Macro::exec(Env& env) const {
    env.frame->set(name, make_renderer(env, name, &params, &body));
    return Flow::Normal;
}

Flow CallBlock::exec(Env& env) const {
    return located(*this, [&] {
        CallArgs extra;
        extra.named.emplace_back("caller", make_renderer(env, "caller", &caller_params, &body));
        *env.out += call->call_with(env, std::move(extra)).str();
        return Flow::Normal;
    });
}

Flow FilterBlock::exec(Env& env) const {
    return located(*this, [&] {
        Value v(env.capture([&] { exec_body(body, env); }));
        for (const auto& f : filters) v = f->apply(env, std::move(v));
        *env.out += v.str();
        return Flow::Normal;
    });
}

Flow LoopControl::exec(Env&) const {
    return flow;
}

Flow Scope::exec(Env& env) const {
    return located(*this, [&] {
        auto frame = child_of(env);
        for (const auto& [target, value] : assignments) {
            Value v = value->eval(env);  // evaluated in the enclosing scope
            if (target.unpack) {
                unpack_into(*frame, target.names, v);
            } else {
                frame->set(target.names[0], std::move(v));
            }
        }
        FrameGuard scope(env, std::move(frame));
        return exec_body(body, env);
    });
}

Flow Block::exec(Env& env) const {
    return exec_body(body, env);
}

}  // namespace engine::jinja::ast
