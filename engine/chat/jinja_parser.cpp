#include "engine/chat/jinja_parser.h"

#include <initializer_list>

#include "engine/chat/jinja_error.h"

namespace engine::jinja {

namespace {

using namespace ast;

template <typename T>
std::unique_ptr<T> node_at(const Token& t) {
    auto n = std::make_unique<T>();
    n->line = t.line;
    n->column = t.column;
    return n;
}

std::string describe(const Token& t) {
    switch (t.type) {
        case TokenType::End:
            return "end of template";
        case TokenType::VarEnd:
            return "end of print statement";
        case TokenType::BlockEnd:
            return "end of statement block";
        case TokenType::String:
            return "string";
        case TokenType::Text:
            return "template data";
        default:
            return "'" + t.text + "'";
    }
}

std::string join_tags(std::initializer_list<const char*> tags) {
    std::string s;
    for (const char* t : tags) s += (s.empty() ? "'" : " or '") + std::string(t) + "'";
    return s;
}

// Nesting of expressions and blocks beyond this fails cleanly instead of exhausting the stack.
constexpr int kMaxNesting = 256;

class Parser {
  public:
    explicit Parser(std::vector<Token> tokens) : toks_(std::move(tokens)) {}

    std::unique_ptr<Root> parse() {
        auto root = std::make_unique<Root>();
        root->body = parse_body({}, "");
        return root;
    }

  private:
    // ---- token stream ----
    const Token& cur() const { return toks_[i_]; }
    const Token& peek(size_t k = 1) const { return toks_[std::min(i_ + k, toks_.size() - 1)]; }
    const Token& next() {
        const Token& t = toks_[i_];
        if (i_ + 1 < toks_.size()) ++i_;
        return t;
    }
    bool is_op(const char* op) const { return cur().type == TokenType::Operator && cur().text == op; }
    bool is_name(const char* name) const { return cur().type == TokenType::Name && cur().text == name; }
    bool skip_op(const char* op) {
        if (!is_op(op)) return false;
        next();
        return true;
    }
    bool skip_name(const char* name) {
        if (!is_name(name)) return false;
        next();
        return true;
    }

    [[noreturn]] void error(const Token& t, std::string message) const {
        throw TemplateError(TemplateError::Kind::Syntax, std::move(message), t.line, t.column);
    }

    const Token& expect_op(const char* op) {
        if (!is_op(op)) error(cur(), "expected token '" + std::string(op) + "', got " + describe(cur()));
        return next();
    }
    const Token& expect(TokenType type, const char* what) {
        if (cur().type != type) error(cur(), "expected " + std::string(what) + ", got " + describe(cur()));
        return next();
    }
    std::string expect_name() { return expect(TokenType::Name, "a name").text; }

    // ---- statements ----

    // Parse template content until a {% tag %} whose name is in `end_tags`; leaves the stream at
    // that name. `open_tag` names the block being closed, for the error at end of template.
    Body parse_body(std::initializer_list<const char*> end_tags, const char* open_tag) {
        const NestingGuard guard(*this);
        Body body;
        while (cur().type != TokenType::End) {
            const Token& t = cur();
            if (t.type == TokenType::Text) {
                auto s = node_at<Text>(t);
                s->text = t.text;
                body.push_back(std::move(s));
                next();
            } else if (t.type == TokenType::VarBegin) {
                auto s = node_at<Output>(t);
                next();
                s->expr = parse_tuple(true, false);
                expect(TokenType::VarEnd, "end of print statement");
                body.push_back(std::move(s));
            } else if (t.type == TokenType::BlockBegin) {
                next();
                if (cur().type == TokenType::Name) {
                    for (const char* end : end_tags) {
                        if (cur().text == end) return body;
                    }
                }
                body.push_back(parse_statement(end_tags));
                expect(TokenType::BlockEnd, "end of statement block");
            } else {
                error(t, "unexpected " + describe(t));
            }
        }
        if (end_tags.size() > 0) {
            error(cur(), "Unexpected end of template. Jinja was looking for the following tags: " +
                             join_tags(end_tags) + ". The innermost block that needs to be closed is '" +
                             open_tag + "'.");
        }
        return body;
    }

