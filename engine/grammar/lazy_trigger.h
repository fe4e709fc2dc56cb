// Lazy grammars: the grammar stays inactive until a trigger shows up in the generated text, as in
// llama.cpp's lazy grammars.
//   - words: literal strings; the grammar starts at the word.
//   - patterns: regexes (regex.h). A pattern written "^...$" must match the whole text so far;
//     any other pattern is searched for anywhere. The grammar starts at the first capture group
//     that matched something, else at the start of the match.
//   - tokens: accepting one of these token ids triggers; the grammar starts with its piece.
// When several triggers fire on the same token, the one starting earliest in the text wins.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "engine/grammar/regex_vm.h"
#include "engine/util/token_data.h"

namespace engine {

struct GrammarTriggers {
    std::vector<std::string> words;
    std::vector<std::string> patterns;
    std::vector<Token> tokens;
};

class TriggerDetector {
  public:
    // Compiles the patterns; throws gbnf::RegexError (a std::invalid_argument) for a bad one.
    explicit TriggerDetector(GrammarTriggers triggers);

    bool triggered() const { return triggered_; }
    // What the grammar consumes when a trigger fires: the text from the trigger's start to the end
    // of the text so far. `whole_token` means exactly the triggering token (a trigger token), which
    // the grammar then accepts as a token (so `<[id]>` elements can match it).
    struct Fired {
        std::string text;
        bool whole_token = false;
    };
    // Feeds one accepted token while waiting; returns what to consume when it fires a trigger.
    std::optional<Fired> feed(Token token, std::string_view piece);
    void reset();

  private:
    GrammarTriggers triggers_;
    std::vector<gbnf::RegexSearch> searches_;
    std::string text_;  // generated text while waiting
    bool triggered_ = false;
};

}  // namespace engine
