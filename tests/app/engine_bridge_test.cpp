// EngineBridge against the real engine: convert stories260K through the bridge, load it, and
// check generation, stopping, prefix reuse, context overflow and error paths — the engine
// thread and both queues as the app uses them, minus the window.
#include "engine_bridge.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include "common/testdata.h"

namespace magnetar::app {
namespace {

namespace fs = std::filesystem;

class EngineBridgeTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    if (!test::testdata_present("stories260K-hf/f32")) return;
    dir_ = test::make_temp_dir("bridge");
    model_path_ = dir_ + "/stories.mgn";
  }
  static void TearDownTestSuite() {
    if (!dir_.empty()) test::remove_tree(dir_);
  }

  void SetUp() override {
    bridge_ = std::make_unique<EngineBridge>([this] { wakes_.fetch_add(1); });
  }

  // Collects events until one of `until` arrives (or the timeout).
  std::vector<EngineEvent> run(EngineCommand command, std::initializer_list<EventKind> until,
                               double timeout_seconds = 120) {
    bridge_->send(std::move(command));
    return collect(until, timeout_seconds);
  }
  std::vector<EngineEvent> collect(std::initializer_list<EventKind> until, double timeout_seconds = 120) {
    std::vector<EngineEvent> events;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_seconds);
    EngineEvent e;
    while (std::chrono::steady_clock::now() < deadline) {
      if (!bridge_->poll(&e)) {
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
        continue;
      }
      events.push_back(e);
      for (EventKind k : until)
        if (e.kind == k) return events;
    }
    ADD_FAILURE() << "timed out waiting for the engine";
    return events;
  }

  void convert_and_load(KvType kv_type = KvType::F32) {
    if (!fs::exists(model_path_)) {
      EngineCommand convert;
      convert.kind = EngineCommand::Kind::Convert;
      convert.request_id = next_id_++;
      convert.path = test::testdata_path("stories260K-hf/f32");
      convert.out_path = model_path_;
      convert.weight_type = WeightType::F32;
      const auto events = run(convert, {EventKind::ConvertDone, EventKind::ConvertFailed});
      ASSERT_EQ(events.back().kind, EventKind::ConvertDone) << events.back().text_view();
    }
    EngineCommand load;
    load.kind = EngineCommand::Kind::Load;
    load.request_id = next_id_++;
    load.path = model_path_;
    load.kv_type = kv_type;
    const auto events = run(load, {EventKind::ModelLoaded, EventKind::LoadFailed});
    ASSERT_EQ(events.back().kind, EventKind::ModelLoaded) << events.back().text_view();
    info_ = *bridge_->take_model_info();
  }

  EngineCommand generate(std::vector<ChatMessage> messages, int max_tokens,
                         OverflowPolicy overflow = OverflowPolicy::Ask) {
    EngineCommand g;
    g.kind = EngineCommand::Kind::Generate;
    g.request_id = next_id_++;
    g.messages = std::move(messages);
    g.max_tokens = max_tokens;
    g.sampler.temperature = 0;  // greedy: comparable with the engine called directly
    g.overflow = overflow;
    return g;
  }

  EngineCommand inspect(const std::string& path) {
    EngineCommand c;
    c.kind = EngineCommand::Kind::Inspect;
    c.request_id = next_id_++;
    c.path = path;
    return c;
  }

  static std::string text_of(const std::vector<EngineEvent>& events) {
    std::string text;
    for (const EngineEvent& e : events)
      if (e.kind == EventKind::Token) text.append(e.text_view());
    return text;
  }

  static std::string dir_, model_path_;
  std::unique_ptr<EngineBridge> bridge_;
  std::atomic<int> wakes_{0};
  uint64_t next_id_ = 1;
  ModelInfo info_;
};
std::string EngineBridgeTest::dir_, EngineBridgeTest::model_path_;

