// Converting to the K-quant types and mixes (`convert --dtype q2_k|q3_k_m|q4_k_m|q5_k_m|q6_k`, and
// the single types iq4_xs, iq4_nl, q4_1, ...): each tensor gets the type llama.cpp's
// llama-quantize gives it (compared with the type lists of the GGUFs it made from the same F32
// model, with the README's table for the untied Llama, and with llama_tensor_get_type's rule on
// other shapes), rows that are not whole 256-blocks fall back as documented, the size prediction
// holds, the file is the same for any number of quantizing threads, and the logits stay close to
// the F32 conversion's — as close as those of llama.cpp's own quantization.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <tuple>
#include <vector>

#include "common/logit_quality.h"
#include "common/testdata.h"
#include "format/model_reader.h"
#include "format/quant_mix.h"
#include "magnetar/convert.h"
#include "magnetar/engine.h"
#include "magnetar/tools.h"

namespace magnetar {
namespace {

const char kDir[] = "gguf-kquants";

std::string gguf_path(const std::string& stem) { return test::testdata_path(std::string(kDir) + "/" + stem + ".gguf"); }
nlohmann::json golden_json(const std::string& name) {
  return nlohmann::json::parse(test::read_file(test::testdata_path(std::string(kDir) + "/goldens/" + name)));
}

class KQuantConvert : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = test::make_temp_dir("kquant_convert"); }
  void TearDown() override { test::remove_tree(dir_); }

  std::string convert(const std::string& source, WeightType type, int threads = 0) {
    ConvertOptions options;
    options.weight_type = type;
    options.threads = threads;
    const std::string out = dir_ + "/" + weight_type_name(type) + "-" + std::to_string(threads) + ".mgn";
    const Status s = convert_model(source, out, options);
    EXPECT_TRUE(s.is_ok()) << s.message();
    return out;
  }

  // Stored type of every tensor, by GGUF name ("blk.1.attn_v.weight"); an unsplit fused matrix
  // gives its type to each of its GGUF tensors.
  std::map<std::string, std::string> gguf_named_types(const std::string& mgn) {
    const std::string bytes = test::read_file(mgn);
    format::ModelFileView view;
    EXPECT_TRUE(format::parse_model_file(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(), &view).is_ok());
    const std::map<std::string, std::vector<std::string>> names = {
        {"tok_embeddings", {"token_embd"}}, {"output", {"output"}},       {"wqkv", {"attn_q", "attn_k", "attn_v"}},
        {"wq", {"attn_q"}},                  {"wk", {"attn_k"}},           {"wv", {"attn_v"}},
        {"wo", {"attn_output"}},             {"w_gate_up", {"ffn_gate", "ffn_up"}},
        {"w_gate", {"ffn_gate"}},            {"w_up", {"ffn_up"}},         {"w_down", {"ffn_down"}}};
    std::map<std::string, std::string> out;
    for (const format::TensorView& t : view.tensors) {
      if (t.n_dims == 1) continue;
      std::string prefix, leaf = t.name;
      if (t.name.rfind("layers.", 0) == 0) {
        const size_t dot = t.name.find('.', 7);
        prefix = "blk." + t.name.substr(7, dot - 7) + ".";
        leaf = t.name.substr(dot + 1);
      }
      std::string type = format::dtype_name(t.dtype);
      for (char& c : type) c = char(std::toupper(static_cast<unsigned char>(c)));
      for (const std::string& g : names.at(leaf)) out[prefix + g + ".weight"] = type;
    }
    return out;
  }

  std::string dir_;
};

// The tiny Gemma F32 GGUF (rows of 256 and 768) to each mix: the same types, tensor by tensor,
// as llama-quantize gave the same model (its *.types.json).
TEST_F(KQuantConvert, MixesGiveLlamaCppsTypesTensorByTensor) {
  MAGNETAR_REQUIRE_TESTDATA(kDir);
  for (const auto& [type, stem] : std::vector<std::pair<WeightType, std::string>>{
           {WeightType::Q4_K_M, "tiny-gemma-Q4_K_M"}, {WeightType::Q5_K_M, "tiny-gemma-Q5_K_M"},
           {WeightType::Q6_K, "tiny-gemma-Q6_K"}, {WeightType::Q3_K_M, "tiny-gemma-Q3_K_M"},
           {WeightType::Q2_K_Mix, "tiny-gemma-Q2_K"}}) {
    SCOPED_TRACE(stem);
    const std::map<std::string, std::string> ours = gguf_named_types(convert(gguf_path("tiny-gemma-f32"), type));
    const nlohmann::json theirs = golden_json(stem + ".types.json")["tensors"];
    int matrices = 0;
    for (const auto& [name, their_type] : theirs.items()) {
      if (their_type == "F32") continue;  // norms
      ASSERT_TRUE(ours.count(name)) << name;
      EXPECT_EQ(ours.at(name), their_type.get<std::string>()) << name;
      ++matrices;
    }
    EXPECT_EQ(matrices, 15);
    EXPECT_EQ(ours.size(), size_t(matrices));
  }
}

