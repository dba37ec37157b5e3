// The storage guarantee: SIGKILL at any moment while answers stream in loses at most the tokens
// of the message in flight — never earlier messages, never other chats. A child process drives
// AppState exactly as the frame loop does (send, token events, done) and reports each finished
// answer through a pipe; the parent kills it at a random moment and reopens the store.
#include <gtest/gtest.h>

#ifndef _WIN32
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <random>
#include <string>

#include "common/testdata.h"
#include "core/app_state.h"

namespace magnetar::app {
namespace {

std::string answer_text(int turn) {
  std::string text;
  for (int j = 0; j < 20; ++j) {
    text += 'w';
    text += std::to_string(turn);
    text += '_';
    text += std::to_string(j);
    text += ' ';
  }
  return text;
}

[[noreturn]] void child_main(const std::string& dir, const std::string& chat_id, int report_fd) {
  AppState app;
  if (!app.open_store(dir)) _exit(3);
  app.select(chat_id);
  ModelInfo info;
  info.path = "/models/fake.mgn";
  info.context_length = 1 << 20;
  app.request_load(info.path);
  EngineEvent loaded;
  loaded.kind = EventKind::ModelLoaded;
  loaded.request_id = app.outbox.back().request_id;
  app.on_event(loaded, 0, &info);
  double now = 0;
  for (int turn = 0;; ++turn) {
    app.outbox.clear();
    if (!app.send("question " + std::to_string(turn), now)) _exit(4);
    const uint64_t id = app.outbox.back().request_id;
    const std::string text = answer_text(turn);
    for (size_t pos = 0; pos < text.size(); pos += 4) {
      EngineEvent token;
      token.kind = EventKind::Token;
      token.request_id = id;
      token.set_text(std::string_view(text).substr(pos, 4));
      now += 0.3;  // makes the app save the message in flight every few tokens
      app.on_event(token, now);
    }
    EngineEvent done;
    done.kind = EventKind::GenerationDone;
    done.request_id = id;
    done.stop = StopReason::EndOfGeneration;
    app.on_event(done, now);
    if (write(report_fd, &turn, sizeof turn) != sizeof turn) _exit(5);
  }
}

TEST(KillDuringGeneration, EarlierMessagesAndOtherChatsSurvive) {
  std::mt19937 rng(12345);
  for (int round = 0; round < 4; ++round) {
    const std::string dir = test::make_temp_dir("killsave");
    std::string chat_id, other_id;
    {
      ConversationStore store;
      ASSERT_TRUE(store.open(dir).is_ok());
      other_id = store.create("", "", SamplingSettings{});
      store.find(other_id)->messages.push_back(Message{"user", "keep me", 1, {}});
      ASSERT_TRUE(store.save(other_id).is_ok());
      chat_id = store.create("", "", SamplingSettings{});
    }
    int fds[2];
    ASSERT_EQ(pipe(fds), 0);
    const pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      close(fds[0]);
      child_main(dir, chat_id, fds[1]);
    }
    close(fds[1]);
    // Let a few answers finish, then kill at a random point inside the next ones.
    int finished = -1, turn = 0;
    const int wait_for = 3 + round * 2;
    while (finished < wait_for && read(fds[0], &turn, sizeof turn) == sizeof turn) finished = turn;
    usleep(std::uniform_int_distribution<int>(0, 20000)(rng));
    kill(pid, SIGKILL);
    int status = 0;
    waitpid(pid, &status, 0);
    while (read(fds[0], &turn, sizeof turn) == sizeof turn) finished = turn;
    close(fds[0]);
    ASSERT_TRUE(WIFSIGNALED(status)) << "child exited early with " << WEXITSTATUS(status);

    ConversationStore store;
    ASSERT_TRUE(store.open(dir).is_ok());
    EXPECT_TRUE(store.load_problems().empty()) << store.load_problems()[0];
    const Conversation* other = store.find(other_id);
    ASSERT_NE(other, nullptr);
    ASSERT_EQ(other->messages.size(), 1u);
    EXPECT_EQ(other->messages[0].content, "keep me");

    const Conversation* chat = store.find(chat_id);
    ASSERT_NE(chat, nullptr);
    // Every answer reported finished is there in full, in order.
    ASSERT_GE(chat->messages.size(), 2u * (finished + 1)) << "round " << round;
    for (int t = 0; t <= finished; ++t) {
      EXPECT_EQ(chat->messages[2 * t].content, "question " + std::to_string(t));
      std::string expected = answer_text(t);
      while (!expected.empty() && expected.back() == ' ') expected.pop_back();
      EXPECT_EQ(chat->messages[2 * t + 1].content, expected);
    }
    // Whatever follows is the message in flight: a prefix of its answer at most.
    for (size_t i = 2 * (finished + 1); i < chat->messages.size(); ++i) {
      const Message& m = chat->messages[i];
      const int t = static_cast<int>(i / 2);
      if (m.role == "user") EXPECT_EQ(m.content, "question " + std::to_string(t));
      else EXPECT_EQ(answer_text(t).compare(0, m.content.size(), m.content), 0) << m.content;
    }
    test::remove_tree(dir);
  }
}

}  // namespace
}  // namespace magnetar::app
#endif  // _WIN32
