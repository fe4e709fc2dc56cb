// The keys every BERT-family encoder row reads (bert.cpp): pooling_type, token_type_count; attention is
// non-causal whatever the file says.
#pragma once

#include "engine/model/hparams.h"

namespace engine {

void read_encoder_hparams(const ggml::gguf::File& f, HParams& h);

}  // namespace engine