TEST_F(EngineBridgeTest, StreamsTheSameTextAsTheEngineDirectly) {
  MAGNETAR_REQUIRE_TESTDATA("stories260K-hf/f32");
  convert_and_load();
  EXPECT_EQ(info_.path, model_path_);
  const std::vector<ChatMessage> messages{{"user", "Once upon a time"}};
  const auto events = run(generate(messages, 40), {EventKind::GenerationDone, EventKind::GenerationFailed});
  ASSERT_EQ(events.back().kind, EventKind::GenerationDone) << events.back().text_view();
  const GenerationStats& stats = events.back().stats;
  int tokens = 0;
  for (const EngineEvent& e : events) tokens += e.kind == EventKind::Token;
  EXPECT_EQ(tokens, stats.n_generated);
  EXPECT_GT(stats.n_generated, 0);
  EXPECT_GT(wakes_.load(), 0);

  // The oracle: the engine API called on this thread with the same prompt and sampler.
  std::unique_ptr<Model> model;
  ASSERT_TRUE(Model::load(model_path_, LoadOptions{}, &model).is_ok());
  std::unique_ptr<Session> session;
  ASSERT_TRUE(Session::create(*model, &session).is_ok());
  GenerateRequest request;
  ASSERT_TRUE(model->apply_chat_template(messages, true, &request.prompt).is_ok());
  request.max_tokens = 40;
  request.sampler.temperature = 0;
  std::string direct;
  request.on_token = [&](const TokenEvent& t) {
    direct.append(t.piece);
    return true;
  };
  GenerateResult result;
  ASSERT_TRUE(session->generate(request, &result).is_ok());
  EXPECT_EQ(text_of(events), direct);
}

TEST_F(EngineBridgeTest, InspectsASourceOnTheEngineThread) {
  MAGNETAR_REQUIRE_TESTDATA("stories260K-hf/f32");
  EngineCommand command = inspect(test::testdata_path("stories260K-hf/f32"));
  auto events = run(command, {EventKind::SourceInspected, EventKind::InspectFailed});
  ASSERT_EQ(events.back().kind, EventKind::SourceInspected) << events.back().text_view();
  EXPECT_EQ(events.back().request_id, command.request_id);
  SourceSummary direct;
  ASSERT_TRUE(inspect_source(command.path, &direct).is_ok());
  const std::optional<SourceSummary> summary = bridge_->take_source_summary();
  ASSERT_TRUE(summary.has_value());
  EXPECT_EQ(summary->n_params, direct.n_params);
  EXPECT_EQ(summary->n_layers, direct.n_layers);
  EXPECT_FALSE(bridge_->take_source_summary().has_value());  // taken once

  events = run(inspect(dir_ + "/no-such-folder"), {EventKind::SourceInspected, EventKind::InspectFailed});
  EXPECT_EQ(events.back().kind, EventKind::InspectFailed);
  EXPECT_FALSE(events.back().text_view().empty());
}

// The drop flow: inspect, then convert the same source (the bridge converts the inspected plan,
// issue 14) — the result is the file converting the path directly gives.
TEST_F(EngineBridgeTest, ConvertsTheSourceItInspected) {
  MAGNETAR_REQUIRE_TESTDATA("stories260K-hf/f32");
  EngineCommand command = inspect(test::testdata_path("stories260K-hf/f32"));
  auto events = run(command, {EventKind::SourceInspected, EventKind::InspectFailed});
  ASSERT_EQ(events.back().kind, EventKind::SourceInspected) << events.back().text_view();
  EngineCommand convert;
  convert.kind = EngineCommand::Kind::Convert;
  convert.request_id = next_id_++;
  convert.path = command.path;
  convert.out_path = dir_ + "/inspected.mgn";
  convert.weight_type = WeightType::Q8_0;
  events = run(convert, {EventKind::ConvertDone, EventKind::ConvertFailed});
  ASSERT_EQ(events.back().kind, EventKind::ConvertDone) << events.back().text_view();
  ConvertOptions options;
  options.weight_type = WeightType::Q8_0;
  ASSERT_TRUE(convert_model(command.path, dir_ + "/direct.mgn", options).is_ok());
  EXPECT_EQ(test::read_file(dir_ + "/inspected.mgn"), test::read_file(dir_ + "/direct.mgn"));
}

TEST_F(EngineBridgeTest, LoadsWithTheKvCacheTypeAsked) {
  MAGNETAR_REQUIRE_TESTDATA("stories260K-hf/f32");
  convert_and_load(KvType::F32);
  const uint64_t f32_bytes = info_.kv_cache_bytes;
  EXPECT_EQ(info_.kv_type, KvType::F32);
  convert_and_load(KvType::Int8);  // a second load replaces the first
  EXPECT_EQ(info_.kv_type, KvType::Int8);
  EXPECT_LT(info_.kv_cache_bytes, f32_bytes / 2);  // a quarter plus the per-head scales
  const auto events = run(generate({{"user", "Once upon a time"}}, 16),
                          {EventKind::GenerationDone, EventKind::GenerationFailed});
  ASSERT_EQ(events.back().kind, EventKind::GenerationDone) << events.back().text_view();
  EXPECT_GT(events.back().stats.n_generated, 0);
}

