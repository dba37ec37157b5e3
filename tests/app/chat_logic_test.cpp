// Drop classification (a drop is a function call here), context fitting, predictions.
#include "core/chat_logic.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "common/testdata.h"

namespace magnetar::app {
namespace {

namespace fs = std::filesystem;

class DropTest : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = fs::path(test::make_temp_dir("drop")); }
  void TearDown() override { test::remove_tree(dir_.string()); }
  void write(const fs::path& path, const std::string& bytes) {
    fs::create_directories(path.parent_path());
    std::ofstream(path, std::ios::binary) << bytes;
  }
  fs::path dir_;
};

TEST_F(DropTest, HuggingFaceFolderAndFilesInsideIt) {
  write(dir_ / "llama" / "config.json", "{}");
  write(dir_ / "llama" / "model.safetensors", "x");
  EXPECT_EQ(classify_drop((dir_ / "llama").string()).kind, DropKind::HuggingFaceFolder);
  const DropTarget from_file = classify_drop((dir_ / "llama" / "model.safetensors").string());
  EXPECT_EQ(from_file.kind, DropKind::HuggingFaceFolder);
  EXPECT_EQ(fs::path(from_file.path), dir_ / "llama");
}

TEST_F(DropTest, MagnetarFileByMagicNotByName) {
  write(dir_ / "model.mgn", std::string("MAGNETAR") + std::string(100, '\0'));
  write(dir_ / "renamed.dat", std::string("MAGNETAR") + std::string(100, '\0'));
  write(dir_ / "broken.mgn", "NOTAMODEL");
  EXPECT_EQ(classify_drop((dir_ / "model.mgn").string()).kind, DropKind::MagnetarModel);
  EXPECT_EQ(classify_drop((dir_ / "renamed.dat").string()).kind, DropKind::MagnetarModel);
  const DropTarget broken = classify_drop((dir_ / "broken.mgn").string());
  EXPECT_EQ(broken.kind, DropKind::Unsupported);
  EXPECT_NE(broken.message.find("not a Magnetar model"), std::string::npos);
}

TEST_F(DropTest, UnsupportedThingsSayWhy) {
  write(dir_ / "notes.txt", "hello");
  fs::create_directories(dir_ / "photos");
  for (const fs::path& p : {dir_ / "notes.txt", dir_ / "photos", dir_ / "missing"}) {
    const DropTarget t = classify_drop(p.string());
    EXPECT_EQ(t.kind, DropKind::Unsupported) << p;
    EXPECT_FALSE(t.message.empty()) << p;
  }
  EXPECT_NE(classify_drop((dir_ / "photos").string()).message.find("config.json"), std::string::npos);
  write(dir_ / "stories.bin", "x");
  EXPECT_EQ(classify_drop((dir_ / "stories.bin").string()).kind, DropKind::Llama2cCheckpoint);
  write(dir_ / "model.gguf", "GGUF\x03");
  EXPECT_EQ(classify_drop((dir_ / "model.gguf").string()).kind, DropKind::GgufFile);
  write(dir_ / "renamed-gguf.dat", "GGUF\x03");  // recognised by its magic
  EXPECT_EQ(classify_drop((dir_ / "renamed-gguf.dat").string()).kind, DropKind::GgufFile);
}

TEST_F(DropTest, RealTestDataFolder) {
  MAGNETAR_REQUIRE_TESTDATA("stories260K-hf/f32");
  EXPECT_EQ(classify_drop(test::testdata_path("stories260K-hf/f32")).kind, DropKind::HuggingFaceFolder);
}

std::vector<Message> chat(std::initializer_list<const char*> roles) {
  std::vector<Message> messages;
  for (const char* r : roles) messages.push_back(Message{r, "x", 0, {}});
  return messages;
}

TEST(ContextFit, KeepsMostRecentTurnsThatFit) {
  // Each message costs 10 tokens.
  const auto messages = chat({"user", "assistant", "user", "assistant", "user"});
  auto cost = [&](size_t first) { return static_cast<int>(10 * (messages.size() - first)); };
  EXPECT_EQ(first_message_to_keep(messages, cost, 50), 0);  // everything fits
  EXPECT_EQ(first_message_to_keep(messages, cost, 49), 2);  // drop the first turn (2 messages)
  EXPECT_EQ(first_message_to_keep(messages, cost, 25), 4);  // only the last user message
  EXPECT_EQ(first_message_to_keep(messages, cost, 9), -1);  // even that does not fit
}

TEST(ContextFit, NeverStartsAtAnAssistantMessage) {
  const auto messages = chat({"user", "assistant", "assistant", "user"});
  std::vector<size_t> asked;
  auto cost = [&](size_t first) {
    asked.push_back(first);
    return static_cast<int>(10 * (messages.size() - first));
  };
  EXPECT_EQ(first_message_to_keep(messages, cost, 15), 3);
  for (size_t first : asked) EXPECT_EQ(messages[first].role, "user");
}

// The overflow policy on the engine's messages: 10 tokens per message, the system prompt too.
std::vector<ChatMessage> engine_chat(std::initializer_list<const char*> roles) {
  std::vector<ChatMessage> messages;
  int n = 0;
  for (const char* r : roles) messages.push_back(ChatMessage{r, std::string(1, 'm').append(std::to_string(n++))});
  return messages;
}
int ten_per_message(const std::vector<ChatMessage>& messages) { return static_cast<int>(10 * messages.size()); }