    // The body of a block statement: closes the opening tag, then parses up to an end tag.
    Body parse_block(std::initializer_list<const char*> end_tags, const char* open_tag) {
        expect(TokenType::BlockEnd, "end of statement block");
        return parse_body(end_tags, open_tag);
    }

    StmtPtr parse_statement(std::initializer_list<const char*> enclosing_end_tags) {
        const Token& t = cur();
        if (t.type != TokenType::Name) error(t, "tag name expected");
        const std::string& tag = t.text;
        if (tag == "if") return parse_if();
        if (tag == "for") return parse_for();
        if (tag == "set") return parse_set();
        if (tag == "macro") return parse_macro();
        if (tag == "call") return parse_call_block();
        if (tag == "filter") return parse_filter_block();
        if (tag == "with") return parse_with();
        if (tag == "generation") {
            auto s = node_at<Block>(t);
            next();
            s->body = parse_block({"endgeneration"}, "generation");
            next();
            return s;
        }
        if (tag == "break" || tag == "continue") {
            auto s = node_at<LoopControl>(t);
            s->flow = tag == "break" ? Flow::Break : Flow::Continue;
            next();
            return s;
        }
        std::string message = "Encountered unknown tag '" + tag + "'.";
        if (enclosing_end_tags.size() > 0) {
            message += " Jinja was looking for the following tags: " + join_tags(enclosing_end_tags) + ".";
        }
        error(t, message);
    }

    StmtPtr parse_if() {
        auto s = node_at<If>(cur());
        next();
        while (true) {
            ExprPtr cond = parse_tuple(false, false);
            Body body = parse_block({"elif", "else", "endif"}, "if");
            s->branches.emplace_back(std::move(cond), std::move(body));
            const std::string tag = next().text;
            if (tag == "elif") continue;
            if (tag == "else") {
                s->else_body = parse_block({"endif"}, "if");
                next();
            }
            return s;
        }
    }

    StmtPtr parse_for() {
        auto s = node_at<For>(cur());
        next();
        s->target = parse_target(false);
        if (!skip_name("in")) error(cur(), "expected 'in', got " + describe(cur()));
        s->iterable = parse_tuple(false, false, "recursive");
        if (skip_name("if")) s->filter = parse_expression(true);
        s->recursive = skip_name("recursive");
        s->body = parse_block({"endfor", "else"}, "for");
        if (next().text == "else") {
            s->else_body = parse_block({"endfor"}, "for");
            next();
        }
        return s;
    }

    // A name, a tuple of names (for unpacking) or, for set, a namespace attribute ns.attr.
    Target parse_target(bool allow_attr) {
        Target target;
        if (allow_attr && cur().type == TokenType::Name && peek().type == TokenType::Operator &&
            peek().text == ".") {
            target.names.push_back(next().text);
            next();
            target.attr = expect_name();
            return target;
        }
        const bool parens = skip_op("(");
        target.names.push_back(expect_name());
        while (skip_op(",")) {
            target.unpack = true;
            if (cur().type != TokenType::Name) break;  // trailing comma
            target.names.push_back(expect_name());
        }
        if (parens) {
            expect_op(")");
            target.unpack = true;
        }
        return target;
    }

    StmtPtr parse_set() {
        const Token& start = cur();
        next();
        Target target = parse_target(true);
        if (skip_op("=")) {
            auto s = node_at<Set>(start);
            s->target = std::move(target);
            s->value = parse_tuple(true, false);
            return s;
        }
        auto s = node_at<SetBlock>(start);
        s->target = std::move(target);
        while (is_op("|")) {
            next();
            s->filters.push_back(parse_filter_call(nullptr));
        }
        s->body = parse_block({"endset"}, "set");
        next();
        return s;
    }

