// magnetar-cli end to end: convert, run (--print-ids and text), eval, info, and the error paths
// users hit (missing model, bad options) — exit codes and messages included.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <sstream>

#include "common/testdata.h"

#ifdef _WIN32
#define popen _popen
#define pclose _pclose
#define DEVNULL "NUL"
#else
#include <sys/wait.h>
#define DEVNULL "/dev/null"
#endif

namespace magnetar {
namespace {

std::string cli_path() {
  const char* dir = std::getenv("MAGNETAR_CLI_DIR");
  // make_preferred: cmd.exe (popen on Windows) cannot run "/dir/x.exe", but runs "\dir\x.exe".
  return (std::filesystem::path(dir ? dir : ".") / MAGNETAR_CLI_NAME).make_preferred().string();
}

struct Output {
  int exit_code = -1;
  std::string out;  // stdout, with stderr appended when merge_stderr
};

Output run_cli(const std::string& args, bool merge_stderr = false) {
  std::string cmd = "\"" + cli_path() + "\" " + args + (merge_stderr ? " 2>&1" : " 2>" DEVNULL);
#ifdef _WIN32
  cmd = "\"" + cmd + "\"";  // cmd /c strips the first and the last quote of the line
#endif
  Output o;
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return o;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof(buf), p)) > 0) o.out.append(buf, n);
  int status = pclose(p);
#ifdef _WIN32
  o.exit_code = status;
#else
  o.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
#endif
  return o;
}

std::string quoted(const std::string& s) { return "\"" + s + "\""; }

class Cli : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = test::make_temp_dir("cli"); }
  void TearDown() override { test::remove_tree(dir_); }
  std::string dir_;

  std::string convert_stories() {
    const std::string out = dir_ + "/stories.mgn";
    Output o = run_cli("convert " + quoted(test::testdata_path("stories260K/stories260K.bin")) +
                       " " + quoted(out) + " --dtype f32", true);
    EXPECT_EQ(o.exit_code, 0) << o.out;
    return out;
  }
};

TEST_F(Cli, RunPrintIdsReproducesTheGoldenGreedyIds) {
  MAGNETAR_REQUIRE_TESTDATA("stories260K/stories260K.bin");
  const std::string model = convert_stories();
  Output o = run_cli("run -m " + quoted(model) + " --tokens 1 -n 200 --no-stop --print-ids");
  ASSERT_EQ(o.exit_code, 0);
  auto golden = nlohmann::json::parse(test::read_file(test::testdata_path("stories260K/greedy_reference.json")));
  std::ostringstream want;
  bool first = true;
  for (int id : golden["greedy_ids_200"]) want << (first ? "" : " ") << id, first = false;
  EXPECT_EQ(o.out, want.str() + "\n");
}

TEST_F(Cli, RunStreamsTextAndEndsWithAStatisticsLine) {
  MAGNETAR_REQUIRE_TESTDATA("stories260K/stories260K.bin");
  const std::string model = convert_stories();
  Output o = run_cli("run -m " + quoted(model) + " -p \"Once upon a time\" -n 20 --temp 0.8 --seed 3", true);
  ASSERT_EQ(o.exit_code, 0) << o.out;
  EXPECT_NE(o.out.find("generated 20 tok"), std::string::npos) << o.out;
  // Same seed, same text; another seed, (almost surely) other text.
  Output again = run_cli("run -m " + quoted(model) + " -p \"Once upon a time\" -n 20 --temp 0.8 --seed 3");
  Output other = run_cli("run -m " + quoted(model) + " -p \"Once upon a time\" -n 20 --temp 0.8 --seed 4");
  EXPECT_EQ(again.out, run_cli("run -m " + quoted(model) + " -p \"Once upon a time\" -n 20 --temp 0.8 --seed 3").out);
  EXPECT_NE(again.out, other.out);
}

TEST_F(Cli, EvalWritesEveryPositionsLogits) {
  MAGNETAR_REQUIRE_TESTDATA("stories260K/stories260K.bin");
  const std::string model = convert_stories();
  const std::string logits = dir_ + "/logits.f32";
  Output o = run_cli("eval -m " + quoted(model) + " --tokens 1,403,407 --logits " + quoted(logits), true);
  ASSERT_EQ(o.exit_code, 0) << o.out;
  const std::string raw = test::read_file(logits);
  ASSERT_EQ(raw.size(), 3u * 512 * sizeof(float));
  auto golden = nlohmann::json::parse(test::read_file(test::testdata_path("stories260K/greedy_reference.json")));
  const float* row0 = reinterpret_cast<const float*>(raw.data());
  int i = 0;
  for (double want : golden["logits_pos0_first8"]) EXPECT_NEAR(row0[i++], want, 1e-4 * std::max(1.0, std::fabs(want)));
}

TEST_F(Cli, InfoDescribesTheModel) {
  MAGNETAR_REQUIRE_TESTDATA("stories260K/stories260K.bin");
  const std::string model = convert_stories();
  Output o = run_cli("info -m " + quoted(model) + " --tensors");
  ASSERT_EQ(o.exit_code, 0);
  EXPECT_NE(o.out.find("architecture    llama"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("layers.4.w_down"), std::string::npos) << o.out;
}

TEST_F(Cli, MissingModelIsAClearErrorNotACrash) {
  Output o = run_cli("run -m " + quoted(dir_ + "/nope.mgn") + " -p hi", true);
  EXPECT_EQ(o.exit_code, 1);
  EXPECT_NE(o.out.find("nope.mgn"), std::string::npos) << o.out;
}

TEST_F(Cli, GarbageModelFileIsAClearError) {
  const std::string bad = dir_ + "/bad.mgn";
  FILE* f = std::fopen(bad.c_str(), "wb");
  std::fputs("this is not a model file, but it is long enough to hold a header? no.", f);
  std::fclose(f);
  Output o = run_cli("info -m " + quoted(bad), true);
  EXPECT_EQ(o.exit_code, 1);
  EXPECT_NE(o.out.find("too small"), std::string::npos) << o.out;
}

TEST_F(Cli, BadOptionsExitWithUsage) {
  EXPECT_EQ(run_cli("run --frobnicate").exit_code, 2);
  EXPECT_EQ(run_cli("run -m x -p hi --tokens 1").exit_code, 2);
  EXPECT_EQ(run_cli("run -m x -p hi --temp abc").exit_code, 2);
  EXPECT_EQ(run_cli("no-such-command").exit_code, 2);
  Output o = run_cli("run --tokens 1,2,x -m y", true);
  EXPECT_EQ(o.exit_code, 2);
  EXPECT_NE(o.out.find("usage:"), std::string::npos);
}

}  // namespace
}  // namespace magnetar
