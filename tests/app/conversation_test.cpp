// Conversation JSON round trip, validation of untrusted files, titles and Markdown export.
#include "core/conversation.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace magnetar::app {
namespace {

Conversation sample() {
  Conversation c;
  c.id = "20261130-120000-abcdef";
  c.title = "Kernels";
  c.created = 100;
  c.updated = 200;
  c.model_path = "/models/stories-f16.mgn";
  c.system_prompt = "Be brief.";
  c.sampling.temperature = 0.2f;
  c.sampling.top_k = 7;
  c.messages.push_back(Message{"user", "Hi — 日本語 too", 150, {}});
  Message answer{"assistant", "Hello!\n```cpp\nint x;\n```", 160, {}};
  answer.stats.present = true;
  answer.stats.generated_tokens = 12;
  answer.stats.generate_tokens_per_second = 42.5;
  answer.stats.stop_reason = "end of text";
  c.messages.push_back(answer);
  return c;
}

TEST(Conversation, JsonRoundTripKeepsEverything) {
  const Conversation c = sample();
  const nlohmann::json j = conversation_to_json(c);
  EXPECT_EQ(j["format_version"], kConversationFormatVersion);
  Conversation back;
  ASSERT_TRUE(conversation_from_json(nlohmann::json::parse(j.dump()), &back).is_ok());
  EXPECT_EQ(back.id, c.id);
  EXPECT_EQ(back.title, c.title);
  EXPECT_EQ(back.model_path, c.model_path);
  EXPECT_EQ(back.system_prompt, c.system_prompt);
  EXPECT_FLOAT_EQ(back.sampling.temperature, 0.2f);
  EXPECT_EQ(back.sampling.top_k, 7);
  ASSERT_EQ(back.messages.size(), 2u);
  EXPECT_EQ(back.messages[0].content, c.messages[0].content);
  EXPECT_FALSE(back.messages[0].stats.present);
  EXPECT_TRUE(back.messages[1].stats.present);
  EXPECT_EQ(back.messages[1].stats.generated_tokens, 12);
  EXPECT_DOUBLE_EQ(back.messages[1].stats.generate_tokens_per_second, 42.5);
  EXPECT_EQ(back.messages[1].stats.stop_reason, "end of text");
}

TEST(Conversation, RejectsMalformedInputWithAReason) {
  nlohmann::json j = conversation_to_json(sample());
  Conversation out;

  nlohmann::json newer = j;
  newer["format_version"] = kConversationFormatVersion + 1;
  Status s = conversation_from_json(newer, &out);
  EXPECT_FALSE(s.is_ok());
  EXPECT_NE(s.message().find("newer"), std::string::npos);

  nlohmann::json wrong_type = j;
  wrong_type["messages"][0]["content"] = 5;
  EXPECT_FALSE(conversation_from_json(wrong_type, &out).is_ok());

  nlohmann::json bad_role = j;
  bad_role["messages"][0]["role"] = "wizard";
  EXPECT_FALSE(conversation_from_json(bad_role, &out).is_ok());

  nlohmann::json path_id = j;
  path_id["id"] = "../../etc/passwd";
  EXPECT_FALSE(conversation_from_json(path_id, &out).is_ok());

  EXPECT_FALSE(conversation_from_json(nlohmann::json::array(), &out).is_ok());
  nlohmann::json no_messages = j;
  no_messages.erase("messages");
  EXPECT_FALSE(conversation_from_json(no_messages, &out).is_ok());
}

TEST(Conversation, TitleComesFromFirstLineAndCutsUtf8Safely) {
  EXPECT_EQ(title_from_text("  Hello there\nsecond line"), "Hello there");
  EXPECT_EQ(title_from_text("   "), "New chat");
  const std::string long_cjk(60, 'a');
  std::string japanese;
  for (int i = 0; i < 30; ++i) japanese += "語";  // 3 bytes each
  const std::string title = title_from_text(japanese);
  // 48 bytes cut on a character boundary (16 characters) plus the ellipsis.
  EXPECT_EQ(title.substr(0, title.size() - std::string("…").size()).size() % 3, 0u);
  EXPECT_EQ(title.find("…"), title.size() - std::string("…").size());
  EXPECT_LE(title_from_text(long_cjk).size(), 48u + std::string("…").size());
}

TEST(Conversation, IdsAreUniqueAndSafeFileNames) {
  const std::string a = make_conversation_id(), b = make_conversation_id();
  EXPECT_NE(a, b);
  EXPECT_EQ(a.size(), std::string("20261130-120000-abcdef").size());
}

TEST(Conversation, MarkdownExportHasEveryMessageAndStats) {
  const std::string md = conversation_to_markdown(sample());
  EXPECT_EQ(md.rfind("# Kernels\n", 0), 0u);
  EXPECT_NE(md.find("## You\n\nHi — 日本語 too"), std::string::npos);
  EXPECT_NE(md.find("## Assistant\n\nHello!\n```cpp\nint x;\n```"), std::string::npos);
  EXPECT_NE(md.find("12 tokens · 42.5 tok/s"), std::string::npos);
  EXPECT_NE(md.find("Be brief."), std::string::npos);
}

}  // namespace
}  // namespace magnetar::app
