// The CLI's command registry and argument parsing. A command is a file cmd_<name>.cpp that
// defines a static CommandRegistration; main.cpp dispatches on argv[1].
#pragma once
#include <atomic>
#include <cstdint>
#include <initializer_list>
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
  Args() = default;
  bool ok() const { return error_.empty(); }
  const std::string& error() const { return error_; }
  bool has(const std::string& name) const;
  // The value of the first of the given names present, or `fallback`.
  std::string get(std::initializer_list<const char*> names, const std::string& fallback = "") const;
  // Range-checked values: an absent option leaves *out as it is. A malformed or out-of-range
  // value (overflow, NaN and infinity included) returns false with *error naming the option and
  // its valid range, e.g. "-n must be an integer from 0 to 1048576, not '4294967301'".
  bool get_int(std::initializer_list<const char*> names, int64_t min, int64_t max, int64_t* out,
               std::string* error) const;
  // min_exclusive: the range is (min, max] instead of [min, max].
  bool get_number(std::initializer_list<const char*> names, double min, double max,
                  bool min_exclusive, double* out, std::string* error) const;
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
// The start every command shares: parses argv into *out (value_options take a value, flags do
// not) and refuses a malformed line, an option in neither list, and any positional argument
// unless takes_positional (the command then checks them). Returns 0, or usage_error's exit code.
int parse_command_line(const Command& command, const std::vector<std::string>& argv,
                       const std::vector<std::string>& value_options, const std::vector<std::string>& flags,
                       bool takes_positional, Args* out);
// A whole decimal integer, without overflow (strtoll saturates; this refuses); false otherwise.
bool parse_integer(const std::string& text, int64_t* out);
// Comma-separated integers in [min, max] ("1,2,3"); false on anything else.
bool parse_int_list(const std::string& text, std::vector<int>* out, int min = INT32_MIN,
                    int max = INT32_MAX);
bool stdout_is_terminal();

// Ctrl+C, SIGTERM and SIGHUP (POSIX; Ctrl+Break on Windows) set this flag, once
// install_interrupt_handler() ran, instead of killing the process, so long operations stop
// cleanly between tokens or tensors and remove their temporary files.
const std::atomic<bool>& interrupt_flag();
void clear_interrupt();
void install_interrupt_handler();

}  // namespace magnetar::cli
