// Bounds on hostile grammars (issue 13): parenthesis nesting, regex group nesting, the compile-time
// expansion bound and the matcher's per-call work budget. Each fails with a message naming the limit
// instead of overflowing the stack or stalling the caller.
#include <catch2/catch.hpp>
#include <chrono>

#include "engine/grammar/gbnf_parser.h"
#include "engine/grammar/grammar.h"
#include "engine/grammar/grammar_error.h"
#include "engine/grammar/grammar_matcher.h"
#include "engine/grammar/json_schema.h"
#include "engine/grammar/regex.h"
#include "engine/grammar/stack_automaton.h"

using engine::Grammar;
using engine::GrammarBudgetError;
using engine::GrammarError;

namespace {

std::vector<std::string> small_vocab() {
    return {"a", "b", "aa", "ab", "ba", "bb", "aaa", "x", "", "</s>"};
}

std::string nested(const std::string& open, const std::string& leaf, const std::string& close, size_t n) {
    std::string out;
    out.reserve(n * (open.size() + close.size()) + leaf.size());
    for (size_t i = 0; i < n; ++i) out += open;
    out += leaf;
    for (size_t i = 0; i < n; ++i) out += close;
    return out;
}

}  // namespace

TEST_CASE("GBNF parentheses nested 30,000 deep are rejected with the limit", "[grammar][limits]") {
    const std::string deep = "root ::= " + nested("(", "\"a\"", ")", 30000);
    try {
        engine::gbnf::parse_gbnf(deep);
        FAIL("no error");
    } catch (const GrammarError& e) {
        CHECK(e.message.find("limit of " + std::to_string(engine::gbnf::kMaxNesting)) != std::string::npos);
        CHECK(e.line == 1);
        CHECK(e.column == 10 + int(engine::gbnf::kMaxNesting));  // the first '(' past the limit
    }
    // At the limit it still parses.
    CHECK_NOTHROW(engine::gbnf::parse_gbnf("root ::= " + nested("(", "\"a\"", ")", engine::gbnf::kMaxNesting)));
}

TEST_CASE("regex groups nested 10,000 deep are rejected with the limit", "[grammar][limits]") {
    CHECK_THROWS_WITH(engine::gbnf::parse_regex(nested("(", "a", ")", 10000)),
                      Catch::Contains("limit of " + std::to_string(engine::gbnf::kRegexMaxNesting)));
    CHECK_THROWS_WITH(engine::gbnf::parse_regex(nested("(?:", "a", ")", 10000)), Catch::Contains("limit of"));
    CHECK_NOTHROW(engine::gbnf::parse_regex(nested("(", "a", ")", engine::gbnf::kRegexMaxNesting)));
}

TEST_CASE("grammars whose nested repetitions multiply past the bound are rejected at compile time",
          "[grammar][limits]") {
    const std::vector<engine::Token> eog{9};
    for (const char* g : {R"(root ::= (("a"{0,100}){0,100}){0,100})", R"(root ::= ("a"{0,1000}){0,1000})",
                          R"(root ::= ([a-z]{0,1000}){0,1000})", "root ::= x{0,1000}\nx ::= \"a\"{0,1000}"}) {
        INFO(g);
        const auto start = std::chrono::steady_clock::now();
        CHECK_THROWS_WITH(Grammar(g, "root", small_vocab(), eog), Catch::Contains("matcher stacks"));
        CHECK(std::chrono::steady_clock::now() - start < std::chrono::milliseconds(500));
    }
    // Large but flat repetitions, recursion and the usual nesting stay legal.
    for (const char* g : {R"(root ::= "a"{0,10000})", R"(root ::= ("a"{0,100}){0,100})",
                          "root ::= item*\nitem ::= \"a\" | \"(\" root \")\"", R"(root ::= ([ab]+ "x"?)*)"}) {
        INFO(g);
        CHECK_NOTHROW(Grammar(g, "root", small_vocab(), eog));
    }
}