// The untied 3-layer Llama, requantized from its Q4_K_M GGUF to Q5_K_M: the README's table
// (token_embd Q5_K, output Q6_K, attn_v and ffn_down Q6_K in layer 2 only, the rest Q5_K).
TEST_F(KQuantConvert, UntiedLlamaGetsTheQ5KMTable) {
  MAGNETAR_REQUIRE_TESTDATA(kDir);
  const std::map<std::string, std::string> types = gguf_named_types(convert(gguf_path("tiny-llama-Q4_K_M"), WeightType::Q5_K_M));
  EXPECT_EQ(types.at("token_embd.weight"), "Q5_K");
  EXPECT_EQ(types.at("output.weight"), "Q6_K");
  for (int layer = 0; layer < 3; ++layer) {
    const std::string p = "blk." + std::to_string(layer) + ".";
    const std::string more_bits = layer == 2 ? "Q6_K" : "Q5_K";
    EXPECT_EQ(types.at(p + "attn_v.weight"), more_bits);
    EXPECT_EQ(types.at(p + "ffn_down.weight"), more_bits);
    for (const char* leaf : {"attn_q", "attn_k", "attn_output", "ffn_gate", "ffn_up"})
      EXPECT_EQ(types.at(p + leaf + ".weight"), "Q5_K") << p << leaf;
  }
}

// llama_tensor_get_type's rule for Q2_K and Q3_K_M on shapes the test files do not have: a
// 32-layer model without grouped-query attention, and with it (4 query heads per KV head).
TEST(QuantMixRule, Q2KAndQ3KMFollowLlamaCpp) {
  using format::DType;
  using format::QuantMix;
  const format::MixModel mha{32, false, false, 1}, gqa{32, false, false, 4}, llama_70b{80, false, true, 8};
  auto type = [](QuantMix mix, const format::MixModel& m, const std::string& name, size_t part = 0, size_t parts = 1) {
    return format::mix_tensor_type(mix, m, name, part, parts, 4096);
  };
  // Q2_K: attn_v Q3_K (Q4_K from 4 query heads per KV head, Q5_K at "70B"), attn_output and
  // ffn_down Q3_K, the LM head Q6_K, everything else (untied embeddings too) Q2_K.
  EXPECT_EQ(type(QuantMix::Q2_K, mha, "layers.5.wv"), DType::Q3_K);
  EXPECT_EQ(type(QuantMix::Q2_K, mha, "layers.5.wqkv", 2, 3), DType::Q3_K);
  EXPECT_EQ(type(QuantMix::Q2_K, mha, "layers.5.wqkv", 0, 3), DType::Q2_K);
  EXPECT_EQ(type(QuantMix::Q2_K, gqa, "layers.5.wv"), DType::Q4_K);
  EXPECT_EQ(type(QuantMix::Q2_K, llama_70b, "layers.5.wv"), DType::Q5_K);
  EXPECT_EQ(type(QuantMix::Q2_K, mha, "layers.0.wo"), DType::Q3_K);
  EXPECT_EQ(type(QuantMix::Q2_K, mha, "layers.31.w_down"), DType::Q3_K);
  EXPECT_EQ(type(QuantMix::Q2_K, mha, "layers.0.w_gate_up", 1, 2), DType::Q2_K);
  EXPECT_EQ(type(QuantMix::Q2_K, mha, "layers.0.wqkv"), DType::Q2_K);  // one fused source: no rule
  EXPECT_EQ(type(QuantMix::Q2_K, mha, "tok_embeddings"), DType::Q2_K);
  EXPECT_EQ(type(QuantMix::Q2_K, mha, "output"), DType::Q6_K);
  // Q3_K_M: attn_v Q5_K in the first two layers, Q4_K after (Q5_K at "70B"); ffn_down Q5_K in
  // the first sixteenth of the layers, Q4_K after; attn_output and a fused qkv Q4_K; else Q3_K.
  EXPECT_EQ(type(QuantMix::Q3_K_M, mha, "layers.1.wv"), DType::Q5_K);
  EXPECT_EQ(type(QuantMix::Q3_K_M, mha, "layers.2.wv"), DType::Q4_K);
  EXPECT_EQ(type(QuantMix::Q3_K_M, llama_70b, "layers.2.wv"), DType::Q5_K);
  EXPECT_EQ(type(QuantMix::Q3_K_M, mha, "layers.1.w_down"), DType::Q5_K);   // 1 < 32 / 16
  EXPECT_EQ(type(QuantMix::Q3_K_M, mha, "layers.2.w_down"), DType::Q4_K);
  EXPECT_EQ(type(QuantMix::Q3_K_M, mha, "layers.9.wo"), DType::Q4_K);
  EXPECT_EQ(type(QuantMix::Q3_K_M, mha, "layers.9.wqkv"), DType::Q4_K);
  EXPECT_EQ(type(QuantMix::Q3_K_M, mha, "layers.9.wqkv", 1, 3), DType::Q3_K);
  EXPECT_EQ(type(QuantMix::Q3_K_M, mha, "layers.9.w_gate_up", 0, 2), DType::Q3_K);
  EXPECT_EQ(type(QuantMix::Q3_K_M, mha, "tok_embeddings"), DType::Q3_K);
  EXPECT_EQ(type(QuantMix::Q3_K_M, {32, true, false, 1}, "tok_embeddings"), DType::Q6_K);  // tied
  // Rows that are not whole 256-blocks: Q2_K, Q3_K and IQ4_XS fall back to IQ4_NL, then F16.
  EXPECT_EQ(format::mix_tensor_type(QuantMix::Q2_K, mha, "layers.0.wq", 0, 1, 96), DType::IQ4_NL);
  EXPECT_EQ(format::fallback_type(DType::Q3_K, 96), DType::IQ4_NL);
  EXPECT_EQ(format::fallback_type(DType::IQ4_XS, 96), DType::IQ4_NL);
  EXPECT_EQ(format::fallback_type(DType::IQ4_XS, 100), DType::F16);
  EXPECT_EQ(format::fallback_type(DType::Q4_1, 100), DType::F16);
}

