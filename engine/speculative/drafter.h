// Drafters propose the tokens that probably follow a sequence; the target model verifies them all in
// one step (verify.h). A drafter only affects speed: whatever it proposes, the emitted tokens are the
// target's own. One drafter object per slot; it keeps whatever index it builds over the slot's tokens
// between steps.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "engine/util/token_data.h"

namespace engine::spec {

// The drafters, in llama-server's names (--spec-type).
// Lookahead is not a Drafter: its steps are a window and branches, not one draft (lookahead.h).
enum class DrafterType { DraftModel, NgramSimple, NgramMapK, NgramMapK4v, NgramMod, NgramCache, Lookahead };
inline constexpr size_t kDrafterTypes = (size_t)DrafterType::Lookahead + 1;  // per-type tables

std::string_view drafter_name(DrafterType t);
// "draft-simple" (or "draft"), "ngram-simple", ...; false for an unknown name.
bool parse_drafter_name(std::string_view name, DrafterType& out);
// A comma list in priority order ("ngram-mod,draft-simple"); throws std::invalid_argument naming the
// first unknown entry, or on an empty list or a repeated entry.
std::vector<DrafterType> parse_drafter_list(std::string_view list);
std::string drafter_list_string(const std::vector<DrafterType>& types);

// A token-history drafter (every drafter but the draft model, which runs a model: draft_model.h).
class Drafter {
  public:
    virtual ~Drafter() = default;
    virtual DrafterType type() const = 0;
    // A new request starts in this slot: history restarts (state that is meant to outlive a request,
    // such as a pool learned from earlier requests, may stay).
    virtual void begin() = 0;
    // history: the request's tokens so far (prompt, then every emitted token; the last one is the token
    // the draft continues). It only grows between begin() calls. Returns at most n_max tokens.
    virtual std::vector<Token> draft(std::span<const Token> history, int32_t n_max) = 0;
    // The request ended with this history (state meant to outlive requests learns from it here).
    virtual void end(std::span<const Token> /*history*/) {}
};

}  // namespace engine::spec
