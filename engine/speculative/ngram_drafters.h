// The n-gram drafters of llama-server's --spec-type list. They read only the slot's own tokens (the
// prompt and what was generated), so they cost microseconds and shine when the output repeats the input
// (rewriting, quoting, code edits) or itself.
#pragma once

#include <memory>

#include "engine/speculative/drafter.h"
#include "engine/speculative/ngram_cache.h"

namespace engine::spec {

// Default key lengths (llama-server's).
inline constexpr int32_t kNgramSimpleKey = 3, kNgramMapKKey = 3, kNgramMapK4vKey = 2;

// min_hits (llama-server's --spec-ngram-*-min-hits): how often a key must have occurred before its
// continuation is proposed (ngram-map-k4v: how often the proposed next token followed it).
// ngram-simple: find the latest earlier occurrence of the last n_key tokens and propose what followed it.
std::unique_ptr<Drafter> make_ngram_simple(int32_t n_key = kNgramSimpleKey, int32_t min_hits = 1);
// ngram-map-k: a hash map from every n_key-gram to where its latest continuation starts; proposes that
// continuation. Built incrementally as tokens arrive.
std::unique_ptr<Drafter> make_ngram_map_k(int32_t n_key = kNgramMapKKey, int32_t min_hits = 1);
// ngram-map-k4v: a hash map from every n_key-gram to up to four next tokens with counts; proposes the
// dominant next token, then looks up the n-gram that ends with it, and so on.
std::unique_ptr<Drafter> make_ngram_map_k4v(int32_t n_key = kNgramMapK4vKey, int32_t min_hits = 1);
// ngram-mod: a fixed-size pool indexed by a rolling hash of the last n_key tokens, holding the token
// that followed; kept across the slot's requests (it learns from earlier ones). Collisions only cost a
// rejected draft token. A long key (24 tokens, llama-server's n-match default) drafts only where a long
// stretch repeats: on stories260K, 4-token keys had 69 % of their draft tokens accepted and 1.5x plain
// decoding, 24-token keys 98 % and 2.2x (docs/performance.md, "Speculative decoding").
std::unique_ptr<Drafter> make_ngram_mod(int32_t n_key = 24, uint32_t pool_bits = 18);
// ngram-cache: n-grams of 1-4 tokens with next-token counts at three levels: this request's tokens,
// a dynamic cache of earlier requests (shared by the slots, optionally kept in a file), a static cache
// from a file (read-only). `store` may be shared by every slot's drafter.
std::unique_ptr<Drafter> make_ngram_cache(std::shared_ptr<NgramCacheStore> store);

}  // namespace engine::spec
