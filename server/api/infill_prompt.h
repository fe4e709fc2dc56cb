// The prompt of a fill-in-the-middle (/infill) request, laid out as llama-server lays it out (the
// repository-level pattern of Qwen2.5-Coder's report, arXiv:2409.12186):
//
//   [extra context] [BOS] [FIM_PRE] prefix [FIM_SUF] suffix [FIM_MID] prompt        (PSM, the default)
//   [extra context] [BOS] [FIM_SUF] suffix [FIM_PRE] prefix prompt [FIM_MID]         (--spm-infill)
//
// where the extra context is "[FIM_REP] myproject\n" (when the vocabulary has a repository token), one
// "[FIM_SEP] filename\n text" per input_extra chunk (or a plain-text snippet separator without FIM_SEP),
// and "[FIM_SEP] filename\n". Prefix, suffix and prompt share one batch (3:1 between the prefix's tail
// and the suffix's head); the extra context takes the last tokens of what remains of the context after
// a batch and two generations' worth of room.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "engine/tokenizer/vocab.h"

namespace api {

struct InfillChunk {
    std::string filename;
    std::string text;
};

struct InfillInput {
    std::vector<engine::Token> prefix, suffix, prompt;  // tokenized without special tokens
    std::vector<InfillChunk> extra;
};

// Whether the vocabulary has the three tokens infill needs.
bool supports_infill(const engine::Vocab& vocab);

// n_batch: the server's logical batch; n_predict: the request's limit (-1: none, counted as 0);
// n_ctx: the slot's context.
std::vector<engine::Token> build_infill_prompt(const engine::Vocab& vocab, const InfillInput& in, int32_t n_batch,
                                               int32_t n_predict, int32_t n_ctx, bool spm);

}  // namespace api
