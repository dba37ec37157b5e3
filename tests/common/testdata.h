// Where the shared test data lives: $MAGNETAR_TESTDATA, else ../shared/testdata beside the
// project. Tests that need it call MAGNETAR_REQUIRE_TESTDATA, which skips with a clear message
// when the data is absent — or fails, when MAGNETAR_REQUIRE_TESTDATA=1 (as CI sets it).
#pragma once
#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace magnetar::test {

std::string testdata_dir();
// Path of a file or folder inside the test data, e.g. testdata_path("stories260K/tok512.model").
std::string testdata_path(const std::string& relative);
bool testdata_present(const std::string& relative);
bool testdata_required();  // MAGNETAR_REQUIRE_TESTDATA=1
// A fresh empty directory under the system temp dir, removed by the fixture that owns it.
std::string make_temp_dir(const std::string& tag);
void remove_tree(const std::string& path);
std::string read_file(const std::string& path);
// Splits like Python's str.split: n separators give n + 1 pieces (the last may be empty).
std::vector<std::string> split_string(const std::string& text, const std::string& separator);

}  // namespace magnetar::test

#define MAGNETAR_REQUIRE_TESTDATA(relative)                                                    \
  do {                                                                                         \
    if (!::magnetar::test::testdata_present(relative)) {                                       \
      if (::magnetar::test::testdata_required())                                               \
        FAIL() << "test data missing: " << ::magnetar::test::testdata_path(relative)           \
               << " (MAGNETAR_REQUIRE_TESTDATA=1)";                                            \
      GTEST_SKIP() << "test data not found: " << ::magnetar::test::testdata_path(relative)     \
                   << " — set MAGNETAR_TESTDATA to the shared/testdata folder to run this test"; \
    }                                                                                          \
  } while (0)
