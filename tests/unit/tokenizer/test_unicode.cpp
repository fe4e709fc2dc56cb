// Unicode tables and UTF-8 helpers.
#include <catch2/catch.hpp>

#include "engine/tokenizer/unicode.h"

using namespace engine::unicode;

TEST_CASE("unicode: general categories", "[tokenizer][unicode]") {
    CHECK(category('A') == Category::Lu);
    CHECK(category(U'é') == Category::Ll);
    CHECK(category(U'ж') == Category::Ll);
    CHECK(category(U'東') == Category::Lo);
    CHECK(category(U'٣') == Category::Nd);  // Arabic-Indic digit three
    CHECK(category(U'½') == Category::No);
    CHECK(category(U'—') == Category::Pd);
    CHECK(category(U'€') == Category::Sc);
    CHECK(category('~') == Category::Sm);
    CHECK(category(0x0301) == Category::Mn);  // combining acute accent
    CHECK(category(0x200D) == Category::Cf);  // zero width joiner
    CHECK(category(0x0378) == Category::Cn);  // unassigned
    CHECK(category(0x110000) == Category::Cn);
    CHECK(in(kLetter, U'ß'));
    CHECK(!in(kLetter, '1'));
    CHECK(in(kNumber, '7'));
    CHECK(in(kPunctuation, U'。'));
    CHECK(in(kSymbol, U'😀'));
}

TEST_CASE("unicode: White_Space, lowercase, first code point of NFD", "[tokenizer][unicode]") {
    for (uint32_t cp : {0x09u, 0x0Au, 0x0Du, 0x20u, 0x85u, 0xA0u, 0x2003u, 0x3000u}) CHECK(is_whitespace(cp));
    for (uint32_t cp : {0x1Cu, 0x200Bu, uint32_t('a'), 0x110000u}) CHECK(!is_whitespace(cp));
    CHECK(to_lower('A') == 'a');
    CHECK(to_lower(U'Ä') == U'ä');
    CHECK(to_lower(U'Ж') == U'ж');
    CHECK(to_lower(0x0130) == 'i');  // simple mapping of dotted capital I
    CHECK(to_lower('a') == 'a');
    CHECK(nfd_first(U'é') == 'e');
    CHECK(nfd_first(U'Å') == 'A');
    CHECK(nfd_first(U'한') == 0x1112);  // Hangul syllable -> leading jamo
    CHECK(nfd_first('x') == 'x');
    CHECK(std::string(version()).size() >= 4);
}

TEST_CASE("unicode: the tables are Unicode 15.0's, as llama.cpp 0.7.0's", "[tokenizer][unicode]") {
    CHECK(std::string(version()) == "15.0.0");
    // Assigned in 15.0 (unassigned in 14.0): Kannada U+0CF3 (Mc), Lao U+0ECE (Mn), Devanagari
    // Extended-A U+11B00 (Po), Kawi U+11F04 (Lo).
    CHECK(category(0x0CF3) == Category::Mc);
    CHECK(category(0x0ECE) == Category::Mn);
    CHECK(category(0x11B00) == Category::Po);
    CHECK(category(0x11F04) == Category::Lo);
    CHECK(category(0x11F5A) == Category::Cn);  // still unassigned
}

TEST_CASE("unicode: UTF-8 decoding replaces each invalid byte", "[tokenizer][unicode]") {
    CHECK(decode_utf8("a\xC3\xA9\xE6\x9D\xB1\xF0\x9F\xA6\x99") ==
          std::vector<uint32_t>{'a', 0xE9, 0x6771, 0x1F999});
    CHECK(decode_utf8("\x80") == std::vector<uint32_t>{kReplacement});
    CHECK(decode_utf8("\xE6\x9D") == std::vector<uint32_t>{kReplacement, kReplacement});  // truncated
    CHECK(decode_utf8("\xC3"
                      "A") == std::vector<uint32_t>{kReplacement, 'A'});
    // Beyond U+10FFFF, and overlong forms: one replacement per byte (llama.cpp's reading; the overlong
    // "/" decoded as '/' before).
    const std::vector<uint32_t> four(4, kReplacement);
    CHECK(decode_utf8("\xF7\xBF\xBF\xBF") == four);
    CHECK(decode_utf8("\xF4\x90\x80\x80") == four);
    CHECK(decode_utf8("\xC0\xAF") == std::vector<uint32_t>{kReplacement, kReplacement});
    CHECK(decode_utf8("\xE0\x80\xAF") == std::vector<uint32_t>(3, kReplacement));
    CHECK(decode_utf8("\xF0\x80\x80\xAF") == four);
    CHECK(decode_utf8("\xF4\x8F\xBF\xBF") == std::vector<uint32_t>{0x10FFFF});  // the last code point
    CHECK(decode_utf8("\xC2\x80") == std::vector<uint32_t>{0x80});
    for (uint32_t cp : {0x7Fu, 0x80u, 0x7FFu, 0x800u, 0xFFFFu, 0x10000u, 0x10FFFFu})
        CHECK(decode_utf8(encode_utf8(cp)) == std::vector<uint32_t>{cp});
    CHECK(utf8_len('a') == 1);
    CHECK(utf8_len('\xC3') == 2);
    CHECK(utf8_len('\xE6') == 3);
    CHECK(utf8_len('\xF0') == 4);
    CHECK(utf8_len('\x80') == 1);
}

TEST_CASE("unicode: GPT-2 byte alphabet is a bijection", "[tokenizer][unicode]") {
    CHECK(byte_to_unicode(' ') == "\xC4\xA0");   // U+0120 'Ġ'
    CHECK(byte_to_unicode('\n') == "\xC4\x8A");  // U+010A 'Ċ'
    CHECK(byte_to_unicode('A') == "A");
    for (int b = 0; b < 256; ++b) {
        const auto cps = decode_utf8(byte_to_unicode(uint8_t(b)));
        REQUIRE(cps.size() == 1);
        CHECK(unicode_to_byte(cps[0]) == b);
    }
    CHECK(unicode_to_byte(0x4E00) == -1);
}

TEST_CASE("unicode: incomplete UTF-8 tail", "[tokenizer][unicode]") {
    CHECK(incomplete_utf8_tail("") == 0);
    CHECK(incomplete_utf8_tail("abc") == 0);
    CHECK(incomplete_utf8_tail("a\xE6") == 1);
    CHECK(incomplete_utf8_tail("a\xE6\x9D") == 2);
    CHECK(incomplete_utf8_tail("a\xE6\x9D\xB1") == 0);
    CHECK(incomplete_utf8_tail("\xF0\x9F\xA6") == 3);
    CHECK(incomplete_utf8_tail("\x80\x80\x80\x80") == 0);  // stray continuation bytes pass through
}