    std::vector<Param> parse_params() {
        std::vector<Param> params;
        expect_op("(");
        while (!is_op(")")) {
            if (!params.empty()) expect_op(",");
            if (is_op(")")) break;
            Param p;
            p.name = expect_name();
            if (skip_op("=")) p.default_value = parse_expression(true);
            params.push_back(std::move(p));
        }
        expect_op(")");
        return params;
    }

    StmtPtr parse_macro() {
        auto s = node_at<Macro>(cur());
        next();
        s->name = expect_name();
        s->params = parse_params();
        s->body = parse_block({"endmacro"}, "macro");
        next();
        return s;
    }

    StmtPtr parse_call_block() {
        auto s = node_at<CallBlock>(cur());
        next();
        if (is_op("(")) s->caller_params = parse_params();
        const Token& at = cur();
        ExprPtr call = parse_expression(true);
        auto* as_call = dynamic_cast<Call*>(call.get());
        if (!as_call) error(at, "expected call");
        call.release();
        s->call.reset(as_call);
        s->body = parse_block({"endcall"}, "call");
        next();
        return s;
    }

    StmtPtr parse_filter_block() {
        auto s = node_at<FilterBlock>(cur());
        next();
        s->filters.push_back(parse_filter_call(nullptr));
        while (skip_op("|")) s->filters.push_back(parse_filter_call(nullptr));
        s->body = parse_block({"endfilter"}, "filter");
        next();
        return s;
    }

    StmtPtr parse_with() {
        auto s = node_at<Scope>(cur());
        next();
        while (cur().type != TokenType::BlockEnd) {
            if (!s->assignments.empty()) expect_op(",");
            Target target = parse_target(false);
            expect_op("=");
            s->assignments.emplace_back(std::move(target), parse_expression(true));
        }
        s->body = parse_block({"endwith"}, "with");
        next();
        return s;
    }

    // ---- expressions ----

    bool is_tuple_end(const char* extra_end) const {
        const auto type = cur().type;
        if (type == TokenType::VarEnd || type == TokenType::BlockEnd || type == TokenType::End) return true;
        if (is_op(")")) return true;
        return extra_end && is_name(extra_end);
    }

    // Comma-separated expressions form a tuple: {{ a, b }}, {% for x in a, b %}, (a, b).
    ExprPtr parse_tuple(bool with_condexpr, bool explicit_parens, const char* extra_end = nullptr) {
        const Token& start = cur();
        std::vector<ExprPtr> items;
        bool is_tuple = false;
        while (true) {
            if (!items.empty()) expect_op(",");
            if (is_tuple_end(extra_end)) break;
            items.push_back(parse_expression(with_condexpr));
            if (is_op(",")) {
                is_tuple = true;
            } else {
                break;
            }
        }
        if (!is_tuple) {
            if (!items.empty()) return std::move(items[0]);
            if (!explicit_parens) error(cur(), "Expected an expression, got " + describe(cur()));
        }
        auto t = node_at<ListLiteral>(start);
        t->items = std::move(items);
        t->tuple = true;
        return t;
    }

    ExprPtr parse_expression(bool with_condexpr) { return with_condexpr ? parse_condexpr() : parse_or(); }

    ExprPtr parse_condexpr() {
        ExprPtr expr = parse_or();
        while (is_name("if")) {
            auto c = node_at<Conditional>(cur());
            next();
            c->then_expr = std::move(expr);
            c->cond = parse_or();
            if (skip_name("else")) c->else_expr = parse_condexpr();
            expr = std::move(c);
        }
        return expr;
    }

    ExprPtr binary(Binary::Op op, const Token& at, ExprPtr left, ExprPtr right) {
        auto b = node_at<Binary>(at);
        b->op = op;
        b->left = std::move(left);
        b->right = std::move(right);
        return b;
    }

