// The one path every generated token takes, in `ggserve run` and in the server: accept the tokens of
// a step (one, or several after speculative verification) -> end of generation (EOS) -> detokenize
// with UTF-8 holdback -> stop strings (text that could become one is held back) -> the token limit.
// It stops at the first token that ends generation; the tokens after it in the same step are dropped.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "engine/tokenizer/vocab.h"
#include "server/scheduler/stop_strings.h"
#include "server/scheduler/task.h"

namespace sched {

struct PipelineEnd {
    FinishReason reason = FinishReason::Stop;
    bool eos = false;  // an end-of-generation token (not shown)
    std::string word;  // the stop string found (empty: none)
};

class TokenPipeline {
  public:
    // n_predict < 0: no limit. ignore_eos: end-of-generation tokens are ordinary tokens. special: special
    // tokens are shown as their text; shown: the control tokens shown as their text anyway (a chat
    // format's markers). n_indent > 0: generation ends (reason Length) at the first line, after the
    // first, indented by fewer spaces or tabs; the line's text is cut, its indentation kept.
    TokenPipeline(const engine::Vocab& vocab, std::vector<std::string> stop, int32_t n_predict,
                  bool ignore_eos, bool special = false, int32_t n_indent = 0,
                  std::vector<engine::Token> shown = {});

    struct Step {
        std::string text;       // may be shown now
        size_t n_consumed = 0;  // tokens of the input taken, in order (the rest were dropped)
        size_t n_shown = 0;     // of those, tokens that joined the output (an ending EOS does not)
        std::optional<PipelineEnd> end;
    };
    // Takes the tokens of one step. After an end, nothing more may be pushed. end_at_new_line: generation
    // ends (reason Length) at the first token after which the content holds a new line, as a per-token
    // time limit past its deadline does (t_max_predict_ms), whatever the number of tokens in the step.
    Step push(std::span<const engine::Token> tokens, bool end_at_new_line = false);
    // The end of generation for a reason outside the pipeline (the context is full), or after an end
    // that was not a stop string: the text still held back, which is shown too.
    std::string flush();

    const std::string& content() const { return content_; }         // all text shown so far
    const std::vector<engine::Token>& tokens() const { return tokens_; }  // all tokens that joined the output
    // How many of tokens() are released: their text has been shown (in part at least), so they and
    // their probabilities may go out with it. Tokens whose text is held back wait; those spelling a
    // matched stop string (or cut by n_indent) are never released. flush() releases the rest.
    size_t n_released() const { return released_; }
    int32_t n_decoded() const { return n_decoded_; }  // tokens taken, an ending EOS included
    bool ended() const { return ended_; }
    bool has_new_line() const { return content_.find('\n') != std::string::npos; }

  private:
    // n_indent: cuts the content (and the step's text) at a line that is not indented enough.
    bool check_indent(Step& step);
    void update_released();

    const engine::Vocab& vocab_;
    engine::StreamDecoder decoder_;
    StopMatcher stop_;
    int32_t n_predict_;
    bool ignore_eos_;
    std::string content_;
    std::vector<engine::Token> tokens_;
    // Per token of tokens_: where its text starts and ends in the decoded text (of which content_ is a
    // prefix: the stop matcher holds back or cuts only its end).
    std::vector<std::pair<size_t, size_t>> spans_;
    size_t decoded_ = 0;   // bytes the decoder has produced
    size_t released_ = 0;  // see n_released()
    int32_t n_decoded_ = 0;
    bool ended_ = false;
    int32_t n_indent_ = 0;
    size_t line_start_ = 0;  // where the current line of content_ starts (0: still the first line)
    bool cut_ = false;       // n_indent ended generation
};

}  // namespace sched
