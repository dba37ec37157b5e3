// Tiny random Llama 3.1, Qwen 2.5, Qwen 3, Gemma 3 and Phi-3 folders (models/ in the test data)
// converted by the converter and run against Oracle A's goldens: the logits of every stored
// position, the greedy continuation, and F16 / Q8_0 conversions within their budgets. The prompts
// are the goldens' prompt_ids, so the forward pass is checked whatever the tokenizer.
//
// The same weights are also written as a GGUF file the way llama.cpp's convert_hf_to_gguf.py
// writes them (its tensor names and metadata keys, llama q/k rows permuted, Gemma norms as 1 + w,
// Llama 3's RoPE scaling as rope_freqs divisors), imported, and held to the same F32 goldens.
//
// The folders convert as they are (tokenizer.json or tokenizer.model). The GGUF copies carry a
// stand-in SentencePiece vocabulary of the config's vocab_size: these tests need the weights and
// the forward pass only.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>

#include "gguf/gguf_writer.h"
#include "common/golden_session.h"
#include "common/testdata.h"
#include "convert/safetensors.h"
#include "kernels/kernels.h"
#include "magnetar/convert.h"
#include "magnetar/engine.h"
#include "model/synth.h"
#include "tokenizer/tokenizer.h"

namespace magnetar {
namespace {
using test::GgufWriter;

// F32 weights (BF16 values upcast exactly) computed in F32 against the float64 oracle: the
// README's bound, 20x the oracles' agreement and f32 rounding.
constexpr double kF32LogitTolerance = 1e-4;
// F16 weights round each weight by up to 2^-11 relative (these BF16 weights fit F16 exactly:
// measured <= 5.4e-6, the F32 figure); Q8_0 rounds weights and activations by up to 1/254 of
// each 32-block's absmax, and the sharp attention of these folders (q/k std 0.3) amplifies it:
// measured 0.09-0.22 (printed by the tests below).
constexpr double kF16LogitTolerance = 2e-2;
constexpr double kQ8LogitTolerance = 0.3;

struct GoldenCase {
  std::vector<int> prompt_ids;
  std::vector<int> greedy_32;
  std::vector<int> argmax;            // every prompt position
  std::vector<float> top2_margin;      // every prompt position
  std::vector<float> greedy_margin;    // every greedy step (step 0 = last prompt position)
  std::vector<int> positions;          // rows of `logits`
  std::vector<float> logits;           // [positions.size(), vocab]
  nlohmann::json messages;             // chat cases: the conversation the prompt renders
};

std::string golden_path(const std::string& file) { return test::testdata_path("models/goldens/" + file); }

GoldenCase load_case(const std::string& model, const std::string& name) {
  const auto j = nlohmann::json::parse(test::read_file(golden_path(model + ".json")));
  const auto& c = j["cases"][name];
  GoldenCase g;
  g.prompt_ids = c["prompt_ids"].get<std::vector<int>>();
  g.greedy_32 = c["greedy_32"].get<std::vector<int>>();
  g.argmax = c["logits_all_argmax"].get<std::vector<int>>();
  g.top2_margin = c["logits_all_top2_margin"].get<std::vector<float>>();
  g.greedy_margin = c["greedy_32_top2_margin"].get<std::vector<float>>();
  if (c.contains("messages")) g.messages = c["messages"];
  std::string file;
  if (c.contains("logits_sel_file")) {
    file = c["logits_sel_file"].get<std::string>();
    g.positions = c["logits_sel_positions"].get<std::vector<int>>();
  } else {
    file = c["logits_all_file"].get<std::string>();
    for (size_t p = 0; p < g.prompt_ids.size(); ++p) g.positions.push_back(int(p));
  }
  const std::string raw = test::read_file(golden_path(file));
  g.logits.resize(raw.size() / sizeof(float));
  std::memcpy(g.logits.data(), raw.data(), g.logits.size() * sizeof(float));
  return g;
}

// ---- The folder as a GGUF file ------------------------------------------------------------------

// HF tensor name → llama.cpp's, by the suffix after "model.layers.<i>." (or the whole name).
std::string gguf_name(const std::string& hf, bool sandwich_norms) {
  static const std::pair<const char*, const char*> kLayer[] = {
      {"input_layernorm.weight", "attn_norm.weight"},      {"self_attn.q_proj.weight", "attn_q.weight"},
      {"self_attn.k_proj.weight", "attn_k.weight"},        {"self_attn.v_proj.weight", "attn_v.weight"},
      {"self_attn.q_proj.bias", "attn_q.bias"},            {"self_attn.k_proj.bias", "attn_k.bias"},
      {"self_attn.v_proj.bias", "attn_v.bias"},            {"self_attn.o_proj.weight", "attn_output.weight"},
      {"self_attn.q_norm.weight", "attn_q_norm.weight"},   {"self_attn.k_norm.weight", "attn_k_norm.weight"},
      {"self_attn.qkv_proj.weight", "attn_qkv.weight"},    {"pre_feedforward_layernorm.weight", "ffn_norm.weight"},
      {"post_feedforward_layernorm.weight", "post_ffw_norm.weight"}, {"mlp.gate_proj.weight", "ffn_gate.weight"},
      {"mlp.up_proj.weight", "ffn_up.weight"},             {"mlp.down_proj.weight", "ffn_down.weight"},
      {"mlp.gate_up_proj.weight", "ffn_up.weight"}};
  if (hf == "model.embed_tokens.weight") return "token_embd.weight";
  if (hf == "model.norm.weight") return "output_norm.weight";
  if (hf == "lm_head.weight") return "output.weight";
  const std::string prefix = "model.layers.";
  const size_t dot = hf.find('.', prefix.size());
  const std::string blk = "blk." + hf.substr(prefix.size(), dot - prefix.size()) + ".";
  const std::string leaf = hf.substr(dot + 1);
  if (leaf == "post_attention_layernorm.weight")
    return blk + (sandwich_norms ? "post_attention_norm.weight" : "ffn_norm.weight");
  for (const auto& [from, to] : kLayer)
    if (leaf == from) return blk + to;
  ADD_FAILURE() << "no GGUF name for " << hf;
  return hf;
}

std::string f32_bytes(const std::vector<float>& v) {
  return std::string(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(float));
}

// Writes models/<model> as <dir>/<model>.gguf and returns its path.
std::string write_gguf(const std::string& model, const std::string& dir) {
  using gguf::ValueType;
  const std::string folder = test::testdata_path("models/" + model);
  const auto config = nlohmann::json::parse(test::read_file(folder + "/config.json"));
  const std::string type = config["model_type"].get<std::string>();
  const std::string arch = type == "gemma3_text" ? "gemma3" : type;
  const bool gemma = arch == "gemma3";
  const int dim = config["hidden_size"], n_heads = config["num_attention_heads"];
  const int n_kv_heads = config["num_key_value_heads"];
  const int head_dim = config.contains("head_dim") ? config["head_dim"].get<int>() : dim / n_heads;
  GgufWriter w;
  auto u32 = [&](const std::string& key, uint32_t v) { w.kv(key, ValueType::U32, GgufWriter::u32(v)); };
  auto f32 = [&](const std::string& key, float v) { w.kv(key, ValueType::F32, f32_bytes({v})); };
  w.kv("general.architecture", ValueType::String, GgufWriter::str(arch));
  u32(arch + ".block_count", config["num_hidden_layers"]);
  u32(arch + ".embedding_length", uint32_t(dim));
  u32(arch + ".feed_forward_length", config["intermediate_size"]);
  u32(arch + ".attention.head_count", uint32_t(n_heads));
  u32(arch + ".attention.head_count_kv", uint32_t(n_kv_heads));
  u32(arch + ".attention.key_length", uint32_t(head_dim));
  u32(arch + ".attention.value_length", uint32_t(head_dim));
  u32(arch + ".context_length", config["max_position_embeddings"]);
  f32(arch + ".attention.layer_norm_rms_epsilon", config["rms_norm_eps"].get<float>());
  f32(arch + ".rope.freq_base", config["rope_theta"].get<float>());
  if (config.contains("sliding_window") && config["sliding_window"].is_number() && (gemma || arch == "phi3"))
    u32(arch + ".attention.sliding_window", config["sliding_window"]);

  // The stand-in SentencePiece vocabulary of vocab_size pieces (as tokenizer.ggml.*).
  synth::Spec spec;
  spec.vocab_size = config["vocab_size"].get<int>();
  std::string proto;
  EXPECT_TRUE(synth::vocabulary_proto(spec, &proto));
  Tokenizer tok;
  EXPECT_TRUE(tok.load(proto));
  std::string tokens = GgufWriter::u32(uint32_t(ValueType::String)) + GgufWriter::u64(uint64_t(tok.vocab_size()));
  std::string scores = GgufWriter::u32(uint32_t(ValueType::F32)) + GgufWriter::u64(uint64_t(tok.vocab_size()));
  std::string types = GgufWriter::u32(uint32_t(ValueType::I32)) + GgufWriter::u64(uint64_t(tok.vocab_size()));
  const synth::SpecialIds ids = synth::special_ids(spec);
  for (int id = 0; id < tok.vocab_size(); ++id) {
    const std::string piece = tok.piece_string(id);
    tokens += GgufWriter::str(piece);
    scores += f32_bytes({-float(id)});
    const bool byte = id >= ids.first_byte && id < ids.first_byte + 256;
    types += GgufWriter::u32(uint32_t(id == ids.unk ? 2 : tok.is_special(id) ? 3 : byte ? 6 : 1));
  }
  w.kv("tokenizer.ggml.model", ValueType::String, GgufWriter::str("llama"));
  w.kv("tokenizer.ggml.tokens", ValueType::Array, tokens);
  w.kv("tokenizer.ggml.scores", ValueType::Array, scores);
  w.kv("tokenizer.ggml.token_type", ValueType::Array, types);
  u32("tokenizer.ggml.bos_token_id", uint32_t(ids.bos));
  u32("tokenizer.ggml.eos_token_id", uint32_t(ids.eos));
  u32("tokenizer.ggml.unknown_token_id", uint32_t(ids.unk));

  // Llama 3's rope_scaling as convert_hf_to_gguf.py writes it: one divisor per frequency.
  if (config.contains("rope_scaling") && config["rope_scaling"].is_object() &&
      config["rope_scaling"].value("rope_type", "") == "llama3") {
    const auto& r = config["rope_scaling"];
    const double factor = r["factor"], low = r["low_freq_factor"], high = r["high_freq_factor"];
    const double original = r["original_max_position_embeddings"];
    const double base = config["rope_theta"];
    std::vector<float> divisors;
    for (int i = 0; i < head_dim / 2; ++i) {
      const double wavelen = 2 * 3.14159265358979323846 * std::pow(base, 2.0 * i / head_dim);
      if (wavelen < original / high) divisors.push_back(1.0f);
      else if (wavelen > original / low) divisors.push_back(float(factor));
      else {
        const double smooth = (original / wavelen - low) / (high - low);
        divisors.push_back(float(1.0 / ((1 - smooth) / factor + smooth)));
      }
    }
    w.tensor("rope_freqs.weight", {uint64_t(head_dim / 2)}, gguf::TensorType::F32, f32_bytes(divisors));
  }

  convert::SafetensorsSet set;
  EXPECT_TRUE(convert::open_safetensors_folder(folder, &set));
  const std::string weights = test::read_file(folder + "/model.safetensors");
  for (const auto& [name, where] : set.by_name) {
    const convert::SafetensorsTensor& t = *where.second;
    EXPECT_EQ(t.dtype, convert::SourceDType::BF16) << name;
    std::string bytes = weights.substr(t.data_offset, t.bytes);
    const std::string to = gguf_name(name, gemma);
    if (t.shape.size() == 1) {  // norms and biases: F32; Gemma's norms hold 1 + w
      std::vector<float> v(t.shape[0]);
      for (size_t i = 0; i < v.size(); ++i) {
        uint16_t h;
        std::memcpy(&h, bytes.data() + 2 * i, 2);
        v[i] = kernels::bf16_to_f32_scalar(h) + (gemma && name.find("norm") != std::string::npos ? 1.0f : 0.0f);
      }
      w.tensor(to, {t.shape[0]}, gguf::TensorType::F32, f32_bytes(v));
      continue;
    }
    const uint64_t rows = t.shape[0], cols = t.shape[1];
    const bool q = name.find("q_proj.weight") != std::string::npos, k = name.find("k_proj.weight") != std::string::npos;
    if (arch == "llama" && (q || k)) {
      // llama.cpp's permute: per head, row j * half + i (rotate-half) moves to row 2 i + j.
      const std::string hf_rows = bytes;
      const uint64_t heads = q ? n_heads : n_kv_heads, half = uint64_t(head_dim) / 2, row_bytes = cols * 2;
      for (uint64_t h = 0; h < heads; ++h)
        for (uint64_t i = 0; i < half; ++i)
          for (uint64_t j = 0; j < 2; ++j)
            bytes.replace((h * head_dim + 2 * i + j) * row_bytes, row_bytes,
                          hf_rows, (h * head_dim + j * half + i) * row_bytes, row_bytes);
    }
    w.tensor(to, {cols, rows}, gguf::TensorType::BF16, bytes);
  }
  const std::string path = dir + "/" + model + ".gguf";
  std::ofstream(path, std::ios::binary) << w.finish();
  return path;
}

// Converted files, once per process, source and type; removed at exit.
struct ConvertedModels {
  std::string dir = test::make_temp_dir("modern");
  std::map<std::string, std::string> paths;
  ~ConvertedModels() { test::remove_tree(dir); }

