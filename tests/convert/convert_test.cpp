// Converter tests on the shared test data: every Hugging Face folder and the llama2.c checkpoint,
// to F32 and F16, checked against config.json and the safetensors sources value by value; the
// llama2.c q/k permutation (the .bin and the HF folder must give bit-identical files); sharded ==
// unsharded; progress, cancellation, inspect_source and the size prediction.
#include <gtest/gtest.h>
#include <sentencepiece_processor.h>

#include <atomic>
#include <cmath>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "common/testdata.h"
#include "convert_test_util.h"
#include "format/model_reader.h"
#include "magnetar/convert.h"
#include "magnetar/engine.h"

namespace magnetar::test {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// F16 output of a value v: round to nearest, so within half a unit in the last place of FP16
// (2^-11 relative for normal halves, 2^-25 absolute in the subnormal range).
constexpr float kF16HalfUlpRelative = 1.0f / 2048.0f;
constexpr float kF16HalfUlpSubnormal = 2.9802322e-08f;  // 2^-25

class ConvertTest : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = make_temp_dir("convert"); }
  void TearDown() override { remove_tree(dir_); }

  // Converts and loads; fails the test on any error.
  std::string convert(const std::string& source, WeightType type, const std::string& name,
                      const std::string& tokenizer = "") {
    ConvertOptions options;
    options.weight_type = type;
    options.tokenizer_path = tokenizer;
    const std::string out = (fs::path(dir_) / name).string();
    Status s = convert_model(source, out, options);
    EXPECT_TRUE(s.is_ok()) << s.message();
    return out;
  }
  ModelFile load(const std::string& path) {
    ModelFile m;
    std::string error;
    EXPECT_TRUE(load_model_file(path, &m, &error)) << path << ": " << error;
    return m;
  }

  std::string dir_;
};

json read_json(const std::string& path) { return json::parse(read_file(path)); }

void expect_values(const std::vector<float>& got, const std::vector<float>& want, format::DType dtype,
                   const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  size_t bad = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    bool ok;
    if (dtype == format::DType::F32) {
      ok = std::memcmp(&got[i], &want[i], 4) == 0;
    } else {
      float tol = std::max(std::fabs(want[i]) * kF16HalfUlpRelative, kF16HalfUlpSubnormal);
      ok = std::fabs(got[i] - want[i]) <= tol;
    }
    if (!ok && bad++ < 3)
      ADD_FAILURE() << what << "[" << i << "]: got " << got[i] << ", want " << want[i];
  }
  EXPECT_EQ(bad, 0u) << what;
}

std::vector<float> concat(std::initializer_list<std::vector<float>> parts) {
  std::vector<float> out;
  for (const auto& p : parts) out.insert(out.end(), p.begin(), p.end());
  return out;
}

// ---------------------------------------------------------------------------------------------
// Every Hugging Face folder × {f32, f16}: header vs config.json, tensors vs safetensors.

struct FolderCase {
  const char* folder;
  WeightType type;
};
void PrintTo(const FolderCase& c, std::ostream* os) { *os << c.folder << " " << weight_type_name(c.type); }

class ConvertFolderTest : public ConvertTest, public ::testing::WithParamInterface<FolderCase> {};

