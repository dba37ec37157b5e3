// magnetar-cli entry point: dispatches argv[1] to a registered command; `help [COMMAND]` and
// `COMMAND --help` print usage; an exception escaping a command becomes a message and exit 1.
#include <cstring>
#include <exception>
#include <iostream>
#include <new>

#include "cli.h"
#include "magnetar/tuning.h"

using magnetar::cli::Command;
using magnetar::cli::commands;

static void print_help() {
  std::cout << "magnetar-cli " << MAGNETAR_VERSION
            << " — local LLM inference on hand-written x86-64 kernels\n\ncommands:\n";
  for (const auto& c : commands()) std::cout << "  " << c.name << "\t" << c.summary << "\n";
  std::cout << "\n`magnetar-cli help COMMAND` or `magnetar-cli COMMAND --help` shows a command's "
               "options.\n";
}

static const Command* find_command(const std::string& name) {
  for (const auto& c : commands())
    if (c.name == name) return &c;
  return nullptr;
}

static int run_command(const Command& command, const std::vector<std::string>& args) {
  // The engine reports data errors as Status; what still throws (allocation, thread creation,
  // a library) must not abort the process with a core dump.
  try {
    return command.run(args);
  } catch (const std::bad_alloc&) {
    std::cerr << "magnetar-cli " << command.name << ": out of memory\n";
  } catch (const std::exception& e) {
    std::cerr << "magnetar-cli " << command.name << ": " << e.what() << "\n";
  } catch (...) {
    std::cerr << "magnetar-cli " << command.name << ": unexpected error\n";
  }
  return 1;
}

int main(int argc, char** argv) {
  if (argc < 2 || !std::strcmp(argv[1], "-h") || !std::strcmp(argv[1], "--help")) {
    print_help();
    return argc < 2 ? 2 : 0;
  }
  const std::string name = argv[1];
  if (name == "--version") {
    std::cout << "magnetar-cli " << MAGNETAR_VERSION << "\n";
    return 0;
  }
  if (name == "help") {
    if (argc < 3) {
      print_help();
      return 0;
    }
    if (const Command* c = find_command(argv[2])) {
      std::cout << "usage: " << c->usage << "\n";
      return 0;
    }
    std::cerr << "magnetar-cli help: unknown command '" << argv[2] << "'\n\n";
    print_help();
    return 2;
  }
  const Command* command = find_command(name);
  if (!command) {
    std::cerr << "magnetar-cli: unknown command '" << name << "'\n\n";
    print_help();
    return 2;
  }
  std::vector<std::string> args(argv + 2, argv + argc);
  for (const std::string& a : args)
    if (a == "--help" || a == "-h") {
      std::cout << "usage: " << command->usage << "\n";
      return 0;
    }
  // The decode tuning measured on this machine (`bench --tune`), when cached: the loader's
  // layouts and the kernels' variants follow it (MAGNETAR_TUNING=off ignores it).
  magnetar::apply_cached_decode_tuning();
  return run_command(*command, args);
}