TEST_CASE("the matcher stops a step that needs more work than its budget", "[grammar][limits]") {
    // Within the expansion bound (recursion counts once), but each "a" doubles the live stacks: every
    // sequence of pending "b"/"c" closings is a distinct stack, and the first 30 characters must be a's.
    const std::string g = "root ::= s\ns ::= \"a\" s \"b\" | \"a\" s \"c\" | \"a\"{30}";
    Grammar grammar(g, "root", small_vocab(), {9});
    engine::TokenDataArray cur;
    bool stopped = false;
    const auto start = std::chrono::steady_clock::now();
    for (int step = 0; step < 10 && !stopped; ++step) {
        cur.data.clear();
        for (engine::Token t = 0; t < 10; ++t) cur.data.push_back({t, 0.0f, 0.0f});
        try {
            grammar.apply(cur);
            grammar.accept(6);  // "aaa"
        } catch (const GrammarBudgetError& e) {
            CHECK(std::string(e.what()).find("too costly to match") != std::string::npos);
            stopped = true;
        }
    }
    CHECK(stopped);
    CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(5));

    // The budget is per call: a direct automaton with a tiny budget fails on its first big step.
    auto rules = std::make_shared<const engine::gbnf::Rules>(engine::gbnf::parse_gbnf(R"(root ::= ("a"{0,50}){0,50})"));
    CHECK_THROWS_AS(engine::gbnf::StackAutomaton(rules, 0, 10), GrammarBudgetError);
    engine::gbnf::StackAutomaton roomy(rules, 0);
    roomy.set_budget(10);
    CHECK_THROWS_AS(roomy.step_bytes(roomy.start(), "aaaa"), GrammarBudgetError);
    roomy.set_budget(engine::gbnf::kDefaultStepBudget);
    CHECK_FALSE(roomy.step_bytes(roomy.start(), "aaaa").dead());
}

TEST_CASE("objects of many optional properties stay within the expansion bound", "[grammar][limits]") {
    // Their rest-i rules chain by tail references: paths of rule references grow with the square of the
    // property count (past the bound at ~65 string properties), distinct matcher stacks linearly.
    for (int n : {65, 200, 400}) {
        INFO(n << " optional properties");
        nlohmann::ordered_json props = nlohmann::ordered_json::object();
        for (int i = 0; i < n; ++i) props["field_" + std::to_string(i)] = {{"type", "string"}};
        const std::string g =
            engine::json_schema_to_gbnf(nlohmann::ordered_json{{"type", "object"}, {"properties", props}});
        const auto start = std::chrono::steady_clock::now();
        CHECK_NOTHROW(Grammar(g, "root", small_vocab(), {9}));
        CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(2));
        engine::GrammarMatcher m(g);
        CHECK(m.matches("{}"));
        CHECK(m.matches(R"({"field_3": "x", "field_)" + std::to_string(n - 1) + R"(": "y"})"));
        CHECK_FALSE(m.matches(R"({"field_3": "x", "field_3": "y"})"));  // each at most once, in order
        CHECK_FALSE(m.matches(R"({"field_4": "x", "field_3": "y"})"));
    }
    // A genuinely ambiguous grammar is still refused whichever count applies: the optional group before
    // the tail reference multiplies (each of the 1000 positions may hold any of 1000 lengths).
    CHECK_THROWS_WITH(Grammar("root ::= x{0,1000}\nx ::= \"a\"{0,1000}", "root", small_vocab(), {9}),
                      Catch::Contains("matcher stacks") && Catch::Contains("'root'"));
    // Tail recursion is one stack per position, not one per path.
    const auto rules = engine::gbnf::parse_gbnf("root ::= (a | b)\na ::= \"x\" root | \"\"\nb ::= \"y\" a");
    CHECK_NOTHROW(engine::gbnf::check_expansion(rules, 0, "", 3));
}
