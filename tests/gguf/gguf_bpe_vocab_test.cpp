// GGUF byte-level BPE vocabularies (tokenizer.ggml.model = "gpt2"): a GGUF written from a real
// tokenizer.json (tokens, merges, token types, tokenizer.ggml.pre) must give the tokenizer
// that encodes every shared case exactly as Hugging Face does; unknown pre-tokenizer names
// fail the conversion.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <sstream>

#include "common/testdata.h"
#include "convert/gguf_bpe_vocab.h"
#include "gguf/gguf_writer.h"
#include "tokenizer/hf_tokenizer.h"
#include "tokenizer/tokenizer.h"

namespace magnetar {
namespace {

using gguf::ValueType;
using nlohmann::json;
using test::GgufWriter;

// The GGUF llama.cpp's converter would write for this tokenizer.json (vocabulary part only).
std::string gguf_from_tokenizer_json(const json& t, const std::string& pre) {
  std::vector<std::string> tokens;
  std::vector<int32_t> types;
  for (const auto& [text, id] : t["model"]["vocab"].items()) {
    const size_t i = id.get<size_t>();
    if (tokens.size() <= i) tokens.resize(i + 1), types.resize(i + 1, 1);
    tokens[i] = text;
  }
  for (const json& a : t["added_tokens"]) {
    const size_t i = a["id"].get<size_t>();
    if (tokens.size() <= i) tokens.resize(i + 1), types.resize(i + 1, 1);
    tokens[i] = a["content"].get<std::string>();
    types[i] = a["special"].get<bool>() ? 3 : 4;
  }
  for (size_t i = 0; i < tokens.size(); ++i)  // ids no token uses: llama.cpp's converter pads them
    if (tokens[i].empty()) tokens[i] = "[PAD" + std::to_string(i) + "]", types[i] = 5;
  std::vector<std::string> merges;
  for (const json& m : t["model"]["merges"])
    merges.push_back(m.is_string() ? m.get<std::string>() : m[0].get<std::string>() + " " + m[1].get<std::string>());
  GgufWriter w;
  w.kv("tokenizer.ggml.model", ValueType::String, GgufWriter::str("gpt2"));
  w.kv("tokenizer.ggml.pre", ValueType::String, GgufWriter::str(pre));
  w.kv("tokenizer.ggml.tokens", ValueType::Array, test::gguf_string_array({tokens.begin(), tokens.end()}));
  w.kv("tokenizer.ggml.merges", ValueType::Array, test::gguf_string_array({merges.begin(), merges.end()}));
  std::string payload = GgufWriter::u32(uint32_t(ValueType::I32)) + GgufWriter::u64(types.size());
  for (int32_t type : types) payload += GgufWriter::u32(uint32_t(type));
  w.kv("tokenizer.ggml.token_type", ValueType::Array, payload);
  return w.finish();
}

std::vector<std::string> split(const std::string& text, const std::string& sep) {
  std::vector<std::string> out;
  size_t start = 0;
  for (size_t at; (at = text.find(sep, start)) != std::string::npos; start = at + sep.size())
    out.push_back(text.substr(start, at - start));
  out.push_back(text.substr(start));
  return out;
}

struct Case {
  const char* family;
  const char* tokenizer_json;
  const char* pre;
};

class GgufBpeVocab : public ::testing::TestWithParam<Case> {};

TEST_P(GgufBpeVocab, EncodesTheSharedCasesLikeHuggingFace) {
  const Case& c = GetParam();
  MAGNETAR_REQUIRE_TESTDATA(c.tokenizer_json);
  const std::string bytes = gguf_from_tokenizer_json(
      json::parse(test::read_file(test::testdata_path(c.tokenizer_json))), c.pre);
  gguf::File f;
  ASSERT_TRUE(gguf::parse(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(), &f));
  json built;
  int n_tokens = 0;
  Status st = convert::gguf_bpe_vocab_to_tokenizer_json(f, &built, &n_tokens);
  ASSERT_TRUE(st) << st.message();
  std::string stored;
  st = tok::make_stored_hf_tokenizer(built, false, &stored);
  ASSERT_TRUE(st) << st.message();
  Tokenizer tok;
  st = tok.load(TokenizerKind::HuggingFace, stored);
  ASSERT_TRUE(st) << st.message();
  EXPECT_EQ(tok.vocab_size(), n_tokens);

  const std::string dir = std::string("tokenizers/") + c.family + "/";
  auto inputs = split(test::read_file(test::testdata_path(dir + "cases.inp")), "\n__ggml_vocab_test__\n");
  inputs.pop_back();
  const auto expected = split(test::read_file(test::testdata_path(dir + "cases.out")), "\n");
  ASSERT_GE(expected.size(), inputs.size());
  int matched = 0;
  for (size_t i = 0; i < inputs.size(); ++i) {
    std::vector<int> want, got;
    std::istringstream ids(expected[i]);
    for (int id; ids >> id;) want.push_back(id);
    ASSERT_TRUE(tok.encode_with_special(inputs[i], &got));
    EXPECT_EQ(got, want) << c.family << " case " << i;
    matched += got == want;
  }
  EXPECT_EQ(matched, 100);
}

INSTANTIATE_TEST_SUITE_P(Families, GgufBpeVocab,
                         ::testing::Values(Case{"llama3", "tokenizers/llama3/tokenizer.json", "llama-bpe"},
                                           Case{"qwen3", "models/tiny-qwen3/tokenizer.json", "qwen2"},
                                           Case{"gpt4o", "tokenizers/gpt4o/tokenizer.json", "gpt-4o"}),
                         [](const auto& info) { return std::string(info.param.family); });

TEST(GgufBpeVocab, UnknownPreTokenizerFailsConversion) {
  GgufWriter w;
  w.kv("tokenizer.ggml.model", ValueType::String, GgufWriter::str("gpt2"));
  w.kv("tokenizer.ggml.pre", ValueType::String, GgufWriter::str("made-up-family"));
  w.kv("tokenizer.ggml.tokens", ValueType::Array, test::gguf_string_array({"a", "b", "ab"}));
  w.kv("tokenizer.ggml.merges", ValueType::Array, test::gguf_string_array({"a b"}));
  const std::string bytes = w.finish();
  gguf::File f;
  ASSERT_TRUE(gguf::parse(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(), &f));
  json built;
  int n = 0;
  Status st = convert::gguf_bpe_vocab_to_tokenizer_json(f, &built, &n);
  ASSERT_FALSE(st);
  EXPECT_NE(st.message().find("made-up-family"), std::string::npos) << st.message();
}

}  // namespace
}  // namespace magnetar
