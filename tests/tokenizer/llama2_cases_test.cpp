// Meta's Llama 2 tokenizer on the 47 hard strings of llama.cpp's vocabulary test: our wrapper
// must produce exactly the ids Hugging Face's tokenizer produces (no BOS).
#include <gtest/gtest.h>

#include <sstream>

#include "common/testdata.h"
#include "tokenizer/tokenizer.h"

namespace magnetar {
namespace {

TEST(Llama2Tokenizer, AllCasesEncodeLikeHuggingFace) {
  MAGNETAR_REQUIRE_TESTDATA("tokenizers/llama2/tokenizer.model");
  Tokenizer tok;
  ASSERT_TRUE(tok.load(test::read_file(test::testdata_path("tokenizers/llama2/tokenizer.model"))));
  const auto inputs = test::split_string(test::read_file(test::testdata_path("tokenizers/llama2/cases.inp")),
                            "\n__ggml_vocab_test__\n");
  const auto expected = test::split_string(test::read_file(test::testdata_path("tokenizers/llama2/cases.out")), "\n");
  ASSERT_EQ(inputs.size(), 47u);
  ASSERT_EQ(expected.size(), inputs.size());
  int checked = 0;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const std::string& input = inputs[i];
    std::vector<int> want;
    std::istringstream ids(expected[i]);
    for (int id; ids >> id;) want.push_back(id);
    std::vector<int> got;
    ASSERT_TRUE(tok.encode(input, &got));
    EXPECT_EQ(got, want) << "input: \"" << input << "\"";
    ++checked;
  }
  EXPECT_EQ(checked, 47);
}

TEST(Llama2Tokenizer, ControlTokensAreSplitOutOfChatText) {
  MAGNETAR_REQUIRE_TESTDATA("tokenizers/llama2/tokenizer.model");
  Tokenizer tok;
  ASSERT_TRUE(tok.load(test::read_file(test::testdata_path("tokenizers/llama2/tokenizer.model"))));
  std::vector<int> ids, plain;
  ASSERT_TRUE(tok.encode_with_special("<s>[INST] Hi [/INST] Hello </s>", &ids));
  ASSERT_TRUE(tok.encode("[INST] Hi [/INST] Hello ", &plain));
  ASSERT_GE(ids.size(), 3u);
  EXPECT_EQ(ids.front(), tok.piece_to_id("<s>"));
  EXPECT_EQ(ids.back(), tok.piece_to_id("</s>"));
  EXPECT_EQ(std::vector<int>(ids.begin() + 1, ids.end() - 1), plain);
}

TEST(Tokenizer, GarbageModelBytesGiveAnError) {
  Tokenizer tok;
  Status s = tok.load("definitely not a sentencepiece model");
  EXPECT_FALSE(s);
  EXPECT_NE(s.message().find("tokenizer"), std::string::npos);
}

}  // namespace
}  // namespace magnetar
