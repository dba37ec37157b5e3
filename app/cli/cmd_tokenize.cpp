// `magnetar-cli tokenize`: text → ids and pieces, or ids → text, with a model file's tokenizer
// or a tokenizer file (tokenizer.json, tokenizer.model). For users checking how a model sees
// their text, and for tests.
#include <cstdio>
#include <fstream>
#include <iostream>
#include <sstream>

#include "cli.h"
#include "magnetar/tools.h"

namespace magnetar::cli {
namespace {

int tokenize_command(const std::vector<std::string>& argv);

const Command kTokenize{
    "tokenize", "show the token ids and pieces of a text (or decode ids)",
    "magnetar-cli tokenize (-m MODEL | --tokenizer FILE) (-p TEXT | --text-file F | --decode IDS)\n"
    "       [--ids-only] [--no-special]\n"
    "  --tokenizer FILE  tokenizer.json (tokenizer_config.json beside it is read too) or\n"
    "                    tokenizer.model; -m reads only the model file's tokenizer\n"
    "  -p TEXT           text to encode; special-token strings in it become their ids\n"
    "  --text-file F     encode the bytes of file F\n"
    "  --decode IDS      comma-separated ids to turn back into text\n"
    "  --ids-only        print the ids on one line, space-separated\n"
    "  --no-special      encode special-token strings as plain text\n"
    "No BOS is added: the ids are exactly the text's.",
    tokenize_command};
const CommandRegistration kRegistration(kTokenize);

// A piece for display: control characters escaped so that every piece stays on its line.
std::string printable(std::string_view s) {
  std::string out;
  for (unsigned char c : s) {
    if (c == '\n') out += "\\n";
    else if (c == '\t') out += "\\t";
    else if (c == '\r') out += "\\r";
    else if (c < 0x20 || c == 0x7F) {
      char b[8];
      std::snprintf(b, sizeof(b), "\\x%02X", c);
      out += b;
    } else {
      out += static_cast<char>(c);
    }
  }
  return out;
}

int tokenize_command(const std::vector<std::string>& argv) {
  const std::vector<std::string> value_options = {"-m", "--model", "--tokenizer", "-p", "--prompt",
                                                  "--text-file", "--decode"};
  Args args;
  if (int bad = parse_command_line(kTokenize, argv, value_options, {"--ids-only", "--no-special"}, false, &args))
    return bad;
  const std::string model = args.get({"-m", "--model"}), file = args.get({"--tokenizer"});
  if (model.empty() == file.empty()) return usage_error(kTokenize, "give exactly one of -m MODEL or --tokenizer FILE");
  const int inputs = int(args.has("-p") || args.has("--prompt")) + int(args.has("--text-file")) + int(args.has("--decode"));
  if (inputs != 1) return usage_error(kTokenize, "give exactly one of -p TEXT, --text-file F or --decode IDS");

  std::unique_ptr<StandaloneTokenizer> opened;
  if (Status s = StandaloneTokenizer::open(model.empty() ? file : model, &opened); !s)
    return std::cerr << "magnetar-cli tokenize: " << s.message() << "\n", 1;
  const StandaloneTokenizer& tok = *opened;

  if (args.has("--decode")) {
    std::vector<int> ids;
    if (!parse_int_list(args.get({"--decode"}), &ids)) return usage_error(kTokenize, "--decode needs comma-separated ids");
    for (int id : ids)
      if (id < 0 || id >= tok.vocab_size())
        return std::cerr << "magnetar-cli tokenize: id " << id << " is outside the " << tok.vocab_size()
                         << "-token vocabulary\n", 1;
    std::cout << tok.decode(ids) << "\n";
    return 0;
  }
  std::string text;
  if (args.has("--text-file")) {
    std::ifstream in(args.get({"--text-file"}), std::ios::binary);
    if (!in) return std::cerr << "magnetar-cli tokenize: cannot read " << args.get({"--text-file"}) << "\n", 1;
    std::ostringstream buffer;
    buffer << in.rdbuf();
    text = buffer.str();
  } else {
    text = args.get({"-p", "--prompt"});
  }
  std::vector<int> ids;
  Status s = tok.encode(text, /*parse_special=*/!args.has("--no-special"), &ids);
  if (!s) return std::cerr << "magnetar-cli tokenize: " << s.message() << "\n", 1;
  if (args.has("--ids-only")) {
    for (size_t i = 0; i < ids.size(); ++i) std::cout << (i ? " " : "") << ids[i];
    std::cout << "\n";
    return 0;
  }
  for (int id : ids)
    std::cout << id << "\t" << printable(tok.piece(id)) << (tok.is_special(id) ? "\t(special)" : "") << "\n";
  std::cout << ids.size() << " tokens (" << tok.kind_name() << ", " << tok.vocab_size()
            << " in the vocabulary)\n";
  return 0;
}

}  // namespace
}  // namespace magnetar::cli
