// Expression evaluation. Every node stamps its position on errors raised beneath it that do not
// have one yet, so a failure deep in a filter still points at the template code that caused it.
#include "engine/chat/jinja_ast.h"
#include "engine/chat/jinja_env.h"
#include "engine/chat/jinja_error.h"
#include "engine/chat/jinja_filters.h"
#include "engine/chat/jinja_ops.h"

namespace engine::jinja::ast {

namespace {

template <typename F>
Value located(const Node& node, F&& f) {
    try {
        return f();
    } catch (TemplateError& e) {
        if (!e.has_location()) e.set_location(node.line, node.column);
        throw;
    }
}

std::optional<int64_t> slice_bound(const Expr* e, Env& env) {
    if (!e) return std::nullopt;
    const Value v = e->eval(env);
    if (v.is_none()) return std::nullopt;
    if (!v.is_int() && !v.is_bool()) fail("slice indices must be integers or None");
    return v.as_int();
}

bool compare(Compare::Op op, const Value& a, const Value& b) {
    switch (op) {
        case Compare::Op::Eq:
            return a.equals(b);
        case Compare::Op::Ne:
            return !a.equals(b);
        case Compare::Op::Lt:
            return a.less(b);
        case Compare::Op::Le:
            return !b.less(a);
        case Compare::Op::Gt:
            return b.less(a);
        case Compare::Op::Ge:
            return !a.less(b);
        case Compare::Op::In:
            return op_in(a, b);
        case Compare::Op::NotIn:
            return !op_in(a, b);
    }
    return false;
}

}  // namespace

CallArgs Args::eval(Env& env) const {
    CallArgs out;
    out.positional.reserve(positional.size());
    for (const auto& e : positional) out.positional.push_back(e->eval(env));
    if (star_args) {
        for (Value& v : iterate(star_args->eval(env))) out.positional.push_back(std::move(v));
    }
    for (const auto& [name, e] : named) out.named.emplace_back(name, e->eval(env));
    if (star_kwargs) {
        const Value kw = star_kwargs->eval(env);
        if (!kw.is_dict()) fail("argument after ** must be a mapping, not " + kw.type_name());
        for (const auto& [k, v] : kw.as_object().items) out.named.emplace_back(k.str(), v);
    }
    return out;
}

Value Literal::eval(Env&) const {
    return value;
}

Value Name::eval(Env& env) const {
    return env.lookup(name);
}

Value ListLiteral::eval(Env& env) const {
    return located(*this, [&] {
        std::vector<Value> values;
        values.reserve(items.size());
        for (const auto& e : items) values.push_back(e->eval(env));
        return tuple ? Value::tuple(std::move(values)) : Value::array(std::move(values));
    });
}

Value DictLiteral::eval(Env& env) const {
    return located(*this, [&] {
        Value obj = Value::object();
        for (const auto& [k, v] : items) obj.as_object().set(k->eval(env), v->eval(env));
        return obj;
    });
}

Value GetAttr::eval(Env& env) const {
    return located(*this, [&] { return get_attr(object->eval(env), attr); });
}

Value GetItem::eval(Env& env) const {
    return located(*this, [&] {
        const Value obj = object->eval(env);
        return get_item(obj, index->eval(env));
    });
}

Value Slice::eval(Env& env) const {
    return located(*this, [&] {
        const Value obj = object->eval(env);
        const auto b = slice_bound(start.get(), env);
        const auto e = slice_bound(stop.get(), env);
        return get_slice(obj, b, e, slice_bound(step.get(), env));
    });
}

Value Unary::eval(Env& env) const {
    return located(*this, [&] {
        const Value v = operand->eval(env);
        switch (op) {
            case Op::Not:
                return Value(!v.truthy());
            case Op::Neg:
                return op_neg(v);
            case Op::Pos:
                return op_pos(v);
        }
        return v;
    });
}

Value Binary::eval(Env& env) const {
    return located(*this, [&] {
        Value a = left->eval(env);
        if (op == Op::And) return a.truthy() ? right->eval(env) : a;
        if (op == Op::Or) return a.truthy() ? a : right->eval(env);
        const Value b = right->eval(env);
        switch (op) {
            case Op::Add:
                return op_add(a, b);
            case Op::Sub:
                return op_sub(a, b);
            case Op::Mul:
                return op_mul(a, b);
            case Op::Div:
                return op_div(a, b);
            case Op::FloorDiv:
                return op_floordiv(a, b);
            case Op::Mod:
                return op_mod(a, b);
            case Op::Pow:
                return op_pow(a, b);
            case Op::Concat:
                return Value(a.str() + b.str());
            default:
                return Value();
        }
    });
}

Value Compare::eval(Env& env) const {
    return located(*this, [&] {
        Value a = first->eval(env);
        for (const auto& [op, e] : rest) {
            Value b = e->eval(env);
            if (!compare(op, a, b)) return Value(false);
            a = std::move(b);
        }
        return Value(true);
    });
}

Value Conditional::eval(Env& env) const {
    return located(*this, [&] {
        if (cond->eval(env).truthy()) return then_expr->eval(env);
        if (else_expr) return else_expr->eval(env);
        return Value::undefined("the inline if-expression on line " + std::to_string(line) +
                                " evaluated to false and no else section was defined.");
    });
}

Value Call::eval(Env& env) const {
    return located(*this, [&] { return call_value(callee->eval(env), args.eval(env)); });
}

Value Call::call_with(Env& env, CallArgs extra) const {
    return located(*this, [&] {
        const Value fn = callee->eval(env);
        CallArgs all = args.eval(env);
        for (auto& kv : extra.named) all.named.push_back(std::move(kv));
        return call_value(fn, all);
    });
}

Value Filter::apply(Env& env, Value input) const {
    return located(*this, [&] { return apply_filter(name, input, args.eval(env)); });
}

Value Filter::eval(Env& env) const {
    return apply(env, operand->eval(env));
}

Value Test::eval(Env& env) const {
    return located(*this, [&] {
        const Value v = operand->eval(env);
        return Value(apply_test(name, v, args.eval(env)) != negated);
    });
}

}  // namespace engine::jinja::ast