    ExprPtr parse_or() {
        ExprPtr left = parse_and();
        while (is_name("or")) {
            const Token& at = next();
            left = binary(Binary::Op::Or, at, std::move(left), parse_and());
        }
        return left;
    }

    ExprPtr parse_and() {
        ExprPtr left = parse_not();
        while (is_name("and")) {
            const Token& at = next();
            left = binary(Binary::Op::And, at, std::move(left), parse_not());
        }
        return left;
    }

    ExprPtr parse_not() {
        const NestingGuard guard(*this);
        if (is_name("not")) {
            auto u = node_at<Unary>(cur());
            next();
            u->op = Unary::Op::Not;
            u->operand = parse_not();
            return u;
        }
        return parse_compare();
    }

    ExprPtr parse_compare() {
        const Token& start = cur();
        ExprPtr first = parse_math1();
        std::vector<std::pair<Compare::Op, ExprPtr>> rest;
        while (true) {
            Compare::Op op;
            if (cur().type == TokenType::Operator &&
                (cur().text == "==" || cur().text == "!=" || cur().text == "<" || cur().text == "<=" ||
                 cur().text == ">" || cur().text == ">=")) {
                const std::string& o = cur().text;
                op = o == "=="   ? Compare::Op::Eq
                     : o == "!=" ? Compare::Op::Ne
                     : o == "<"  ? Compare::Op::Lt
                     : o == "<=" ? Compare::Op::Le
                     : o == ">"  ? Compare::Op::Gt
                                 : Compare::Op::Ge;
                next();
            } else if (is_name("in")) {
                op = Compare::Op::In;
                next();
            } else if (is_name("not") && peek().type == TokenType::Name && peek().text == "in") {
                op = Compare::Op::NotIn;
                next();
                next();
            } else {
                break;
            }
            rest.emplace_back(op, parse_math1());
        }
        if (rest.empty()) return first;
        auto c = node_at<Compare>(start);
        c->first = std::move(first);
        c->rest = std::move(rest);
        return c;
    }

    ExprPtr parse_math1() {
        ExprPtr left = parse_concat();
        while (is_op("+") || is_op("-")) {
            const Token& at = next();
            left = binary(at.text == "+" ? Binary::Op::Add : Binary::Op::Sub, at, std::move(left),
                          parse_concat());
        }
        return left;
    }

    ExprPtr parse_concat() {
        ExprPtr left = parse_math2();
        while (is_op("~")) {
            const Token& at = next();
            left = binary(Binary::Op::Concat, at, std::move(left), parse_math2());
        }
        return left;
    }

    ExprPtr parse_math2() {
        ExprPtr left = parse_pow();
        while (is_op("*") || is_op("/") || is_op("//") || is_op("%")) {
            const Token& at = next();
            const Binary::Op op = at.text == "*"    ? Binary::Op::Mul
                                  : at.text == "/"  ? Binary::Op::Div
                                  : at.text == "//" ? Binary::Op::FloorDiv
                                                    : Binary::Op::Mod;
            left = binary(op, at, std::move(left), parse_pow());
        }
        return left;
    }

    ExprPtr parse_pow() {
        ExprPtr left = parse_unary(true);
        while (is_op("**")) {
            const Token& at = next();
            left = binary(Binary::Op::Pow, at, std::move(left), parse_unary(true));
        }
        return left;
    }

    ExprPtr parse_unary(bool with_filter) {
        const NestingGuard guard(*this);
        ExprPtr node;
        if (is_op("-") || is_op("+")) {
            auto u = node_at<Unary>(cur());
            u->op = next().text == "-" ? Unary::Op::Neg : Unary::Op::Pos;
            u->operand = parse_unary(false);
            node = std::move(u);
        } else {
            node = parse_primary();
        }
        node = parse_postfix(std::move(node));
        if (with_filter) node = parse_filter_expr(std::move(node));
        return node;
    }

