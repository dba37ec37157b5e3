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

#include "common/testdata.h"
#include "convert/gguf_reader.h"
#include "kernels/kernels.h"
#include "magnetar/convert.h"
#include "magnetar/engine.h"

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

}  // namespace
}  // namespace magnetar
