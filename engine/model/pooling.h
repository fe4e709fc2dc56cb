// Pooling and normalization of per-token embeddings (the final hidden states of a sequence): the pooling
// types of llama.cpp's pooling_type / --pooling, and embd_normalize's norms. Pure functions of the rows.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace engine {

// Values are llama.cpp's pooling_type numbers.
enum class Pooling { Unspecified = -1, None = 0, Mean = 1, Cls = 2, Last = 3, Rank = 4 };

// "none", "mean", "cls", "last", "rank" (--pooling); nullopt for anything else.
std::optional<Pooling> parse_pooling(const std::string& s);
const char* pooling_name(Pooling p);

// One pooled vector from n_tokens rows of n_embd floats (row-major): Mean averages them, Cls takes the
// first, Last the last. None and Rank are not poolings of rows (std::invalid_argument).
std::vector<float> pool_rows(const float* rows, size_t n_tokens, size_t n_embd, Pooling p);

// embd_normalize: -1 none, 0 max-abs (scaled so that the largest |x| is 32760, as llama.cpp), 1 taxicab,
// 2 euclidean, > 2 the p-norm. A zero vector stays zero.
void normalize_embedding(std::vector<float>& v, int embd_normalize);

}  // namespace engine
