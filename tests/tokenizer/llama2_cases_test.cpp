// Meta's Llama 2 tokenizer on the 47 hard strings of llama.cpp's vocabulary test: our wrapper
// must produce exactly the ids Hugging Face's tokenizer produces (no BOS).
#include <gtest/gtest.h>

#include <sstream>

#include "common/testdata.h"
#include "tokenizer/tokenizer.h"

namespace magnetar {
namespace {

std::vector<std::string> split_cases(const std::string& text) {
  const std::string sep = "\n__ggml_vocab_test__\n";
  std::vector<std::string> out;
  size_t start = 0;
  while (true) {
    size_t at = text.find(sep, start);
    if (at == std::string::npos) break;
    out.push_back(text.substr(start, at - start));
    start = at + sep.size();
  }
  return out;
}

TEST(Llama2Tokenizer, AllCasesEncodeLikeHuggingFace) {
  MAGNETAR_REQUIRE_TESTDATA("tokenizers/llama2/tokenizer.model");
  Tokenizer tok;
  ASSERT_TRUE(tok.load(test::read_file(test::testdata_path("tokenizers/llama2/tokenizer.model"))));
  const auto inputs = split_cases(test::read_file(test::testdata_path("tokenizers/llama2/cases.inp")));
  std::istringstream expected(test::read_file(test::testdata_path("tokenizers/llama2/cases.out")));
  ASSERT_EQ(inputs.size(), 47u);
  int checked = 0;
  for (const auto& input : inputs) {
    std::string line;
    ASSERT_TRUE(std::getline(expected, line)) << "cases.out has fewer lines than cases.inp";
    std::vector<int> want;
    std::istringstream ids(line);
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
