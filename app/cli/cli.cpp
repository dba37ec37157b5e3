// Command registry and argument parsing for magnetar-cli.
#include "cli.h"

#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <sstream>

#ifdef _WIN32
#include <io.h>
#define MAGNETAR_ISATTY _isatty
#define MAGNETAR_FILENO _fileno
#else
#include <unistd.h>
#define MAGNETAR_ISATTY isatty
#define MAGNETAR_FILENO fileno
#endif

namespace magnetar::cli {

static std::vector<Command>& registry() {
  static std::vector<Command> commands;
  return commands;
}

CommandRegistration::CommandRegistration(const Command& command) { registry().push_back(command); }

const std::vector<Command>& commands() { return registry(); }

Args::Args(const std::vector<std::string>& args, const std::vector<std::string>& value_options) {
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    bool is_option = a.size() > 1 && a[0] == '-' && !(a[1] >= '0' && a[1] <= '9');
    if (!is_option) {
      positional_.push_back(a);
      continue;
    }
    bool takes_value = false;
    for (const auto& v : value_options) takes_value |= (v == a);
    if (takes_value) {
      if (i + 1 >= args.size()) {
        error_ = "option " + a + " needs a value";
        return;
      }
      options_.emplace_back(a, args[++i]);
    } else {
      options_.emplace_back(a, "");
    }
  }
}

bool Args::has(const std::string& name) const {
  for (const auto& [k, v] : options_)
    if (k == name) return true;
  return false;
}

std::string Args::get(std::initializer_list<const char*> names, const std::string& fallback) const {
  for (const char* n : names)
    for (const auto& [k, v] : options_)
      if (k == n) return v;
  return fallback;
}

bool parse_integer(const std::string& text, int64_t* out) {
  if (text.empty()) return false;
  size_t i = text[0] == '-' || text[0] == '+' ? 1 : 0;
  if (i == text.size()) return false;
  const bool negative = text[0] == '-';
  uint64_t magnitude = 0;
  for (; i < text.size(); ++i) {
    if (text[i] < '0' || text[i] > '9') return false;
    const uint64_t digit = static_cast<uint64_t>(text[i] - '0');
    if (magnitude > (UINT64_MAX - digit) / 10) return false;
    magnitude = magnitude * 10 + digit;
  }
  const uint64_t limit = negative ? uint64_t(INT64_MAX) + 1 : uint64_t(INT64_MAX);
  if (magnitude > limit) return false;
  *out = negative ? static_cast<int64_t>(0 - magnitude) : static_cast<int64_t>(magnitude);
  return true;
}

namespace {
std::string range_text(double min, double max, bool min_exclusive) {
  auto show = [](double v) {
    std::ostringstream s;
    s << v;
    return s.str();
  };
  // Appended piece by piece: GCC 12 warns falsely (-Wrestrict) about the chained operator+.
  std::string text = min_exclusive ? "(" : "[";
  text.append(show(min)).append(", ").append(show(max)).append("]");
  return text;
}
}  // namespace

bool Args::get_int(std::initializer_list<const char*> names, int64_t min, int64_t max,
                   int64_t* out, std::string* error) const {
  for (const char* n : names) {
    if (!has(n)) continue;
    const std::string v = get({n});
    int64_t x = 0;
    if (!parse_integer(v, &x) || x < min || x > max) {
      *error = std::string(n) + " must be an integer from " + std::to_string(min) + " to " +
               std::to_string(max) + ", not '" + v + "'";
      return false;
    }
    *out = x;
    return true;
  }
  return true;
}

bool Args::get_number(std::initializer_list<const char*> names, double min, double max,
                      bool min_exclusive, double* out, std::string* error) const {
  for (const char* n : names) {
    if (!has(n)) continue;
    const std::string v = get({n});
    char* end = nullptr;
    const double x = v.empty() ? 0 : std::strtod(v.c_str(), &end);
    // !(x >= min) also refuses NaN, which every comparison fails.
    if (v.empty() || *end != '\0' || !std::isfinite(x) || !(x >= min) || x > max ||
        (min_exclusive && x == min)) {
      *error = std::string(n) + " must be a number in " + range_text(min, max, min_exclusive) +
               ", not '" + v + "'";
      return false;
    }
    *out = x;
    return true;
  }
  return true;
}

std::string Args::unknown_option(const std::vector<std::string>& known) const {
  for (const auto& [k, v] : options_) {
    bool found = false;
    for (const auto& n : known) found |= (n == k);
    if (!found) return k;
  }
  return "";
}

int usage_error(const Command& command, const std::string& message) {
  std::cerr << "magnetar-cli " << command.name << ": " << message << "\n\nusage: " << command.usage
            << "\n";
  return 2;
}

int parse_command_line(const Command& command, const std::vector<std::string>& argv,
                       const std::vector<std::string>& value_options, const std::vector<std::string>& flags,
                       bool takes_positional, Args* out) {
  *out = Args(argv, value_options);
  if (!out->ok()) return usage_error(command, out->error());
  std::vector<std::string> known = value_options;
  known.insert(known.end(), flags.begin(), flags.end());
  if (std::string bad = out->unknown_option(known); !bad.empty()) return usage_error(command, "unknown option " + bad);
  if (!takes_positional && !out->positional().empty())
    return usage_error(command, "unexpected argument " + out->positional()[0]);
  return 0;
}

bool parse_int_list(const std::string& text, std::vector<int>* out, int min, int max) {
  out->clear();
  size_t pos = 0;
  while (pos <= text.size()) {
    size_t comma = text.find(',', pos);
    std::string item = text.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
    int64_t v = 0;
    if (!parse_integer(item, &v) || v < min || v > max) return false;
    out->push_back(static_cast<int>(v));
    if (comma == std::string::npos) break;
    pos = comma + 1;
  }
  return !out->empty();
}

bool stdout_is_terminal() { return MAGNETAR_ISATTY(MAGNETAR_FILENO(stdout)) != 0; }

namespace {
std::atomic<bool> g_interrupted{false};
extern "C" void on_interrupt(int) { g_interrupted.store(true); }
}  // namespace

const std::atomic<bool>& interrupt_flag() { return g_interrupted; }
void clear_interrupt() { g_interrupted.store(false); }
void install_interrupt_handler() {
  std::signal(SIGINT, on_interrupt);
  std::signal(SIGTERM, on_interrupt);
#ifdef SIGHUP
  std::signal(SIGHUP, on_interrupt);
#endif
#ifdef SIGBREAK
  std::signal(SIGBREAK, on_interrupt);
#endif
}

}  // namespace magnetar::cli
