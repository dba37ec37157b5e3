// Hugging Face config options that the architecture table maps to header fields, read back from
// the converted file: Mistral's sliding window, linear and llama3 RoPE scaling, Gemma 3's layer
// pattern from layer_types, and a Gemma3ForConditionalGeneration checkpoint (text_config, the
// language_model. prefix, the vision tower left out with a notice).
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "common/testdata.h"
#include "convert_test_util.h"
#include "magnetar/convert.h"
#include "magnetar/engine.h"

namespace magnetar::test {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

class HfOptionsTest : public ::testing::Test {
 protected:
  void SetUp() override { root_ = make_temp_dir("hf-options"); }
  void TearDown() override { remove_tree(root_); }

  // A test folder (stories260K-hf/f32 unless given) with its config.json edited, converted; the
  // header of the result.
  format::FileHeader convert_edited(const std::function<void(json&)>& edit,
                                    const std::string& folder = "stories260K-hf/f32") {
    const std::string src = root_ + "/src" + std::to_string(++n_);
    copy_folder(testdata_path(folder), src);
    json config = json::parse(read_file(src + "/config.json"));
    edit(config);
    write_file(src + "/config.json", config.dump());
    const std::string out = root_ + "/out" + std::to_string(n_) + ".mgn";
    ConvertOptions options;
    options.weight_type = WeightType::F32;
    const Status s = convert_model(src, out, options);
    EXPECT_TRUE(s) << s.message();
    ModelFile file;
    std::string error;
    EXPECT_TRUE(s && load_model_file(out, &file, &error)) << error;
    return file.header;
  }

