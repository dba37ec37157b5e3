// Hugging Face folders with tokenizer.json instead of tokenizer.model: the stories260K folder
// with its SentencePiece model replaced by a small byte-level BPE tokenizer.json converts to a
// version-2 file whose tokenizer is that pipeline (BOS from its post-processor, special tokens
// recognised in raw text unless asked not to, added tokens beyond the model's vocabulary
// dropped), and an unsupported component fails the conversion naming it.
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "common/testdata.h"
#include "convert_test_util.h"
#include "format/model_reader.h"
#include "magnetar/convert.h"
#include "magnetar/engine.h"
#include "tokenizer/byte_level.h"
#include "tokenizer/utf8.h"

namespace magnetar::test {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// Ids 3..258 are the bytes (GPT-2's characters), 1 and 2 <s> </s>, then a few merges; "<extra>"
// (id 600) lies beyond the model's 512 logits.
json small_tokenizer_json() {
  json vocab = json::object();
  auto ch = [](int b) {
    std::string s;
    tok::utf8_append(tok::byte_to_code_point(uint8_t(b)), &s);
    return s;
  };
  vocab["<unused>"] = 0;
  for (int b = 0; b < 256; ++b) vocab[ch(b)] = b + 3;
  const std::string space = ch(' ');
  vocab["Hi"] = 259;
  vocab[space + "there"] = 260;
  vocab["th"] = 261;
  vocab["the"] = 262;
  vocab["re"] = 263;
  vocab[space + "the"] = 264;
  json added = json::array({
      {{"id", 1}, {"content", "<s>"}, {"special", true}, {"normalized", false}},
      {{"id", 2}, {"content", "</s>"}, {"special", true}, {"normalized", false}},
      {{"id", 600}, {"content", "<extra>"}, {"special", true}, {"normalized", false}},
  });
  return {{"version", "1.0"},
          {"added_tokens", added},
          {"normalizer", nullptr},
          {"pre_tokenizer", {{"type", "ByteLevel"}, {"add_prefix_space", false}, {"use_regex", true}}},
          {"post_processor",
           {{"type", "TemplateProcessing"},
            {"single", json::array({{{"SpecialToken", {{"id", "<s>"}, {"type_id", 0}}}},
                                    {{"Sequence", {{"id", "A"}, {"type_id", 0}}}}})},
            {"special_tokens", {{"<s>", {{"id", "<s>"}, {"ids", {1}}, {"tokens", {"<s>"}}}}}}}},
          {"decoder", {{"type", "ByteLevel"}}},
          {"model",
           {{"type", "BPE"},
            {"vocab", vocab},
            {"merges", json::array({"H i", "t h", "th e", space + " the", "r e", space + "the re"})}}}};
}

class TokenizerJsonConvert : public ::testing::Test {
 protected:
  void SetUp() override { root_ = make_temp_dir("tokjson-convert"); }
  void TearDown() override { remove_tree(root_); }
  std::string folder(const json& tokenizer) {
    const std::string src = root_ + "/src";
    copy_folder(testdata_path("stories260K-hf/f32"), src);
    fs::remove(src + "/tokenizer.model");
    write_file(src + "/tokenizer.json", tokenizer.dump());
    return src;
  }
  std::string root_;
};

TEST_F(TokenizerJsonConvert, ConvertsAndEncodesWithThePipeline) {
  MAGNETAR_REQUIRE_TESTDATA("stories260K-hf/f32");
  const std::string out = root_ + "/model.mgn";
  Status s = convert_model(folder(small_tokenizer_json()), out, ConvertOptions{});
  ASSERT_TRUE(s) << s.message();
  const std::string bytes = read_file(out);
  format::ModelFileView view;
  ASSERT_TRUE(format::parse_model_file(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(), &view));
  EXPECT_EQ(view.header.version, 2u);
  EXPECT_EQ(view.header.tokenizer_kind, 1u);
  EXPECT_EQ(view.tokenizer.find("<extra>"), std::string_view::npos) << "id 600 has no logit: dropped";

  std::unique_ptr<Model> model;
  s = Model::load(out, LoadOptions{}, &model);
  ASSERT_TRUE(s) << s.message();
  EXPECT_TRUE(model->info().add_bos);
  EXPECT_EQ(model->info().bos_id, 1);
  std::vector<int> ids;
  ASSERT_TRUE(model->tokenize("Hi there</s>", true, &ids));
  EXPECT_EQ(ids, (std::vector<int>{1, 259, 260, 2}));
  ASSERT_TRUE(model->tokenize("Hi</s>", false, &ids, {.parse_special = false}));
  EXPECT_EQ(ids.size(), 1u + 4u);  // "Hi", then "<", "/", "s", ">" as bytes
  EXPECT_EQ(model->detokenize(ids), "Hi</s>");
  ASSERT_TRUE(model->tokenize("<extra>", false, &ids));
  EXPECT_EQ(ids.size(), 7u) << "a dropped added token is plain text";
}

TEST_F(TokenizerJsonConvert, UnsupportedComponentFailsNamingIt) {
  MAGNETAR_REQUIRE_TESTDATA("stories260K-hf/f32");
  json t = small_tokenizer_json();
  t["normalizer"] = {{"type", "Precompiled"}, {"precompiled_charsmap", "AAAA"}};
  Status s = convert_model(folder(t), root_ + "/model.mgn", ConvertOptions{});
  ASSERT_FALSE(s);
  EXPECT_NE(s.message().find("tokenizer.json"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("\"Precompiled\" is not supported"), std::string::npos) << s.message();
  EXPECT_FALSE(fs::exists(root_ + "/model.mgn"));
}

}  // namespace
}  // namespace magnetar::test
