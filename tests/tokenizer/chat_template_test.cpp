// Chat template rendering, checked against the exact strings the models' Jinja templates produce.
#include <gtest/gtest.h>

#include "tokenizer/chat_template.h"

namespace magnetar {
namespace {

const SpecialTokenText kGemma{"<bos>", "<eos>"};
const SpecialTokenText kLlama{"<s>", "</s>"};

TEST(ChatTemplate, GemmaTurnsAndGenerationPrompt) {
  std::vector<ChatMessage> m = {{"user", "Hello, who are you?"},
                                {"assistant", "I am a small test model."},
                                {"user", "  Tell me more.\n"}};
  EXPECT_EQ(render_chat(ChatTemplate::Gemma, m, true, kGemma, true),
            "<bos><start_of_turn>user\nHello, who are you?<end_of_turn>\n"
            "<start_of_turn>model\nI am a small test model.<end_of_turn>\n"
            "<start_of_turn>user\nTell me more.<end_of_turn>\n<start_of_turn>model\n");
  EXPECT_EQ(render_chat(ChatTemplate::Gemma, {{"user", "Hi"}}, false, kGemma, true),
            "<bos><start_of_turn>user\nHi<end_of_turn>\n");
}

TEST(ChatTemplate, GemmaFoldsTheSystemPromptIntoTheFirstUserTurn) {
  EXPECT_EQ(render_chat(ChatTemplate::Gemma, {{"system", "Be brief."}, {"user", "Hi"}}, true,
                        kGemma, true),
            "<bos><start_of_turn>user\nBe brief.\n\nHi<end_of_turn>\n<start_of_turn>model\n");
}

TEST(ChatTemplate, Llama2WithSystemPrompt) {
  std::vector<ChatMessage> m = {{"system", "You are helpful."},
                                {"user", "Hi"},
                                {"assistant", "Hello!"},
                                {"user", "How are you?"}};
  EXPECT_EQ(render_chat(ChatTemplate::Llama2, m, true, kLlama, true),
            "<s>[INST] <<SYS>>\nYou are helpful.\n<</SYS>>\n\nHi [/INST] Hello! </s>"
            "<s>[INST] How are you? [/INST]");
}

TEST(ChatTemplate, PlainCompletionForBaseModels) {
  EXPECT_EQ(render_chat(ChatTemplate::None, {{"user", "Once upon a time"}}, true, kLlama, true),
            "<s>Once upon a time");
  EXPECT_EQ(render_chat(ChatTemplate::None, {{"user", "a"}, {"assistant", "b"}}, true, kLlama, false),
            "a\nb");
}

}  // namespace
}  // namespace magnetar