  std::string root_;
  int n_ = 0;
};

#define REQUIRE_DATA() MAGNETAR_REQUIRE_TESTDATA("stories260K-hf/f32")

TEST_F(HfOptionsTest, MistralSlidingWindowCoversEveryLayer) {
  REQUIRE_DATA();
  const format::FileHeader h = convert_edited([](json& j) {
    j["architectures"] = {"MistralForCausalLM"};
    j["sliding_window"] = 4;
  });
  EXPECT_EQ(h.architecture, uint32_t(Architecture::Llama));
  EXPECT_EQ(h.sliding_window, 4u);
  EXPECT_EQ(h.sliding_window_period, 0u);  // every layer
  EXPECT_EQ(h.version, format::kVersion);
  const format::FileHeader none = convert_edited([](json& j) {
    j["architectures"] = {"MistralForCausalLM"};
    j["sliding_window"] = nullptr;  // Mistral 7B v0.2 and later
  });
  EXPECT_EQ(none.sliding_window, 0u);
}

TEST_F(HfOptionsTest, RopeScalingFieldsReachTheHeader) {
  REQUIRE_DATA();
  format::FileHeader h = convert_edited([](json& j) {
    j["rope_scaling"] = {{"rope_type", "linear"}, {"factor", 2.0}};
  });
  EXPECT_EQ(h.rope_scaling, uint32_t(format::RopeScaling::Linear));
  EXPECT_EQ(h.rope_scaling_factor, 2.0f);
  h = convert_edited([](json& j) {
    j["rope_scaling"] = {{"rope_type", "llama3"}, {"factor", 32.0}, {"low_freq_factor", 1.0},
                         {"high_freq_factor", 4.0}, {"original_max_position_embeddings", 8192}};
  });
  EXPECT_EQ(h.rope_scaling, uint32_t(format::RopeScaling::Llama3));
  EXPECT_EQ(h.rope_scaling_factor, 32.0f);
  EXPECT_EQ(h.rope_low_freq_factor, 1.0f);
  EXPECT_EQ(h.rope_high_freq_factor, 4.0f);
  EXPECT_EQ(h.rope_original_context, 8192u);
  h = convert_edited([](json& j) { j["rope_scaling"] = {{"rope_type", "default"}}; });
  EXPECT_EQ(h.rope_scaling, 0u);
}

// layer_types lists (transformers >= 4.53 writes them) give the sliding period; without one,
// Gemma2Config's alternation.
TEST_F(HfOptionsTest, LayerTypesGiveTheSlidingPeriod) {
  MAGNETAR_REQUIRE_TESTDATA("gemma/tiny-gemma2");
  const int n_layers = json::parse(read_file(testdata_path("gemma/tiny-gemma2/config.json")))["num_hidden_layers"];
  auto with_types = [&](int period) {  // layer i full iff (i + 1) % period == 0
    return [=](json& j) {
      j["sliding_window"] = 16;
      j["layer_types"] = json::array();
      for (int i = 0; i < n_layers; ++i)
        j["layer_types"].push_back((i + 1) % period == 0 ? "full_attention" : "sliding_attention");
    };
  };
  format::FileHeader h = convert_edited(with_types(3), "gemma/tiny-gemma2");
  EXPECT_EQ(h.sliding_window, 16u);
  EXPECT_EQ(h.sliding_window_period, 3u);
  h = convert_edited(with_types(1), "gemma/tiny-gemma2");  // every layer full
  EXPECT_EQ(h.sliding_window, 0u);
  h = convert_edited([](json& j) { j.erase("layer_types"); j.erase("sliding_window"); }, "gemma/tiny-gemma2");
  EXPECT_EQ(h.sliding_window, 4096u);  // Gemma2Config's default
  EXPECT_EQ(h.sliding_window_period, 2u);
}

// A Gemma3ForConditionalGeneration folder made from tiny-gemma3: config under text_config,
// tensors renamed language_model.*, plus a vision-tower tensor. The language model converts to
// the same file as tiny-gemma3 itself, and the summary says the vision tower is skipped.
TEST_F(HfOptionsTest, Gemma3MultimodalCheckpointConvertsItsLanguageModel) {
  MAGNETAR_REQUIRE_TESTDATA("models/tiny-gemma3");
  const std::string original = testdata_path("models/tiny-gemma3");
  const std::string text = root_ + "/text", multi = root_ + "/multimodal";
  fs::create_directories(text);
  fs::create_directories(multi);
  for (const char* name : {"config.json", "generation_config.json", "model.safetensors"})
    fs::copy_file(original + "/" + name, text + "/" + name);
  copy_folder(testdata_path("gemma/tiny-gemma"), root_ + "/gemma");  // any SentencePiece model
  for (const std::string& dir : {text, multi})
    fs::copy_file(root_ + "/gemma/tokenizer.model", dir + "/tokenizer.model");
  // tiny-gemma's 1024 pieces fit in the 262144-row vocabulary.
  json config = json::parse(read_file(original + "/config.json"));
  json outer = {{"architectures", {"Gemma3ForConditionalGeneration"}}, {"model_type", "gemma3"},
                {"text_config", config}, {"vision_config", {{"hidden_size", 8}}}, {"eos_token_id", {1, 106}},
                {"bos_token_id", 2}};
  outer["text_config"].erase("architectures");
  write_file(multi + "/config.json", outer.dump());
  fs::copy_file(original + "/generation_config.json", multi + "/generation_config.json");
  fs::copy_file(original + "/model.safetensors", multi + "/model.safetensors");
  edit_safetensors_header(multi + "/model.safetensors", [](json& header) {
    json renamed = json::object();
    for (auto& [name, value] : header.items())
      renamed[name == "__metadata__" ? name : "language_model." + name] = value;
    header = renamed;
  });
  SourceSummary summary;
  ASSERT_TRUE(inspect_source(multi, &summary));
  EXPECT_EQ(summary.architecture, "Gemma3ForConditionalGeneration");
  EXPECT_EQ(summary.family, "Gemma 3");
  EXPECT_NE(summary.notice.find("vision tower"), std::string::npos);
  ConvertOptions options;
  options.weight_type = WeightType::F32;
  ASSERT_TRUE(convert_model(text, root_ + "/text.mgn", options));
  const Status s = convert_model(multi, root_ + "/multi.mgn", options);
  ASSERT_TRUE(s) << s.message();
  ModelFile a, b;
  std::string error;
  ASSERT_TRUE(load_model_file(root_ + "/text.mgn", &a, &error)) << error;
  ASSERT_TRUE(load_model_file(root_ + "/multi.mgn", &b, &error)) << error;
  EXPECT_EQ(std::memcmp(&a.header, &b.header, sizeof(a.header)), 0);
  EXPECT_EQ(b.header.sliding_window_period, 6u);
  EXPECT_EQ(b.header.rope_local_theta, 10000.0f);
  ASSERT_EQ(a.table.size(), b.table.size());
  for (const auto& t : a.table) EXPECT_EQ(a.raw(t.name), b.raw(t.name)) << t.name;
}

}  // namespace
}  // namespace magnetar::test