TEST_F(EngineBridgeTest, SecondTurnReusesTheCachedPrefix) {
  MAGNETAR_REQUIRE_TESTDATA("stories260K-hf/f32");
  convert_and_load();
  std::vector<ChatMessage> messages{{"user", "Once upon a time"}};
  auto first = run(generate(messages, 20), {EventKind::GenerationDone, EventKind::GenerationFailed});
  ASSERT_EQ(first.back().kind, EventKind::GenerationDone);
  messages.push_back({"assistant", text_of(first)});
  messages.push_back({"user", "The end"});
  auto second = run(generate(messages, 10), {EventKind::GenerationDone, EventKind::GenerationFailed});
  ASSERT_EQ(second.back().kind, EventKind::GenerationDone);
  std::unique_ptr<Model> model;
  ASSERT_TRUE(Model::load(model_path_, LoadOptions{}, &model).is_ok());
  std::vector<int> full;
  ASSERT_TRUE(model->apply_chat_template(messages, true, &full).is_ok());
  // Only what follows the shared prefix was prefilled.
  EXPECT_LT(second.back().stats.n_prompt, static_cast<int>(full.size()));
  EXPECT_GT(second.back().stats.n_prompt, 0);
}

TEST_F(EngineBridgeTest, CancelStopsBetweenTokensAndKeepsText) {
  MAGNETAR_REQUIRE_TESTDATA("stories260K-hf/f32");
  convert_and_load();
  EngineCommand g = generate({{"user", "Once upon a time"}}, 400);
  const uint64_t id = g.request_id;
  bridge_->send(std::move(g));
  auto events = collect({EventKind::Token});
  bridge_->cancel(id);
  auto rest = collect({EventKind::GenerationDone, EventKind::GenerationFailed});
  ASSERT_EQ(rest.back().kind, EventKind::GenerationDone);
  EXPECT_EQ(rest.back().stop, StopReason::Cancelled);
  EXPECT_LT(rest.back().stats.n_generated, 400);
  // A cancel aimed at an older request does not touch the next one.
  auto next = run(generate({{"user", "Once upon a time"}}, 5), {EventKind::GenerationDone});
  EXPECT_NE(next.back().stop, StopReason::Cancelled);
}

TEST_F(EngineBridgeTest, OverflowAsksOrDropsOldestTurns) {
  MAGNETAR_REQUIRE_TESTDATA("stories260K-hf/f32");
  convert_and_load();
  std::string long_text;
  for (int i = 0; i < 60; ++i) long_text += "the little dog ran home ";
  std::vector<ChatMessage> messages;
  for (int turn = 0; turn < 4; ++turn) {
    messages.push_back({"user", long_text});
    messages.push_back({"assistant", long_text});
  }
  messages.push_back({"user", "Once upon a time"});
  auto asked = run(generate(messages, 32), {EventKind::ContextOverflow, EventKind::GenerationDone,
                                             EventKind::GenerationFailed});
  ASSERT_EQ(asked.back().kind, EventKind::ContextOverflow);
  EXPECT_GT(asked.back().done, asked.back().total);
  EXPECT_EQ(asked.back().total, info_.context_length);

  auto dropped = run(generate(messages, 32, OverflowPolicy::DropOldest),
                     {EventKind::GenerationDone, EventKind::GenerationFailed});
  ASSERT_EQ(dropped.back().kind, EventKind::GenerationDone) << dropped.back().text_view();
  bool trimmed = false;
  for (const EngineEvent& e : dropped)
    if (e.kind == EventKind::ContextTrimmed) trimmed = e.done > 0 && e.done % 2 == 0;
  EXPECT_TRUE(trimmed);
  EXPECT_LE(dropped.back().stats.n_context, info_.context_length);

  // A last message that alone does not fit: a clear error, no crash.
  std::string huge;
  for (int i = 0; i < 400; ++i) huge += "the little dog ran home ";
  auto failed = run(generate({{"user", huge}}, 32, OverflowPolicy::DropOldest),
                    {EventKind::GenerationDone, EventKind::GenerationFailed});
  ASSERT_EQ(failed.back().kind, EventKind::GenerationFailed);
  EXPECT_NE(std::string(failed.back().text_view()).find("does not fit"), std::string::npos);

  // 2 MB of random bytes, as an earlier turn: refused from its length before the tokenizer runs
  // (tokenizing it took ~730 MB), and the bridge keeps serving.
  std::string random_bytes(2 << 20, '\0');
  uint32_t state = 12345;
  for (char& c : random_bytes) c = static_cast<char>((state = state * 1664525u + 1013904223u) >> 24);
  const double t0 = std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
  auto refused = run(generate({{"user", random_bytes}, {"assistant", "ok"}, {"user", "hi"}}, 8,
                              OverflowPolicy::DropOldest),
                     {EventKind::GenerationDone, EventKind::GenerationFailed});
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count() - t0;
  ASSERT_EQ(refused.back().kind, EventKind::GenerationFailed);
  EXPECT_NE(std::string(refused.back().text_view()).find("2097152 bytes does not fit"), std::string::npos)
      << refused.back().text_view();
  EXPECT_LT(seconds, 5.0) << "the text was tokenized before its length was checked";
  auto after = run(generate({{"user", "Once upon a time"}}, 4), {EventKind::GenerationDone, EventKind::GenerationFailed});
  EXPECT_EQ(after.back().kind, EventKind::GenerationDone);
}

