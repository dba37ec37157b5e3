// `magnetar-cli convert` end to end: success writes the model and exits 0; a bad source exits 1
// with the converter's message on stderr; bad arguments exit 2 with the usage.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>

#include "common/testdata.h"

namespace magnetar::test {
namespace {

namespace fs = std::filesystem;

// Runs the CLI with stdout and stderr captured into files; returns the exit code.
int run_cli(const std::string& args, const std::string& dir, std::string* out, std::string* err) {
  const std::string out_path = dir + "/stdout.txt", err_path = dir + "/stderr.txt";
  // make_preferred: cmd.exe (std::system on Windows) cannot run "/dir/x.exe", but runs "\dir\x.exe".
  const std::string cli = fs::path(MAGNETAR_CLI_PATH).make_preferred().string();
  const std::string command =
      "\"" + cli + "\" " + args + " > \"" + out_path + "\" 2> \"" + err_path + "\"";
#ifdef _WIN32
  // cmd.exe /c strips the first and last quote of a command line that starts with one.
  int status = std::system(("\"" + command + "\"").c_str());
#else
  int status = std::system(command.c_str());
#endif
  *out = read_file(out_path);
  *err = read_file(err_path);
  fs::remove(out_path);
  fs::remove(err_path);
#ifdef _WIN32
  return status;
#else
  return (status >> 8) & 0xff;  // the shell's wait status
#endif
}

class CliConvertTest : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = make_temp_dir("cli-convert"); }
  void TearDown() override { remove_tree(dir_); }
  std::string dir_;
};

TEST_F(CliConvertTest, ConvertsAndReportsProgressAsPlainLines) {
  MAGNETAR_REQUIRE_TESTDATA("gemma/tiny-gemma2");
  std::string out, err;
  const std::string model = dir_ + "/g.mgn";
  int code = run_cli("convert \"" + testdata_path("gemma/tiny-gemma2") + "\" \"" + model +
                         "\" --dtype f32",
                     dir_, &out, &err);
  EXPECT_EQ(code, 0) << err;
  EXPECT_TRUE(fs::exists(model));
  EXPECT_NE(out.find("converting: 100%"), std::string::npos) << out;  // not a terminal: lines
  // No progress rewritten in place: a '\r' may only end a line (Windows text-mode "\r\n").
  for (size_t at = out.find('\r'); at != std::string::npos; at = out.find('\r', at + 1))
    EXPECT_EQ(out.substr(at, 2), "\r\n") << "bare carriage return at " << at;
  EXPECT_NE(out.find("wrote"), std::string::npos) << out;
}

TEST_F(CliConvertTest, FailureExitsOneWithTheMessage) {
  std::string out, err;
  int code = run_cli("convert \"" + dir_ + "/missing\" \"" + dir_ + "/m.mgn\"", dir_, &out, &err);
  EXPECT_EQ(code, 1);
  EXPECT_NE(err.find("missing: not found"), std::string::npos) << err;
  EXPECT_FALSE(fs::exists(dir_ + "/m.mgn"));
}

TEST_F(CliConvertTest, BadArgumentsExitTwoWithUsage) {
  std::string out, err;
  EXPECT_EQ(run_cli("convert onlyone", dir_, &out, &err), 2);
  EXPECT_NE(err.find("usage:"), std::string::npos) << err;
  EXPECT_EQ(run_cli("convert a b --dtype f8", dir_, &out, &err), 2);
  EXPECT_NE(err.find("--dtype must be auto or one of f32, f16, q8_0, q6_k, q5_1, q5_k_m"), std::string::npos) << err;
  EXPECT_NE(err.find("q4_k_m, q4_0, q4_k, iq4_nl, iq4_xs, q3_k_m, q3_k, q2_k, not 'f8'"), std::string::npos) << err;
  EXPECT_EQ(run_cli("convert a b --frobnicate", dir_, &out, &err), 2);
  EXPECT_NE(err.find("unknown option --frobnicate"), std::string::npos) << err;
  EXPECT_EQ(run_cli("convert a b --threads -1", dir_, &out, &err), 2);
  EXPECT_NE(err.find("--threads must be an integer from 0 to 256"), std::string::npos) << err;
}

}  // namespace
}  // namespace magnetar::test