TEST_P(ConvertFolderTest, HeaderTensorsAndValuesMatchTheSource) {
  const FolderCase c = GetParam();
  MAGNETAR_REQUIRE_TESTDATA(c.folder);
  const std::string folder = testdata_path(c.folder);
  ModelFile m = load(convert(folder, c.type, "model.mgn"));
  if (HasFailure()) return;
  const json config = read_json(folder + "/config.json");
  const std::string arch = config["architectures"][0];
  const bool gemma = arch != "LlamaForCausalLM", gemma2 = arch == "Gemma2ForCausalLM";
  const auto& h = m.header;

  // Header against config.json.
  EXPECT_EQ(h.version, format::kVersion);
  EXPECT_EQ(h.architecture, static_cast<uint32_t>(gemma2  ? Architecture::Gemma2
                                                  : gemma ? Architecture::Gemma
                                                          : Architecture::Llama));
  const uint32_t L = config["num_hidden_layers"], D = config["hidden_size"],
                 F = config["intermediate_size"], H = config["num_attention_heads"],
                 KV = config["num_key_value_heads"], V = config["vocab_size"];
  const uint32_t HD = config.contains("head_dim") ? config["head_dim"].get<uint32_t>() : D / H;
  EXPECT_EQ(h.n_layers, L);
  EXPECT_EQ(h.dim, D);
  EXPECT_EQ(h.hidden_dim, F);
  EXPECT_EQ(h.n_heads, H);
  EXPECT_EQ(h.n_kv_heads, KV);
  EXPECT_EQ(h.head_dim, HD);
  EXPECT_EQ(h.vocab_size, V);
  EXPECT_EQ(h.max_context, config["max_position_embeddings"].get<uint32_t>());
  EXPECT_EQ(h.norm_eps, config["rms_norm_eps"].get<float>());
  EXPECT_EQ(h.rope_theta, config["rope_theta"].get<float>());
  EXPECT_EQ(h.activation, static_cast<uint32_t>(gemma ? format::Activation::GeluTanh
                                                      : format::Activation::Silu));
  const double scalar = gemma2 ? config["query_pre_attn_scalar"].get<double>() : HD;
  EXPECT_FLOAT_EQ(h.query_scale, static_cast<float>(1.0 / std::sqrt(scalar)));
  EXPECT_EQ(h.attn_softcap, gemma2 ? config["attn_logit_softcapping"].get<float>() : 0.0f);
  EXPECT_EQ(h.final_softcap, gemma2 ? config["final_logit_softcapping"].get<float>() : 0.0f);
  EXPECT_EQ(h.sliding_window, gemma2 ? config["sliding_window"].get<uint32_t>() : 0u);
  EXPECT_EQ(h.sliding_window_period, gemma2 ? 2u : 0u);
  uint32_t flags = format::kFlagTiedEmbeddings | format::kFlagAddBos;
  if (gemma) flags |= format::kFlagEmbedScaleSqrtDim;
  if (gemma2) flags |= format::kFlagPostNorms;
  EXPECT_EQ(h.flags, flags);
  EXPECT_EQ(h.bos_id, config["bos_token_id"].get<int>());
  std::vector<int> eog(h.eog_ids, h.eog_ids + h.n_eog_ids);
  // stories: </s> = 2. Gemma: <eos> = 1 plus <end_of_turn>, id 6 in this test vocabulary.
  EXPECT_EQ(eog, gemma ? std::vector<int>({1, 6}) : std::vector<int>({2}));
  EXPECT_EQ(h.chat_template_kind,
            static_cast<uint32_t>(gemma ? ChatTemplate::Gemma : ChatTemplate::None));
  const json tok_config = read_json(folder + "/tokenizer_config.json");
  EXPECT_EQ(m.chat_template(), tok_config.value("chat_template", std::string()));
  EXPECT_EQ(m.tokenizer(), read_file(folder + "/tokenizer.model"));

  // Layout: every tensor 64-byte aligned, inside the file, in declaration order.
  EXPECT_EQ(h.data_offset % format::kAlignment, 0u);
  EXPECT_EQ(m.table.size(), 2 + L * (gemma2 ? 8 : 6));
  for (const auto& e : m.table) {
    EXPECT_EQ(e.offset % format::kAlignment, 0u) << e.name;
    EXPECT_GE(e.offset, h.data_offset) << e.name;
  }
  EXPECT_EQ(m.find("output"), nullptr);  // tied
  // The engine's validating reader accepts the file.
  format::ModelFileView view;
  Status parsed = format::parse_model_file(reinterpret_cast<const uint8_t*>(m.bytes.data()),
                                           m.bytes.size(), &view);
  EXPECT_TRUE(parsed.is_ok()) << parsed.message();
  EXPECT_EQ(view.tensors.size(), m.table.size());

  // Every tensor with its shape and dtype, values against the source.
  const format::DType wdt = c.type == WeightType::F32 ? format::DType::F32 : format::DType::F16;
  auto src = [&](const std::string& name) {
    SourceTensor t;
    EXPECT_TRUE(read_source_tensor(folder, name, &t)) << name;
    return t.values;
  };
  auto check = [&](const std::string& name, uint64_t rows, uint64_t cols, format::DType dtype,
                   const std::vector<float>& want) {
    const format::TensorEntry* e = m.find(name);
    ASSERT_NE(e, nullptr) << name;
    EXPECT_EQ(e->shape[0], rows) << name;
    EXPECT_EQ(e->shape[1], cols) << name;
    EXPECT_EQ(e->n_dims, rows == 1 ? 1u : 2u) << name;
    EXPECT_EQ(e->dtype, static_cast<uint32_t>(dtype)) << name;
    EXPECT_EQ(e->bytes, format::tensor_bytes(dtype, rows, cols)) << name;
    expect_values(m.values(name), want, dtype, name);
  };
  auto norm = [&](const std::string& name) {  // Gemma stores 1 + w, computed in FP32
    std::vector<float> w = src(name);
    if (gemma)
      for (float& x : w) x = 1.0f + x;
    return w;
  };
  check("tok_embeddings", V, D, wdt, src("model.embed_tokens.weight"));
  check("output_norm", 1, D, format::DType::F32, norm("model.norm.weight"));
  for (uint32_t i = 0; i < L; ++i) {
    const std::string s = "model.layers." + std::to_string(i) + ".";
    const std::string d = "layers." + std::to_string(i) + ".";
    check(d + "attn_norm", 1, D, format::DType::F32, norm(s + "input_layernorm.weight"));
    check(d + "wqkv", (H + 2 * KV) * HD, D, wdt,
          concat({src(s + "self_attn.q_proj.weight"), src(s + "self_attn.k_proj.weight"),
                  src(s + "self_attn.v_proj.weight")}));
    check(d + "wo", D, H * HD, wdt, src(s + "self_attn.o_proj.weight"));
    check(d + "w_gate_up", 2 * F, D, wdt,
          concat({src(s + "mlp.gate_proj.weight"), src(s + "mlp.up_proj.weight")}));
    check(d + "w_down", D, F, wdt, src(s + "mlp.down_proj.weight"));
    if (gemma2) {
      check(d + "post_attn_norm", 1, D, format::DType::F32, norm(s + "post_attention_layernorm.weight"));
      check(d + "ffn_norm", 1, D, format::DType::F32, norm(s + "pre_feedforward_layernorm.weight"));
      check(d + "post_ffn_norm", 1, D, format::DType::F32, norm(s + "post_feedforward_layernorm.weight"));
    } else {
      check(d + "ffn_norm", 1, D, format::DType::F32, norm(s + "post_attention_layernorm.weight"));
    }
  }
}

