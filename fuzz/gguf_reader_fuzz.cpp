// libFuzzer target for the GGUF reader (engine/convert/gguf_reader.cpp): parses arbitrary bytes
// and, when they parse, touches every view the reader returned so AddressSanitizer sees any
// that escape the input; then turns the vocabulary into a SentencePiece model as the GGUF
// importer does (engine/convert/gguf_vocab.cpp, engine/tokenizer/sentencepiece_proto.cpp). Built with clang -fsanitize=fuzzer,address,undefined by
// fuzz/CMakeLists.txt; CTest runs it for a bounded time (test fuzz.gguf_reader).
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "convert/gguf_import.h"
#include "convert/gguf_reader.h"
#include "tokenizer/sentencepiece_proto.h"

namespace {

volatile uint64_t g_sink;  // keeps the reads below from being optimised away

uint64_t touch(const void* p, uint64_t n) {
  if (n == 0) return 0;
  const auto* b = static_cast<const uint8_t*>(p);
  return uint64_t(b[0]) + b[n - 1];
}

uint64_t touch_value(const magnetar::gguf::Value& v) {
  using magnetar::gguf::ValueType;
  uint64_t sum = v.bits;
  sum += touch(v.string.data(), v.string.size());
  for (std::string_view s : v.strings) sum += touch(s.data(), s.size());
  for (const auto& child : v.arrays) sum += touch_value(child);
  if (v.type == ValueType::Array && v.raw != nullptr && v.count > 0) {
    const uint64_t element = v.element_type == ValueType::U8 || v.element_type == ValueType::I8 ||
                                     v.element_type == ValueType::Bool ? 1
                             : v.element_type == ValueType::U16 || v.element_type == ValueType::I16 ? 2
                             : v.element_type == ValueType::U64 || v.element_type == ValueType::I64 ||
                                     v.element_type == ValueType::F64 ? 8 : 4;
    sum += touch(v.raw, v.count * element);
  }
  return sum;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  magnetar::gguf::File file;
  if (!magnetar::gguf::parse(data, size, &file).is_ok()) return 0;
  uint64_t sum = 0;
  for (const auto& kv : file.metadata) {
    sum += touch(kv.key.data(), kv.key.size()) + touch_value(kv.value);
    std::vector<std::string_view> strings;
    std::vector<float> floats;
    std::vector<int64_t> ints;
    uint32_t u32 = 0;
    float f = 0;
    if (file.get_string_array(kv.key, &strings).is_ok()) sum += strings.size();
    if (file.get_f32_array(kv.key, &floats).is_ok()) sum += floats.size();
    if (file.get_i64_array(kv.key, &ints).is_ok()) sum += ints.size();
    if (file.get_u32(kv.key, &u32).is_ok()) sum += u32;
    if (file.get_f32(kv.key, &f).is_ok()) sum += f > 0;
  }
  for (const auto& t : file.tensors) {
    sum += touch(t.name.data(), t.name.size()) + touch(t.data, t.bytes);
    if (file.find_tensor(t.name) != &t) __builtin_trap();  // names are unique
  }
  magnetar::spm::ModelSpec spec;
  if (magnetar::convert::gguf_vocab_to_spec(file, &spec).is_ok()) {
    std::string proto;
    if (magnetar::spm::build_sentencepiece_model(spec, &proto).is_ok()) sum += proto.size();
  }
  g_sink = sum;
  return 0;
}
