// AppState driven as the frame loop drives it: user actions in, engine events in, commands
// out — with no window and no engine.
#include "core/app_state.h"

#include <gtest/gtest.h>

#include "common/testdata.h"

namespace magnetar::app {
namespace {

EngineEvent event(EventKind kind, uint64_t request_id, std::string_view text = {}) {
  EngineEvent e;
  e.kind = kind;
  e.request_id = request_id;
  e.set_text(text);
  return e;
}

class AppStateTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = test::make_temp_dir("appstate");
    ASSERT_TRUE(app_.open_store(dir_).is_ok());
  }
  void TearDown() override { test::remove_tree(dir_); }

  void load_model(int context_length = 512) {
    app_.request_load("/models/tiny.mgn");
    ASSERT_EQ(app_.outbox.size(), 1u);
    EXPECT_EQ(app_.outbox[0].kind, EngineCommand::Kind::Load);
    const uint64_t id = app_.outbox[0].request_id;
    app_.outbox.clear();
    EXPECT_EQ(app_.activity, EngineActivity::Loading);
    ModelInfo info;
    info.path = "/models/tiny.mgn";
    info.context_length = context_length;
    info.max_context = context_length;
    app_.on_event(event(EventKind::ModelLoaded, id), 1.0, &info);
    ASSERT_TRUE(app_.model.present);
    EXPECT_EQ(app_.activity, EngineActivity::Idle);
  }

  // Sends and returns the Generate command's request id.
  uint64_t send(const std::string& text) {
    EXPECT_TRUE(app_.send(text, 2.0));
    EXPECT_EQ(app_.outbox.size(), 1u);
    EXPECT_EQ(app_.outbox.back().kind, EngineCommand::Kind::Generate);
    const uint64_t id = app_.outbox.back().request_id;
    last_command_ = app_.outbox.back();
    app_.outbox.clear();
    return id;
  }

  void stream(uint64_t id, std::initializer_list<const char*> pieces, double t = 3.0) {
    for (const char* p : pieces) {
      EngineEvent e = event(EventKind::Token, id, p);
      e.stats.n_generated = 1;
      e.stats.generate_tokens_per_second = 100;
      app_.on_event(e, t);
      t += 0.5;
    }
  }

  void finish(uint64_t id, StopReason stop = StopReason::EndOfGeneration) {
    EngineEvent done = event(EventKind::GenerationDone, id);
    done.stop = stop;
    done.stats.n_prompt = 20;
    done.stats.n_generated = 3;
    done.stats.n_context = 23;
    done.stats.generate_tokens_per_second = 99;
    app_.on_event(done, 10.0);
  }

  Conversation reopen_active() {
    ConversationStore again;
    EXPECT_TRUE(again.open(dir_).is_ok());
    const Conversation* c = again.find(app_.active_id);
    EXPECT_NE(c, nullptr);
    return c ? *c : Conversation{};
  }

  std::string dir_;
  AppState app_;
  EngineCommand last_command_;
};

TEST_F(AppStateTest, KvCacheTypeFromSettingsGoesWithTheNextLoad) {
  app_.settings.kv_type = KvType::Int8;
  app_.settings.context_length = 256;
  app_.request_load("/models/tiny.mgn");
  ASSERT_EQ(app_.outbox.size(), 1u);
  EXPECT_EQ(app_.outbox[0].kind, EngineCommand::Kind::Load);
  EXPECT_EQ(app_.outbox[0].kv_type, KvType::Int8);
  EXPECT_EQ(app_.outbox[0].context_length, 256);
  const uint64_t id = app_.outbox[0].request_id;
  app_.outbox.clear();
  ModelInfo info;
  info.path = "/models/tiny.mgn";
  info.context_length = 256;
  info.kv_type = KvType::Int8;  // what the engine actually allocated
  info.kv_cache_bytes = 4096;
  app_.on_event(event(EventKind::ModelLoaded, id), 1.0, &info);
  EXPECT_EQ(app_.model.info.kv_type, KvType::Int8);
  EXPECT_EQ(app_.model.info.kv_cache_bytes, 4096u);
  // Changing the setting does not pretend the loaded model changed.
  app_.settings.kv_type = KvType::F16;
  EXPECT_EQ(app_.model.info.kv_type, KvType::Int8);
}

