// The syntax tree of a parsed template. Expressions evaluate to Values and statements write to the
// output of an Env; both are defined in jinja_eval.cpp and jinja_exec.cpp.
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "engine/chat/jinja_value.h"

namespace engine::jinja {

class Env;

namespace ast {

struct Node {
    int line = 0;
    int column = 0;
};

struct Expr : Node {
    virtual ~Expr() = default;
    virtual Value eval(Env& env) const = 0;
};
using ExprPtr = std::unique_ptr<Expr>;

struct Args {
    std::vector<ExprPtr> positional;
    std::vector<std::pair<std::string, ExprPtr>> named;
    ExprPtr star_args;    // *list
    ExprPtr star_kwargs;  // **dict
    CallArgs eval(Env& env) const;
};

struct Literal final : Expr {
    Value value;
    Value eval(Env& env) const override;
};

struct Name final : Expr {
    std::string name;
    Value eval(Env& env) const override;
};

struct ListLiteral final : Expr {
    std::vector<ExprPtr> items;
    bool tuple = false;
    Value eval(Env& env) const override;
};

struct DictLiteral final : Expr {
    std::vector<std::pair<ExprPtr, ExprPtr>> items;
    Value eval(Env& env) const override;
};

struct GetAttr final : Expr {  // a.b
    ExprPtr object;
    std::string attr;
    Value eval(Env& env) const override;
};

struct GetItem final : Expr {  // a[b]
    ExprPtr object;
    ExprPtr index;
    Value eval(Env& env) const override;
};

struct Slice final : Expr {  // a[start:stop:step]
    ExprPtr object, start, stop, step;
    Value eval(Env& env) const override;
};

struct Unary final : Expr {
    enum class Op { Not, Neg, Pos };
    Op op = Op::Not;
    ExprPtr operand;
    Value eval(Env& env) const override;
};

struct Binary final : Expr {
    enum class Op { Add, Sub, Mul, Div, FloorDiv, Mod, Pow, Concat, And, Or };
    Op op = Op::Add;
    ExprPtr left, right;
    Value eval(Env& env) const override;
};

struct Compare final : Expr {  // chained, as in Python: a < b <= c
    enum class Op { Eq, Ne, Lt, Le, Gt, Ge, In, NotIn };
    ExprPtr first;
    std::vector<std::pair<Op, ExprPtr>> rest;
    Value eval(Env& env) const override;
};

struct Conditional final : Expr {        // a if cond else b
    ExprPtr then_expr, cond, else_expr;  // else_expr may be null: undefined when cond is false
    Value eval(Env& env) const override;
};

struct Call final : Expr {
    ExprPtr callee;
    Args args;
    Value eval(Env& env) const override;
    Value call_with(Env& env, CallArgs args) const;
};

struct Filter final : Expr {  // operand | name(args)
    ExprPtr operand;          // null in {% filter %} blocks and block sets
    std::string name;
    Args args;
    Value eval(Env& env) const override;
    Value apply(Env& env, Value input) const;
};

struct Test final : Expr {  // operand is [not] name(args)
    ExprPtr operand;
    std::string name;
    Args args;
    bool negated = false;
    Value eval(Env& env) const override;
};

enum class Flow { Normal, Break, Continue };

struct Stmt : Node {
    virtual ~Stmt() = default;
    virtual Flow exec(Env& env) const = 0;
};
using StmtPtr = std::unique_ptr<Stmt>;
using Body = std::vector<StmtPtr>;

Flow exec_body(const Body& body, Env& env);

struct Text final : Stmt {
    std::string text;
    Flow exec(Env& env) const override;
};

struct Output final : Stmt {  // {{ expr }}
    ExprPtr expr;
    Flow exec(Env& env) const override;
};

struct If final : Stmt {
    std::vector<std::pair<ExprPtr, Body>> branches;  // if and elifs
    Body else_body;
    Flow exec(Env& env) const override;
};

// Where an assignment goes: a name, a namespace attribute (ns.x) or a tuple of names (a, b).
struct Target {
    std::vector<std::string> names;
    std::string attr;  // set: names[0] is the namespace
    bool unpack = false;
};

struct For final : Stmt {
    Target target;
    ExprPtr iterable;
    ExprPtr filter;  // {% for x in xs if cond %}
    bool recursive = false;
    Body body, else_body;
    Flow exec(Env& env) const override;
};

struct Set final : Stmt {  // {% set target = value %}
    Target target;
    ExprPtr value;
    Flow exec(Env& env) const override;
};

struct SetBlock final : Stmt {  // {% set target | filters %}body{% endset %}
    Target target;
    std::vector<std::unique_ptr<Filter>> filters;
    Body body;
    Flow exec(Env& env) const override;
};

struct Param {
    std::string name;
    ExprPtr default_value;  // may be null
};

struct Macro final : Stmt {
    std::string name;
    std::vector<Param> params;
    Body body;
    Flow exec(Env& env) const override;
};

struct CallBlock final : Stmt {  // {% call(params) macro(args) %}body{% endcall %}
    std::unique_ptr<Call> call;
    std::vector<Param> caller_params;
    Body body;
    Flow exec(Env& env) const override;
};

struct FilterBlock final : Stmt {  // {% filter name(args) | ... %}body{% endfilter %}
    std::vector<std::unique_ptr<Filter>> filters;
    Body body;
    Flow exec(Env& env) const override;
};

struct LoopControl final : Stmt {  // break / continue
    Flow flow = Flow::Break;
    Flow exec(Env& env) const override;
};

struct Scope final : Stmt {  // {% with a = 1 %}...{% endwith %}: a new scope
    std::vector<std::pair<Target, ExprPtr>> assignments;
    Body body;
    Flow exec(Env& env) const override;
};

struct Block final : Stmt {  // {% generation %}: renders its body in place
    Body body;
    Flow exec(Env& env) const override;
};

struct Root {
    Body body;
};

}  // namespace ast
}  // namespace engine::jinja
