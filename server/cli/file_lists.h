// Values naming files, as llama-server's --lora, --lora-scaled, --control-vector and
// --control-vector-scaled take them: "A,B" and "FNAME SCALE" (two arguments) or "FNAME:SCALE[,...]".
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace cli {

// "A,,B" -> {A, B}: comma-separated values, empty ones skipped (API keys, tags, bench lists).
std::vector<std::string> split_list(const std::string& v);
// "A,B,C" -> {A, B, C}; an empty name is an ArgError.
std::vector<std::string> split_file_list(const std::string& v);
// "FNAME\nSCALE" (the two-argument form, ArgParser::add_with_number) or "FNAME:SCALE[,FNAME:SCALE...]";
// `opt` names the option in errors.
std::vector<std::pair<std::string, float>> parse_scaled_files(const std::string& opt, const std::string& v);

}  // namespace cli
