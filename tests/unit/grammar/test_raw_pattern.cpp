// JSON Schema `pattern` as raw text (schema_pattern.h raw mode), as the XML-like tool-call formats
// write a string parameter: the grammar accepts exactly the texts that the pattern matches (searched
// for, as JSON Schema says; the regex VM is the reference) and that do not contain the closing tag,
// every prefix it accepts can still be completed, and hostile patterns stay within the limits.
#include <catch2/catch.hpp>
#include <random>

#include "engine/grammar/grammar_matcher.h"
#include "engine/grammar/regex.h"
#include "engine/grammar/regex_vm.h"
#include "engine/grammar/schema_pattern.h"
#include "grammar_test_util.h"

using engine::GrammarMatcher;
using engine::gbnf::raw_pattern_to_gbnf;

namespace {

const std::string kTag = "</parameter>";

// Whether the pattern matches somewhere in `text`, by the regex VM (the lazy triggers' matcher).
bool regex_finds(const std::string& pattern, const std::string& text) {
    using namespace engine::gbnf;
    RegexSearch search(RegexProgram::compile(parse_regex(pattern)));
    search.feed(text);
    return search.match().has_value();
}

GrammarMatcher raw(const std::string& pattern, const std::string& tag = kTag) {
    return GrammarMatcher(raw_pattern_to_gbnf(pattern, tag, "root"));
}

}  // namespace

TEST_CASE("raw pattern: an anchored pattern without '<' is one expression of raw characters", "[grammar][raw-pattern]") {
    const std::string gbnf = raw_pattern_to_gbnf("^[A-Z]{3}-\\d{2}$", kTag, "root");
    INFO(gbnf);
    CHECK(gbnf.find("root-") == std::string::npos);  // no helper rules
    const GrammarMatcher m(gbnf);
    CHECK(m.matches("ABC-12"));
    CHECK_FALSE(m.matches("AB-12"));
    CHECK_FALSE(m.matches("ABC-123"));
    CHECK_FALSE(m.matches("abc-12"));
    CHECK_FALSE(m.matches("\"ABC-12\""));
    // Characters that JSON would escape are themselves here.
    const GrammarMatcher q = raw("^a\"b\\\\c\\n$");
    CHECK(q.matches("a\"b\\c\n"));
    CHECK_FALSE(q.matches("a\\\"b\\\\c\\n"));
}

TEST_CASE("raw pattern: '<' is allowed, the closing tag is not", "[grammar][raw-pattern]") {
    const GrammarMatcher html = raw("^<b>[a-z]+</b>$");
    CHECK(html.matches("<b>bold</b>"));
    CHECK_FALSE(html.matches("<b>Bold</b>"));
    const GrammarMatcher any = raw("^a.*z$");
    CHECK(any.matches("a<z"));
    CHECK(any.matches("a</paramete</parameterz"));
    CHECK_FALSE(any.matches("a</parameter>z"));
    CHECK_FALSE(any.accepts_prefix("a</parameter>"));
    // Unanchored: anything before and after the match, but never the tag.
    const GrammarMatcher search = raw("ab");
    CHECK(search.matches("ab"));
    CHECK(search.matches("x<ab</y"));
    CHECK(search.matches("</parameteab"));
    CHECK_FALSE(search.matches("xy"));
    CHECK_FALSE(search.matches("ab</parameter>"));
    CHECK_FALSE(search.matches("</parameter>ab"));
}

TEST_CASE("raw pattern: branches that need the closing tag are pruned, and none left is an error", "[grammar][raw-pattern]") {
    const GrammarMatcher m = raw("^(x</parameter>y|z)$");
    CHECK(m.matches("z"));
    CHECK_FALSE(m.accepts_prefix("x"));  // no completion without the tag: refused at once
    CHECK_THROWS_WITH(raw_pattern_to_gbnf("^x</parameter>$", kTag, "root"),
                      Catch::Contains("no text matches the pattern"));
    CHECK_THROWS_WITH(raw_pattern_to_gbnf("^a$", "parameter>", "root"), Catch::Contains("closing tag"));
}

TEST_CASE("raw pattern: exactly the texts that match and lack the tag, up to length 5", "[grammar][raw-pattern]") {
    // A short tag and an alphabet of its characters, so that partial tags occur everywhere.
    const std::string tag = "</b>";
    const std::string alphabet = "ab</>";
    const char* patterns[] = {"^(a|<|/b)*>?$", "b<", "^[^b]*$", "^.{2,4}$", "^(<|/)+b", "^(a<?)+$", "^$", "a|>$"};
    std::vector<std::string> texts = {""};
    for (size_t n = 0, from = 0; n < 5; ++n) {
        const size_t to = texts.size();
        for (size_t i = from; i < to; ++i)
            for (char c : alphabet) texts.push_back(texts[i] + c);
        from = to;
    }
    for (const char* p : patterns) {
        INFO("pattern " << p);
        const GrammarMatcher m = raw(p, tag);
        size_t mismatches = 0;
        for (const auto& t : texts) {
            const bool expected = regex_finds(p, t) && t.find(tag) == std::string::npos;
            if (m.matches(t) != expected) {
                if (mismatches++ < 5) FAIL_CHECK("text '" << t << "': grammar " << m.matches(t) << ", expected " << expected);
            }
        }
        CHECK(mismatches == 0);
    }
}

TEST_CASE("raw pattern: random texts from the grammar match and never dead-end", "[grammar][raw-pattern]") {
    const char* patterns[] = {"^[A-Z]{3}-\\d{2}$", "^a.*z$", "x.y", "^(<[a-z]{1,3}>|[a-z ])+$", "^.{0,30}$",
                              "^(\\w+@\\w+\\.com|<none>)$"};
    std::mt19937 rng(99);
    for (const char* p : patterns) {
        INFO("pattern " << p);
        GrammarMatcher m = raw(p);
        int done = 0;
        for (int i = 0; i < 40; ++i) {
            const auto text = grammar_test::random_walk(m, rng, 400, 0.3);
            if (!text) continue;
            ++done;
            INFO("text " << *text);
            CHECK(regex_finds(p, *text));
            CHECK(text->find(kTag) == std::string::npos);
        }
        CHECK(done >= 30);
    }
}

TEST_CASE("raw pattern: hostile patterns fail with their limit instead of growing without bound", "[grammar][raw-pattern]") {
    // Counted repeats of '.' unroll once per copy and tag state: bounded by the rule limit.
    CHECK_THROWS_WITH(raw_pattern_to_gbnf("^(.{100}){100}$", kTag, "root"), Catch::Contains("too large"));
    CHECK_THROWS_WITH(raw_pattern_to_gbnf("^((((.{9}){9}){9}){9})$", kTag, "root"), Catch::Contains("too large"));
    // Group nesting keeps the regex parser's limit.
    const std::string deep = std::string(200, '(') + "a" + std::string(200, ')');
    CHECK_THROWS_WITH(raw_pattern_to_gbnf(deep, kTag, "root"), Catch::Contains("limit of 100"));
    // Without '<' in them, counted repeats stay GBNF repeats, however large.
    CHECK_NOTHROW(raw_pattern_to_gbnf("^([a-z]{100}){100}$", kTag, "root"));
}
