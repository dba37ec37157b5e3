// libFuzzer target for the JSON a model folder holds. The first input byte picks the reader, the
// rest is the document:
//   0  a safetensors header (parse_safetensors_header)
//   1  model.safetensors.index.json (parse_safetensors_index)
//   2  tokenizer_config.json (parse_tokenizer_config)
//   3  config.json, 4 generation_config.json, 5 tokenizer_config.json: written into a folder that
//      otherwise holds the stories260K-hf/f32 test model, then the whole folder is planned
//      (plan_hf_folder), so the typed field reads and the cross-checks run too.
// Any error must be a Status (an exception or a crash is a finding). CTest runs it for a bounded
// time (test fuzz.model_folder); the test data is $MAGNETAR_TESTDATA or the build's default.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <string>
#include <vector>

#include "convert/plan.h"
#include "convert/safetensors.h"
#include "convert/tokenizer_files.h"

#include <unistd.h>  // getpid: the fuzz targets are built on Linux only

namespace fs = std::filesystem;

namespace {

fs::path g_folder;  // empty when the test data is absent: selectors 3-5 are then skipped

void write(const fs::path& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary | std::ios::trunc).write(bytes.data(), std::streamsize(bytes.size()));
}

std::string read(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  const char* env = std::getenv("MAGNETAR_TESTDATA");
  const fs::path source = fs::path(env && *env ? env : MAGNETAR_DEFAULT_TESTDATA) / "stories260K-hf" / "f32";
  std::error_code ec;
  if (!fs::is_regular_file(source / "config.json", ec)) {
    const char* required = std::getenv("MAGNETAR_REQUIRE_TESTDATA");
    if (required && std::string(required) == "1") {
      std::fprintf(stderr, "model_folder_fuzz: test data missing at %s\n", source.string().c_str());
      std::abort();
    }
    return 0;
  }
  g_folder = fs::temp_directory_path() / ("magnetar-fuzz-folder-" + std::to_string(::getpid()));
  fs::create_directories(g_folder);
  for (const char* name : {"model.safetensors", "tokenizer.model"})
    fs::create_symlink(source / name, g_folder / name, ec);
  for (const char* name : {"config.json", "generation_config.json", "tokenizer_config.json"})
    write(g_folder / name, read(source / name));
  std::atexit([] {
    std::error_code remove_ec;
    fs::remove_all(g_folder, remove_ec);
  });
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const std::string text(reinterpret_cast<const char*>(data) + 1, size - 1);
  using namespace magnetar::convert;
  switch (data[0] % 6) {
    case 0: {
      SafetensorsFile file;
      file.path = "fuzz.safetensors";
      (void)parse_safetensors_header(text, 8 + text.size() + 4096, &file);
      break;
    }
    case 1: {
      std::map<std::string, std::string> weight_map;
      std::vector<std::string> shards;
      (void)parse_safetensors_index(text, "fuzz.index.json", &weight_map, &shards);
      break;
    }
    case 2: {
      TokenizerConfig config;
      (void)parse_tokenizer_config(text, "fuzz_tokenizer_config.json", &config);
      break;
    }
    default: {
      if (g_folder.empty()) break;
      const char* names[] = {"config.json", "generation_config.json", "tokenizer_config.json"};
      const fs::path target = g_folder / names[data[0] % 6 - 3];
      const std::string original = read(target);
      write(target, text);
      ConversionPlan plan;
      (void)plan_hf_folder(g_folder.string(), &plan);
      write(target, original);
      break;
    }
  }
  return 0;
}