INSTANTIATE_TEST_SUITE_P(
    SharedFolders, ConvertFolderTest,
    ::testing::Values(FolderCase{"stories260K-hf/f32", WeightType::F32},
                      FolderCase{"stories260K-hf/f32", WeightType::F16},
                      FolderCase{"stories260K-hf/f32-sharded", WeightType::F32},
                      FolderCase{"stories260K-hf/f32-sharded", WeightType::F16},
                      FolderCase{"stories260K-hf/bf16", WeightType::F32},
                      FolderCase{"stories260K-hf/bf16", WeightType::F16},
                      FolderCase{"gemma/tiny-gemma", WeightType::F32},
                      FolderCase{"gemma/tiny-gemma", WeightType::F16},
                      FolderCase{"gemma/tiny-gemma-sharded", WeightType::F32},
                      FolderCase{"gemma/tiny-gemma-sharded", WeightType::F16},
                      FolderCase{"gemma/tiny-gemma2", WeightType::F32},
                      FolderCase{"gemma/tiny-gemma2", WeightType::F16}),
    [](const ::testing::TestParamInfo<FolderCase>& info) {
      std::string name = info.param.folder;
      for (char& ch : name)
        if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
      return name + "_" + weight_type_name(info.param.type);
    });

// ---------------------------------------------------------------------------------------------
// Sharded == unsharded, bit for bit; llama2.c == Hugging Face, bit for bit.