// stories260K (rows of 64, and 172 for ffn_down): nothing is whole 256-blocks, so Q4_K falls
// back to Q5_0, Q2_K to IQ4_NL, the Q6_K (tied) embedding table to Q8_0, and 172-wide rows to F16.
TEST_F(KQuantConvert, RowsThatAreNotWholeSuperBlocksFallBack) {
  MAGNETAR_REQUIRE_TESTDATA("stories260K-hf/f32");
  const std::map<std::string, std::string> q4 =
      gguf_named_types(convert(test::testdata_path("stories260K-hf/f32"), WeightType::Q4_K_M));
  const std::map<std::string, std::string> q5 =
      gguf_named_types(convert(test::testdata_path("stories260K-hf/f32"), WeightType::Q5_K_M));
  const std::map<std::string, std::string> q2 =
      gguf_named_types(convert(test::testdata_path("stories260K-hf/f32"), WeightType::Q2_K_Mix));
  EXPECT_EQ(q4.at("token_embd.weight"), "Q8_0");
  EXPECT_EQ(q5.at("token_embd.weight"), "Q8_0");
  EXPECT_EQ(q2.at("token_embd.weight"), "Q8_0");
  for (int layer = 0; layer < 5; ++layer) {
    const std::string p = "blk." + std::to_string(layer) + ".";
    EXPECT_EQ(q4.at(p + "attn_q.weight"), "Q5_0");
    EXPECT_EQ(q5.at(p + "attn_q.weight"), "Q5_1");
    EXPECT_EQ(q2.at(p + "attn_q.weight"), "IQ4_NL");
    EXPECT_EQ(q2.at(p + "attn_output.weight"), "IQ4_NL");  // Q3_K's fallback
    EXPECT_EQ(q4.at(p + "ffn_down.weight"), "F16");
    EXPECT_EQ(q2.at(p + "ffn_down.weight"), "F16");
    // 5 layers: use_more_bits marks layer 4 (i >= 7 * 5 / 8) and layer 2 ((i - 5 / 8) % 3 == 2);
    // attn_v is Q6_K there, whose fallback is Q8_0.
    const bool more_bits = layer == 2 || layer == 4;
    EXPECT_EQ(q4.at(p + "attn_v.weight"), more_bits ? "Q8_0" : "Q5_0") << layer;
  }
}