TEST_F(AppStateTest, InspectionGoesThroughTheEngineAndKeepsOnlyTheLatest) {
  app_.request_inspect("/sources/first");
  app_.request_inspect("/sources/second");  // a second drop replaces the first
  ASSERT_EQ(app_.outbox.size(), 2u);
  EXPECT_EQ(app_.outbox[1].kind, EngineCommand::Kind::Inspect);
  EXPECT_EQ(app_.outbox[1].path, "/sources/second");
  const uint64_t first = app_.outbox[0].request_id, second = app_.outbox[1].request_id;
  app_.outbox.clear();
  EXPECT_TRUE(app_.inspection.active);
  EXPECT_FALSE(app_.busy());  // inspecting is not a job: nothing else waits for it

  SourceSummary stale;
  stale.n_layers = 1;
  app_.on_event(event(EventKind::SourceInspected, first), 1.0, nullptr, &stale);
  EXPECT_TRUE(app_.inspection.active);  // the replaced request's answer is ignored

  SourceSummary summary;
  summary.n_layers = 5;
  summary.kind = "Hugging Face folder";
  app_.on_event(event(EventKind::SourceInspected, second), 1.0, nullptr, &summary);
  EXPECT_FALSE(app_.inspection.active);
  EXPECT_TRUE(app_.inspection.ok);
  EXPECT_EQ(app_.inspection.source, "/sources/second");
  EXPECT_EQ(app_.inspection.summary.n_layers, 5);

  app_.request_inspect("/sources/broken");
  const uint64_t broken = app_.outbox.back().request_id;
  app_.on_event(event(EventKind::InspectFailed, broken, "config.json is missing"), 2.0);
  EXPECT_FALSE(app_.inspection.active);
  EXPECT_FALSE(app_.inspection.ok);
  EXPECT_EQ(app_.inspection.error, "config.json is missing");
}

TEST(KvTypeNames, SettingsSpellingRoundTripsThroughTheEngine) {
  for (KvType type : {KvType::F32, KvType::F16, KvType::Int8}) {
    KvType back = KvType::F32;
    ASSERT_TRUE(parse_kv_type(kv_type_name(type), &back));
    EXPECT_EQ(back, type);
  }
  EXPECT_STREQ(kv_type_name(KvType::Int8), "int8");
  KvType untouched = KvType::F16;
  for (const char* bad : {"", "F16", "q8_0", "int4", "f16 "}) {
    EXPECT_FALSE(parse_kv_type(bad, &untouched)) << bad;
    EXPECT_EQ(untouched, KvType::F16);
  }
}

TEST_F(AppStateTest, SendingWithoutAModelIsRefusedWithAHint) {
  EXPECT_FALSE(app_.send("hello", 0));
  EXPECT_TRUE(app_.outbox.empty());
  ASSERT_FALSE(app_.notices.empty());
  EXPECT_NE(app_.notices.back().text.find("drop"), std::string::npos);
}

TEST_F(AppStateTest, StreamingAnswerIsSavedWithItsStatistics) {
  load_model();
  app_.settings.system_prompt = "Be kind.";
  app_.new_conversation();
  const uint64_t id = send("  Tell me a story  ");
  ASSERT_EQ(last_command_.messages.size(), 2u);
  EXPECT_EQ(last_command_.messages[0].role, "system");
  EXPECT_EQ(last_command_.messages[1].content, "Tell me a story");
  EXPECT_EQ(last_command_.overflow, OverflowPolicy::Ask);
  EXPECT_EQ(app_.activity, EngineActivity::Generating);
  EXPECT_EQ(app_.active()->title, "Tell me a story");

  // The user message is on disk before any token arrives.
  Conversation saved = reopen_active();
  ASSERT_GE(saved.messages.size(), 1u);
  EXPECT_EQ(saved.messages[0].content, "Tell me a story");

  stream(id, {" Once", " upon", " a time"});
  EXPECT_EQ(app_.active()->messages.back().content, "Once upon a time");
  EXPECT_FALSE(app_.speed_history.empty());
  finish(id);
  EXPECT_EQ(app_.activity, EngineActivity::Idle);
  EXPECT_EQ(app_.context_used, 23);

  saved = reopen_active();
  ASSERT_EQ(saved.messages.size(), 2u);
  EXPECT_EQ(saved.messages[1].content, "Once upon a time");
  EXPECT_TRUE(saved.messages[1].stats.present);
  EXPECT_EQ(saved.messages[1].stats.generated_tokens, 3);
  EXPECT_EQ(saved.messages[1].stats.stop_reason, "end of text");
  EXPECT_EQ(saved.model_path, "/models/tiny.mgn");
}