TEST_F(ConvertTest, ShardedFoldersGiveTheSameFileAsUnsharded) {
  MAGNETAR_REQUIRE_TESTDATA("stories260K-hf/f32-sharded");
  MAGNETAR_REQUIRE_TESTDATA("gemma/tiny-gemma-sharded");
  for (WeightType type : {WeightType::F32, WeightType::F16}) {
    const std::string t = weight_type_name(type);
    EXPECT_EQ(read_file(convert(testdata_path("stories260K-hf/f32"), type, "s1-" + t)),
              read_file(convert(testdata_path("stories260K-hf/f32-sharded"), type, "s2-" + t)));
    EXPECT_EQ(read_file(convert(testdata_path("gemma/tiny-gemma"), type, "g1-" + t)),
              read_file(convert(testdata_path("gemma/tiny-gemma-sharded"), type, "g2-" + t)));
  }
}

// llama2.c stores q/k rows in Meta's interleaved RoPE layout; the HF folder holds the same
// weights in rotate-half layout. Identical wqkv tensors prove the permutation.
TEST_F(ConvertTest, Llama2cCheckpointMatchesTheHuggingFaceFolderBitForBit) {
  MAGNETAR_REQUIRE_TESTDATA("stories260K/stories260K.bin");
  MAGNETAR_REQUIRE_TESTDATA("stories260K-hf/f32");
  for (WeightType type : {WeightType::F32, WeightType::F16}) {
    const std::string t = weight_type_name(type);
    ModelFile bin = load(convert(testdata_path("stories260K/stories260K.bin"), type, "bin-" + t));
    ModelFile hf = load(convert(testdata_path("stories260K-hf/f32"), type, "hf-" + t));
    if (HasFailure()) return;
    for (uint32_t i = 0; i < hf.header.n_layers; ++i) {
      const std::string name = "layers." + std::to_string(i) + ".wqkv";
      ASSERT_FALSE(hf.raw(name).empty());
      EXPECT_TRUE(bin.raw(name) == hf.raw(name)) << name << " differs (" << t << ")";
    }
    // Everything else too: same header, table, tokenizer (tok512.model) and tensors.
    EXPECT_TRUE(bin.bytes == hf.bytes) << t;
    EXPECT_EQ(bin.header.max_context, 512u);
  }
}

TEST_F(ConvertTest, Llama2cWithTok512BinVocabularyTokenizesLikeTok512Model) {
  MAGNETAR_REQUIRE_TESTDATA("stories260K/stories260K.bin");
  const std::string bin_dir = (fs::path(dir_) / "ckpt").string();
  fs::create_directory(bin_dir);
  // Only the checkpoint and tok512.bin beside it: the converter must find and translate it.
  write_file(bin_dir + "/stories260K.bin", read_file(testdata_path("stories260K/stories260K.bin")));
  write_file(bin_dir + "/tok512.bin", read_file(testdata_path("stories260K/tok512.bin")));
  ModelFile found = load(convert(bin_dir + "/stories260K.bin", WeightType::F32, "found.mgn"));
  ModelFile given = load(convert(testdata_path("stories260K/stories260K.bin"), WeightType::F32,
                                 "given.mgn", testdata_path("stories260K/tok512.bin")));
  if (HasFailure()) return;
  EXPECT_EQ(found.tokenizer(), given.tokenizer());
  sentencepiece::SentencePieceProcessor from_bin, reference;
  ASSERT_TRUE(from_bin.LoadFromSerializedProto(found.tokenizer()).ok());
  ASSERT_TRUE(reference.Load(testdata_path("stories260K/tok512.model")).ok());
  const std::string text = read_file(testdata_path("stories260K/expected_greedy_200.txt"));
  std::vector<int> a, b;
  ASSERT_TRUE(from_bin.Encode(text, &a).ok());
  ASSERT_TRUE(reference.Encode(text, &b).ok());
  EXPECT_EQ(a, b);
  EXPECT_EQ(found.header.bos_id, 1);
  EXPECT_EQ(found.header.n_eog_ids, 1);
  EXPECT_EQ(found.header.eog_ids[0], 2);
  // Tensors do not depend on the tokenizer.
  EXPECT_EQ(found.raw("layers.0.wqkv"), given.raw("layers.0.wqkv"));
}

