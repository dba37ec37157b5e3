// GGUF → Magnetar end to end: convert the tiny Llama GGUF (F32 output), load it with the engine
// and compare its teacher-forced logits with an independent double-precision forward pass written
// here with llama.cpp's conventions — GGUF tensors used as stored, q/k rows in their interleaved
// order with GPT-J-style RoPE on adjacent pairs. Agreement proves the q/k row permutation, the
// norms and the tensor mapping of the importer. The file's random weights are so small that
// attention would be uniform (and RoPE invisible), so the test converts a copy whose q/k/v/o
// weights are scaled up and whose attention norm is 1: then a wrong q/k order fails.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <memory>
#include <vector>

#include "common/gguf_writer.h"
#include "common/testdata.h"
#include "convert/gguf_reader.h"
#include "kernels/kernels.h"
#include "kernels/quant.h"
#include "format/model_reader.h"
#include <random>
#include "magnetar/convert.h"
#include "magnetar/engine.h"
#include "convert/safetensors.h"
#include "tokenizer/tokenizer.h"
#include <map>
#include <nlohmann/json.hpp>

namespace magnetar {
namespace {

const char kTinyLlama[] = "gguf/llama-2-tiny-random.gguf";
// FP32 engine vs float64 reference on a one-layer model: rounding only.
constexpr double kLogitTolerance = 2e-4;

using Vec = std::vector<double>;

struct RefModel {
  const gguf::File* f;
  int dim, hidden, n_heads, n_kv_heads, head_dim, vocab;
  double eps, theta;

  Vec row(const std::string& name, int64_t r) const {  // one row of a 2-D tensor (or a vector)
    const gguf::Tensor* t = f->find_tensor(name);
    const int64_t cols = int64_t(t->ne[0]);
    Vec out(static_cast<size_t>(cols));
    if (t->ggml_type == uint32_t(gguf::TensorType::Q8_0) || t->ggml_type == uint32_t(gguf::TensorType::Q4_0)) {
      const bool q8 = t->ggml_type == uint32_t(gguf::TensorType::Q8_0);
      const int64_t rb = q8 ? quant::row_bytes_q8_0(cols) : quant::row_bytes_q4_0(cols);
      std::vector<uint8_t> blocks(t->data + r * rb, t->data + (r + 1) * rb);  // aligned copy
      std::vector<float> values(static_cast<size_t>(cols));
      if (q8)
        quant::dequantize_row_q8_0(reinterpret_cast<const quant::BlockQ8_0*>(blocks.data()), values.data(), cols);
      else
        quant::dequantize_row_q4_0(reinterpret_cast<const quant::BlockQ4_0*>(blocks.data()), values.data(), cols);
      for (int64_t c = 0; c < cols; ++c) out[size_t(c)] = values[size_t(c)];
      return out;
    }
    for (int64_t c = 0; c < cols; ++c) {
      const int64_t i = r * cols + c;
      if (t->ggml_type == uint32_t(gguf::TensorType::F16)) {
        uint16_t h;
        std::memcpy(&h, t->data + 2 * i, 2);
        out[size_t(c)] = kernels::f16_to_f32_scalar(h);
      } else {
        float v;
        std::memcpy(&v, t->data + 4 * i, 4);
        out[size_t(c)] = v;
      }
    }
    return out;
  }
  Vec matvec(const std::string& name, const Vec& x) const {
    const gguf::Tensor* t = f->find_tensor(name);
    Vec y(size_t(t->ne[1]));
    for (int64_t r = 0; r < int64_t(t->ne[1]); ++r) {
      const Vec w = row(name, r);
      double s = 0;
      for (size_t c = 0; c < w.size(); ++c) s += w[c] * x[c];
      y[size_t(r)] = s;
    }
    return y;
  }
  Vec rmsnorm(const Vec& x, const std::string& weight) const {
    double ss = 0;
    for (double v : x) ss += v * v;
    const double scale = 1.0 / std::sqrt(ss / double(x.size()) + eps);
    const Vec w = row(weight, 0);
    Vec out(x.size());
    for (size_t i = 0; i < x.size(); ++i) out[i] = x[i] * scale * w[i];
    return out;
  }
  // llama.cpp's LLAMA_ROPE_TYPE_NORM: rotates adjacent pairs (2i, 2i + 1) of every head.
  void rope_adjacent_pairs(Vec* x, int heads, int pos) const {
    for (int h = 0; h < heads; ++h)
      for (int i = 0; i < head_dim / 2; ++i) {
        const double angle = pos * std::pow(theta, -2.0 * i / head_dim);
        double& a = (*x)[size_t(h * head_dim + 2 * i)];
        double& b = (*x)[size_t(h * head_dim + 2 * i + 1)];
        const double a0 = a, b0 = b;
        a = a0 * std::cos(angle) - b0 * std::sin(angle);
        b = a0 * std::sin(angle) + b0 * std::cos(angle);
      }
  }

