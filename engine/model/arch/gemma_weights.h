// The weights of the Gemma family's rows (gemma, gemma2, gemma3): the same layer, which the later
// versions extend with post-norms after the attention and the feed-forward (Gemma 2, 3) and RMSNorms of
// every query and key head (Gemma 3). The output matrix is the token embeddings unless the file has one.
#pragma once

namespace engine {

class WeightLoader;

struct GemmaLayout {
    bool post_norms = false;  // post_attention_norm, post_ffw_norm
    bool qk_norms = false;    // attn_q_norm, attn_k_norm
};

void load_gemma_weights(WeightLoader& l, const GemmaLayout& layout);

}  // namespace engine
