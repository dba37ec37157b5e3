// convert --output-dtype: the embedding table / LM head get their own type, independent of the
// other matrices'. Each tensor must be byte-identical to the same tensor of a conversion done
// entirely in its type, and the mixed model must load and evaluate.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <memory>
#include <vector>

#include "common/testdata.h"
#include "format/model_reader.h"
#include "magnetar/convert.h"
#include "magnetar/engine.h"

namespace magnetar {
namespace {

struct Converted {
  std::string path, bytes;
  format::ModelFileView view;
};

void convert_to(const std::string& source, const std::string& dir, WeightType weights,
                std::optional<WeightType> embeddings, Converted* out) {
  out->path = dir + "/" + weight_type_name(weights) + "-" +
              (embeddings ? weight_type_name(*embeddings) : "same") + ".mgn";
  ConvertOptions options;
  options.weight_type = weights;
  options.output_weight_type = embeddings;
  const Status s = convert_model(source, out->path, options);
  ASSERT_TRUE(s.is_ok()) << s.message();
  out->bytes = test::read_file(out->path);
  ASSERT_TRUE(format::parse_model_file(reinterpret_cast<const uint8_t*>(out->bytes.data()),
                                       out->bytes.size(), &out->view)
                  .is_ok());
}

bool same_tensor(const format::TensorView& a, const format::TensorView& b) {
  return a.dtype == b.dtype && a.bytes == b.bytes && std::memcmp(a.data, b.data, a.bytes) == 0;
}

bool is_embedding_or_head(const std::string& name) { return name == "tok_embeddings" || name == "output"; }

// Teacher-forced logits of `tokens` from the model file at `path`.
std::vector<float> logits_of(const std::string& path, const std::vector<int>& tokens) {
  std::unique_ptr<Model> model;
  std::vector<float> logits;
  Status s = Model::load(path, LoadOptions{}, &model);
  EXPECT_TRUE(s.is_ok()) << s.message();
  if (!s) return logits;
  std::unique_ptr<Session> session;
  EXPECT_TRUE(Session::create(*model, &session).is_ok());
  s = session->evaluate(tokens, &logits);
  EXPECT_TRUE(s.is_ok()) << s.message();
  return logits;
}

// Budget for max |logit - f32 logit| / max |f32 logit| of a model whose coarsest matrices are
// `coarsest`: measured 0.10 for q4_0 weights + f32 embeddings (stories260K), 0.012 for f16 +
// q8_0 embeddings (stories260K), 0.043 for q8_0 + f16 embeddings (tiny-gemma's random weights),
// with 2-3x headroom. Mixed-up or garbage tensors move logits by their own magnitude (~1).
double relative_logit_budget(WeightType coarsest) {
  switch (coarsest) {
    case WeightType::F32: return 1e-6;
    case WeightType::F16: return 5e-3;
    case WeightType::Q8_0: return 1e-1;
    case WeightType::Q4_0: return 3e-1;
    default: break;  // this test converts to the four types above only
  }
  return 0;
}

WeightType coarser(WeightType a, WeightType b) {
  auto rank = [](WeightType t) {
    return t == WeightType::F32 ? 0 : t == WeightType::F16 ? 1 : t == WeightType::Q8_0 ? 2 : 3;
  };
  return rank(a) >= rank(b) ? a : b;
}

// Converts `source` with weights in `weights` and embeddings in `embeddings`, and checks every
// tensor against the uniform conversions.
void check_mixed(const std::string& source, WeightType weights, WeightType embeddings, int vocab) {
  const std::string dir = test::make_temp_dir("output_dtype");
  Converted mixed, all_weights, all_embeddings;
  convert_to(source, dir, weights, embeddings, &mixed);
  convert_to(source, dir, weights, std::nullopt, &all_weights);
  convert_to(source, dir, embeddings, std::nullopt, &all_embeddings);
  ASSERT_EQ(mixed.view.tensors.size(), all_weights.view.tensors.size());
  int n_embedding = 0;
  for (const format::TensorView& t : mixed.view.tensors) {
    const bool embedding = is_embedding_or_head(t.name);
    n_embedding += embedding;
    const format::TensorView* want = (embedding ? all_embeddings : all_weights).view.find(t.name);
    ASSERT_NE(want, nullptr) << t.name;
    EXPECT_TRUE(same_tensor(t, *want)) << t.name << " is " << format::dtype_name(t.dtype) << ", expected "
                                       << format::dtype_name(want->dtype);
  }
  EXPECT_GE(n_embedding, 1);

  std::unique_ptr<Model> model;
  Status s = Model::load(mixed.path, LoadOptions{}, &model);
  ASSERT_TRUE(s.is_ok()) << s.message();
  EXPECT_EQ(model->info().weight_type, weight_type_name(weights));
  std::unique_ptr<Session> session;
  ASSERT_TRUE(Session::create(*model, &session).is_ok());
  std::vector<float> logits;
  s = session->evaluate({1, 2, 3, 4}, &logits);
  ASSERT_TRUE(s.is_ok()) << s.message();
  ASSERT_EQ(logits.size(), 4u * size_t(vocab));
  for (float v : logits) ASSERT_TRUE(std::isfinite(v));
  // Against the f32 conversion: within what the coarsest type's rounding costs.
  Converted f32;
  convert_to(source, dir, WeightType::F32, std::nullopt, &f32);
  const std::vector<float> reference = logits_of(f32.path, {1, 2, 3, 4});
  ASSERT_EQ(reference.size(), logits.size());
  double max_diff = 0, max_ref = 0;
  for (size_t i = 0; i < logits.size(); ++i) {
    max_diff = std::max(max_diff, std::fabs(double(logits[i]) - reference[i]));
    max_ref = std::max(max_ref, std::fabs(double(reference[i])));
  }
  const double relative = max_diff / max_ref;
  std::printf("[ measured ] %s weights + %s embeddings: max |logit diff| / max |logit| = %.3g\n",
              weight_type_name(weights), weight_type_name(embeddings), relative);
  EXPECT_GT(relative, 0.0) << "rounding must show: is the f32 reference the same file?";
  EXPECT_LE(relative, relative_logit_budget(coarser(weights, embeddings)));
  model.reset();
  test::remove_tree(dir);
}

TEST(OutputDtype, Q4WeightsWithF32Embeddings) {
  MAGNETAR_REQUIRE_TESTDATA("stories260K-hf/f32");
  check_mixed(test::testdata_path("stories260K-hf/f32"), WeightType::Q4_0, WeightType::F32, 512);
}

TEST(OutputDtype, F16WeightsWithQ8Embeddings) {
  MAGNETAR_REQUIRE_TESTDATA("stories260K-hf/f32");
  check_mixed(test::testdata_path("stories260K-hf/f32"), WeightType::F16, WeightType::Q8_0, 512);
}

TEST(OutputDtype, TinyGemmaQ8WeightsWithF16Embeddings) {
  MAGNETAR_REQUIRE_TESTDATA("gemma/tiny-gemma");
  check_mixed(test::testdata_path("gemma/tiny-gemma"), WeightType::Q8_0, WeightType::F16, 1024);
}

}  // namespace
}  // namespace magnetar