TEST_F(AppStateTest, EventsOfOtherRequestsAreIgnored) {
  load_model();
  const uint64_t id = send("hi");
  stream(id + 100, {"stale"});
  stream(id, {"fresh"});
  EXPECT_EQ(app_.active()->messages.back().content, "fresh");
}

TEST_F(AppStateTest, StopKeepsWhatWasWrittenAndEmptyAnswersVanish) {
  load_model();
  uint64_t id = send("first");
  app_.stop();
  ASSERT_EQ(app_.cancel_requests, std::vector<uint64_t>{id});
  app_.cancel_requests.clear();
  stream(id, {"partial"});
  finish(id, StopReason::Cancelled);
  EXPECT_EQ(app_.active()->messages.back().content, "partial");
  EXPECT_EQ(app_.active()->messages.back().stats.stop_reason, "stopped");

  id = send("second");
  finish(id, StopReason::Cancelled);  // stopped before any token
  EXPECT_EQ(app_.active()->messages.back().role, "user");
  EXPECT_EQ(app_.active()->messages.back().content, "second");
}

TEST_F(AppStateTest, BusyEngineRefusesASecondSend) {
  load_model();
  send("one");
  EXPECT_FALSE(app_.send("two", 2.5));
  EXPECT_TRUE(app_.outbox.empty());
}

TEST_F(AppStateTest, RegenerateAndEditResend) {
  load_model();
  uint64_t id = send("question");
  stream(id, {"answer one"});
  finish(id);
  ASSERT_TRUE(app_.regenerate(11.0));
  ASSERT_EQ(app_.outbox.size(), 1u);
  EXPECT_EQ(app_.outbox[0].messages.back().content, "question");  // the old answer is not sent
  id = app_.outbox[0].request_id;
  app_.outbox.clear();
  stream(id, {"answer two"});
  finish(id);
  ASSERT_EQ(app_.active()->messages.size(), 2u);
  EXPECT_EQ(app_.active()->messages[1].content, "answer two");

  ASSERT_TRUE(app_.edit_and_resend(0, "better question", 12.0));
  EXPECT_EQ(app_.outbox[0].messages.back().content, "better question");
  EXPECT_EQ(app_.active()->messages.size(), 2u);  // user + the new (empty) answer
  EXPECT_FALSE(app_.edit_and_resend(1, "not a user message", 12.0));
}

TEST_F(AppStateTest, OverflowAsksThenDropsOldestTurns) {
  load_model();
  const uint64_t id = send("a very long message");
  EngineEvent overflow = event(EventKind::ContextOverflow, id);
  overflow.done = 600;
  overflow.total = 512;
  app_.on_event(overflow, 3.0);
  ASSERT_TRUE(app_.overflow.has_value());
  EXPECT_EQ(app_.overflow->needed, 600);
  EXPECT_EQ(app_.activity, EngineActivity::Idle);
  EXPECT_EQ(app_.active()->messages.back().role, "user");  // nothing lost, no empty answer

  app_.resolve_overflow(/*drop_oldest_turns=*/true, 4.0);
  ASSERT_EQ(app_.outbox.size(), 1u);
  EXPECT_EQ(app_.outbox[0].overflow, OverflowPolicy::DropOldest);
  EXPECT_FALSE(app_.overflow.has_value());

  // Choosing "stop" sends nothing.
  const uint64_t id2 = app_.outbox[0].request_id;
  app_.outbox.clear();
  finish(id2, StopReason::Cancelled);
  const uint64_t id3 = send("again");
  overflow.request_id = id3;
  app_.on_event(overflow, 5.0);
  app_.resolve_overflow(false, 6.0);
  EXPECT_TRUE(app_.outbox.empty());
}

