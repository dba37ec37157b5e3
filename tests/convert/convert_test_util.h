// Helpers for the converter tests: reading a converted model file's header, table and tensors;
// reading safetensors sources independently of the converter; copying and altering test folders;
// the fixture of the failure tests (convert_errors_test, hardening_test).
#pragma once
#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <initializer_list>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "common/testdata.h"
#include "format/model_format.h"

namespace magnetar::test {

// A model file read whole: header, table and raw bytes, checked only for what the tests need.
struct ModelFile {
  std::string bytes;
  format::FileHeader header{};
  std::vector<format::TensorEntry> table;
  const format::TensorEntry* find(const std::string& name) const;
  // Tensor values widened to float (F32 or F16 tensors).
  std::vector<float> values(const std::string& name) const;
  std::string raw(const std::string& name) const;
  std::string tokenizer() const;
  std::string chat_template() const;
};
bool load_model_file(const std::string& path, ModelFile* out, std::string* error);

// A safetensors tensor, widened to float.
struct SourceTensor {
  std::string dtype;
  std::vector<uint64_t> shape;
  std::vector<float> values;
};
// Reads `name` from a folder's model.safetensors or its shards (via the index).
bool read_source_tensor(const std::string& folder, const std::string& name, SourceTensor* out);

float half_to_float(uint16_t h);  // independent of the converter's conversion

void write_file(const std::string& path, const std::string& bytes);
// Copies the files of `src` into a new folder `dst` (writable copies).
void copy_folder(const std::string& src, const std::string& dst);
// Rewrites a safetensors file's JSON header through `edit` (the data section is kept).
void edit_safetensors_header(const std::string& path, const std::function<void(nlohmann::json&)>& edit);
// Overwrites the 8-byte header length of a safetensors file.
void set_safetensors_header_length(const std::string& path, uint64_t length);
std::vector<std::string> list_dir(const std::string& dir);

// The test data the failure tests copy and break.
#define MAGNETAR_REQUIRE_CONVERT_TEST_DATA()                 \
  MAGNETAR_REQUIRE_TESTDATA("stories260K-hf/f32");          \
  MAGNETAR_REQUIRE_TESTDATA("stories260K-hf/f32-sharded");  \
  MAGNETAR_REQUIRE_TESTDATA("stories260K/stories260K.bin")

// Conversions that must fail: each test breaks a writable copy of a test folder, converts it into
// an empty output folder and expects a clear, bounded error and nothing left behind.
class ConvertFailureTest : public ::testing::Test {
 protected:
  // Messages quote at most an excerpt of an untrusted value.
  static constexpr size_t kMaxMessageBytes = 1000;

  void SetUp() override;
  void TearDown() override;

  // A writable copy of a test data folder.
  std::string copy(const std::string& relative);
  // Converts `source` (F16 weights; `tokenizer`: ConvertOptions::tokenizer_path) and expects
  // failure with every needle in a message under kMaxMessageBytes and an empty output folder.
  void expect_error(const std::string& source, std::initializer_list<std::string> needles,
                    const std::string& tokenizer = "");
  // Rewrites a JSON file through `edit`.
  void edit_json(const std::string& path, const std::function<void(nlohmann::json&)>& edit);

  std::string root_, out_dir_;
  int copies_ = 0;
};

}  // namespace magnetar::test
