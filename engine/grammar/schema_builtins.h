// The fixed GBNF rules the JSON-Schema converter builds on: JSON values, the bounded whitespace
// rule and string formats. Names follow llama.cpp's converter so generated grammars read alike.
#pragma once

#include <map>
#include <string>
#include <vector>

namespace engine::gbnf {

struct BuiltinRule {
    std::string body;
    std::vector<std::string> deps;  // other builtins the body refers to
};

const std::map<std::string, BuiltinRule>& schema_builtins();

}  // namespace engine::gbnf
