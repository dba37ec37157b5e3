// Quality of quantized weights, measured: each model is converted to f32, q8_0 and q4_0 and
// evaluated teacher-forced over a token sequence; the quantized next-token distributions are
// compared with the f32 model's (mean / max KL divergence, top-1 agreement, perplexity).
//
// Bounds. stories260K q8_0: the bounds (top-1 >= 98%, mean KL <= 1e-3). q4_0: set from
// what was measured, with margin — stories260K (dim 64): mean KL 0.068, top-1 85.6%, perplexity
// 1.61 -> 1.75; 4-bit blocks cost far more on a 64-wide model than on a real one, where each
// output sums thousands of products and the rounding errors average out. tiny-gemma has random
// weights: its distributions are nearly flat (perplexity ~574 of 1024) and the top-2 margins
// tiny, so top-1 agreement mostly measures ties (measured q8_0 97.9%, q4_0 56.8%) and KL is the
// meaningful number (measured q8_0 5.8e-4, q4_0 0.044).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>

#include "common/testdata.h"
#include "magnetar/convert.h"
#include "magnetar/engine.h"

namespace magnetar {
namespace {

struct Bounds {
  double min_top1;     // fraction of positions whose argmax matches f32's
  double max_mean_kl;  // nats
};
constexpr Bounds kQ8StoriesBounds = {0.98, 1e-3};
constexpr Bounds kQ4StoriesBounds = {0.80, 0.10};
constexpr Bounds kQ8GemmaBounds = {0.95, 1e-3};
constexpr Bounds kQ4GemmaBounds = {0.45, 0.07};

struct Quality {
  double mean_kl = 0, max_kl = 0, top1 = 0, ppl_ref = 0, ppl_quant = 0;
};

std::vector<float> evaluate(const std::string& path, const std::vector<int>& tokens) {
  std::unique_ptr<Model> model;
  Status s = Model::load(path, LoadOptions{}, &model);
  EXPECT_TRUE(s.is_ok()) << s.message();
  if (!s.is_ok()) return {};
  std::unique_ptr<Session> session;
  EXPECT_TRUE(Session::create(*model, &session).is_ok());
  std::vector<float> logits;
  s = session->evaluate(tokens, &logits);
  EXPECT_TRUE(s.is_ok()) << s.message();
  return logits;
}

Quality compare(const std::vector<float>& ref, const std::vector<float>& quant, const std::vector<int>& tokens,
                int vocab) {
  Quality q;
  double nll_ref = 0, nll_quant = 0;
  int agree = 0;
  const size_t n = tokens.size();
  for (size_t p = 0; p < n; ++p) {
    const float* a = &ref[p * size_t(vocab)];
    const float* b = &quant[p * size_t(vocab)];
    int arg_a = 0, arg_b = 0;
    for (int i = 1; i < vocab; ++i) {
      if (a[i] > a[arg_a]) arg_a = i;
      if (b[i] > b[arg_b]) arg_b = i;
    }
    double za = 0, zb = 0;
    for (int i = 0; i < vocab; ++i) {
      za += std::exp(double(a[i]) - a[arg_a]);
      zb += std::exp(double(b[i]) - b[arg_b]);
    }
    double kl = 0;
    for (int i = 0; i < vocab; ++i) {
      const double la = double(a[i]) - a[arg_a] - std::log(za), lb = double(b[i]) - b[arg_b] - std::log(zb);
      kl += std::exp(la) * (la - lb);
    }
    q.mean_kl += kl / double(n);
    q.max_kl = std::max(q.max_kl, kl);
    agree += arg_a == arg_b;
    if (p + 1 < n) {
      const int next = tokens[p + 1];
      nll_ref -= double(a[next]) - a[arg_a] - std::log(za);
      nll_quant -= double(b[next]) - b[arg_b] - std::log(zb);
    }
  }
  q.top1 = double(agree) / double(n);
  q.ppl_ref = std::exp(nll_ref / double(n - 1));
  q.ppl_quant = std::exp(nll_quant / double(n - 1));
  return q;
}

void check_quality(const std::string& source, const std::vector<int>& tokens, int vocab, const char* label,
                   const Bounds& q8_bounds, const Bounds& q4_bounds) {
  const std::string dir = test::make_temp_dir("quant_quality");
  std::vector<float> ref;
  for (WeightType type : {WeightType::F32, WeightType::Q8_0, WeightType::Q4_0}) {
    ConvertOptions options;
    options.weight_type = type;
    const std::string path = dir + "/" + weight_type_name(type) + ".mgn";
    const Status s = convert_model(source, path, options);
    ASSERT_TRUE(s.is_ok()) << s.message();
    const std::vector<float> logits = evaluate(path, tokens);
    ASSERT_EQ(logits.size(), tokens.size() * size_t(vocab));
    if (type == WeightType::F32) {
      ref = logits;
      continue;
    }
    const Quality q = compare(ref, logits, tokens, vocab);
    std::printf("%s %s: %zu positions, mean KL %.3g, max KL %.3g, top-1 %.1f%%, perplexity f32 %.4f -> %.4f\n",
                label, weight_type_name(type), tokens.size(), q.mean_kl, q.max_kl, 100 * q.top1, q.ppl_ref,
                q.ppl_quant);
    const Bounds& b = type == WeightType::Q8_0 ? q8_bounds : q4_bounds;
    EXPECT_GE(q.top1, b.min_top1) << label << " " << weight_type_name(type);
    EXPECT_LE(q.mean_kl, b.max_mean_kl) << label << " " << weight_type_name(type);
  }
  test::remove_tree(dir);
}

TEST(QuantQuality, Stories260KOverItsExpectedText) {
  MAGNETAR_REQUIRE_TESTDATA("stories260K-hf/f32");
  MAGNETAR_REQUIRE_TESTDATA("stories260K/greedy_reference.json");
  const auto reference =
      nlohmann::json::parse(test::read_file(test::testdata_path("stories260K/greedy_reference.json")));
  std::vector<int> tokens = reference["prompt_ids"].get<std::vector<int>>();
  for (int id : reference["greedy_ids_200"].get<std::vector<int>>()) tokens.push_back(id);
  check_quality(test::testdata_path("stories260K-hf/f32"), tokens, 512, "stories260K", kQ8StoriesBounds,
                kQ4StoriesBounds);
}

TEST(QuantQuality, TinyGemmaOverItsChatPrompt) {
  MAGNETAR_REQUIRE_TESTDATA("gemma/tiny-gemma");
  MAGNETAR_REQUIRE_TESTDATA("gemma/goldens/tiny-gemma.json");
  const auto golden = nlohmann::json::parse(test::read_file(test::testdata_path("gemma/goldens/tiny-gemma.json")));
  std::vector<int> tokens = golden["cases"]["chat"]["prompt_ids"].get<std::vector<int>>();
  for (int id : golden["cases"]["chat"]["greedy_32"].get<std::vector<int>>()) tokens.push_back(id);
  check_quality(test::testdata_path("gemma/tiny-gemma"), tokens, 1024, "tiny-gemma", kQ8GemmaBounds, kQ4GemmaBounds);
}

}  // namespace
}  // namespace magnetar