TEST_F(KQuantConvert, PredictedSizeIsAnUpperBoundWithinThePadding) {
  MAGNETAR_REQUIRE_TESTDATA(kDir);
  MAGNETAR_REQUIRE_TESTDATA("stories260K-hf/f32");
  for (const std::string& source : {gguf_path("tiny-gemma-f32"), gguf_path("tiny-llama-Q4_K_M"),
                                    test::testdata_path("stories260K-hf/f32")}) {
    SourceSummary s;
    ASSERT_TRUE(inspect_source(source, &s).is_ok());
    for (WeightType type : {WeightType::Q4_K_M, WeightType::Q5_K_M, WeightType::Q6_K, WeightType::Q4_K,
                            WeightType::Q3_K_M, WeightType::Q2_K_Mix, WeightType::IQ4_XS, WeightType::IQ4_NL,
                            WeightType::Q4_1, WeightType::Auto}) {
      SCOPED_TRACE(source + " " + weight_type_name(type));
      const std::string out = convert(source, type);
      const std::string bytes = test::read_file(out);
      format::ModelFileView view;
      ASSERT_TRUE(format::parse_model_file(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(), &view).is_ok());
      const uint64_t predicted = predicted_model_file_bytes(s, type);
      EXPECT_GE(predicted, bytes.size());
      EXPECT_LT(predicted, bytes.size() + format::kAlignment * view.tensors.size());
    }
  }
}

// The quantizing threads split each chunk at block boundaries: the file is the same for 1 and
// for 3 threads, for a mix and for the single types new to the converter.
TEST_F(KQuantConvert, FileIsTheSameForAnyThreadCount) {
  MAGNETAR_REQUIRE_TESTDATA(kDir);
  for (WeightType type : {WeightType::Q4_K_M, WeightType::Q2_K_Mix, WeightType::IQ4_XS, WeightType::Q4_1}) {
    SCOPED_TRACE(weight_type_name(type));
    const std::string one = test::read_file(convert(gguf_path("tiny-gemma-f32"), type, 1));
    const std::string three = test::read_file(convert(gguf_path("tiny-gemma-f32"), type, 3));
    ASSERT_FALSE(one.empty());
    EXPECT_TRUE(one == three);
  }
}

// Logits of the tiny Gemma over its prompt: each K-quant conversion against the F32 one, and
// against llama.cpp's own quantization of the same model (its GGUF, imported as stored).
// Measured mean KL (nats), ours / llama.cpp's: Q2_K 0.184 / 0.206, Q3_K_M 0.0542 / 0.0627,
// Q4_K_M 0.0172 / 0.0187, Q5_K_M 0.00722 / 0.00849, Q6_K 0.00424 / 0.00438; bounds about 15-20%
// above ours. (Random
// weights: near-flat distributions, so top-1 mostly measures ties; KL is the meaningful number.)
TEST_F(KQuantConvert, LogitsAreAsCloseToF32AsLlamaCppsQuantization) {
  MAGNETAR_REQUIRE_TESTDATA(kDir);
  const nlohmann::json golden = golden_json("tiny-gemma-Q4_K_M.json");
  const std::vector<int> tokens = golden["prompt_ids"].get<std::vector<int>>();
  constexpr int kVocab = 1024;
  const std::vector<float> f32 = test::evaluate_logits(convert(gguf_path("tiny-gemma-f32"), WeightType::F32), {}, tokens);
  ASSERT_EQ(f32.size(), tokens.size() * kVocab);
  auto kl_of = [&](WeightType type) {
    const std::vector<float> logits = test::evaluate_logits(convert(gguf_path("tiny-gemma-f32"), type), {}, tokens);
    const double kl = compare_logits(f32, logits, tokens, kVocab).mean_kl;
    std::printf("  %s: mean KL %.3g\n", weight_type_name(type), kl);
    return kl;
  };
  const double q4_0_kl = kl_of(WeightType::Q4_0);
  double previous_kl = INFINITY;
  for (const auto& [type, stem, max_kl] : std::vector<std::tuple<WeightType, std::string, double>>{
           {WeightType::Q2_K_Mix, "tiny-gemma-Q2_K", 0.22},
           {WeightType::Q3_K_M, "tiny-gemma-Q3_K_M", 0.065},
           {WeightType::Q4_K_M, "tiny-gemma-Q4_K_M", 0.020},
           {WeightType::Q5_K_M, "tiny-gemma-Q5_K_M", 0.0088},
           {WeightType::Q6_K, "tiny-gemma-Q6_K", 0.0049}}) {
    SCOPED_TRACE(stem);
    const std::vector<float> ours = test::evaluate_logits(convert(gguf_path("tiny-gemma-f32"), type), {}, tokens);
    const std::vector<float> theirs = test::evaluate_logits(convert(gguf_path(stem), WeightType::Auto), {}, tokens);
    const DistributionComparison c = compare_logits(f32, ours, tokens, kVocab);
    const DistributionComparison l = compare_logits(f32, theirs, tokens, kVocab);
    test::expect_quality(c, {0.5, max_kl}, std::string("tiny-gemma-f32.gguf ") + weight_type_name(type), "f32");
    std::printf("  %s: mean KL %.3g; llama.cpp's %s: %.3g\n", weight_type_name(type), c.mean_kl, stem.c_str(), l.mean_kl);
    EXPECT_LT(c.mean_kl, 1.15 * l.mean_kl);
    EXPECT_LT(c.mean_kl, previous_kl);  // each larger type is closer
    previous_kl = c.mean_kl;
    if (type == WeightType::Q4_K_M) {
      EXPECT_LT(c.mean_kl, q4_0_kl);
    }
  }
  // The single 4-bit types against Q4_0 (the same 4.5 bits, or 4.25 for IQ4_XS; every matrix,
  // the tied embedding table included). Measured: IQ4_NL 0.0730, IQ4_XS 0.0723, Q4_1 0.0764
  // (Q4_0 0.0861).
  for (const auto& [type, max_kl] : std::vector<std::pair<WeightType, double>>{
           {WeightType::IQ4_NL, 0.088}, {WeightType::IQ4_XS, 0.087}, {WeightType::Q4_1, 0.092}}) {
    const double kl = kl_of(type);
    EXPECT_LT(kl, max_kl) << weight_type_name(type);
    EXPECT_LT(kl, q4_0_kl) << weight_type_name(type);
  }
}