  std::string get(const std::string& model, WeightType type, bool from_gguf = false) {
    const std::string key = model + (from_gguf ? ".gguf." : ".") + weight_type_name(type);
    if (auto it = paths.find(key); it != paths.end()) return it->second;
    const std::string out = dir + "/" + key + ".mgn";
    ConvertOptions options;
    options.weight_type = type;
    const std::string source = from_gguf ? write_gguf(model, dir) : test::testdata_path("models/" + model);
    const Status s = convert_model(source, out, options);
    EXPECT_TRUE(s) << s.message();
    return paths[key] = s ? out : "";
  }
};

ConvertedModels& converted() {
  static ConvertedModels models;
  return models;
}

using Loaded = test::LoadedModel;

bool load(const std::string& model, WeightType type, Loaded* out, bool from_gguf = false) {
  const std::string path = converted().get(model, type, from_gguf);
  return !path.empty() && test::load_with_session(path, out);
}

int argmax(const float* x, int n) { return static_cast<int>(std::max_element(x, x + n) - x); }

struct Comparison {
  double max_diff = 0;
  int argmax_checked = 0, argmax_agree = 0;
};

// Our logits of the golden's stored positions against its rows; the argmax of every position
// compared where the golden top-2 margin exceeds twice `tolerance`.
Comparison compare_logits(Session& session, const GoldenCase& g, int vocab, double tolerance) {
  std::vector<float> logits;
  EXPECT_TRUE(session.evaluate(g.prompt_ids, &logits));
  EXPECT_EQ(logits.size(), g.prompt_ids.size() * size_t(vocab));
  EXPECT_EQ(g.logits.size(), g.positions.size() * size_t(vocab));
  Comparison c;
  if (logits.size() != g.prompt_ids.size() * size_t(vocab) || g.logits.size() != g.positions.size() * size_t(vocab))
    return c;
  for (size_t row = 0; row < g.positions.size(); ++row) {
    const int p = g.positions[row];
    const float* ours = logits.data() + size_t(p) * vocab;
    const float* ref = g.logits.data() + row * vocab;
    for (int i = 0; i < vocab; ++i) c.max_diff = std::max(c.max_diff, std::fabs(double(ours[i]) - ref[i]));
  }
  // Every position's argmax (the goldens list it for the positions whose logits they do not keep).
  for (size_t p = 0; p < g.prompt_ids.size(); ++p) {
    if (g.top2_margin[p] <= 2 * tolerance) continue;
    ++c.argmax_checked;
    c.argmax_agree += argmax(logits.data() + p * vocab, vocab) == g.argmax[p];
  }
  return c;
}

class ModernGolden : public ::testing::TestWithParam<std::tuple<const char*, const char*>> {};

TEST_P(ModernGolden, F32LogitsMatch) {
  const auto [model, case_name] = GetParam();
  MAGNETAR_REQUIRE_TESTDATA(std::string("models/") + model);
  const GoldenCase g = load_case(model, case_name);
  Loaded m;
  ASSERT_TRUE(load(model, WeightType::F32, &m));
  const int vocab = m.model->info().vocab_size;
  const Comparison c = compare_logits(*m.session, g, vocab, kF32LogitTolerance);
  std::printf("[ measured ] %s/%s f32: max |logit diff| = %.3g over %zu positions\n", model, case_name,
              c.max_diff, g.positions.size());
  EXPECT_LE(c.max_diff, kF32LogitTolerance);
  EXPECT_EQ(c.argmax_agree, c.argmax_checked);
}

// The same weights through the GGUF importer: the same goldens.
TEST_P(ModernGolden, GgufF32LogitsMatch) {
  const auto [model, case_name] = GetParam();
  MAGNETAR_REQUIRE_TESTDATA(std::string("models/") + model);
  const GoldenCase g = load_case(model, case_name);
  Loaded m;
  ASSERT_TRUE(load(model, WeightType::F32, &m, /*from_gguf=*/true));
  const Comparison c = compare_logits(*m.session, g, m.model->info().vocab_size, kF32LogitTolerance);
  std::printf("[ measured ] %s/%s gguf f32: max |logit diff| = %.3g\n", model, case_name, c.max_diff);
  EXPECT_LE(c.max_diff, kF32LogitTolerance);
  EXPECT_EQ(c.argmax_agree, c.argmax_checked);
}

TEST_P(ModernGolden, F32Greedy32Match) {
  const auto [model, case_name] = GetParam();
  MAGNETAR_REQUIRE_TESTDATA(std::string("models/") + model);
  const GoldenCase g = load_case(model, case_name);
  Loaded m;
  ASSERT_TRUE(load(model, WeightType::F32, &m));
  EXPECT_EQ(test::greedy_tokens(*m.session, g.prompt_ids, 32), g.greedy_32);
}

// The chat case's messages rendered by the converted model's own template (the one the
// converter copied from tokenizer_config.json) and tokenized by its own tokenizer: exactly the
// golden's ids, which transformers' apply_chat_template gives (add_generation_prompt).
class ModernChatPrompt : public ::testing::TestWithParam<const char*> {};

TEST_P(ModernChatPrompt, IdsFromTheModelsOwnTemplate) {
  const char* model = GetParam();
  MAGNETAR_REQUIRE_TESTDATA(std::string("models/") + model);
  const GoldenCase g = load_case(model, "chat");
  ASSERT_TRUE(g.messages.is_array() && !g.messages.empty());
  Loaded m;
  ASSERT_TRUE(load(model, WeightType::F32, &m));
  EXPECT_EQ(m.model->info().chat_template_origin, "model file");
  std::vector<ChatMessage> messages;
  for (const auto& msg : g.messages) messages.push_back({msg["role"], msg["content"]});
  std::vector<int> ids;
  const Status s = m.model->apply_chat_template(messages, /*add_generation_prompt=*/true, &ids);
  ASSERT_TRUE(s) << s.message();
  EXPECT_EQ(ids, g.prompt_ids);
}

// F16 and Q8_0 conversions: logits within their budgets, argmax where the margin allows, and the
// greedy continuation up to the first step whose golden margin is within the budget.
void check_reduced_precision(const char* model, const char* case_name, WeightType type, double tolerance) {
  const GoldenCase g = load_case(model, case_name);
  Loaded m;
  ASSERT_TRUE(load(model, type, &m));
  const int vocab = m.model->info().vocab_size;
  const Comparison c = compare_logits(*m.session, g, vocab, tolerance);
  m.session->reset();
  const std::vector<int> tokens = test::greedy_tokens(*m.session, g.prompt_ids, 32);
  ASSERT_EQ(tokens.size(), 32u);
  int safe_steps = 0;  // steps before the first whose margin the budget could flip
  while (safe_steps < 32 && g.greedy_margin[safe_steps] > 2 * tolerance) ++safe_steps;
  int agree = 0;
  while (agree < 32 && tokens[agree] == g.greedy_32[agree]) ++agree;
  std::printf("[ measured ] %s/%s %s: max |logit diff| = %.3g, argmax %d/%d, greedy prefix %d/32 (%d safe)\n",
              model, case_name, weight_type_name(type), c.max_diff, c.argmax_agree, c.argmax_checked, agree,
              safe_steps);
  EXPECT_LE(c.max_diff, tolerance);
  EXPECT_EQ(c.argmax_agree, c.argmax_checked);
  EXPECT_GE(agree, safe_steps);
}

TEST_P(ModernGolden, F16LogitsStayWithinBudget) {
  const auto [model, case_name] = GetParam();
  MAGNETAR_REQUIRE_TESTDATA(std::string("models/") + model);
  check_reduced_precision(model, case_name, WeightType::F16, kF16LogitTolerance);
}

TEST_P(ModernGolden, Q8LogitsStayWithinBudget) {
  const auto [model, case_name] = GetParam();
  MAGNETAR_REQUIRE_TESTDATA(std::string("models/") + model);
  check_reduced_precision(model, case_name, WeightType::Q8_0, kQ8LogitTolerance);
}

std::string test_name(const std::string& model, const std::string& case_name) {
  std::string name = model + "_" + case_name;
  std::replace(name.begin(), name.end(), '-', '_');
  return name;
}

INSTANTIATE_TEST_SUITE_P(Models, ModernGolden,
                         ::testing::Values(std::make_tuple("tiny-llama31", "chat"),
                                           std::make_tuple("tiny-llama31", "bos_only"),
                                           std::make_tuple("tiny-qwen25", "chat"),
                                           std::make_tuple("tiny-qwen25", "short"),
                                           std::make_tuple("tiny-qwen3", "chat"),
                                           std::make_tuple("tiny-qwen3", "short"),
                                           std::make_tuple("tiny-gemma3", "chat"),
                                           std::make_tuple("tiny-gemma3", "bos_only"),
                                           std::make_tuple("tiny-phi3", "chat"),
                                           std::make_tuple("tiny-phi3", "bos_only")),
                         [](const auto& info) {
                           return test_name(std::get<0>(info.param), std::get<1>(info.param));
                         });

INSTANTIATE_TEST_SUITE_P(Models, ModernChatPrompt,
                         ::testing::Values("tiny-llama31", "tiny-qwen25", "tiny-qwen3", "tiny-gemma3", "tiny-phi3"),
                         [](const auto& info) { return test_name(info.param, "chat"); });

}  // namespace
}  // namespace magnetar
