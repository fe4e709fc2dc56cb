// The pre-tokenizer regex engine.
#include <catch2/catch.hpp>

#include "engine/tokenizer/regex.h"
#include "engine/tokenizer/unicode.h"

using engine::Regex;

namespace {

// Splits s with the pattern and returns the pieces as UTF-8.
std::vector<std::string> split(const std::string& pattern, const std::string& s) {
    const Regex re(pattern);
    const auto cps = engine::unicode::decode_utf8(s);
    std::vector<size_t> lengths;
    re.split(cps.data(), 0, cps.size(), lengths);
    std::vector<std::string> out;
    size_t at = 0;
    for (size_t len : lengths) {
        std::string piece;
        for (size_t k = at; k < at + len; ++k) engine::unicode::append_utf8(piece, cps[k]);
        out.push_back(piece);
        at += len;
    }
    return out;
}

long match(const std::string& pattern, const std::string& s) {
    const auto cps = engine::unicode::decode_utf8(s);
    return Regex(pattern).match_at(cps.data(), 0, cps.size(), 0);
}

using V = std::vector<std::string>;

}  // namespace

TEST_CASE("regex: alternatives in order, greedy with backtracking", "[tokenizer][regex]") {
    CHECK(match("a|ab", "ab") == 1);  // first alternative wins, not the longest
    CHECK(match("ab|a", "ab") == 2);
    CHECK(match("a+", "aaab") == 3);
    CHECK(match("a+?", "aaab") == 1);
    CHECK(match("a{2,3}", "aaaa") == 3);
    CHECK(match("a{2,}", "aaaa") == 4);
    CHECK(match("a{2}", "a") == -1);
    CHECK(match("(?:ab)+c", "ababc") == 5);
    CHECK(match("a*ab", "aaab") == 4);  // the run gives back one character
    CHECK(match("a*?ab", "aaab") == 4);
    CHECK(match("x?y", "y") == 1);
    CHECK(match("(a|b){1,4}Z", "abbaZ") == 5);
    CHECK(match("(a|b){1,4}Z", "abbabZ") == -1);
}

TEST_CASE("regex: classes, escapes and Unicode categories", "[tokenizer][regex]") {
    CHECK(match("\\p{L}+", "Привет!") == 6);
    CHECK(match("\\p{N}+", "٣٤5x") == 3);
    CHECK(match("[^\\s\\p{L}\\p{N}]+", "?!…a") == 3);
    CHECK(match("\\s+", " \t\u3000x") == 3);
    CHECK(match("\\S", " ") == -1);
    CHECK(match("[a-c\\d]+", "ab3cd") == 4);
    CHECK(match("\\P{L}", "a") == -1);
    CHECK(match("[\\p{Lu}]+", "ABc") == 2);
    CHECK(match("[\\$\\+<=>\\^~\\|]+", "$+<=>^~|a") == 8);
    CHECK(match("[\\[-`]+", "[\\]^_`a") == 6);
    CHECK(match("\\u00e9", "é") == 1);
    CHECK(match("[\\u1F00-\\u1FFF]", "ῐ") == 1);
    CHECK(match(".", "\n") == -1);
    CHECK(match("东+", "东东京") == 2);  // literal non-ASCII
}

TEST_CASE("regex: lookaheads and anchors see only the piece", "[tokenizer][regex]") {
    CHECK(match("\\s+(?!\\S)", "   x") == 2);
    CHECK(match("\\s+(?!\\S)", "   ") == 3);
    CHECK(match("a(?=b)", "ab") == 1);
    CHECK(match("a(?=b)", "ac") == -1);
    CHECK(match("\\s+$", "  ") == 2);
    CHECK(match("\\s+$", "  a") == -1);
    CHECK(match("\\d{1,3}(?=(?:\\d{3})*\\b)", "1234") == 1);
    // A letter that is not a-z: a lookahead followed by a class becomes one character test.
    CHECK(match("((?=[\\p{L}])([^a-z]))+", "ÉA1") == 2);
    CHECK(match("((?=[\\p{L}])([^a-z]))+", "é") == 1);
    CHECK(match("((?=[\\p{L}])([^a-z]))+", "e") == -1);
}

TEST_CASE("regex: split keeps matches and the stretches between them", "[tokenizer][regex]") {
    const std::string gpt2 = R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S))";
    CHECK(split(gpt2, "Hello world") == V{"Hello", " world"});
    CHECK(split(gpt2, "  Hello") == V{" ", " Hello"});
    CHECK(split(gpt2, "it's 42!!") == V{"it", "'s", " 42", "!!"});
    CHECK(split(gpt2, "\tA") == V{"\t", "A"});  // no alternative matches the tab: it is a gap
    CHECK(split(gpt2, "a  ") == V{"a", "  "});
    CHECK(split("[0-9][0-9][0-9]", "12345") == V{"123", "45"});
    CHECK(split("\\p{N}", "a12") == V{"a", "1", "2"});
    // Empty matches split without producing pieces.
    CHECK(split("(?=(\\d{3})+(?!\\d))", "1234567") == V{"1", "234", "567"});
    CHECK(split("x", "").empty());
}

TEST_CASE("regex: long inputs do not recurse per character", "[tokenizer][regex]") {
    std::string letters(200000, 'a');
    CHECK(match("\\p{L}+", letters) == 200000);
    std::string words;
    for (int i = 0; i < 50000; ++i) words += "a ";
    words += "a";
    CHECK(match("(?:\\p{L}\\p{M}*(?: \\p{L}\\p{M}*)*)+", words) == long(words.size()));
    std::string spaces(100000, ' ');
    CHECK(match("\\s*[\\r\\n]+|\\s+(?!\\S)", spaces + "x") == 99999);
}

TEST_CASE("regex: bad patterns are rejected with the pattern in the message", "[tokenizer][regex]") {
    CHECK_THROWS_WITH(Regex("(ab"), Catch::Contains("(ab") && Catch::Contains("missing )"));
    CHECK_THROWS_WITH(Regex("ab)"), Catch::Contains("unbalanced"));
    CHECK_THROWS_WITH(Regex("[a-"), Catch::Contains("unterminated"));
    CHECK_THROWS_WITH(Regex("[z-a]"), Catch::Contains("reversed"));
    CHECK_THROWS_WITH(Regex("\\p{Foo}"), Catch::Contains("unknown Unicode category"));
    CHECK_THROWS_WITH(Regex("a++"), Catch::Contains("possessive"));
    CHECK_THROWS_WITH(Regex("(?:a?)*"), Catch::Contains("can match nothing"));
    CHECK_THROWS_WITH(Regex("(?<=a)b"), Catch::Contains("unsupported group"));
    CHECK_THROWS_WITH(Regex("*a"), Catch::Contains("quantifier"));
    CHECK_THROWS_WITH(Regex("\\q"), Catch::Contains("unsupported escape"));
}