TEST(KQuantWeightTypes, NamesRoundTripAndOnlyQuantizableTypesParse) {
  for (WeightType t : {WeightType::Q4_K_M, WeightType::Q5_K_M, WeightType::Q3_K_M, WeightType::Q2_K_Mix,
                       WeightType::Q6_K, WeightType::Q5_K, WeightType::Q4_K, WeightType::Q3_K, WeightType::Q5_0,
                       WeightType::Q5_1, WeightType::Q4_1, WeightType::IQ4_NL, WeightType::IQ4_XS}) {
    WeightType parsed;
    ASSERT_TRUE(parse_weight_type(weight_type_name(t), &parsed)) << weight_type_name(t);
    EXPECT_EQ(parsed, t);
  }
  WeightType parsed;
  EXPECT_TRUE(parse_weight_type("Q4_K_M", &parsed));
  // "q2_k" is llama.cpp's Q2_K file type, a mix: the Q2_K type alone is not offered.
  ASSERT_TRUE(parse_weight_type("q2_k", &parsed));
  EXPECT_EQ(parsed, WeightType::Q2_K_Mix);
  for (const char* no : {"q4_k_s", "q3_k_s", "q3_k_l", "iq2_xxs", "q2_k_s"}) EXPECT_FALSE(parse_weight_type(no, &parsed)) << no;
  // Largest first (bytes per parameter; ties in DType order): the mixes sit between their neighbours.
  EXPECT_EQ(std::string(convertible_weight_type_names()),
            "f32, f16, q8_0, q6_k, q5_1, q5_k_m, q5_k, q5_0, q4_1, q4_k_m, q4_0, q4_k, iq4_nl, iq4_xs, q3_k_m, "
            "q3_k, q2_k");
  EXPECT_NEAR(weight_type_bytes_per_parameter(WeightType::Q4_K_M) * 8, 4.84, 0.03);  // llama.cpp: 4.84 bpw at 7B
  EXPECT_NEAR(weight_type_bytes_per_parameter(WeightType::Q5_K_M) * 8, 5.68, 0.03);  // and 5.68
  EXPECT_NEAR(weight_type_bytes_per_parameter(WeightType::Q3_K_M) * 8, 3.91, 0.03);  // and 3.91
  // Q2_K: today's rule on a Llama-2-7B shape (attn_v, attn_output, ffn_down Q3_K): ~3.0 bpw.
  EXPECT_NEAR(weight_type_bytes_per_parameter(WeightType::Q2_K_Mix) * 8, 3.0, 0.05);
}

}  // namespace
}  // namespace magnetar
