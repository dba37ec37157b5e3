// The hand-written SentencePiece ModelProto: a model built from llama2.c's tok512.bin must
// behave exactly like tok512.model (the same vocabulary as a real SentencePiece model) — same
// pieces, scores and types, same encoding and decoding of many strings — and bad vocabularies
// are rejected with a message.
#include "tokenizer/sentencepiece_proto.h"

#include <gtest/gtest.h>
#include <sentencepiece_processor.h>

#include <cstring>

#include "common/testdata.h"

namespace magnetar::test {
namespace {

class SentencePieceProtoTest : public ::testing::Test {
 protected:
  void SetUp() override {
    MAGNETAR_REQUIRE_TESTDATA("stories260K/tok512.bin");
    MAGNETAR_REQUIRE_TESTDATA("stories260K/tok512.model");
    spm::ModelSpec spec;
    Status s = spm::llama2c_vocab_to_spec(read_file(testdata_path("stories260K/tok512.bin")),
                                          "tok512.bin", &spec);
    ASSERT_TRUE(s.is_ok()) << s.message();
    std::string proto;
    s = spm::build_sentencepiece_model(spec, &proto);
    ASSERT_TRUE(s.is_ok()) << s.message();
    ASSERT_TRUE(built_.LoadFromSerializedProto(proto).ok());
    ASSERT_TRUE(reference_.Load(testdata_path("stories260K/tok512.model")).ok());
  }
  sentencepiece::SentencePieceProcessor built_, reference_;
};

TEST_F(SentencePieceProtoTest, SameVocabularyAsTheReferenceModel) {
  ASSERT_EQ(built_.GetPieceSize(), reference_.GetPieceSize());
  for (int id = 0; id < reference_.GetPieceSize(); ++id) {
    EXPECT_EQ(built_.IdToPiece(id), reference_.IdToPiece(id)) << id;
    EXPECT_EQ(built_.GetScore(id), reference_.GetScore(id)) << id;
    EXPECT_EQ(built_.IsControl(id), reference_.IsControl(id)) << id;
    EXPECT_EQ(built_.IsUnknown(id), reference_.IsUnknown(id)) << id;
    EXPECT_EQ(built_.IsByte(id), reference_.IsByte(id)) << id;
  }
  EXPECT_EQ(built_.unk_id(), 0);
  EXPECT_EQ(built_.bos_id(), 1);
  EXPECT_EQ(built_.eos_id(), 2);
  EXPECT_EQ(built_.pad_id(), reference_.pad_id());
}

TEST_F(SentencePieceProtoTest, EncodesAndDecodesLikeTheReferenceModel) {
  const std::vector<std::string> texts = {
      "Once upon a time, there was a little girl named Lily.",
      " leading space and trailing space ",
      "two  spaces,\ttabs\tand\nnew\nlines\n",
      "",
      " ",
      "digits 1234567890 and 3.14",
      "emoji \xF0\x9F\x99\x82 \xC3\xBC\xC3\xB1\xC3\xAE\xC3\xA7\xC3\xB8" "d\xC3\xA9 "
      "\xD0\xBF\xD1\x80\xD0\xB8\xD0\xB2\xD0\xB5\xD1\x82 \xE4\xBD\xA0\xE5\xA5\xBD",  // non-ASCII: byte fallback
      "<s> and </s> are plain text here",
      "\"Quotes\" (parens) [brackets] {braces} ~tilde~ #hash @at",
      read_file(testdata_path("stories260K/expected_greedy_200.txt")),
  };
  for (const std::string& text : texts) {
    std::vector<int> a, b;
    ASSERT_TRUE(built_.Encode(text, &a).ok());
    ASSERT_TRUE(reference_.Encode(text, &b).ok());
    EXPECT_EQ(a, b) << "\"" << text << "\"";
    std::string da, db;
    ASSERT_TRUE(built_.Decode(a, &da).ok());
    ASSERT_TRUE(reference_.Decode(b, &db).ok());
    EXPECT_EQ(da, db) << "\"" << text << "\"";
  }
  // Every single id decodes the same (bytes, control pieces, ▁ pieces).
  for (int id = 0; id < reference_.GetPieceSize(); ++id) {
    std::string da, db;
    ASSERT_TRUE(built_.Decode(std::vector<int>{id}, &da).ok());
    ASSERT_TRUE(reference_.Decode(std::vector<int>{id}, &db).ok());
    EXPECT_EQ(da, db) << id;
  }
}

TEST(SentencePieceProto, SyntheticVocabularyLoads) {
  spm::ModelSpec spec;
  spec.pieces = {{"<unk>", 0, spm::PieceType::Unknown},
                 {"<s>", 0, spm::PieceType::Control},
                 {"</s>", 0, spm::PieceType::Control}};
  for (int b = 0; b < 256; ++b) {
    char name[8];
    std::snprintf(name, sizeof(name), "<0x%02X>", b);
    spec.pieces.push_back({name, 0, spm::PieceType::Byte});
  }
  // BPE merges pairs of pieces by score: "▁" + "h" -> "▁h", then "▁h" + "i" -> "▁hi".
  spec.pieces.push_back({"\xE2\x96\x81", -3.0f, spm::PieceType::Normal});     // 259
  spec.pieces.push_back({"h", -3.0f, spm::PieceType::Normal});                // 260
  spec.pieces.push_back({"i", -3.0f, spm::PieceType::Normal});                // 261
  spec.pieces.push_back({"\xE2\x96\x81h", -1.0f, spm::PieceType::Normal});    // 262
  spec.pieces.push_back({"\xE2\x96\x81hi", -2.0f, spm::PieceType::Normal});   // 263
  std::string proto;
  ASSERT_TRUE(spm::build_sentencepiece_model(spec, &proto).is_ok());
  sentencepiece::SentencePieceProcessor sp;
  ASSERT_TRUE(sp.LoadFromSerializedProto(proto).ok());
  EXPECT_EQ(sp.GetPieceSize(), 264);
  std::vector<int> ids;
  ASSERT_TRUE(sp.Encode("hi", &ids).ok());
  EXPECT_EQ(ids, std::vector<int>{263});
  ASSERT_TRUE(sp.Encode("ho", &ids).ok());  // 'o' is not a piece: byte fallback <0x6F>
  EXPECT_EQ(ids, (std::vector<int>{262, 3 + 'o'}));
  std::string text;
  ASSERT_TRUE(sp.Decode(ids, &text).ok());
  EXPECT_EQ(text, "ho");
}

TEST(SentencePieceProto, RejectsBadVocabularies) {
  std::string proto;
  spm::ModelSpec spec;
  EXPECT_FALSE(spm::build_sentencepiece_model(spec, &proto).is_ok());  // empty
  spec.pieces = {{"<unk>", 0, spm::PieceType::Unknown}, {"a", 0, spm::PieceType::Normal},
                 {"a", 0, spm::PieceType::Normal}};
  spec.bos_id = spec.eos_id = -1;
  Status s = spm::build_sentencepiece_model(spec, &proto);
  ASSERT_FALSE(s.is_ok());
  EXPECT_NE(s.message().find("twice"), std::string::npos) << s.message();
  spec.pieces = {{"<unk>", 0, spm::PieceType::Unknown}, {"a", 0, spm::PieceType::Normal}};
  spec.bos_id = 1;  // not a control piece
  s = spm::build_sentencepiece_model(spec, &proto);
  ASSERT_FALSE(s.is_ok());
  EXPECT_NE(s.message().find("bos"), std::string::npos) << s.message();

  // llama2.c files: truncated, impossible lengths, no <unk>.
  std::string file(4, '\0');
  const int32_t max_len = 4;
  std::memcpy(file.data(), &max_len, 4);
  auto token = [](float score, const std::string& text) {
    std::string t(8, '\0');
    const int32_t len = static_cast<int32_t>(text.size());
    std::memcpy(t.data(), &score, 4);
    std::memcpy(t.data() + 4, &len, 4);
    return t + text;
  };
  s = spm::llama2c_vocab_to_spec(file + token(0, "ab"), "tok.bin", &spec);
  ASSERT_FALSE(s.is_ok());
  EXPECT_NE(s.message().find("no <unk>"), std::string::npos) << s.message();
  s = spm::llama2c_vocab_to_spec(file + token(0, "<unk>"), "tok.bin", &spec);  // longer than 4
  ASSERT_FALSE(s.is_ok());
  EXPECT_NE(s.message().find("length"), std::string::npos) << s.message();
  s = spm::llama2c_vocab_to_spec(file + token(0, "abc").substr(0, 9), "tok.bin", &spec);
  ASSERT_FALSE(s.is_ok());
  EXPECT_NE(s.message().find("tok.bin"), std::string::npos) << s.message();
  s = spm::llama2c_vocab_to_spec("ab", "tok.bin", &spec);
  ASSERT_FALSE(s.is_ok());
  EXPECT_NE(s.message().find("truncated"), std::string::npos) << s.message();
}

}  // namespace
}  // namespace magnetar::test
