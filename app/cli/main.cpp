// magnetar-cli entry point: dispatches argv[1] to a registered command.
#include <cstring>
#include <iostream>

#include "cli.h"

using magnetar::cli::commands;

static void print_help() {
  std::cout << "magnetar-cli " << MAGNETAR_VERSION
            << " — local LLM inference on hand-written x86-64 kernels\n\ncommands:\n";
  for (const auto& c : commands()) std::cout << "  " << c.name << "\t" << c.summary << "\n";
  std::cout << "\n`magnetar-cli help COMMAND` shows a command's options.\n";
}

int main(int argc, char** argv) {
  if (argc < 2 || !std::strcmp(argv[1], "-h") || !std::strcmp(argv[1], "--help")) {
    print_help();
    return argc < 2 ? 2 : 0;
  }
  std::string name = argv[1];
  if (name == "--version") {
    std::cout << "magnetar-cli " << MAGNETAR_VERSION << "\n";
    return 0;
  }
  if (name == "help" && argc >= 3) {
    for (const auto& c : commands())
      if (c.name == std::string(argv[2])) {
        std::cout << "usage: " << c.usage << "\n";
        return 0;
      }
  }
  for (const auto& c : commands()) {
    if (c.name != name) continue;
    std::vector<std::string> args(argv + 2, argv + argc);
    return c.run(args);
  }
  std::cerr << "magnetar-cli: unknown command '" << name << "'\n\n";
  print_help();
  return 2;
}
