// Tiny random Llama 3.1, Qwen 2.5, Qwen 3, Gemma 3 and Phi-3 folders (models/ in the test data)
// converted by the converter and run against Oracle A's goldens: the logits of every stored
// position, the greedy continuation, and F16 / Q8_0 conversions within their budgets. The prompts
// are the goldens' prompt_ids, so the forward pass is checked whatever the tokenizer.
//
// Folders that ship only tokenizer.json get a stand-in tokenizer.model (a synthetic SentencePiece
// vocabulary of the config's vocab_size) in a temporary copy: the converter's tokenizer step
// reads SentencePiece models, and these tests need the weights and the forward pass only.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>

#include "common/testdata.h"
#include "magnetar/convert.h"
#include "magnetar/engine.h"
#include "model/synth.h"

namespace magnetar {
namespace {

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

// A copy of the folder with a stand-in tokenizer.model when it has none (see the file comment).
std::string convertible_folder(const std::string& model, const std::string& temp_dir) {
  const std::string folder = test::testdata_path("models/" + model);
  namespace fs = std::filesystem;
  if (fs::exists(folder + "/tokenizer.model")) return folder;
  const std::string copy = temp_dir + "/" + model;
  if (fs::exists(copy + "/tokenizer.model")) return copy;  // made for another weight type
  fs::create_directories(copy);
  for (const char* name : {"config.json", "generation_config.json", "model.safetensors"})
    fs::copy_file(folder + "/" + name, copy + "/" + name);
  const auto config = nlohmann::json::parse(test::read_file(folder + "/config.json"));
  synth::Spec spec;
  spec.vocab_size = config["vocab_size"].get<int>();
  std::string proto;
  EXPECT_TRUE(synth::vocabulary_proto(spec, &proto));
  std::ofstream(copy + "/tokenizer.model", std::ios::binary) << proto;
  return copy;
}

// Converted files, once per process and type; removed at exit.
struct ConvertedModels {
  std::string dir = test::make_temp_dir("modern");
  std::map<std::string, std::string> paths;
  ~ConvertedModels() { test::remove_tree(dir); }

  std::string get(const std::string& model, WeightType type) {
    const std::string key = model + "." + weight_type_name(type);
    if (auto it = paths.find(key); it != paths.end()) return it->second;
    const std::string out = dir + "/" + key + ".mgn";
    ConvertOptions options;
    options.weight_type = type;
    const Status s = convert_model(convertible_folder(model, dir), out, options);
    EXPECT_TRUE(s) << s.message();
    return paths[key] = s ? out : "";
  }
};

ConvertedModels& converted() {
  static ConvertedModels models;
  return models;
}

struct Loaded {
  std::unique_ptr<Model> model;
  std::unique_ptr<Session> session;
};

bool load(const std::string& model, WeightType type, Loaded* out) {
  const std::string path = converted().get(model, type);
  if (path.empty()) return false;
  Status s = Model::load(path, LoadOptions{}, &out->model);
  EXPECT_TRUE(s) << s.message();
  if (!s) return false;
  s = Session::create(*out->model, &out->session);
  EXPECT_TRUE(s) << s.message();
  return s.is_ok();
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

TEST_P(ModernGolden, F32Greedy32Match) {
  const auto [model, case_name] = GetParam();
  MAGNETAR_REQUIRE_TESTDATA(std::string("models/") + model);
  const GoldenCase g = load_case(model, case_name);
  Loaded m;
  ASSERT_TRUE(load(model, WeightType::F32, &m));
  GenerateRequest request;
  request.prompt = g.prompt_ids;
  request.max_tokens = 32;
  request.stop_at_eog = false;
  GenerateResult result;
  ASSERT_TRUE(m.session->generate(request, &result));
  EXPECT_EQ(result.tokens, g.greedy_32);
}

// F16 and Q8_0 conversions: logits within their budgets, argmax where the margin allows, and the
// greedy continuation up to the first step whose golden margin is within the budget.
void check_reduced_precision(const char* model, const char* case_name, WeightType type, double tolerance) {
  const GoldenCase g = load_case(model, case_name);
  Loaded m;
  ASSERT_TRUE(load(model, type, &m));
  const int vocab = m.model->info().vocab_size;
  const Comparison c = compare_logits(*m.session, g, vocab, tolerance);
  GenerateRequest request;
  request.prompt = g.prompt_ids;
  request.max_tokens = 32;
  request.stop_at_eog = false;
  m.session->reset();
  GenerateResult result;
  ASSERT_TRUE(m.session->generate(request, &result));
  ASSERT_EQ(result.tokens.size(), 32u);
  int safe_steps = 0;  // steps before the first whose margin the budget could flip
  while (safe_steps < 32 && g.greedy_margin[safe_steps] > 2 * tolerance) ++safe_steps;
  int agree = 0;
  while (agree < 32 && result.tokens[agree] == g.greedy_32[agree]) ++agree;
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

}  // namespace
}  // namespace magnetar