  std::vector<Vec> logits(const std::vector<int>& tokens) const {
    std::vector<Vec> keys, values, out;
    for (size_t p = 0; p < tokens.size(); ++p) {
      Vec x = row("token_embd.weight", tokens[p]);
      const Vec h = rmsnorm(x, "blk.0.attn_norm.weight");
      Vec q = matvec("blk.0.attn_q.weight", h), k = matvec("blk.0.attn_k.weight", h);
      const Vec v = matvec("blk.0.attn_v.weight", h);
      rope_adjacent_pairs(&q, n_heads, int(p));
      rope_adjacent_pairs(&k, n_kv_heads, int(p));
      keys.push_back(k);
      values.push_back(v);
      Vec attn(size_t(n_heads * head_dim), 0.0);
      for (int hd = 0; hd < n_heads; ++hd) {
        const int kvh = hd / (n_heads / n_kv_heads);
        Vec scores(p + 1);
        double max_score = -1e300;
        for (size_t j = 0; j <= p; ++j) {
          double s = 0;
          for (int i = 0; i < head_dim; ++i) s += q[size_t(hd * head_dim + i)] * keys[j][size_t(kvh * head_dim + i)];
          scores[j] = s / std::sqrt(double(head_dim));
          max_score = std::max(max_score, scores[j]);
        }
        double total = 0;
        for (double& s : scores) total += (s = std::exp(s - max_score));
        for (size_t j = 0; j <= p; ++j)
          for (int i = 0; i < head_dim; ++i)
            attn[size_t(hd * head_dim + i)] += scores[j] / total * values[j][size_t(kvh * head_dim + i)];
      }
      const Vec o = matvec("blk.0.attn_output.weight", attn);
      for (size_t i = 0; i < x.size(); ++i) x[i] += o[i];
      const Vec h2 = rmsnorm(x, "blk.0.ffn_norm.weight");
      const Vec g = matvec("blk.0.ffn_gate.weight", h2), u = matvec("blk.0.ffn_up.weight", h2);
      Vec act(g.size());
      for (size_t i = 0; i < g.size(); ++i) act[i] = g[i] / (1.0 + std::exp(-g[i])) * u[i];
      const Vec d = matvec("blk.0.ffn_down.weight", act);
      for (size_t i = 0; i < x.size(); ++i) x[i] += d[i];
      out.push_back(matvec("output.weight", rmsnorm(x, "output_norm.weight")));
    }
    return out;
  }
};

// The tiny file with attention made sharp: q/k/v/o weights × scale, attention norm = 1.
std::string sharpened_copy(const std::string& original) {
  std::string bytes = original;
  gguf::File f;
  EXPECT_TRUE(gguf::parse(reinterpret_cast<const uint8_t*>(original.data()), original.size(), &f).is_ok());
  const std::pair<const char*, float> scaled[] = {{"blk.0.attn_q.weight", 40.0f}, {"blk.0.attn_k.weight", 40.0f},
                                                  {"blk.0.attn_v.weight", 10.0f}, {"blk.0.attn_output.weight", 10.0f}};
  for (const auto& [name, scale] : scaled) {
    const gguf::Tensor* t = f.find_tensor(name);
    for (uint64_t i = 0; i < t->n_elements; ++i) {
      uint16_t h;
      std::memcpy(&h, bytes.data() + t->offset + 2 * i, 2);
      h = kernels::f32_to_f16_scalar(kernels::f16_to_f32_scalar(h) * scale);
      std::memcpy(bytes.data() + t->offset + 2 * i, &h, 2);
    }
  }
  const gguf::Tensor* norm = f.find_tensor("blk.0.attn_norm.weight");
  for (uint64_t i = 0; i < norm->n_elements; ++i) {
    const float one = 1.0f;
    std::memcpy(bytes.data() + norm->offset + 4 * i, &one, 4);
  }
  return bytes;
}

TEST(GgufConvert, TinyLlamaLogitsMatchIndependentForwardPass) {
  MAGNETAR_REQUIRE_TESTDATA(kTinyLlama);
  const std::string dir = test::make_temp_dir("gguf_convert");
  const std::string source = dir + "/sharp.gguf";
  const std::string bytes = sharpened_copy(test::read_file(test::testdata_path(kTinyLlama)));
  {
    FILE* file = std::fopen(source.c_str(), "wb");
    ASSERT_NE(file, nullptr);
    ASSERT_EQ(std::fwrite(bytes.data(), 1, bytes.size(), file), bytes.size());
    std::fclose(file);
  }
  const std::string out = dir + "/tiny.mgn";
  ConvertOptions options;
  options.weight_type = WeightType::F32;
  Status s = convert_model(source, out, options);
  ASSERT_TRUE(s.is_ok()) << s.message();

  std::unique_ptr<Model> model;
  s = Model::load(out, LoadOptions{}, &model);
  ASSERT_TRUE(s.is_ok()) << s.message();
  std::unique_ptr<Session> session;
  ASSERT_TRUE(Session::create(*model, &session).is_ok());
  std::vector<int> tokens;
  ASSERT_TRUE(model->tokenize("Once upon a time, there was a little robot", true, &tokens).is_ok());
  ASSERT_GE(tokens.size(), 8u);
  EXPECT_EQ(tokens[0], 1);
  std::vector<float> logits;
  s = session->evaluate(tokens, &logits);
  ASSERT_TRUE(s.is_ok()) << s.message();

  gguf::File f;
  ASSERT_TRUE(gguf::parse(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(), &f).is_ok());
  const RefModel ref{&f, 8, 32, 2, 2, 4, 32000, 1e-5, 10000.0};
  const auto want = ref.logits(tokens);
  ASSERT_EQ(logits.size(), tokens.size() * 32000u);
  double worst = 0;
  for (size_t p = 0; p < tokens.size(); ++p)
    for (size_t v = 0; v < 32000; ++v) {
      const double diff = std::fabs(double(logits[p * 32000 + v]) - want[p][v]);
      worst = std::max(worst, diff / std::max(1.0, std::fabs(want[p][v])));
    }
  EXPECT_LE(worst, kLogitTolerance) << "largest relative logit difference";
  test::remove_tree(dir);
}

// ---- A GGUF with Q8_0 / Q4_0 tensors -----------------------------------------------------------

// A one-layer llama (dim 32, 2 heads of 16, hidden 64) with the tiny file's vocabulary and
// random weights; matrices in `type` except the F16 embedding, norms F32. Attention is sharp.
std::string quantized_gguf(const gguf::File& vocab_source, gguf::TensorType type) {
  using gguf::ValueType;
  GgufWriter w;
  w.kv("general.architecture", ValueType::String, GgufWriter::str("llama"));
  for (auto [key, value] : {std::pair<const char*, uint32_t>{"llama.block_count", 1}, {"llama.embedding_length", 32},
                            {"llama.feed_forward_length", 64}, {"llama.attention.head_count", 2},
                            {"llama.attention.head_count_kv", 2}, {"llama.context_length", 256},
                            {"tokenizer.ggml.bos_token_id", 1}, {"tokenizer.ggml.eos_token_id", 2},
                            {"tokenizer.ggml.unknown_token_id", 0}})
    w.kv(key, ValueType::U32, GgufWriter::u32(value));
  const float eps = 1e-5f;
  w.kv("llama.attention.layer_norm_rms_epsilon", ValueType::F32, std::string(reinterpret_cast<const char*>(&eps), 4));
  w.kv("tokenizer.ggml.model", ValueType::String, GgufWriter::str("llama"));
  std::vector<std::string_view> tokens;
  std::vector<float> scores;
  std::vector<int64_t> types;
  EXPECT_TRUE(vocab_source.get_string_array("tokenizer.ggml.tokens", &tokens).is_ok());
  EXPECT_TRUE(vocab_source.get_f32_array("tokenizer.ggml.scores", &scores).is_ok());
  EXPECT_TRUE(vocab_source.get_i64_array("tokenizer.ggml.token_type", &types).is_ok());
  std::string payload = GgufWriter::u32(uint32_t(ValueType::String)) + GgufWriter::u64(tokens.size());
  for (auto t : tokens) payload += GgufWriter::str(t);
  w.kv("tokenizer.ggml.tokens", ValueType::Array, payload);
  payload = GgufWriter::u32(uint32_t(ValueType::F32)) + GgufWriter::u64(scores.size());
  payload += std::string(reinterpret_cast<const char*>(scores.data()), scores.size() * 4);
  w.kv("tokenizer.ggml.scores", ValueType::Array, payload);
  payload = GgufWriter::u32(uint32_t(ValueType::I32)) + GgufWriter::u64(types.size());
  for (int64_t t : types) payload += GgufWriter::u32(uint32_t(int32_t(t)));
  w.kv("tokenizer.ggml.token_type", ValueType::Array, payload);

  std::mt19937 rng(77);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  auto matrix = [&](const std::string& name, uint64_t rows, uint64_t cols, float scale, gguf::TensorType t) {
    std::vector<float> v(rows * cols);
    for (float& x : v) x = normal(rng) * scale;
    std::string data;
    if (t == gguf::TensorType::F16) {
      for (float x : v) {
        const uint16_t h = kernels::f32_to_f16_scalar(x);
        data += std::string(reinterpret_cast<const char*>(&h), 2);
      }
    } else if (t == gguf::TensorType::Q8_0) {
      std::vector<quant::BlockQ8_0> b(rows * cols / 32);
      quant::quantize_row_q8_0(v.data(), b.data(), int64_t(rows * cols));
      data.assign(reinterpret_cast<const char*>(b.data()), b.size() * sizeof(quant::BlockQ8_0));
    } else {
      std::vector<quant::BlockQ4_0> b(rows * cols / 32);
      quant::quantize_row_q4_0(v.data(), b.data(), int64_t(rows * cols));
      data.assign(reinterpret_cast<const char*>(b.data()), b.size() * sizeof(quant::BlockQ4_0));
    }
    w.tensor(name, {cols, rows}, t, data);
  };
  auto norm = [&](const std::string& name) {
    std::string data;
    for (int i = 0; i < 32; ++i) {
      const float x = 1.0f + 0.1f * normal(rng);
      data += std::string(reinterpret_cast<const char*>(&x), 4);
    }
    w.tensor(name, {32}, gguf::TensorType::F32, data);
  };
  matrix("token_embd.weight", tokens.size(), 32, 1.0f, gguf::TensorType::F16);
  norm("blk.0.attn_norm.weight");
  matrix("blk.0.attn_q.weight", 32, 32, 0.5f, type);
  matrix("blk.0.attn_k.weight", 32, 32, 0.5f, type);
  matrix("blk.0.attn_v.weight", 32, 32, 0.3f, type);
  matrix("blk.0.attn_output.weight", 32, 32, 0.3f, type);
  norm("blk.0.ffn_norm.weight");
  matrix("blk.0.ffn_gate.weight", 64, 32, 0.3f, type);
  matrix("blk.0.ffn_up.weight", 64, 32, 0.3f, type);
  matrix("blk.0.ffn_down.weight", 32, 64, 0.3f, type);
  norm("output_norm.weight");
  matrix("output.weight", tokens.size(), 32, 0.3f, type);
  return w.finish();
}

// Q8_0 / Q4_0 GGUF tensors: converted to F32 they are the dequantized values (logits match the
// reference forward pass on the dequantized GGUF weights); converted to the same block type
// they are the same blocks, with q/k rows moved whole (compared with the F32 conversion).
TEST(GgufConvert, QuantizedTensorsDequantizeOrCopyBlockForBlock) {
  MAGNETAR_REQUIRE_TESTDATA(kTinyLlama);
  const std::string tiny = test::read_file(test::testdata_path(kTinyLlama));
  gguf::File vocab;
  ASSERT_TRUE(gguf::parse(reinterpret_cast<const uint8_t*>(tiny.data()), tiny.size(), &vocab).is_ok());
  const std::string dir = test::make_temp_dir("gguf_quant");
  for (gguf::TensorType type : {gguf::TensorType::Q8_0, gguf::TensorType::Q4_0}) {
    const bool q8 = type == gguf::TensorType::Q8_0;
    SCOPED_TRACE(q8 ? "Q8_0" : "Q4_0");
    const std::string bytes = quantized_gguf(vocab, type);
    const std::string source = dir + (q8 ? "/q8.gguf" : "/q4.gguf");
    {
      FILE* file = std::fopen(source.c_str(), "wb");
      ASSERT_NE(file, nullptr);
      ASSERT_EQ(std::fwrite(bytes.data(), 1, bytes.size(), file), bytes.size());
      std::fclose(file);
    }
    gguf::File f;
    ASSERT_TRUE(gguf::parse(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(), &f).is_ok());

    // F32 conversion: logits against the reference on the dequantized GGUF weights.
    ConvertOptions options;
    options.weight_type = WeightType::F32;
    const std::string f32_path = dir + "/f32.mgn";
    Status s = convert_model(source, f32_path, options);
    ASSERT_TRUE(s.is_ok()) << s.message();
    std::unique_ptr<Model> model;
    ASSERT_TRUE(Model::load(f32_path, LoadOptions{}, &model).is_ok());
    std::unique_ptr<Session> session;
    ASSERT_TRUE(Session::create(*model, &session).is_ok());
    std::vector<int> tokens;
    ASSERT_TRUE(model->tokenize("The quick brown fox jumps over the lazy dog", true, &tokens).is_ok());
    std::vector<float> logits;
    ASSERT_TRUE(session->evaluate(tokens, &logits).is_ok());
    const RefModel ref{&f, 32, 64, 2, 2, 16, 32000, 1e-5, 10000.0};
    const auto want = ref.logits(tokens);
    double worst = 0;
    for (size_t p = 0; p < tokens.size(); ++p)
      for (size_t v = 0; v < 32000; ++v)
        worst = std::max(worst, std::fabs(double(logits[p * 32000 + v]) - want[p][v]) / std::max(1.0, std::fabs(want[p][v])));
    EXPECT_LE(worst, kLogitTolerance);

    // Same-type conversion: every quantized matrix is the F32 conversion's values, exactly.
    options.weight_type = q8 ? WeightType::Q8_0 : WeightType::Q4_0;
    const std::string q_path = dir + "/q.mgn";
    s = convert_model(source, q_path, options);
    ASSERT_TRUE(s.is_ok()) << s.message();
    const std::string f32_bytes = test::read_file(f32_path), q_bytes = test::read_file(q_path);
    format::ModelFileView fv, qv;
    ASSERT_TRUE(format::parse_model_file(reinterpret_cast<const uint8_t*>(f32_bytes.data()), f32_bytes.size(), &fv).is_ok());
    ASSERT_TRUE(format::parse_model_file(reinterpret_cast<const uint8_t*>(q_bytes.data()), q_bytes.size(), &qv).is_ok());
    int checked = 0;
    for (const char* name : {"layers.0.wqkv", "layers.0.wo", "layers.0.w_gate_up", "layers.0.w_down", "output"}) {
      const format::TensorView* a = fv.find(name);
      const format::TensorView* b = qv.find(name);
      ASSERT_NE(a, nullptr);
      ASSERT_NE(b, nullptr);
      ASSERT_EQ(b->dtype, q8 ? format::DType::Q8_0 : format::DType::Q4_0) << name;
      const int64_t cols = int64_t(a->cols);
      const int64_t rb = q8 ? quant::row_bytes_q8_0(cols) : quant::row_bytes_q4_0(cols);
      std::vector<float> deq(static_cast<size_t>(cols)), f32row(static_cast<size_t>(cols));
      for (uint64_t r = 0; r < a->rows; ++r) {
        std::vector<uint8_t> blocks(b->data + r * rb, b->data + (r + 1) * rb);
        if (q8)
          quant::dequantize_row_q8_0(reinterpret_cast<const quant::BlockQ8_0*>(blocks.data()), deq.data(), cols);
        else
          quant::dequantize_row_q4_0(reinterpret_cast<const quant::BlockQ4_0*>(blocks.data()), deq.data(), cols);
        std::memcpy(f32row.data(), a->data + r * uint64_t(cols) * 4, size_t(cols) * 4);
        ASSERT_EQ(deq, f32row) << name << " row " << r;
      }
      ++checked;
    }
    EXPECT_EQ(checked, 5);
  }
  test::remove_tree(dir);
}

// ---- Gemma: a GGUF written the way llama.cpp writes tiny-gemma ---------------------------------

// tiny-gemma's safetensors as a GGUF: llama.cpp's tensor names, BF16 matrices copied as they
// are, norms as F32 with the "1 +" folded in, no q/k permutation (NeoX RoPE), tied embeddings.
std::string gemma_gguf(const std::string& folder) {
  using gguf::ValueType;
  convert::SafetensorsSet set;
  EXPECT_TRUE(convert::open_safetensors_folder(folder, &set).is_ok());
  std::map<std::string, std::string> file_bytes;
  auto tensor_bytes = [&](const std::string& name) {
    const convert::SafetensorsFile* file = nullptr;
    const convert::SafetensorsTensor* t = set.find(name, &file);
    EXPECT_NE(t, nullptr) << name;
    if (t == nullptr) return std::string();
    if (!file_bytes.count(file->path)) file_bytes[file->path] = test::read_file(file->path);
    EXPECT_EQ(t->dtype, convert::SourceDType::BF16);
    return file_bytes[file->path].substr(t->data_offset, t->bytes);
  };
  GgufWriter w;
  w.kv("general.architecture", ValueType::String, GgufWriter::str("gemma"));
  for (auto [key, value] : {std::pair<const char*, uint32_t>{"gemma.block_count", 2}, {"gemma.embedding_length", 64},
                            {"gemma.feed_forward_length", 192}, {"gemma.attention.head_count", 4},
                            {"gemma.attention.head_count_kv", 1}, {"gemma.attention.key_length", 32},
                            {"gemma.attention.value_length", 32}, {"gemma.context_length", 512},
                            {"tokenizer.ggml.bos_token_id", 2}, {"tokenizer.ggml.eos_token_id", 1},
                            {"tokenizer.ggml.unknown_token_id", 3}, {"tokenizer.ggml.padding_token_id", 0}})
    w.kv(key, ValueType::U32, GgufWriter::u32(value));
  const float eps = 1e-6f;
  w.kv("gemma.attention.layer_norm_rms_epsilon", ValueType::F32, std::string(reinterpret_cast<const char*>(&eps), 4));
  w.kv("tokenizer.ggml.model", ValueType::String, GgufWriter::str("llama"));
  w.kv("tokenizer.ggml.add_space_prefix", ValueType::Bool, std::string(1, '\0'));
  Tokenizer tok;
  EXPECT_TRUE(tok.load(test::read_file(folder + "/tokenizer.model")).is_ok());
  std::string tokens = GgufWriter::u32(uint32_t(ValueType::String)) + GgufWriter::u64(uint64_t(tok.vocab_size()));
  std::string scores = GgufWriter::u32(uint32_t(ValueType::F32)) + GgufWriter::u64(uint64_t(tok.vocab_size()));
  std::string types = GgufWriter::u32(uint32_t(ValueType::I32)) + GgufWriter::u64(uint64_t(tok.vocab_size()));
  for (int id = 0; id < tok.vocab_size(); ++id) {
    const std::string piece = tok.piece_string(id);
    tokens += GgufWriter::str(piece);
    const float score = -float(id);
    scores += std::string(reinterpret_cast<const char*>(&score), 4);
    const bool byte = piece.size() == 6 && piece.compare(0, 3, "<0x") == 0 && piece.back() == '>';
    const int32_t type = id == 3 ? 2 : tok.is_control(id) ? 3 : byte ? 6 : 1;
    types += GgufWriter::u32(uint32_t(type));
  }
  w.kv("tokenizer.ggml.tokens", ValueType::Array, tokens);
  w.kv("tokenizer.ggml.scores", ValueType::Array, scores);
  w.kv("tokenizer.ggml.token_type", ValueType::Array, types);

  auto norm_plus_one = [&](const std::string& name) {
    const std::string bf16 = tensor_bytes(name);
    std::string out;
    for (size_t i = 0; i + 1 < bf16.size(); i += 2) {
      uint16_t h;
      std::memcpy(&h, bf16.data() + i, 2);
      const float v = kernels::bf16_to_f32_scalar(h) + 1.0f;
      out += std::string(reinterpret_cast<const char*>(&v), 4);
    }
    return out;
  };
  w.tensor("token_embd.weight", {64, 1024}, gguf::TensorType::BF16, tensor_bytes("model.embed_tokens.weight"));
  for (int i = 0; i < 2; ++i) {
    const std::string src = "model.layers." + std::to_string(i) + ".", dst = "blk." + std::to_string(i) + ".";
    w.tensor(dst + "attn_norm.weight", {64}, gguf::TensorType::F32, norm_plus_one(src + "input_layernorm.weight"));
    w.tensor(dst + "attn_q.weight", {64, 128}, gguf::TensorType::BF16, tensor_bytes(src + "self_attn.q_proj.weight"));
    w.tensor(dst + "attn_k.weight", {64, 32}, gguf::TensorType::BF16, tensor_bytes(src + "self_attn.k_proj.weight"));
    w.tensor(dst + "attn_v.weight", {64, 32}, gguf::TensorType::BF16, tensor_bytes(src + "self_attn.v_proj.weight"));
    w.tensor(dst + "attn_output.weight", {128, 64}, gguf::TensorType::BF16,
             tensor_bytes(src + "self_attn.o_proj.weight"));
    w.tensor(dst + "ffn_norm.weight", {64}, gguf::TensorType::F32,
             norm_plus_one(src + "post_attention_layernorm.weight"));
    w.tensor(dst + "ffn_gate.weight", {64, 192}, gguf::TensorType::BF16, tensor_bytes(src + "mlp.gate_proj.weight"));
    w.tensor(dst + "ffn_up.weight", {64, 192}, gguf::TensorType::BF16, tensor_bytes(src + "mlp.up_proj.weight"));
    w.tensor(dst + "ffn_down.weight", {192, 64}, gguf::TensorType::BF16, tensor_bytes(src + "mlp.down_proj.weight"));
  }
  w.tensor("output_norm.weight", {64}, gguf::TensorType::F32, norm_plus_one("model.norm.weight"));
  return w.finish();
}

// The Gemma path of the importer (no q/k permutation, norms taken as stored, tied embeddings,
// sqrt(dim) embedding scale, tanh GELU, head_dim from key_length) against the float64 goldens.
TEST(GgufConvert, GemmaGgufMatchesGoldenLogits) {
  MAGNETAR_REQUIRE_TESTDATA("gemma/tiny-gemma");
  MAGNETAR_REQUIRE_TESTDATA("gemma/goldens/tiny-gemma.chat.logits_all.f32");
  const std::string dir = test::make_temp_dir("gguf_gemma");
  const std::string bytes = gemma_gguf(test::testdata_path("gemma/tiny-gemma"));
  const std::string source = dir + "/tiny-gemma.gguf";
  {
    FILE* file = std::fopen(source.c_str(), "wb");
    ASSERT_NE(file, nullptr);
    ASSERT_EQ(std::fwrite(bytes.data(), 1, bytes.size(), file), bytes.size());
    std::fclose(file);
  }
  ConvertOptions options;
  options.weight_type = WeightType::F32;
  const std::string out = dir + "/tiny-gemma.mgn";
  Status s = convert_model(source, out, options);
  ASSERT_TRUE(s.is_ok()) << s.message();
  std::unique_ptr<Model> model;
  s = Model::load(out, LoadOptions{}, &model);
  ASSERT_TRUE(s.is_ok()) << s.message();
  std::unique_ptr<Session> session;
  ASSERT_TRUE(Session::create(*model, &session).is_ok());
  const auto golden = nlohmann::json::parse(test::read_file(test::testdata_path("gemma/goldens/tiny-gemma.json")));
  const std::vector<int> prompt = golden["cases"]["chat"]["prompt_ids"].get<std::vector<int>>();
  std::vector<float> logits;
  ASSERT_TRUE(session->evaluate(prompt, &logits).is_ok());
  const std::string want_bytes = test::read_file(test::testdata_path("gemma/goldens/tiny-gemma.chat.logits_all.f32"));
  ASSERT_EQ(want_bytes.size(), prompt.size() * 1024 * 4);
  ASSERT_EQ(logits.size(), prompt.size() * 1024);
  double worst = 0;
  for (size_t i = 0; i < logits.size(); ++i) {
    float want;
    std::memcpy(&want, want_bytes.data() + 4 * i, 4);
    worst = std::max(worst, std::fabs(double(logits[i]) - want));
  }
  constexpr double kGemmaF32Tolerance = 2e-4;  // testdata README: ~1e-4 absolute for FP32 engines
  EXPECT_LE(worst, kGemmaF32Tolerance) << "largest absolute logit difference";
  EXPECT_TRUE(model->is_end_of_generation(6));  // <end_of_turn> from the Gemma chat template
  test::remove_tree(dir);
}

}  // namespace
}  // namespace magnetar
