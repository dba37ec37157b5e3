// Tokenizer throughput on one core: MB/s of English prose and of source code for each family's
// tokenizer, the time of one 5,000-character word without spaces (Gemma 3 makes it a single
// BPE word: a quadratic merge loop would show here), and 2 MB of random bytes (the input that
// once cost SentencePiece 734 MB; measure peak memory from outside with --only).
//
//   magnetar_tokenizer_bench [--testdata DIR] [--prose FILE] [--code FILE] [--only SCENARIO]
//
// Defaults: the test data from $MAGNETAR_TESTDATA, prose = the project's docs/*.md and
// README.md, code = the engine's tokenizer sources (both found from the working directory,
// which should be the repository root). Prints the median of 5 runs of each scenario.
#include <algorithm>
#include <ctime>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "tokenizer/tokenizer_file.h"

namespace {

using magnetar::Tokenizer;

std::string read(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string read_all(const std::vector<std::string>& paths) {
  std::string out;
  for (const auto& p : paths) out += read(p);
  return out;
}

struct Family {
  const char* name;
  const char* file;  // relative to the test data
};

const Family kFamilies[] = {
    {"llama2 (SentencePiece)", "tokenizers/llama2/tokenizer.model"},
    {"llama3", "tokenizers/llama3/tokenizer.json"},
    {"qwen3", "models/tiny-qwen3/tokenizer.json"},
    {"gemma3", "models/tiny-gemma3/tokenizer.json"},
    {"gpt4o (o200k)", "tokenizers/gpt4o/tokenizer.json"},
};

// Median CPU seconds of `runs` encodes of `text` (process CPU time, not wall time: on a shared
// machine the wall clock mostly measures the other processes); ids count through *n_ids.
double median_seconds(const Tokenizer& tok, const std::string& text, int runs, size_t* n_ids) {
  std::vector<double> times;
  std::vector<int> ids;
  for (int r = 0; r < runs; ++r) {
    const std::clock_t t0 = std::clock();
    if (!tok.encode_with_special(text, &ids)) {
      std::fprintf(stderr, "encode failed\n");
      std::exit(1);
    }
    times.push_back(double(std::clock() - t0) / CLOCKS_PER_SEC);
  }
  *n_ids = ids.size();
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  std::string testdata = std::getenv("MAGNETAR_TESTDATA") ? std::getenv("MAGNETAR_TESTDATA") : "../shared/testdata";
  std::string prose_file, code_file, only;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--help" || a == "-h") {
      std::printf("usage: magnetar_tokenizer_bench [--testdata DIR] [--prose FILE] [--code FILE] [--only prose|code|run5000|random2mb]\n");
      return 0;
    }
    if (i + 1 >= argc) return std::fprintf(stderr, "%s needs a value\n", a.c_str()), 2;
    if (a == "--testdata") testdata = argv[++i];
    else if (a == "--prose") prose_file = argv[++i];
    else if (a == "--code") code_file = argv[++i];
    else if (a == "--only") only = argv[++i];
    else return std::fprintf(stderr, "unknown option %s\n", a.c_str()), 2;
  }
  const std::string prose = prose_file.empty()
      ? read_all({"README.md", "docs/ARCHITECTURE.md", "docs/APP.md", "docs/MODEL_FORMAT.md", "docs/PERFORMANCE.md"})
      : read(prose_file);
  const std::string code = code_file.empty()
      ? read_all({"engine/tokenizer/hf_tokenizer.cpp", "engine/tokenizer/bpe_model.cpp",
                  "engine/tokenizer/hf_pre_tokenizer.cpp", "engine/tokenizer/tokenizer.cpp",
                  "engine/tokenizer/added_tokens.cpp", "engine/tokenizer/hf_normalizer.cpp"})
      : read(code_file);
  if (prose.empty() || code.empty()) return std::fprintf(stderr, "no prose/code input: run from the repository root or pass --prose/--code\n"), 1;
  std::mt19937 rng(7);
  std::string run5000(5000, 'a');
  for (char& c : run5000) c = char('a' + rng() % 26);
  std::string random2mb(2000000, '\0');
  for (char& c : random2mb) c = char(rng() & 0xFF);

  std::printf("one core, CPU time; median of 5 runs; prose %zu bytes, code %zu bytes\n", prose.size(), code.size());
  std::printf("%-24s %12s %12s %16s %16s\n", "tokenizer", "prose MB/s", "code MB/s", "5000-char word", "2 MB random");
  for (const Family& f : kFamilies) {
    Tokenizer tok;
    if (magnetar::Status s = magnetar::load_tokenizer_file(testdata + "/" + f.file, &tok); !s)
      return std::fprintf(stderr, "%s\n", s.message().c_str()), 1;
    size_t n = 0;
    auto mbps = [&](const std::string& text) { return double(text.size()) / 1e6 / median_seconds(tok, text, 5, &n); };
    const double p = only.empty() || only == "prose" ? mbps(prose) : 0;
    const double c = only.empty() || only == "code" ? mbps(code) : 0;
    const double w = only.empty() || only == "run5000" ? median_seconds(tok, run5000, 5, &n) * 1e3 : 0;
    const double r = only.empty() || only == "random2mb" ? median_seconds(tok, random2mb, 1, &n) : 0;
    std::printf("%-24s %12.2f %12.2f %13.2f ms %14.2f s\n", f.name, p, c, w, r);
  }
  return 0;
}
