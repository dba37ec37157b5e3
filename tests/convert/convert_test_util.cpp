// Helpers for the converter tests: see convert_test_util.h.
#include "convert_test_util.h"

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "common/testdata.h"
#include "magnetar/convert.h"

namespace fs = std::filesystem;
using nlohmann::json;

namespace magnetar::test {

const format::TensorEntry* ModelFile::find(const std::string& name) const {
  for (const auto& e : table)
    if (name == e.name) return &e;
  return nullptr;
}

float half_to_float(uint16_t h) {
  // Written differently from the converter: via ldexp on the fields.
  const int sign = (h >> 15) & 1, exp = (h >> 10) & 0x1f, mant = h & 0x3ff;
  float v;
  if (exp == 0) v = std::ldexp(static_cast<float>(mant), -24);
  else if (exp == 31) v = mant ? NAN : INFINITY;
  else v = std::ldexp(static_cast<float>(mant + 1024), exp - 25);
  return sign ? -v : v;
}

std::vector<float> ModelFile::values(const std::string& name) const {
  const format::TensorEntry* e = find(name);
  std::vector<float> out;
  if (!e) return out;
  const uint64_t n = e->shape[0] * e->shape[1];
  out.resize(n);
  const char* p = bytes.data() + e->offset;
  for (uint64_t i = 0; i < n; ++i) {
    if (e->dtype == static_cast<uint32_t>(format::DType::F32)) {
      std::memcpy(&out[i], p + 4 * i, 4);
    } else {
      uint16_t h;
      std::memcpy(&h, p + 2 * i, 2);
      out[i] = half_to_float(h);
    }
  }
  return out;
}

std::string ModelFile::raw(const std::string& name) const {
  const format::TensorEntry* e = find(name);
  return e ? bytes.substr(e->offset, e->bytes) : std::string();
}

std::string ModelFile::tokenizer() const {
  return bytes.substr(header.tokenizer_offset, header.tokenizer_bytes);
}

std::string ModelFile::chat_template() const {
  return bytes.substr(header.template_offset, header.template_bytes);
}

bool load_model_file(const std::string& path, ModelFile* out, std::string* error) {
  out->bytes = read_file(path);
  if (out->bytes.size() < sizeof(format::FileHeader)) {
    *error = "file too short";
    return false;
  }
  std::memcpy(&out->header, out->bytes.data(), sizeof(format::FileHeader));
  const auto& h = out->header;
  if (std::memcmp(h.magic, format::kMagic, 8) != 0 || h.file_bytes != out->bytes.size() ||
      h.tensor_table_offset + h.n_tensors * sizeof(format::TensorEntry) > out->bytes.size()) {
    *error = "bad magic, size or table";
    return false;
  }
  out->table.resize(h.n_tensors);
  std::memcpy(out->table.data(), out->bytes.data() + h.tensor_table_offset,
              h.n_tensors * sizeof(format::TensorEntry));
  for (const auto& e : out->table)
    if (e.offset + e.bytes > out->bytes.size()) {
      *error = std::string("tensor outside the file: ") + e.name;
      return false;
    }
  return true;
}

bool read_source_tensor(const std::string& folder, const std::string& name, SourceTensor* out) {
  std::string file = "model.safetensors";
  const std::string index_path = (fs::path(folder) / "model.safetensors.index.json").string();
  if (fs::exists(index_path)) {
    json index = json::parse(read_file(index_path));
    if (!index["weight_map"].contains(name)) return false;
    file = index["weight_map"][name].get<std::string>();
  }
  const std::string bytes = read_file((fs::path(folder) / file).string());
  uint64_t n = 0;
  std::memcpy(&n, bytes.data(), 8);
  json header = json::parse(bytes.substr(8, n));
  if (!header.contains(name)) return false;
  const json& t = header[name];
  out->dtype = t["dtype"].get<std::string>();
  out->shape = t["shape"].get<std::vector<uint64_t>>();
  const uint64_t begin = t["data_offsets"][0].get<uint64_t>() + 8 + n;
  const uint64_t end = t["data_offsets"][1].get<uint64_t>() + 8 + n;
  const char* p = bytes.data() + begin;
  out->values.clear();
  if (out->dtype == "F32") {
    out->values.resize((end - begin) / 4);
    std::memcpy(out->values.data(), p, end - begin);
  } else {
    for (uint64_t i = 0; i < (end - begin) / 2; ++i) {
      uint16_t h;
      std::memcpy(&h, p + 2 * i, 2);
      if (out->dtype == "BF16") {
        uint32_t u = static_cast<uint32_t>(h) << 16;
        float f;
        std::memcpy(&f, &u, 4);
        out->values.push_back(f);
      } else {
        out->values.push_back(half_to_float(h));
      }
    }
  }
  return true;
}

void write_file(const std::string& path, const std::string& bytes) {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

void copy_folder(const std::string& src, const std::string& dst) {
  fs::create_directories(dst);
  for (const auto& entry : fs::directory_iterator(src))
    if (entry.is_regular_file())
      write_file((fs::path(dst) / entry.path().filename()).string(),
                 read_file(entry.path().string()));
}

void edit_safetensors_header(const std::string& path, const std::function<void(json&)>& edit) {
  const std::string bytes = read_file(path);
  uint64_t n = 0;
  std::memcpy(&n, bytes.data(), 8);
  json header = json::parse(bytes.substr(8, n));
  edit(header);
  std::string text = header.dump();
  text.resize((text.size() + 7) / 8 * 8, ' ');  // spaces may pad the JSON; keep data 8-aligned
  const uint64_t length = text.size();
  std::string prefix(8, '\0');
  std::memcpy(prefix.data(), &length, 8);
  write_file(path, prefix + text + bytes.substr(8 + n));
}

void set_safetensors_header_length(const std::string& path, uint64_t length) {
  std::string bytes = read_file(path);
  std::memcpy(bytes.data(), &length, 8);
  write_file(path, bytes);
}

std::vector<std::string> list_dir(const std::string& dir) {
  std::vector<std::string> names;
  for (const auto& entry : fs::directory_iterator(dir)) names.push_back(entry.path().filename().string());
  return names;
}

void ConvertFailureTest::SetUp() {
  root_ = make_temp_dir("convert-failure");
  out_dir_ = root_ + "/out";
  fs::create_directory(out_dir_);
}

void ConvertFailureTest::TearDown() { remove_tree(root_); }

std::string ConvertFailureTest::copy(const std::string& relative) {
  const std::string dst = root_ + "/src-" + std::to_string(++copies_);
  copy_folder(testdata_path(relative), dst);
  return dst;
}

void ConvertFailureTest::expect_error(const std::string& source, std::initializer_list<std::string> needles,
                                      const std::string& tokenizer) {
  ConvertOptions options;
  options.weight_type = WeightType::F16;
  options.tokenizer_path = tokenizer;
  const Status s = convert_model(source, out_dir_ + "/model.mgn", options);
  ASSERT_FALSE(s.is_ok()) << "converting " << source << " should fail";
  EXPECT_LT(s.message().size(), kMaxMessageBytes) << s.message().substr(0, 2000);
  for (const std::string& n : needles)
    EXPECT_NE(s.message().find(n), std::string::npos)
        << "message \"" << s.message().substr(0, 2000) << "\" lacks \"" << n << "\"";
  EXPECT_TRUE(list_dir(out_dir_).empty()) << "output or temporary file left behind";
}

void ConvertFailureTest::edit_json(const std::string& path, const std::function<void(json&)>& edit) {
  json j = json::parse(read_file(path));
  edit(j);
  write_file(path, j.dump(2));
}

}  // namespace magnetar::test