// Conversion to the quantised types runs through the bridge. Loading them either works (and
// generates) or, while the engine cannot compute with them, fails with a message — never a crash,
// and the bridge keeps serving.
TEST_F(EngineBridgeTest, QuantisedConversionLoadsOrExplains) {
  MAGNETAR_REQUIRE_TESTDATA("stories260K-hf/f32");
  for (WeightType type : {WeightType::Q8_0, WeightType::Q4_0}) {
    EngineCommand convert;
    convert.kind = EngineCommand::Kind::Convert;
    convert.request_id = next_id_++;
    convert.path = test::testdata_path("stories260K-hf/f32");
    convert.out_path = dir_ + "/stories-" + weight_type_name(type) + ".mgn";
    convert.weight_type = type;
    auto c = run(convert, {EventKind::ConvertDone, EventKind::ConvertFailed});
    ASSERT_EQ(c.back().kind, EventKind::ConvertDone) << c.back().text_view();
    EngineCommand load;
    load.kind = EngineCommand::Kind::Load;
    load.request_id = next_id_++;
    load.path = convert.out_path;
    auto l = run(load, {EventKind::ModelLoaded, EventKind::LoadFailed});
    auto g = run(generate({{"user", "Once upon a time"}}, 8), {EventKind::GenerationDone, EventKind::GenerationFailed});
    if (l.back().kind == EventKind::LoadFailed) {
      EXPECT_NE(std::string(l.back().text_view()).find(weight_type_name(type)), std::string::npos)
          << l.back().text_view();
      EXPECT_EQ(g.back().kind, EventKind::GenerationFailed);  // no model: said, not crashed
      continue;
    }
    EXPECT_EQ(bridge_->take_model_info()->weight_type, weight_type_name(type));
    ASSERT_EQ(g.back().kind, EventKind::GenerationDone) << g.back().text_view();
    EXPECT_GT(g.back().stats.n_generated, 0);
  }
}

TEST_F(EngineBridgeTest, BrokenInputsGiveMessages) {
  const std::string dir = test::make_temp_dir("bridge-bad");
  fs::create_directories(dir + "/not-a-model");
  std::ofstream(dir + "/garbage.mgn") << "MAGNETAR but not really a model file";
  EngineCommand convert;
  convert.kind = EngineCommand::Kind::Convert;
  convert.request_id = next_id_++;
  convert.path = dir + "/not-a-model";
  convert.out_path = dir + "/out.mgn";
  auto c = run(convert, {EventKind::ConvertDone, EventKind::ConvertFailed});
  EXPECT_EQ(c.back().kind, EventKind::ConvertFailed);
  EXPECT_GT(c.back().text_length, 0u);
  EXPECT_FALSE(fs::exists(dir + "/out.mgn"));

  EngineCommand load;
  load.kind = EngineCommand::Kind::Load;
  load.request_id = next_id_++;
  load.path = dir + "/garbage.mgn";
  auto l = run(load, {EventKind::ModelLoaded, EventKind::LoadFailed});
  EXPECT_EQ(l.back().kind, EventKind::LoadFailed);
  EXPECT_GT(l.back().text_length, 0u);

  auto g = run(generate({{"user", "hi"}}, 5), {EventKind::GenerationDone, EventKind::GenerationFailed});
  EXPECT_EQ(g.back().kind, EventKind::GenerationFailed);  // no model
  test::remove_tree(dir);
}

}  // namespace
}  // namespace magnetar::app