TEST_F(AppStateTest, ContextFullKeepsTheAnswerAndWarns) {
  load_model();
  const uint64_t id = send("go");
  stream(id, {"long answer"});
  finish(id, StopReason::ContextFull);
  EXPECT_EQ(app_.active()->messages.back().content, "long answer");
  EXPECT_EQ(app_.active()->messages.back().stats.stop_reason, "context full");
  EXPECT_EQ(app_.notices.back().level, Notice::Level::Warning);
}

TEST_F(AppStateTest, FailureKeepsPartialTextAndReports) {
  load_model();
  const uint64_t id = send("go");
  stream(id, {"half"});
  app_.on_event(event(EventKind::GenerationFailed, id, "out of memory"), 4.0);
  EXPECT_EQ(app_.active()->messages.back().content, "half");
  EXPECT_EQ(app_.notices.back().level, Notice::Level::Error);
  EXPECT_NE(app_.notices.back().text.find("out of memory"), std::string::npos);
  EXPECT_FALSE(app_.busy());
}

TEST_F(AppStateTest, ConversionThenLoad) {
  app_.request_convert("/hf/llama", "/data/models/llama-f16.mgn", WeightType::F16, 0);
  ASSERT_EQ(app_.outbox.size(), 1u);
  const uint64_t id = app_.outbox[0].request_id;
  EXPECT_EQ(app_.outbox[0].kind, EngineCommand::Kind::Convert);
  app_.outbox.clear();
  EngineEvent progress = event(EventKind::ConvertProgress, id, "tensor layers.0.wq");
  progress.done = 50;
  progress.total = 200;
  app_.on_event(progress, 1.0);
  EXPECT_EQ(app_.convert_job.done, 50u);
  EXPECT_EQ(app_.convert_job.stage, "tensor layers.0.wq");
  app_.cancel_job();
  EXPECT_EQ(app_.cancel_requests, std::vector<uint64_t>{id});
  app_.cancel_requests.clear();
  app_.on_event(event(EventKind::ConvertDone, id), 2.0);
  ASSERT_EQ(app_.outbox.size(), 1u);
  EXPECT_EQ(app_.outbox[0].kind, EngineCommand::Kind::Load);
  EXPECT_EQ(app_.outbox[0].path, "/data/models/llama-f16.mgn");
  EXPECT_EQ(app_.activity, EngineActivity::Loading);
}

TEST_F(AppStateTest, FailedConversionChangesNothingElse) {
  load_model();
  app_.request_convert("/hf/broken", "/data/x.mgn", WeightType::F16, 0);
  const uint64_t id = app_.outbox.back().request_id;
  app_.outbox.clear();
  app_.on_event(event(EventKind::ConvertFailed, id, "config.json: missing hidden_size"), 1.0);
  EXPECT_TRUE(app_.model.present);
  EXPECT_EQ(app_.model.info.path, "/models/tiny.mgn");
  EXPECT_TRUE(app_.outbox.empty());
  EXPECT_NE(app_.notices.back().text.find("missing hidden_size"), std::string::npos);
}

TEST_F(AppStateTest, DeletingTheChatBeingWrittenStopsIt) {
  load_model();
  const uint64_t id = send("hi");
  const std::string chat = app_.active_id;
  ASSERT_TRUE(app_.remove(chat).is_ok());
  EXPECT_EQ(app_.cancel_requests, std::vector<uint64_t>{id});
  stream(id, {"late token"});  // must not crash or resurrect the chat
  finish(id, StopReason::Cancelled);
  EXPECT_EQ(app_.store.find(chat), nullptr);
  EXPECT_FALSE(app_.busy());
}

TEST_F(AppStateTest, NewChatReusesAnEmptyOne) {
  const std::string first = app_.new_conversation();
  EXPECT_EQ(app_.new_conversation(), first);
  EXPECT_EQ(app_.store.conversations().size(), 1u);
}

TEST_F(AppStateTest, SelectingAChatShowsItsContextUse) {
  load_model();
  const uint64_t id = send("hi");
  stream(id, {"hello"});
  finish(id);
  const std::string first = app_.active_id;
  app_.new_conversation();
  EXPECT_EQ(app_.context_used, 0);
  app_.select(first);
  EXPECT_EQ(app_.context_used, 23);
}

}  // namespace
}  // namespace magnetar::app