    ExprPtr parse_primary() {
        const Token& t = cur();
        switch (t.type) {
            case TokenType::Name: {
                next();
                if (t.text == "true" || t.text == "True" || t.text == "false" || t.text == "False") {
                    auto l = node_at<Literal>(t);
                    l->value = Value(t.text == "true" || t.text == "True");
                    return l;
                }
                if (t.text == "none" || t.text == "None") {
                    auto l = node_at<Literal>(t);
                    l->value = Value(nullptr);
                    return l;
                }
                auto n = node_at<Name>(t);
                n->name = t.text;
                return n;
            }
            case TokenType::String: {
                auto l = node_at<Literal>(t);
                std::string s = next().text;
                while (cur().type == TokenType::String) s += next().text;  // "a" "b" concatenates
                l->value = Value(std::move(s));
                return l;
            }
            case TokenType::Integer: {
                auto l = node_at<Literal>(t);
                l->value = Value(next().int_value);
                return l;
            }
            case TokenType::Float: {
                auto l = node_at<Literal>(t);
                l->value = Value(next().float_value);
                return l;
            }
            case TokenType::Operator:
                if (t.text == "(") {
                    next();
                    ExprPtr e = parse_tuple(true, true);
                    expect_op(")");
                    return e;
                }
                if (t.text == "[") return parse_list();
                if (t.text == "{") return parse_dict();
                break;
            default:
                break;
        }
        error(t, "unexpected " + describe(t));
    }

    ExprPtr parse_list() {
        auto l = node_at<ListLiteral>(cur());
        expect_op("[");
        while (!is_op("]")) {
            if (!l->items.empty()) expect_op(",");
            if (is_op("]")) break;
            l->items.push_back(parse_expression(true));
        }
        expect_op("]");
        return l;
    }

    ExprPtr parse_dict() {
        auto d = node_at<DictLiteral>(cur());
        expect_op("{");
        while (!is_op("}")) {
            if (!d->items.empty()) expect_op(",");
            if (is_op("}")) break;
            ExprPtr key = parse_expression(true);
            expect_op(":");
            d->items.emplace_back(std::move(key), parse_expression(true));
        }
        expect_op("}");
        return d;
    }

    ExprPtr parse_postfix(ExprPtr node) {
        while (true) {
            if (is_op(".") || is_op("[")) {
                node = parse_subscript(std::move(node));
            } else if (is_op("(")) {
                node = parse_call(std::move(node));
            } else {
                return node;
            }
        }
    }

    ExprPtr parse_filter_expr(ExprPtr node) {
        while (true) {
            if (is_op("|")) {
                while (skip_op("|")) node = parse_filter_call(std::move(node));
            } else if (is_name("is")) {
                node = parse_test(std::move(node));
            } else if (is_op("(")) {
                node = parse_call(std::move(node));
            } else {
                return node;
            }
        }
    }

    ExprPtr parse_subscript(ExprPtr node) {
        const Token& at = next();
        if (at.text == ".") {
            const Token& attr = cur();
            if (attr.type == TokenType::Name) {
                auto g = node_at<GetAttr>(at);
                g->object = std::move(node);
                g->attr = next().text;
                return g;
            }
            if (attr.type != TokenType::Integer) error(attr, "expected name or number");
            auto g = node_at<GetItem>(at);
            auto index = node_at<Literal>(attr);
            index->value = Value(next().int_value);
            g->object = std::move(node);
            g->index = std::move(index);
            return g;
        }
        // '[': an index, a slice, or several indices forming a tuple
        std::vector<ExprPtr> indices;
        std::unique_ptr<Slice> slice;
        while (!is_op("]")) {
            if (!indices.empty() || slice) expect_op(",");
            if (!is_op(":")) {
                ExprPtr e = parse_expression(true);
                if (!is_op(":")) {
                    indices.push_back(std::move(e));
                    continue;
                }
                slice = node_at<Slice>(at);
                slice->start = std::move(e);
            } else {
                slice = node_at<Slice>(at);
            }
            next();  // ':'
            if (!is_op(":") && !is_op("]") && !is_op(",")) slice->stop = parse_expression(true);
            if (skip_op(":")) {
                if (!is_op("]") && !is_op(",")) slice->step = parse_expression(true);
            }
        }
        expect_op("]");
        if (slice) {
            if (!indices.empty()) error(at, "mixed slices and indices are not supported");
            slice->object = std::move(node);
            return slice;
        }
        if (indices.empty()) error(at, "expected an index");
        auto g = node_at<GetItem>(at);
        g->object = std::move(node);
        if (indices.size() == 1) {
            g->index = std::move(indices[0]);
        } else {
            auto t = node_at<ListLiteral>(at);
            t->items = std::move(indices);
            t->tuple = true;
            g->index = std::move(t);
        }
        return g;
    }