// ---------------------------------------------------------------------------------------------
// Progress, cancellation, inspect_source, size prediction.

TEST_F(ConvertTest, ProgressCoversEverySourceByteInOrder) {
  MAGNETAR_REQUIRE_TESTDATA("stories260K-hf/f32");
  ConvertOptions options;
  options.weight_type = WeightType::F16;
  std::vector<ConvertProgress> seen;
  options.on_progress = [&](const ConvertProgress& p) { seen.push_back(p); };
  Status s = convert_model(testdata_path("stories260K-hf/f32"), dir_ + "/p.mgn", options);
  ASSERT_TRUE(s.is_ok()) << s.message();
  ASSERT_GT(seen.size(), 10u);
  // The data section of model.safetensors: every byte is a tensor the model uses.
  const std::string st = read_file(testdata_path("stories260K-hf/f32/model.safetensors"));
  uint64_t header_len = 0;
  std::memcpy(&header_len, st.data(), 8);
  const uint64_t total = st.size() - 8 - header_len;
  uint64_t last = 0;
  bool saw_tensor_stage = false;
  for (const auto& p : seen) {
    if (p.bytes_total == 0) continue;  // "reading ..." before the plan exists
    EXPECT_EQ(p.bytes_total, total);
    EXPECT_GE(p.bytes_done, last);
    last = p.bytes_done;
    saw_tensor_stage |= p.stage.rfind("tensor layers.", 0) == 0;
  }
  EXPECT_EQ(last, total);
  EXPECT_TRUE(saw_tensor_stage);
  EXPECT_EQ(seen.back().stage, "done");
}

TEST_F(ConvertTest, CancelledConversionLeavesNothingAndKeepsAnExistingFile) {
  MAGNETAR_REQUIRE_TESTDATA("gemma/tiny-gemma2");
  const std::string out = dir_ + "/model.mgn";
  write_file(out, "previous model");
  // Cancel at different points: before anything, after the first chunk, near the end.
  for (int cancel_after : {0, 1, 20}) {
    std::atomic<bool> cancel{cancel_after == 0};
    int calls = 0;
    ConvertOptions options;
    options.cancel = &cancel;
    options.on_progress = [&](const ConvertProgress& p) {
      if (p.bytes_done > 0 && ++calls >= cancel_after) cancel = true;
    };
    Status s = convert_model(testdata_path("gemma/tiny-gemma2"), out, options);
    ASSERT_FALSE(s.is_ok()) << "cancel_after " << cancel_after;
    EXPECT_NE(s.message().find("cancelled"), std::string::npos) << s.message();
    EXPECT_EQ(list_dir(dir_), std::vector<std::string>{"model.mgn"}) << "temporary file left";
    EXPECT_EQ(read_file(out), "previous model");
  }
}

