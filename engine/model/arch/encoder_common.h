// What the BERT-family encoder rows (bert, nomic-bert, jina-bert-v2) share: the keys they read
// (pooling_type, token_type_count; attention is non-causal whatever the file says), their input weights and
// the graph's input (token embeddings, token-type row 0, optional position embeddings, LayerNorm), and a
// reranker's classification head.
#pragma once

#include "engine/model/graph_builder.h"
#include "engine/model/hparams.h"
#include "engine/model/weight_loader.h"

namespace engine {

void read_encoder_hparams(const ggml::gguf::File& f, HParams& h);

// token_embd, token_types (types_required: else only when the file has it), position_embd (positions: BERT's
// learned positions; the others rotate or bias by position), token_embd_norm with its bias.
void load_encoder_inputs(WeightLoader& l, bool types_required, bool positions);

// cls.output (+ bias) and cls (+ bias), when the file has them (rank pooling, engine/model/embeddings.*).
void load_classification_head(WeightLoader& l);

// LayerNorm(token embedding + token-type row 0 (every token is segment 0) + position embedding), the parts the
// model has.
ggml::Tensor* encoder_input(GraphBuilder& g);

}  // namespace engine
