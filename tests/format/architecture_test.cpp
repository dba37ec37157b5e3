// The architecture table: names round-trip, the tensor list follows each family's options, and
// source names are what transformers and llama.cpp write.
#include <gtest/gtest.h>

#include <algorithm>

#include "format/architecture.h"

namespace magnetar::format {
namespace {

FileHeader header_for(Architecture arch, uint32_t flags = 0) {
  FileHeader h{};
  h.architecture = static_cast<uint32_t>(arch);
  h.flags = flags;
  h.n_layers = 2, h.dim = 32, h.hidden_dim = 64, h.n_heads = 4, h.n_kv_heads = 2, h.head_dim = 16;
  h.vocab_size = 100;
  return h;
}

std::vector<std::string> layer0_names(const FileHeader& h) {
  std::vector<std::string> names;
  for (const TensorSpec& t : model_tensors(h))
    if (t.layer == 0) names.push_back(t.name);
  return names;
}

TEST(ArchitectureTable, EveryEntryIsFoundByEachOfItsNames) {
  for (const ArchitectureTraits& a : architectures()) {
    EXPECT_EQ(find_architecture(a.arch), &a);
    for (const char* n : a.hf_names) {
      if (n) {
        EXPECT_EQ(find_hf_architecture(n), &a) << n;
      }
    }
    if (a.gguf_name) {
      EXPECT_EQ(find_gguf_architecture(a.gguf_name), &a);
    }
    EXPECT_NE(supported_hf_architectures().find(a.hf_names[0]), std::string::npos);
  }
  EXPECT_EQ(find_hf_architecture("MistralForCausalLM")->arch, Architecture::Llama);
  EXPECT_EQ(find_hf_architecture("FalconForCausalLM"), nullptr);
}

TEST(ArchitectureTable, TensorListFollowsTheFamilysOptions) {
  using V = std::vector<std::string>;
  EXPECT_EQ(layer0_names(header_for(Architecture::Llama)),
            (V{"layers.0.attn_norm", "layers.0.wqkv", "layers.0.wo", "layers.0.ffn_norm", "layers.0.w_gate_up",
               "layers.0.w_down"}));
  EXPECT_EQ(layer0_names(header_for(Architecture::Qwen2)),
            (V{"layers.0.attn_norm", "layers.0.wqkv", "layers.0.bqkv", "layers.0.wo", "layers.0.ffn_norm",
               "layers.0.w_gate_up", "layers.0.w_down"}));
  EXPECT_EQ(layer0_names(header_for(Architecture::Gemma3, kFlagPostNorms)),
            (V{"layers.0.attn_norm", "layers.0.wqkv", "layers.0.q_norm", "layers.0.k_norm", "layers.0.wo",
               "layers.0.post_attn_norm", "layers.0.ffn_norm", "layers.0.w_gate_up", "layers.0.w_down",
               "layers.0.post_ffn_norm"}));
  const auto all = model_tensors(header_for(Architecture::Llama));
  EXPECT_EQ(all.back().name, "output");  // untied
  EXPECT_EQ(model_tensors(header_for(Architecture::Llama, kFlagTiedEmbeddings)).back().name, "output_norm");
}

TEST(ArchitectureTable, ShapesComeFromTheHeader) {
  const FileHeader h = header_for(Architecture::Qwen3);  // head_dim 16 != dim / heads = 8
  TensorSpec t;
  ASSERT_TRUE(find_tensor_spec(h, "layers.1.wqkv", &t));
  EXPECT_EQ(t.rows, (4u + 2 * 2) * 16);
  EXPECT_EQ(t.cols, 32u);
  EXPECT_EQ(t.layer, 1);
  ASSERT_TRUE(find_tensor_spec(h, "layers.1.wo", &t));
  EXPECT_EQ(t.rows, 32u);
  EXPECT_EQ(t.cols, 64u);
  ASSERT_TRUE(find_tensor_spec(h, "layers.0.k_norm", &t));
  EXPECT_EQ(t.n_dims, 1);
  EXPECT_EQ(t.cols, 16u);
  EXPECT_FALSE(find_tensor_spec(h, "layers.2.wo", &t));   // only 2 layers
  EXPECT_FALSE(find_tensor_spec(h, "layers.0.bqkv", &t)); // Qwen 3 has no biases
  EXPECT_FALSE(find_tensor_spec(h, "layers.x.wo", &t));
  EXPECT_FALSE(find_tensor_spec(h, "layers.0", &t));
}

TEST(ArchitectureTable, SourceNamesAreTransformersAndLlamaCpps) {
  const FileHeader h = header_for(Architecture::Phi3);
  TensorSpec t;
  ASSERT_TRUE(find_tensor_spec(h, "layers.1.wqkv", &t));
  const ArchitectureTraits& phi3 = *find_architecture(Architecture::Phi3);
  auto hf = tensor_sources(phi3, h, t, SourceFormat::HuggingFace);
  ASSERT_EQ(hf.size(), 1u);
  EXPECT_EQ(hf[0].name, "model.layers.1.self_attn.qkv_proj.weight");
  EXPECT_EQ(hf[0].rows, 128u);
  EXPECT_EQ(tensor_sources(phi3, h, t, SourceFormat::Gguf)[0].name, "blk.1.attn_qkv.weight");
  ASSERT_TRUE(find_tensor_spec(h, "layers.1.w_gate_up", &t));
  EXPECT_EQ(tensor_sources(phi3, h, t, SourceFormat::HuggingFace)[0].name, "model.layers.1.mlp.gate_up_proj.weight");

  const FileHeader q = header_for(Architecture::Qwen2);
  const ArchitectureTraits& qwen2 = *find_architecture(Architecture::Qwen2);
  ASSERT_TRUE(find_tensor_spec(q, "layers.0.bqkv", &t));
  auto bias = tensor_sources(qwen2, q, t, SourceFormat::Gguf);
  ASSERT_EQ(bias.size(), 3u);
  EXPECT_EQ(bias[1].name, "blk.0.attn_k.bias");
  EXPECT_EQ(bias[0].rows + bias[1].rows + bias[2].rows, t.cols);

  const FileHeader g = header_for(Architecture::Gemma2, kFlagPostNorms);
  ASSERT_TRUE(find_tensor_spec(g, "layers.0.ffn_norm", &t));
  EXPECT_EQ(tensor_sources(*find_architecture(Architecture::Gemma2), g, t, SourceFormat::HuggingFace)[0].name,
            "model.layers.0.pre_feedforward_layernorm.weight");
}

TEST(ArchitectureTable, SlidingLayers) {
  FileHeader h = header_for(Architecture::Gemma3);
  h.sliding_window = 8, h.sliding_window_period = 6;  // layers 0-4 slide, 5 is global
  for (int l = 0; l < 12; ++l) EXPECT_EQ(layer_slides(h, l), l != 5 && l != 11) << l;
  h.sliding_window_period = 0;  // every layer (Mistral, Phi-3)
  EXPECT_TRUE(layer_slides(h, 5));
  h.sliding_window = 0;
  EXPECT_FALSE(layer_slides(h, 0));
}

}  // namespace
}  // namespace magnetar::format
