// Command registry and argument parsing for magnetar-cli.
#include "cli.h"

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <iostream>

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

bool Args::get_int(std::initializer_list<const char*> names, int64_t* out) const {
  for (const char* n : names) {
    if (!has(n)) continue;
    std::string v = get({n});
    char* end = nullptr;
    long long x = std::strtoll(v.c_str(), &end, 10);
    if (v.empty() || *end != '\0') return false;
    *out = x;
    return true;
  }
  return true;
}

bool Args::get_float(std::initializer_list<const char*> names, double* out) const {
  for (const char* n : names) {
    if (!has(n)) continue;
    std::string v = get({n});
    char* end = nullptr;
    double x = std::strtod(v.c_str(), &end);
    if (v.empty() || *end != '\0') return false;
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

bool parse_int_list(const std::string& text, std::vector<int>* out) {
  out->clear();
  size_t pos = 0;
  while (pos <= text.size()) {
    size_t comma = text.find(',', pos);
    std::string item = text.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
    char* end = nullptr;
    long v = std::strtol(item.c_str(), &end, 10);
    if (item.empty() || *end != '\0' || v < INT32_MIN || v > INT32_MAX) return false;
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
void install_interrupt_handler() { std::signal(SIGINT, on_interrupt); }

}  // namespace magnetar::cli
