// The grammar library in engine/grammars: each file parses, and sample texts are accepted or
// rejected as expected (bytes fed straight through the matcher, no vocabulary).
#include <catch2/catch.hpp>
#include <fstream>
#include <sstream>

#include "engine/grammar/grammar_matcher.h"
#include "grammar_test_util.h"

using engine::GrammarMatcher;

namespace {

std::string load(const std::string& name) {
    std::ifstream f(std::string(GGSERVE_SOURCE_DIR) + "/engine/grammars/" + name);
    REQUIRE(f.good());
    std::stringstream ss;
    ss << f.rdbuf();
    return ss.str();
}

void check(const std::string& file, const std::vector<std::string>& good,
           const std::vector<std::string>& bad) {
    INFO("grammar file " << file);
    GrammarMatcher m(load(file));
    for (const auto& s : good) {
        INFO("should accept: " << s);
        CHECK(m.matches(s));
    }
    for (const auto& s : bad) {
        INFO("should reject: " << s);
        CHECK_FALSE(m.matches(s));
    }
    // Random walks stay inside the language.
    std::mt19937 rng(99);
    for (int i = 0; i < 10; ++i) {
        auto s = grammar_test::random_walk(m, rng, 2000, 0.5);
        if (s) CHECK(m.matches(*s));
    }
}

}  // namespace

TEST_CASE("json.gbnf", "[grammar][files]") {
    check("json.gbnf",
          {R"({"a": 1, "b": [true, false, null], "c": {"d": "e\n\u00e9\ud83d\ude00"}})", "{}",
           "{\n  \"x\": -0.5e+10,\n  \"y\": \"\xE6\x9D\xB1\xE4\xBA\xAC\"\n}", R"({"n":[1,2.5,-3e2,0]})"},
          {"[]", R"({"a":})", R"({"a":01})", R"({"a":"\x"})", R"({"a":"\ud800"})", R"({"a":1,})",
           "{\"a\":\"\x01\"}", "{   }", R"({"a":1} {"b":2})"});
}

TEST_CASE("json_arr.gbnf", "[grammar][files]") {
    check("json_arr.gbnf", {R"([{"a": 1}, {"a": 2}])", "[]", R"([1, "x", [null]])"},
          {R"({"a":1})", "[1] ", "[1,]"});
}

TEST_CASE("arithmetic.gbnf", "[grammar][files]") {
    check("arithmetic.gbnf",
          {"1+2*3", " (1 + 2) * -x ^ 2 ^ y", "max(a, 2.5) / min()", "-(-(3))", "f(g(1),2)"},
          {"1+", "(1", "2 ** 3", "1..5", "f(,)", "+1"});
}

TEST_CASE("list.gbnf", "[grammar][files]") {
    check("list.gbnf", {"- milk\n", "- eggs\n- bread, whole-grain\n- \xC3\xA9pices\n"},
          {"", "- \n", "milk\n", "- milk", "-milk\n"});
}

TEST_CASE("chess.gbnf", "[grammar][files]") {
    check("chess.gbnf",
          {"1. e4 e5\n2. Nf3 Nc6\n3. Bb5 a6 1-0", "1. d4\n", "12. O-O-O Qxd8+\n13. exd8=Q#",
           "1. e4 e5\n2. Qh5 Nc6\n3. Bc4 Nf6\n4. Qxf7# 1-0\n", "7. Nbd2 R1e8 1/2-1/2"},
          {"1.e4", "1. e9", "1. Zf3", "1. e4 e5 e6", "0. e4", "1. O-O-O-O", "1. e8=K"});
}

TEST_CASE("c.gbnf", "[grammar][files]") {
    check("c.gbnf",
          {"int main(void) {\n  return 0;\n}\n",
           "int x = 3;\nchar *s;\n// helper\nlong add(long a, long b) { return a + b; }",
           "void f(int* p, unsigned int n) {\n  for (i = 0; i < n; i += 1) { p[i] = i * 2; }\n"
           "  if (n > 2 && p[0] == 0) f(p, n - 1); else { while (n) n--; }\n}",
           "double g(double y) { double z[4]; z[0] = -y; return (z[0] + 'a') / 2.5; }"},
          {"int main( { }", "int x = ;", "intx;", "return 1;", "int f() { return 1 }", "x = 1;"});
}
