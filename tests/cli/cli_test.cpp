// magnetar-cli end to end: convert, run (--print-ids and text), eval, info, and the error paths
// users hit (missing model, bad options) — exit codes and messages included.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <utility>
#include <vector>

#include "common/testdata.h"

#ifdef _WIN32
#define popen _popen
#define pclose _pclose
#define DEVNULL "NUL"
#else
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
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
  // Appended piece by piece: GCC 12 warns falsely (-Wrestrict) about the chained operator+.
  std::string cmd = "\"";
  cmd.append(cli_path()).append("\" ").append(args).append(merge_stderr ? " 2>&1" : " 2>" DEVNULL);
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

  std::string convert_stories(const std::string& dtype = "f32") {
    const std::string out = dir_ + "/stories-" + dtype + ".mgn";
    Output o = run_cli("convert " + quoted(test::testdata_path("stories260K/stories260K.bin")) +
                       " " + quoted(out) + " --dtype " + dtype, true);
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

TEST_F(Cli, InfoPrintsTheChatTemplateSource) {
  MAGNETAR_REQUIRE_TESTDATA("stories260K/stories260K.bin");
  Output o = run_cli("info -m " + quoted(convert_stories()));
  ASSERT_EQ(o.exit_code, 0);
  EXPECT_NE(o.out.find("chat template   built-in (plain completion)"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("{{ bos_token }}{% for message in messages %}"), std::string::npos) << o.out;
}

// `template --tokenizer-config` on a chat case: the text and ids apply_chat_template gives.
TEST_F(Cli, TemplateRendersAChatCaseWithItsIds) {
  MAGNETAR_REQUIRE_TESTDATA("tokenizers/qwen3/chat/cases.json");
  MAGNETAR_REQUIRE_TESTDATA("models/tiny-qwen3/tokenizer.json");
  const auto cases = nlohmann::ordered_json::parse(test::read_file(test::testdata_path("tokenizers/qwen3/chat/cases.json")));
  // The tiny model folder has the tokenizer.json beside its tokenizer_config.json.
  const std::string config = test::testdata_path("models/tiny-qwen3/tokenizer_config.json");
  int checked = 0;
  for (const auto& c : cases["cases"]) {
    if (c["name"] != "qwen_tools_gen" && c["name"] != "multi_turn_system_gen") continue;
    const std::string conv = dir_ + "/conv.json";
    {
      std::ofstream f(conv, std::ios::binary);
      f << c.dump();
    }
    Output o = run_cli("template --tokenizer-config " + quoted(config) + " --messages " + quoted(conv) + " --ids");
    ASSERT_EQ(o.exit_code, 0) << c["name"];
    std::ostringstream ids;
    bool first = true;
    for (int id : c["expected_ids"]) ids << (first ? "" : " ") << id, first = false;
    EXPECT_EQ(o.out, c["expected"].get<std::string>() + "\n" + ids.str() + "\n") << c["name"];
    ++checked;
  }
  EXPECT_EQ(checked, 2);
  Output refused = run_cli("template --tokenizer-config " +
                               quoted(test::testdata_path("tokenizers/gemma3/tokenizer_config.json")) +
                               " --messages " + quoted(dir_ + "/missing.json"),
                           true);
  EXPECT_EQ(refused.exit_code, 1);
  EXPECT_NE(refused.out.find("missing.json"), std::string::npos) << refused.out;
  EXPECT_EQ(run_cli("template --messages x.json").exit_code, 2);
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

// eval --compare: the q8_0 bounds on stories260K over its expected text (prompt + the 200
// greedy tokens), read from the --json document; a model against itself differs by nothing.
TEST_F(Cli, EvalCompareMeasuresQ8AgainstF32) {
  MAGNETAR_REQUIRE_TESTDATA("stories260K/stories260K.bin");
  const std::string f32 = convert_stories("f32"), q8 = convert_stories("q8_0");
  auto golden = nlohmann::json::parse(test::read_file(test::testdata_path("stories260K/greedy_reference.json")));
  std::ostringstream ids;
  for (int id : golden["prompt_ids"]) ids << id << ",";
  for (int id : golden["greedy_ids_200"]) ids << id << ",";
  std::string tokens = ids.str();
  tokens.pop_back();
  const size_t n_tokens = golden["prompt_ids"].size() + golden["greedy_ids_200"].size();

  Output o = run_cli("eval -m " + quoted(q8) + " --compare " + quoted(f32) + " --tokens " + tokens + " --json");
  ASSERT_EQ(o.exit_code, 0) << o.out;
  const auto q = nlohmann::json::parse(o.out);
  EXPECT_EQ(q["positions"].get<size_t>(), n_tokens);
  EXPECT_EQ(q["reference"]["weight_type"], "f32");
  EXPECT_EQ(q["candidate"]["weight_type"], "q8_0");
  EXPECT_GE(q["top1_agreement"].get<double>(), 0.98);
  EXPECT_LE(q["mean_kl"].get<double>(), 1e-3);
  EXPECT_GT(q["mean_kl"].get<double>(), 0.0) << "q8_0 rounding must show";
  EXPECT_GE(q["max_kl"].get<double>(), q["mean_kl"].get<double>());
  const double ppl_ref = q["perplexity_reference"], ppl_q8 = q["perplexity_candidate"];
  EXPECT_GT(ppl_ref, 1.0);
  EXPECT_NEAR(ppl_q8 / ppl_ref, 1.0, 0.05);  // q8_0 changes perplexity by well under 5%

  Output self = run_cli("eval -m " + quoted(f32) + " --compare " + quoted(f32) + " --tokens " + tokens + " --json");
  ASSERT_EQ(self.exit_code, 0) << self.out;
  const auto same = nlohmann::json::parse(self.out);
  EXPECT_EQ(same["mean_kl"].get<double>(), 0.0);
  EXPECT_EQ(same["top1_agreement"].get<double>(), 1.0);
  EXPECT_EQ(same["perplexity_reference"].get<double>(), same["perplexity_candidate"].get<double>());
  EXPECT_EQ(same["perplexity_reference"].get<double>(), ppl_ref);
}

TEST_F(Cli, EvalCompareReadsATextFileAndPrintsATable) {
  MAGNETAR_REQUIRE_TESTDATA("stories260K/stories260K.bin");
  const std::string f32 = convert_stories("f32"), q4 = convert_stories("q4_0");
  const std::string text = dir_ + "/story.txt";
  FILE* f = std::fopen(text.c_str(), "wb");
  std::fputs("Once upon a time, there was a little girl named Lily. She liked to play in the park.", f);
  std::fclose(f);
  Output o = run_cli("eval -m " + quoted(q4) + " --compare " + quoted(f32) + " --text-file " + quoted(text));
  ASSERT_EQ(o.exit_code, 0) << o.out;
  for (const char* row : {"mean KL", "max KL", "top-1 agreement", "perplexity", "(q4_0, KV cache f32)", "(f32)"})
    EXPECT_NE(o.out.find(row), std::string::npos) << row << " missing from\n" << o.out;
}

TEST_F(Cli, EvalCompareRejectsBadRequests) {
  MAGNETAR_REQUIRE_TESTDATA("stories260K/stories260K.bin");
  const std::string f32 = convert_stories("f32");
  const std::string base = "eval -m " + quoted(f32) + " --compare " + quoted(f32);
  EXPECT_EQ(run_cli(base).exit_code, 2);  // no tokens
  EXPECT_EQ(run_cli(base + " --tokens 1,2 --text-file x").exit_code, 2);
  Output one = run_cli(base + " --tokens 1", true);
  EXPECT_EQ(one.exit_code, 1);
  EXPECT_NE(one.out.find("at least 2 tokens"), std::string::npos) << one.out;
  Output outside = run_cli(base + " --tokens 1,99999", true);
  EXPECT_EQ(outside.exit_code, 1);
  EXPECT_NE(outside.out.find("outside the vocabulary"), std::string::npos) << outside.out;
  Output missing = run_cli(base + " --text-file " + quoted(dir_ + "/none.txt"), true);
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_NE(missing.out.find("cannot open"), std::string::npos) << missing.out;
  EXPECT_EQ(run_cli("eval -m " + quoted(f32) + " --tokens 1,2 --json").exit_code, 2);  // --json needs --compare
}

// convert --output-dtype sets the embedding table's type apart; info summarises the types and
// names the matrices a quantized conversion kept in F16 (stories260K's w_down: 172 columns).
TEST_F(Cli, ConvertOutputDtypeAndInfoTypeSummary) {
  MAGNETAR_REQUIRE_TESTDATA("stories260K/stories260K.bin");
  const std::string model = dir_ + "/mixed.mgn";
  Output c = run_cli("convert " + quoted(test::testdata_path("stories260K/stories260K.bin")) + " " +
                     quoted(model) + " --dtype q8_0 --output-dtype f32", true);
  ASSERT_EQ(c.exit_code, 0) << c.out;
  EXPECT_NE(c.out.find("(q8_0 weights, f32 embeddings)"), std::string::npos) << c.out;
  Output o = run_cli("info -m " + quoted(model) + " --tensors");
  ASSERT_EQ(o.exit_code, 0);
  // 5 layers x (wqkv, wo, w_gate_up) quantized; 5 w_down kept F16; 11 norms + the table in F32.
  EXPECT_NE(o.out.find("tensor types    f16 5 ("), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("f32 12 ("), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("q8_0 15 ("), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("embeddings      f32, LM head tied"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("kept f16        layers.0.w_down, layers.1.w_down"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("tok_embeddings                   f32"), std::string::npos) << o.out;

  const std::string f16 = convert_stories("f16");
  Output plain = run_cli("info -m " + quoted(f16));
  ASSERT_EQ(plain.exit_code, 0);
  EXPECT_EQ(plain.out.find("kept f16"), std::string::npos) << "nothing is kept back in an f16 model";
  EXPECT_NE(plain.out.find("embeddings      f16, LM head tied"), std::string::npos) << plain.out;

  Output bad = run_cli("convert a b --output-dtype q4_k_s", true);
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.out.find("--output-dtype must be"), std::string::npos) << bad.out;
}

// convert --dtype q4_k_m: llama.cpp's mix on a 256-wide model (the tiny Gemma F32 GGUF: Q6_K
// tied table, attn_v and ffn_down of the last layer Q6_K, the rest Q4_K), and the fallbacks on
// a 64-wide one (stories260K: Q5_0, Q8_0 for the Q6_K tensors, F16 for 172-wide rows).
TEST_F(Cli, ConvertToAKQuantMixAndInfoShowsItsTypes) {
  MAGNETAR_REQUIRE_TESTDATA("gguf-kquants/tiny-gemma-f32.gguf");
  MAGNETAR_REQUIRE_TESTDATA("stories260K/stories260K.bin");
  const std::string model = dir_ + "/gemma-q4_k_m.mgn";
  Output c = run_cli("convert " + quoted(test::testdata_path("gguf-kquants/tiny-gemma-f32.gguf")) + " " +
                     quoted(model) + " --dtype Q4_K_M", true);
  ASSERT_EQ(c.exit_code, 0) << c.out;
  EXPECT_NE(c.out.find("(q4_k_m weights)"), std::string::npos) << c.out;
  const std::pair<std::string, std::vector<const char*>> expected[] = {
      {model, {"tensor types    f32 5 (0.0 MiB), q4_k 8 (", "q6_k 3 (", "layers.1.wv                      q6_k"}},
      {convert_stories("q4_k_m"), {"tensor types    f16 5 (", "q5_0 17 (", "q8_0 3 ("}}};
  for (const auto& [path, lines] : expected) {
    Output o = run_cli("info -m " + quoted(path) + " --tensors");
    ASSERT_EQ(o.exit_code, 0);
    for (const char* line : lines) EXPECT_NE(o.out.find(line), std::string::npos) << line << "\n" << o.out;
  }
}

// --kv: the candidate's KV cache type (the reference keeps f32); run decodes through it too.
TEST_F(Cli, KvOptionReachesEvalAndRun) {
  MAGNETAR_REQUIRE_TESTDATA("stories260K/stories260K.bin");
  const std::string f32 = convert_stories("f32");
  const std::string tokens = "1,403,407,261,378,263,126,179,279,415,2";
  Output o = run_cli("eval -m " + quoted(f32) + " --compare " + quoted(f32) + " --kv int8 --tokens " + tokens + " --json");
  ASSERT_EQ(o.exit_code, 0) << o.out;
  const auto q = nlohmann::json::parse(o.out);
  EXPECT_EQ(q["candidate"]["kv"], "int8");
  EXPECT_GT(q["mean_kl"].get<double>(), 0.0) << "the int8 cache must differ from the f32 reference";
  EXPECT_LE(q["mean_kl"].get<double>(), 2e-3);  // the bound of tests/model/kv_cache_test.cpp

  Output run = run_cli("run -m " + quoted(f32) + " --kv int8 --tokens 1 -n 30 --no-stop --print-ids");
  ASSERT_EQ(run.exit_code, 0);
  std::istringstream ids(run.out);
  int n = 0;
  for (int id; ids >> id;) ++n;
  EXPECT_EQ(n, 30) << run.out;
  EXPECT_NE(run_cli("info -m " + quoted(f32) + " --kv f16").out.find("KV cache f16"), std::string::npos);
  Output bad = run_cli("run -m " + quoted(f32) + " --kv int4 --tokens 1", true);
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.out.find("--kv is"), std::string::npos) << bad.out;
}

// ---- Hardening (issue 15): options, help, context overflow, special files -----------------------

TEST_F(Cli, HelpAndCommandHelpPrintUsage) {
  Output all = run_cli("help");
  EXPECT_EQ(all.exit_code, 0);
  EXPECT_NE(all.out.find("commands:"), std::string::npos) << all.out;
  for (const char* command : {"run", "chat", "convert", "eval", "bench", "info", "synth"}) {
    SCOPED_TRACE(command);
    Output help = run_cli(std::string("help ") + command);
    EXPECT_EQ(help.exit_code, 0);
    EXPECT_EQ(help.out.rfind(std::string("usage: magnetar-cli ") + command, 0), 0u) << help.out;
    Output flag = run_cli(std::string(command) + " --help");
    EXPECT_EQ(flag.exit_code, 0);
    EXPECT_EQ(flag.out, help.out);
  }
  EXPECT_EQ(run_cli("help no-such-command").exit_code, 2);
}

// Every numeric option: out of range, overflowing, NaN or infinite values are refused with the
// option and its range named — never wrapped, saturated or passed on.
TEST_F(Cli, OptionValuesAreRangeChecked) {
  struct Case {
    std::string args, option;
  };
  const std::string m = "run -m " + quoted(dir_ + "/absent.mgn") + " --tokens 1 ";
  const Case cases[] = {
      {m + "-n 4294967301", "-n"},            {m + "-n 2147483647", "-n"},
      {m + "-n -1", "-n"},                    {m + "-n 99999999999999999999999", "-n"},
      {m + "--ctx 4294967312", "--ctx"},      {m + "--threads 1000", "--threads"},
      {m + "--threads -1", "--threads"},      {m + "--temp nan", "--temp"},
      {m + "--temp inf", "--temp"},           {m + "--temp -0.5", "--temp"},
      {m + "--top-p nan", "--top-p"},         {m + "--top-p 0", "--top-p"},
      {m + "--top-p 1.5", "--top-p"},         {m + "--min-p nan", "--min-p"},
      {m + "--min-p 2", "--min-p"},           {m + "--repeat-penalty nan", "--repeat-penalty"},
      {m + "--repeat-penalty 0", "--repeat-penalty"}, {m + "--top-k 4294967296", "--top-k"},
      {m + "--seed -3", "--seed"},            {m + "--temp 0x", "--temp"},
      {"bench -m x --threads 1000", "--threads"}, {"bench -m x --threads 0", "--threads"},
      {"bench -m x --reps 1e3", "--reps"},    {"bench -m x --idle-seconds nan", "--idle-seconds"},
      {"chat -m x -n 0", "-n"},               {"synth --like stories15M --seed -1 out", "--seed"},
      {"synth --like stories15M --layers -1 out", "--layers"},
      {"synth --like stories15M --threads 300 out", "--threads"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.args);
    Output o = run_cli(c.args, true);
    EXPECT_EQ(o.exit_code, 2) << o.out;
    EXPECT_NE(o.out.find(c.option + " "), std::string::npos) << o.out;
    EXPECT_TRUE(o.out.find(" from ") != std::string::npos || o.out.find(" in [") != std::string::npos ||
                o.out.find(" in (") != std::string::npos)
        << "the valid range is not named: " << o.out;
  }
}

TEST_F(Cli, PromptLongerThanTheContextIsAnErrorNamingTheSizes) {
  MAGNETAR_REQUIRE_TESTDATA("stories260K/stories260K.bin");
  const std::string model = convert_stories();
  Output o = run_cli("run -m " + quoted(model) + " --tokens 1,2,3,4,5,6,7,8,9,10 --ctx 8", true);
  EXPECT_EQ(o.exit_code, 1) << o.out;
  EXPECT_NE(o.out.find("10 tokens"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("holds 8"), std::string::npos) << o.out;
  // A prompt that exactly fills the context still yields its one token; -n far beyond the
  // context allocates nothing for it (the run ends when the context is full).
  Output fits = run_cli("run -m " + quoted(model) + " --tokens 1,2,3,4,5,6,7,8 --ctx 8 --print-ids", true);
  EXPECT_EQ(fits.exit_code, 0) << fits.out;
  Output long_run = run_cli("run -m " + quoted(model) + " --tokens 1 -n 1048576 --ctx 16 --no-stop --print-ids", true);
  EXPECT_EQ(long_run.exit_code, 0) << long_run.out;
  EXPECT_NE(long_run.out.find("stop: context full"), std::string::npos) << long_run.out;
}

TEST_F(Cli, ContextAboveTheTrainedLengthWarns) {
  MAGNETAR_REQUIRE_TESTDATA("stories260K/stories260K.bin");
  const std::string model = convert_stories();
  Output above = run_cli("run -m " + quoted(model) + " --tokens 1 -n 2 --ctx 1024", true);
  EXPECT_EQ(above.exit_code, 0) << above.out;
  EXPECT_NE(above.out.find("warning: --ctx 1024 is above the 512 tokens"), std::string::npos) << above.out;
  Output within = run_cli("run -m " + quoted(model) + " --tokens 1 -n 2 --ctx 512", true);
  EXPECT_EQ(within.out.find("warning"), std::string::npos) << within.out;
}

// chat: a conversation that outgrows --ctx is refused with the sizes, or with --context-shift
// loses its oldest turns (the system prompt stays) with a notice; every turn gets an answer.
TEST_F(Cli, ChatContextOverflowIsRefusedOrShifted) {
  MAGNETAR_REQUIRE_TESTDATA("stories260K/stories260K.bin");
  const std::string model = convert_stories();
  const std::string input = dir_ + "/turns.txt";
  {
    FILE* f = std::fopen(input.c_str(), "wb");
    std::fputs("hello there my friend\nhow are you doing today\nand what about tomorrow then\n"
               "one more line to overflow again\n", f);
    std::fclose(f);
  }
  const std::string chat = "chat -m " + quoted(model) + " --ctx 32 -n 4 --temp 0 ";
  Output refused = run_cli(chat + "< " + quoted(input), true);
  EXPECT_EQ(refused.exit_code, 0) << refused.out;
  EXPECT_NE(refused.out.find("and the context holds 32"), std::string::npos) << refused.out;
  EXPECT_NE(refused.out.find("--context-shift"), std::string::npos) << refused.out;

  Output shifted = run_cli(chat + "--context-shift --system \"be kind\" < " + quoted(input), true);
  EXPECT_EQ(shifted.exit_code, 0) << shifted.out;
  EXPECT_NE(shifted.out.find("oldest messages; the system prompt stays"), std::string::npos) << shifted.out;
  EXPECT_EQ(shifted.out.find("the context holds"), std::string::npos) << shifted.out;
  size_t answers = 0;
  for (size_t at = 0; (at = shifted.out.find("stop: ", at)) != std::string::npos; ++at) ++answers;
  EXPECT_EQ(answers, 4u) << shifted.out;
}

#ifndef _WIN32
TEST_F(Cli, SpecialFilesAreRefusedNotHungOnOrReplaced) {
  const std::string fifo = dir_ + "/fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  for (const char* command : {"run", "info", "chat", "eval --tokens 1 --logits x.f32 -m"}) {
    SCOPED_TRACE(command);
    std::string args = std::string(command) + (std::string(command).find("-m") == std::string::npos ? " -m " : " ") +
                       quoted(fifo) + (std::string(command) == "run" ? " -p hi" : "");
    Output o = run_cli(args + " < " DEVNULL, true);  // a hang here fails the test by its timeout
    EXPECT_EQ(o.exit_code, 1) << o.out;
    EXPECT_NE(o.out.find("not a regular file"), std::string::npos) << o.out;
  }
  MAGNETAR_REQUIRE_TESTDATA("stories260K/stories260K.bin");
  const std::string model = convert_stories();
  Output logits = run_cli("eval -m " + quoted(model) + " --tokens 1 --logits /dev/null", true);
  EXPECT_EQ(logits.exit_code, 1) << logits.out;
  EXPECT_NE(logits.out.find("not a regular file"), std::string::npos) << logits.out;
  Output text = run_cli("eval -m " + quoted(model) + " --compare " + quoted(model) + " --text-file " + quoted(fifo), true);
  EXPECT_EQ(text.exit_code, 1) << text.out;
  struct stat st {};
  ASSERT_EQ(::stat("/dev/null", &st), 0);
  EXPECT_TRUE(S_ISCHR(st.st_mode));
}

// SIGTERM and SIGHUP stop convert and synth like Ctrl+C: a non-zero exit and no temporary file.
TEST_F(Cli, TerminationSignalsLeaveNoTemporaryFile) {
  for (int sig : {SIGTERM, SIGHUP, SIGINT}) {
    SCOPED_TRACE(sig);
    const std::string out = dir_ + "/noise.mgn";
    const pid_t child = ::fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
      const int devnull = ::open(DEVNULL, O_WRONLY);
      ::dup2(devnull, 1), ::dup2(devnull, 2);
      const std::string cli = cli_path();
      ::execl(cli.c_str(), cli.c_str(), "synth", "--like", "tinyllama-1.1b", out.c_str(), (char*)nullptr);
      ::_exit(127);
    }
    // Signal once the temporary file exists and has data, i.e. in the middle of the write.
    const std::string temp = out + ".tmp-" + std::to_string(child);
    auto written = [&] {
      std::error_code ec;
      const auto size = std::filesystem::file_size(temp, ec);
      return ec ? 0 : size;
    };
    for (int i = 0; i < 5000 && written() < (1u << 20); ++i) ::usleep(2000);
    ASSERT_GE(written(), 1u << 20) << "the writer never started: " << temp;
    ::kill(child, sig);
    int status = 0;
    ASSERT_EQ(::waitpid(child, &status, 0), child);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 1) << "status " << status;
    EXPECT_FALSE(std::filesystem::exists(temp));
    EXPECT_FALSE(std::filesystem::exists(out));
  }
}
#endif

}  // namespace
}  // namespace magnetar
