// tokenizer.json families (Llama 3, the updated Llama 3, Qwen 3, Gemma 3, o200k) on the 100
// shared strings: every string encodes to exactly Hugging Face's ids (cases.out, added tokens in
// the text recognised) and decodes back to itself, or to the text cases.meta.json records where
// Hugging Face's decode is not the identity (clean-up spaces, NFC, literal '▁').
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <sstream>

#include "common/testdata.h"
#include "tokenizer/tokenizer.h"

namespace magnetar {
namespace {

struct Family {
  const char* name;
  const char* tokenizer_json;  // relative to the test data
};

const Family kFamilies[] = {
    {"llama3", "tokenizers/llama3/tokenizer.json"},
    {"llama3_1", "models/tiny-llama31/tokenizer.json"},
    {"qwen3", "models/tiny-qwen3/tokenizer.json"},
    {"gemma3", "models/tiny-gemma3/tokenizer.json"},
    {"gpt4o", "tokenizers/gpt4o/tokenizer.json"},
};

std::vector<std::string> split(const std::string& text, const std::string& sep) {
  std::vector<std::string> out;
  size_t start = 0;
  for (size_t at; (at = text.find(sep, start)) != std::string::npos; start = at + sep.size())
    out.push_back(text.substr(start, at - start));
  out.push_back(text.substr(start));
  return out;
}

class HfFamily : public ::testing::TestWithParam<Family> {};

Status load_family(const Family& f, Tokenizer* tok) {
  const std::string dir = std::string("tokenizers/") + f.name + "/";
  return tok->load_tokenizer_json(test::read_file(test::testdata_path(f.tokenizer_json)),
                                 test::read_file(test::testdata_path(dir + "tokenizer_config.json")));
}

TEST_P(HfFamily, AllCasesEncodeAndDecodeLikeHuggingFace) {
  const Family& f = GetParam();
  const std::string dir = std::string("tokenizers/") + f.name + "/";
  MAGNETAR_REQUIRE_TESTDATA(f.tokenizer_json);
  MAGNETAR_REQUIRE_TESTDATA(dir + "cases.inp");
  Tokenizer tok;
  Status st = load_family(f, &tok);
  ASSERT_TRUE(st) << st.message();
  auto inputs = split(test::read_file(test::testdata_path(dir + "cases.inp")), "\n__ggml_vocab_test__\n");
  ASSERT_EQ(inputs.back(), "");  // the piece after the last separator is not a case
  inputs.pop_back();
  auto expected = split(test::read_file(test::testdata_path(dir + "cases.out")), "\n");
  if (expected.size() == inputs.size() + 1 && expected.back().empty()) expected.pop_back();
  ASSERT_EQ(inputs.size(), 100u);
  ASSERT_EQ(expected.size(), inputs.size());
  const auto meta = nlohmann::json::parse(test::read_file(test::testdata_path(dir + "cases.meta.json")));
  const auto& not_identity = meta.contains("decode_not_identity") ? meta["decode_not_identity"] : nlohmann::json::object();
  int encoded = 0, decoded = 0;
  for (size_t i = 0; i < inputs.size(); ++i) {
    std::vector<int> want, got;
    std::istringstream ids(expected[i]);
    for (int id; ids >> id;) want.push_back(id);
    st = tok.encode_with_special(inputs[i], &got);
    ASSERT_TRUE(st) << st.message();
    EXPECT_EQ(got, want) << f.name << " case " << i << ": \"" << inputs[i] << "\"";
    encoded += got == want;
    const std::string key = std::to_string(i);
    const std::string want_text =
        not_identity.contains(key) ? not_identity[key]["decoded"].get<std::string>() : inputs[i];
    const std::string text = tok.decode(want);
    EXPECT_EQ(text, want_text) << f.name << " decode of case " << i;
    decoded += text == want_text;
  }
  EXPECT_EQ(encoded, 100);
  EXPECT_EQ(decoded, 100);
}

INSTANTIATE_TEST_SUITE_P(Families, HfFamily, ::testing::ValuesIn(kFamilies),
                         [](const auto& info) { return std::string(info.param.name); });

}  // namespace
}  // namespace magnetar