TEST(OverflowPolicy, AskSendsNothingAndLeavesTheChoiceToTheUser) {
  const auto messages = engine_chat({"system", "user", "assistant", "user"});
  const OverflowDecision d = decide_overflow(messages, OverflowPolicy::Ask, 25, ten_per_message);
  EXPECT_EQ(d.action, OverflowDecision::Action::Ask);
  EXPECT_TRUE(d.messages.empty());
}

TEST(OverflowPolicy, DropOldestKeepsTheSystemPromptAndWholeTurns) {
  const auto messages = engine_chat({"system", "user", "assistant", "user", "assistant", "user"});
  const OverflowDecision d = decide_overflow(messages, OverflowPolicy::DropOldest, 45, ten_per_message);
  ASSERT_EQ(d.action, OverflowDecision::Action::SendTrimmed);
  EXPECT_EQ(d.left_out, 2);  // the first turn (user + assistant)
  ASSERT_EQ(d.messages.size(), 4u);
  EXPECT_EQ(d.messages[0].content, "m0");  // the system prompt stays
  EXPECT_EQ(d.messages[1].content, "m3");
  EXPECT_EQ(d.messages.back().content, "m5");
}

TEST(OverflowPolicy, DropOldestWithoutASystemPrompt) {
  const auto messages = engine_chat({"user", "assistant", "user"});
  const OverflowDecision d = decide_overflow(messages, OverflowPolicy::DropOldest, 10, ten_per_message);
  ASSERT_EQ(d.action, OverflowDecision::Action::SendTrimmed);
  EXPECT_EQ(d.left_out, 2);
  ASSERT_EQ(d.messages.size(), 1u);
  EXPECT_EQ(d.messages[0].content, "m2");
}

TEST(OverflowPolicy, TheLastMessageAloneTooLong) {
  const auto messages = engine_chat({"system", "user", "assistant", "user"});
  EXPECT_EQ(decide_overflow(messages, OverflowPolicy::DropOldest, 19, ten_per_message).action,
            OverflowDecision::Action::TooLong);
}

TEST(Predictions, SpeedAndMemory) {
  EXPECT_DOUBLE_EQ(predicted_tokens_per_second(2'000'000'000ull, 20.0), 10.0);
  EXPECT_EQ(predicted_tokens_per_second(0, 20.0), 0.0);
  // 2 layers × (2 KV heads × 32) × (100 key positions + 128 value positions: values are stored
  // in blocks of 64) × 4 bytes, plus the file and scratch.
  EXPECT_EQ(predicted_ram_bytes(1000, 2, 2, 32, 100, KvType::F32), 1000u + 2u * 64 * (100 + 128) * 4 + (64u << 20));
  EXPECT_EQ(predicted_ram_bytes(1000, 2, 2, 32, 100, KvType::F16), 1000u + 2u * 64 * (100 + 128) * 2 + (64u << 20));
  // Int8: one byte per element plus a float scale per head and position for keys and values.
  EXPECT_EQ(predicted_ram_bytes(1000, 2, 2, 32, 100, KvType::Int8),
            1000u + 2u * (64 * (100 + 128) + 2 * 2 * 100 * 4) + (64u << 20));
  EXPECT_LT(bytes_per_parameter(WeightType::Q4_0), bytes_per_parameter(WeightType::Q8_0));
  EXPECT_DOUBLE_EQ(bytes_per_parameter(WeightType::Q6_K), 210.0 / 256.0);  // the type record's block
  EXPECT_LT(bytes_per_parameter(WeightType::Q4_K_M), bytes_per_parameter(WeightType::Q5_K_M));
  EXPECT_LT(bytes_per_parameter(WeightType::Q5_K_M), bytes_per_parameter(WeightType::Q6_K));
  // The drop dialog lists its types largest first (ui.h's kWeightTypes): Q4_0, Q3_K_M, Q2_K.
  EXPECT_LT(bytes_per_parameter(WeightType::Q3_K_M), bytes_per_parameter(WeightType::Q4_0));
  EXPECT_LT(bytes_per_parameter(WeightType::Q2_K_Mix), bytes_per_parameter(WeightType::Q3_K_M));
  // The drop dialog's pre-selection: Q4_K_M above 1B parameters, F16 below.
  EXPECT_EQ(recommended_weight_type(1100000000), WeightType::Q4_K_M);
  EXPECT_EQ(recommended_weight_type(260000), WeightType::F16);
  EXPECT_EQ(recommended_weight_type(kRecommendKQuantAbove), WeightType::F16);
  EXPECT_EQ(reply_reserve_tokens(512, 256), 64);
  EXPECT_EQ(reply_reserve_tokens(100, 256), 25);
  EXPECT_EQ(reply_reserve_tokens(4096, 10), 10);
}

TEST(Predictions, ConvertedFileNames) {
  EXPECT_EQ(converted_model_file_name("/data/TinyLlama 1.1B/", "f16"), "TinyLlama_1.1B-f16.mgn");
  EXPECT_EQ(converted_model_file_name("/x/stories260K.bin", "q8_0"), "stories260K-q8_0.mgn");
  EXPECT_EQ(converted_model_file_name("/x/tiny-llama-Q4_K_M.gguf", "f16"), "tiny-llama-Q4_K_M-f16.mgn");
  EXPECT_EQ(converted_model_file_name("/data/stories260K-hf/bf16", "f16"), "stories260K-hf-bf16-f16.mgn");
}

}  // namespace
}  // namespace magnetar::app
