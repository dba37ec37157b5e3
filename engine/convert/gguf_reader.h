// GGUF reader: parses a GGUF v2/v3 file held in memory into its metadata and tensor views.
//
// GGUF files come from strangers, so every count, length, offset, type and string is checked
// against the buffer before use; any violation returns an error Status naming what was wrong
// and where (byte offset). Nothing is copied: strings and tensor data are views into the
// caller's buffer, which must outlive the GgufFile. Not here: writing GGUF, v1 files,
// interpreting the model (the converter does that).
//
// Layout (little-endian): "GGUF" u32 version, u64 n_tensors, u64 n_kv; n_kv × (string key,
// u32 type, value); n_tensors × (string name, u32 n_dims, u64 ne[n_dims], u32 ggml_type,
// u64 offset); padding to general.alignment (default 32); tensor data. A string is u64 length +
// bytes (no NUL). ne[0] is the innermost (contiguous) dimension: a [rows, cols] matrix has
// ne = {cols, rows}. Tensor offsets are relative to the data section and aligned.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "magnetar/status.h"

namespace magnetar::gguf {

enum class ValueType : uint32_t {
  U8 = 0, I8 = 1, U16 = 2, I16 = 3, U32 = 4, I32 = 5, F32 = 6, Bool = 7, String = 8,
  Array = 9, U64 = 10, I64 = 11, F64 = 12,
};
const char* value_type_name(ValueType type);

// GGML tensor types this reader knows the size of (others parse, with size_known = false).
enum class TensorType : uint32_t {
  F32 = 0, F16 = 1, Q4_0 = 2, Q4_1 = 3, Q5_0 = 6, Q5_1 = 7, Q8_0 = 8, Q8_1 = 9,
  Q2_K = 10, Q3_K = 11, Q4_K = 12, Q5_K = 13, Q6_K = 14, Q8_K = 15, IQ4_NL = 20, IQ4_XS = 23,
  I8 = 24, I16 = 25, I32 = 26, I64 = 27, F64 = 28, BF16 = 30,
};
// Name ("F16", "Q4_0", ...) or "type <n>" for types this reader does not know.
std::string tensor_type_name(uint32_t ggml_type);
// Elements per block and bytes per block; false for unknown types.
bool tensor_type_block(uint32_t ggml_type, uint64_t* block_elements, uint64_t* block_bytes);

inline constexpr uint32_t kMaxDims = 4;          // GGML_MAX_DIMS
inline constexpr uint32_t kMaxArrayDepth = 4;    // arrays of arrays of ... (rare in practice)
// Elements of all arrays of arrays in one file together: each becomes a Value (~10x its 12 bytes
// in the file), so a file of nothing but empty arrays would otherwise cost ~10x its size.
inline constexpr uint64_t kMaxNestedArrayValues = uint64_t(1) << 16;
inline constexpr uint64_t kDefaultAlignment = 32;

struct Value {
  ValueType type = ValueType::U8;
  uint64_t bits = 0;          // scalars: integer value (sign-extended for signed types), bool,
                              // or the IEEE bits of an F32/F64 (as double)
  std::string_view string;    // String
  // Array:
  ValueType element_type = ValueType::U8;
  uint64_t count = 0;
  const uint8_t* raw = nullptr;         // numeric/bool elements, little-endian, unaligned
  std::vector<std::string_view> strings;  // String elements
  std::vector<Value> arrays;              // Array elements

  bool is_integer() const;
  bool is_float() const { return type == ValueType::F32 || type == ValueType::F64; }
  // Numeric scalars as a wider type (signed integers keep their sign, floats as double).
  int64_t as_i64() const { return int64_t(bits); }
  uint64_t as_u64() const { return bits; }
  double as_f64() const;
};

struct KeyValue {
  std::string_view key;
  Value value;
};

struct Tensor {
  std::string_view name;
  uint32_t n_dims = 0;
  uint64_t ne[kMaxDims] = {1, 1, 1, 1};  // ne[0] innermost; unused dims are 1
  uint32_t ggml_type = 0;
  uint64_t n_elements = 0;
  bool size_known = false;   // the type's block size is known (tensor_type_block)
  uint64_t offset = 0;       // absolute byte offset in the file
  uint64_t bytes = 0;        // 0 when !size_known
  const uint8_t* data = nullptr;  // [bytes], inside the buffer
};

struct File {
  uint32_t version = 0;
  uint64_t alignment = kDefaultAlignment;
  uint64_t data_offset = 0;  // start of the data section (aligned)
  std::vector<KeyValue> metadata;  // in file order
  std::vector<Tensor> tensors;     // in file order

  const Value* find(std::string_view key) const;
  const Tensor* find_tensor(std::string_view name) const;

  // Typed metadata access with clear errors (missing key, wrong type, out of range).
  Status get_u64(std::string_view key, uint64_t* out) const;    // any non-negative integer
  Status get_u32(std::string_view key, uint32_t* out) const;
  Status get_f32(std::string_view key, float* out) const;       // F32 or F64 (or integer)
  Status get_bool(std::string_view key, bool* out) const;
  Status get_string(std::string_view key, std::string_view* out) const;
  Status get_string_array(std::string_view key, std::vector<std::string_view>* out) const;
  Status get_f32_array(std::string_view key, std::vector<float>* out) const;  // F32 elements
  Status get_i64_array(std::string_view key, std::vector<int64_t>* out) const;  // integer elements
};

// Parses data[size]. On success *out describes the file (with views into data).
Status parse(const uint8_t* data, uint64_t size, File* out);

}  // namespace magnetar::gguf
