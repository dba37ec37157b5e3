// Test-data location and small filesystem helpers shared by every test area.
#include "common/testdata.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>

namespace fs = std::filesystem;

namespace magnetar::test {

std::string testdata_dir() {
  if (const char* env = std::getenv("MAGNETAR_TESTDATA"); env && *env) return env;
  return MAGNETAR_DEFAULT_TESTDATA;
}

std::string testdata_path(const std::string& relative) {
  return (fs::path(testdata_dir()) / fs::u8path(relative)).string();
}

bool testdata_present(const std::string& relative) {
  std::error_code ec;
  return fs::exists(fs::path(testdata_path(relative)), ec);
}

bool testdata_required() {
  const char* env = std::getenv("MAGNETAR_REQUIRE_TESTDATA");
  return env && std::string(env) == "1";
}

std::string make_temp_dir(const std::string& tag) {
  std::random_device rd;
  for (int attempt = 0; attempt < 100; ++attempt) {
    fs::path p = fs::temp_directory_path() /
                 ("magnetar-test-" + tag + "-" + std::to_string(rd()));
    std::error_code ec;
    if (fs::create_directory(p, ec)) return p.string();
  }
  ADD_FAILURE() << "could not create a temporary directory";
  return fs::temp_directory_path().string();
}

void remove_tree(const std::string& path) {
  std::error_code ec;
  fs::remove_all(fs::path(path), ec);
}

std::string read_file(const std::string& path) {
  std::ifstream f(fs::path(path), std::ios::binary);
  std::ostringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

std::vector<std::string> split_string(const std::string& text, const std::string& separator) {
  std::vector<std::string> out;
  size_t start = 0;
  for (size_t at; (at = text.find(separator, start)) != std::string::npos; start = at + separator.size())
    out.push_back(text.substr(start, at - start));
  out.push_back(text.substr(start));
  return out;
}

}  // namespace magnetar::test