TEST_F(ConvertTest, InspectSourceAndPredictedSize) {
  MAGNETAR_REQUIRE_TESTDATA("stories260K/stories260K.bin");
  MAGNETAR_REQUIRE_TESTDATA("gemma/tiny-gemma2");
  struct Case {
    std::string source, arch, kind;
    int layers, dim, vocab, context;
  };
  for (const Case& c : {Case{testdata_path("stories260K/stories260K.bin"), "LlamaForCausalLM",
                             "llama2.c checkpoint", 5, 64, 512, 512},
                        Case{testdata_path("stories260K-hf/bf16"), "LlamaForCausalLM",
                             "Hugging Face folder", 5, 64, 512, 512},
                        Case{testdata_path("gemma/tiny-gemma2"), "Gemma2ForCausalLM",
                             "Hugging Face folder", 4, 64, 1024, 512}}) {
    SourceSummary s;
    Status st = inspect_source(c.source, &s);
    ASSERT_TRUE(st.is_ok()) << st.message();
    EXPECT_EQ(s.architecture, c.arch);
    EXPECT_EQ(s.kind, c.kind);
    EXPECT_EQ(s.n_layers, c.layers);
    EXPECT_EQ(s.dim, c.dim);
    EXPECT_EQ(s.vocab_size, c.vocab);
    EXPECT_EQ(s.max_context, c.context);
    EXPECT_GT(s.source_bytes, 0u);
    for (WeightType type : {WeightType::F32, WeightType::F16}) {
      ModelFile m = load(convert(c.source, type, "inspect.mgn"));
      uint64_t params = 0;
      for (const auto& e : m.table) params += e.shape[0] * e.shape[1];
      EXPECT_EQ(s.n_params, params);
      EXPECT_EQ(s.n_tensors, static_cast<int>(m.table.size()));
      const uint64_t predicted = predicted_model_file_bytes(s, type);
      EXPECT_GE(predicted, m.bytes.size()) << c.source;
      EXPECT_LT(predicted, m.bytes.size() + format::kAlignment * m.table.size()) << c.source;
    }
  }
}

// Quantized conversions: the prediction stays an upper bound within the padding when matrices
// whose rows are not whole 32-blocks stay F16 (stories260K's FFN down: 172 columns) and when
// the embedding / LM head type (output_weight_type) differs from the other matrices'.
TEST_F(ConvertTest, PredictedSizeOfQuantizedAndMixedOutputTypes) {
  MAGNETAR_REQUIRE_TESTDATA("stories260K/stories260K.bin");
  MAGNETAR_REQUIRE_TESTDATA("gemma/tiny-gemma2");
  const WeightType kTypes[] = {WeightType::F32, WeightType::F16, WeightType::Q8_0, WeightType::Q4_0};
  for (const std::string& source :
       {testdata_path("stories260K/stories260K.bin"), testdata_path("gemma/tiny-gemma2")}) {
    SourceSummary s;
    Status st = inspect_source(source, &s);
    ASSERT_TRUE(st.is_ok()) << st.message();
    EXPECT_GT(s.n_output_params, 0u) << source;
    for (WeightType type : {WeightType::Q8_0, WeightType::Q4_0}) {
      for (std::optional<WeightType> output : {std::optional<WeightType>{}, std::optional<WeightType>{kTypes[0]},
                                              std::optional<WeightType>{kTypes[1]}, std::optional<WeightType>{kTypes[2]},
                                              std::optional<WeightType>{kTypes[3]}}) {
        ConvertOptions options;
        options.weight_type = type;
        options.output_weight_type = output;
        const std::string out = (fs::path(dir_) / "predicted.mgn").string();
        ASSERT_TRUE(convert_model(source, out, options).is_ok());
        const ModelFile m = load(out);
        const uint64_t predicted = predicted_model_file_bytes(s, options);
        const std::string what = source + " " + weight_type_name(type) + " output " +
                                 (output ? weight_type_name(*output) : "(same)");
        EXPECT_GE(predicted, m.bytes.size()) << what;
        EXPECT_LT(predicted, m.bytes.size() + format::kAlignment * m.table.size()) << what;
        if (!output) {
          EXPECT_EQ(predicted, predicted_model_file_bytes(s, type)) << what;
        }
      }
    }
  }
}

TEST(WeightTypeNames, RoundTrip) {
  for (WeightType t : {WeightType::F32, WeightType::F16, WeightType::Q8_0, WeightType::Q4_0}) {
    WeightType parsed;
    ASSERT_TRUE(parse_weight_type(weight_type_name(t), &parsed));
    EXPECT_EQ(parsed, t);
  }
  WeightType parsed;
  EXPECT_TRUE(parse_weight_type("F16", &parsed));
  EXPECT_EQ(parsed, WeightType::F16);
  EXPECT_FALSE(parse_weight_type("f8", &parsed));
  EXPECT_FALSE(parse_weight_type("", &parsed));
}

}  // namespace
}  // namespace magnetar::test
