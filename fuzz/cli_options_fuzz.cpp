// libFuzzer target for magnetar-cli's option parsing (app/cli/cli.cpp): the input, split at
// newlines, is an argument list. Whatever it holds, an accepted value must lie in its declared
// range, be finite, and equal what a careful strtoll reads; anything else is a finding (abort).
// CTest runs it for a bounded time (test fuzz.cli_options).
#include <cerrno>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "cli.h"

namespace {
void check(bool condition) {
  if (!condition) std::abort();
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::vector<std::string> argv(1);
  for (size_t i = 0; i < size && argv.size() < 64; ++i) {
    if (data[i] == '\n') argv.emplace_back();
    else argv.back().push_back(static_cast<char>(data[i]));
  }
  using magnetar::cli::Args;
  Args args(argv, {"-m", "-n", "--temp", "--top-p", "--threads"});
  if (!args.ok()) return 0;
  std::string error;
  int64_t n = -7;
  if (args.get_int({"-n"}, 0, 1 << 20, &n, &error)) check(!args.has("-n") || (n >= 0 && n <= (1 << 20)));
  else check(!error.empty() && error.find("-n") == 0);
  double temp = -7;
  if (args.get_number({"--temp"}, 0, 100, false, &temp, &error))
    check(!args.has("--temp") || (std::isfinite(temp) && temp >= 0 && temp <= 100));
  double top_p = -7;
  if (args.get_number({"--top-p"}, 0, 1, true, &top_p, &error))
    check(!args.has("--top-p") || (top_p > 0 && top_p <= 1));
  std::vector<int> threads;
  if (magnetar::cli::parse_int_list(args.get({"--threads"}), &threads, 1, 256))
    for (int t : threads) check(t >= 1 && t <= 256);
  for (const std::string& a : argv) {
    int64_t value = 0;
    const bool parsed = magnetar::cli::parse_integer(a, &value);
    errno = 0;
    char* end = nullptr;
    const long long reference = std::strtoll(a.c_str(), &end, 10);
    const bool plain = !a.empty() && a.find_first_not_of("+-0123456789") == std::string::npos &&
                       a.find_first_of("+-", 1) == std::string::npos && a != "+" && a != "-";
    const bool strtoll_exact = plain && errno == 0 && end && *end == '\0';
    check(parsed == strtoll_exact);
    if (parsed) check(value == reference);
  }
  return 0;
}
