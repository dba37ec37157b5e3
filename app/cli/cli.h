// The CLI's command registry and argument parsing. A command is a file cmd_<name>.cpp that
// defines a static CommandRegistration; main.cpp dispatches on argv[1].
#pragma once
#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

namespace magnetar::cli {

struct Command {
  const char* name;
  const char* summary;
  const char* usage;  // printed by `magnetar-cli help <name>` and on argument errors
  int (*run)(const std::vector<std::string>& args);  // args after the command name
};

struct CommandRegistration {
  explicit CommandRegistration(const Command& command);
};

const std::vector<Command>& commands();

// Minimal option parser: "--name value", "--flag", "-m value"; everything else is positional.
class Args {
 public:
  // value_options: options that take a value (e.g. {"-m", "--model", "-n"}); others are flags.
  Args(const std::vector<std::string>& args, const std::vector<std::string>& value_options);
  bool ok() const { return error_.empty(); }
  const std::string& error() const { return error_; }
  bool has(const std::string& name) const;
  // The value of the first of the given names present, or `fallback`.
  std::string get(std::initializer_list<const char*> names, const std::string& fallback = "") const;
  bool get_int(std::initializer_list<const char*> names, int64_t* out) const;     // false: malformed
  bool get_float(std::initializer_list<const char*> names, double* out) const;    // false: malformed
  const std::vector<std::string>& positional() const { return positional_; }
  // Options given that are not in `known` (typos); empty when all are known.
  std::string unknown_option(const std::vector<std::string>& known) const;

 private:
  std::vector<std::pair<std::string, std::string>> options_;
  std::vector<std::string> positional_;
  std::string error_;
};

// Prints "magnetar-cli <command>: <message>" and the command's usage to stderr; returns 2.
int usage_error(const Command& command, const std::string& message);
// Comma-separated integers ("1,2,3"); false on anything else.
bool parse_int_list(const std::string& text, std::vector<int>* out);
bool stdout_is_terminal();

// Ctrl+C sets this flag (once install_interrupt_handler() ran) instead of killing the process,
// so long operations stop cleanly between tokens or tensors.
const std::atomic<bool>& interrupt_flag();
void clear_interrupt();
void install_interrupt_handler();

}  // namespace magnetar::cli