    Args parse_args() {
        Args args;
        expect_op("(");
        bool need_comma = false;
        while (!is_op(")")) {
            if (need_comma) {
                expect_op(",");
                if (is_op(")")) break;
            }
            if (skip_op("*")) {
                args.star_args = parse_expression(true);
            } else if (skip_op("**")) {
                args.star_kwargs = parse_expression(true);
            } else if (cur().type == TokenType::Name && peek().type == TokenType::Operator &&
                       peek().text == "=") {
                std::string key = next().text;
                next();
                args.named.emplace_back(std::move(key), parse_expression(true));
            } else {
                if (!args.named.empty() || args.star_args || args.star_kwargs) {
                    error(cur(), "positional argument follows keyword argument");
                }
                args.positional.push_back(parse_expression(true));
            }
            need_comma = true;
        }
        expect_op(")");
        return args;
    }

    ExprPtr parse_call(ExprPtr callee) {
        auto c = node_at<Call>(cur());
        c->callee = std::move(callee);
        c->args = parse_args();
        return c;
    }

    std::string parse_dotted_name() {
        std::string name = expect_name();
        while (skip_op(".")) name += "." + expect_name();
        return name;
    }

    std::unique_ptr<Filter> parse_filter_call(ExprPtr operand) {
        auto f = node_at<Filter>(cur());
        f->operand = std::move(operand);
        f->name = parse_dotted_name();
        if (is_op("(")) f->args = parse_args();
        return f;
    }

    ExprPtr parse_test(ExprPtr operand) {
        auto t = node_at<Test>(cur());
        next();  // 'is'
        t->negated = skip_name("not");
        t->operand = std::move(operand);
        t->name = parse_dotted_name();
        if (is_op("(")) {
            t->args = parse_args();
        } else {
            // One argument without parentheses: `x is divisibleby 3`, `x is sameas none`.
            const auto type = cur().type;
            const bool starts_arg = type == TokenType::Name || type == TokenType::String ||
                                    type == TokenType::Integer || type == TokenType::Float || is_op("[") ||
                                    is_op("{");
            if (starts_arg && !is_name("else") && !is_name("or") && !is_name("and")) {
                if (is_name("is")) error(cur(), "You cannot chain multiple tests with is");
                t->args.positional.push_back(parse_postfix(parse_primary()));
            }
        }
        return t;
    }

    class NestingGuard {
      public:
        explicit NestingGuard(Parser& p) : p_(p) {
            if (++p_.depth_ > kMaxNesting) p_.error(p_.cur(), "template nested too deeply (the limit is " + std::to_string(kMaxNesting) + " levels)");
        }
        ~NestingGuard() { --p_.depth_; }
        NestingGuard(const NestingGuard&) = delete;
        NestingGuard& operator=(const NestingGuard&) = delete;

      private:
        Parser& p_;
    };

    std::vector<Token> toks_;
    size_t i_ = 0;
    int depth_ = 0;
};

}  // namespace

std::unique_ptr<ast::Root> parse_template(std::string_view source, const LexerOptions& options) {
    return Parser(tokenize(source, options)).parse();
}

}  // namespace engine::jinja
