#include "engine/grammar/schema_builtins.h"

namespace engine::gbnf {

const std::map<std::string, BuiltinRule>& schema_builtins() {
    static const std::map<std::string, BuiltinRule> rules = {
        // At most one space, or one or two newlines and up to 20 blanks of indentation: generation
        // cannot run away on whitespace. As in llama.cpp's converter (2026), whitespace may follow
        // "{", "[", ":" and "," and precede "}" and "]", never a value: no space before a comma, none
        // after the root value.
        {"space", {R"G(( " " | "\n"{1,2} [ \t]{0,20} )?)G", {}}},
        {"value",
         {"object | array | string | number | boolean | null",
          {"object", "array", "string", "number", "boolean", "null"}}},
        {"object",
         {R"G("{" space ( string ":" space value ( "," space string ":" space value )* )? space "}")G",
          {"string", "value", "space"}}},
        {"array", {R"G("[" space ( value ( "," space value )* )? space "]")G", {"value", "space"}}},
        {"string", {R"G("\"" char* "\"")G", {"char"}}},
        {"char", {R"G([^"\\\x00-\x1F\x7F] | "\\" char-escape)G", {"char-escape"}}},
        // \uXXXX escapes never leave a lone surrogate: D800-DBFF must pair with DC00-DFFF.
        {"char-escape",
         {R"G(["\\/bfnrt] | "u" ( [0-9a-cA-Ce-fE-F] [0-9a-fA-F]{3} | [dD] [0-7] [0-9a-fA-F]{2} | [dD] [89abAB] [0-9a-fA-F]{2} "\\u" [dD] [c-fC-F] [0-9a-fA-F]{2} ))G",
          {}}},
        {"number",
         {R"G("-"? integral-part ( "." decimal-part )? ( [eE] [-+]? integral-part )?)G",
          {"integral-part", "decimal-part"}}},
        {"integer", {R"G("-"? integral-part)G", {"integral-part"}}},
        {"integral-part", {R"G("0" | [1-9] [0-9]{0,15})G", {}}},
        {"decimal-part", {"[0-9]{1,16}", {}}},
        {"boolean", {R"G("true" | "false")G", {}}},
        {"null", {R"G("null")G", {}}},

        // Formats: string contents (the *-string rules add the quotes). Dates are exact, leap
        // years included; years start at 0001.
        {"date",
         {R"G(year "-" ( ( "0" [13578] | "1" [02] ) "-" day-31 | ( "0" [469] | "11" ) "-" day-30 | "02-" day-28 ) | leap-year "-02-29")G",
          {"year", "leap-year", "day-31", "day-30", "day-28"}}},
        {"year", {R"G([1-9] [0-9]{3} | "0" ( [1-9] [0-9]{2} | "0" ( [1-9] [0-9] | "0" [1-9] ) ))G", {}}},
        {"leap-year",
         {R"G([0-9]{2} ( "0" [48] | [2468] [048] | [13579] [26] ) | ( "0" [48] | [2468] [048] | [13579] [26] ) "00")G",
          {}}},
        {"day-31", {R"G("0" [1-9] | [12] [0-9] | "3" [01])G", {}}},
        {"day-30", {R"G("0" [1-9] | [12] [0-9] | "30")G", {}}},
        {"day-28", {R"G("0" [1-9] | "1" [0-9] | "2" [0-8])G", {}}},
        {"time",
         {R"G(( [01] [0-9] | "2" [0-3] ) ":" [0-5] [0-9] ":" [0-5] [0-9] ( "." [0-9]{1,6} )? ( "Z" | [+-] ( [01] [0-9] | "2" [0-3] ) ":" [0-5] [0-9] ))G",
          {}}},
        {"date-time", {R"G(date "T" time)G", {"date", "time"}}},
        {"uuid",
         {R"G([0-9a-fA-F]{8} "-" [0-9a-fA-F]{4} "-" [0-9a-fA-F]{4} "-" [0-9a-fA-F]{4} "-" [0-9a-fA-F]{12})G",
          {}}},
        {"email",
         {R"G([a-zA-Z0-9_%+-]+ ( "." [a-zA-Z0-9_%+-]+ )* "@" email-label ( "." email-label )+)G",
          {"email-label"}}},
        {"email-label", {R"G([a-zA-Z0-9]+ ( "-" [a-zA-Z0-9]+ )*)G", {}}},
        {"ipv4", {R"G(ipv4-octet "." ipv4-octet "." ipv4-octet "." ipv4-octet)G", {"ipv4-octet"}}},
        {"ipv4-octet", {R"G([0-9] | [1-9] [0-9] | "1" [0-9]{2} | "2" [0-4] [0-9] | "25" [0-5])G", {}}},
        {"date-string", {R"G("\"" date "\"")G", {"date"}}},
        {"time-string", {R"G("\"" time "\"")G", {"time"}}},
        {"date-time-string", {R"G("\"" date-time "\"")G", {"date-time"}}},
        {"uuid-string", {R"G("\"" uuid "\"")G", {"uuid"}}},
        {"email-string", {R"G("\"" email "\"")G", {"email"}}},
        {"ipv4-string", {R"G("\"" ipv4 "\"")G", {"ipv4"}}},
    };
    return rules;
}

}  // namespace engine::gbnf
