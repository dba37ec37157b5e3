// GGUF v2/v3 parser: every read is bounds-checked against the buffer (see gguf_reader.h).
//
// Index: Cursor (checked reads) | type tables | values (recursive, depth-limited) | tensor
// infos and the data section | typed metadata getters.
#include "convert/gguf_reader.h"

#include <algorithm>
#include <cstring>
#include <limits>
#include <unordered_set>

namespace magnetar::gguf {

// ================================================================================================
// Cursor: little-endian reads that fail cleanly at the end of the buffer
// ================================================================================================

namespace {

class Cursor {
 public:
  Cursor(const uint8_t* data, uint64_t size) : data_(data), size_(size) {}
  uint64_t nested_values = 0;  // Values built for arrays of arrays so far (kMaxNestedArrayValues)
  uint64_t pos() const { return pos_; }
  uint64_t remaining() const { return size_ - pos_; }
  const uint8_t* here() const { return data_ + pos_; }

  Status need(uint64_t bytes, const std::string& what) const {
    if (bytes > remaining())
      return Status::error("file truncated: " + what + " needs " + std::to_string(bytes) +
                           " bytes at offset " + std::to_string(pos_) + ", only " +
                           std::to_string(remaining()) + " left");
    return Status::ok();
  }
  Status skip(uint64_t bytes, const std::string& what) {
    MAGNETAR_TRY(need(bytes, what));
    pos_ += bytes;
    return Status::ok();
  }
  template <typename T>
  Status read(T* out, const std::string& what) {
    MAGNETAR_TRY(need(sizeof(T), what));
    std::memcpy(out, data_ + pos_, sizeof(T));  // GGUF is little-endian, as is every target
    pos_ += sizeof(T);
    return Status::ok();
  }
  Status read_string(std::string_view* out, const std::string& what) {
    uint64_t length = 0;
    MAGNETAR_TRY(read(&length, what + " length"));
    if (length > remaining())
      return Status::error(what + " at offset " + std::to_string(pos_ - 8) + " claims " +
                           std::to_string(length) + " bytes, but only " +
                           std::to_string(remaining()) + " remain in the file");
    *out = std::string_view(reinterpret_cast<const char*>(data_ + pos_), size_t(length));
    pos_ += length;
    return Status::ok();
  }

 private:
  const uint8_t* data_;
  uint64_t size_;
  uint64_t pos_ = 0;
};

// Printable excerpt of untrusted text for error messages.
std::string quoted(std::string_view s) {
  std::string out = "\"";
  for (size_t i = 0; i < s.size() && i < 80; ++i) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    out += (c >= 0x20 && c < 0x7f) ? char(c) : '?';
  }
  if (s.size() > 80) out += "...";
  return out + "\"";
}

// ================================================================================================
// Type tables
// ================================================================================================

// Bytes of a scalar of this type in the file; 0 for String/Array (variable) and unknown types.
uint64_t scalar_bytes(ValueType type) {
  switch (type) {
    case ValueType::U8: case ValueType::I8: case ValueType::Bool: return 1;
    case ValueType::U16: case ValueType::I16: return 2;
    case ValueType::U32: case ValueType::I32: case ValueType::F32: return 4;
    case ValueType::U64: case ValueType::I64: case ValueType::F64: return 8;
    case ValueType::String: case ValueType::Array: return 0;
  }
  return 0;
}

bool value_type_valid(uint32_t type) { return type <= uint32_t(ValueType::F64); }

// Smallest encoding of one element of this type (for bounding array counts by the file size).
uint64_t min_element_bytes(ValueType type) {
  if (type == ValueType::String) return 8;      // length only
  if (type == ValueType::Array) return 4 + 8;   // element type + count
  return scalar_bytes(type);
}

}  // namespace

const char* value_type_name(ValueType type) {
  switch (type) {
    case ValueType::U8: return "uint8";
    case ValueType::I8: return "int8";
    case ValueType::U16: return "uint16";
    case ValueType::I16: return "int16";
    case ValueType::U32: return "uint32";
    case ValueType::I32: return "int32";
    case ValueType::F32: return "float32";
    case ValueType::Bool: return "bool";
    case ValueType::String: return "string";
    case ValueType::Array: return "array";
    case ValueType::U64: return "uint64";
    case ValueType::I64: return "int64";
    case ValueType::F64: return "float64";
  }
  return "unknown";
}

bool tensor_type_block(uint32_t ggml_type, uint64_t* block_elements, uint64_t* block_bytes) {
  uint64_t elements = 1, bytes = 0;
  switch (TensorType(ggml_type)) {
    case TensorType::F32: bytes = 4; break;
    case TensorType::F16: bytes = 2; break;
    case TensorType::BF16: bytes = 2; break;
    case TensorType::F64: bytes = 8; break;
    case TensorType::I8: bytes = 1; break;
    case TensorType::I16: bytes = 2; break;
    case TensorType::I32: bytes = 4; break;
    case TensorType::I64: bytes = 8; break;
    case TensorType::Q4_0: elements = 32; bytes = 18; break;
    case TensorType::Q4_1: elements = 32; bytes = 20; break;
    case TensorType::Q5_0: elements = 32; bytes = 22; break;
    case TensorType::Q5_1: elements = 32; bytes = 24; break;
    case TensorType::Q8_0: elements = 32; bytes = 34; break;
    case TensorType::Q8_1: elements = 32; bytes = 36; break;
    case TensorType::Q2_K: elements = 256; bytes = 84; break;
    case TensorType::Q3_K: elements = 256; bytes = 110; break;
    case TensorType::Q4_K: elements = 256; bytes = 144; break;
    case TensorType::Q5_K: elements = 256; bytes = 176; break;
    case TensorType::Q6_K: elements = 256; bytes = 210; break;
    case TensorType::Q8_K: elements = 256; bytes = 292; break;
    case TensorType::IQ4_NL: elements = 32; bytes = 18; break;
    case TensorType::IQ4_XS: elements = 256; bytes = 136; break;
    default: return false;
  }
  *block_elements = elements;
  *block_bytes = bytes;
  return true;
}

std::string tensor_type_name(uint32_t ggml_type) {
  switch (TensorType(ggml_type)) {
    case TensorType::F32: return "F32";
    case TensorType::F16: return "F16";
    case TensorType::BF16: return "BF16";
    case TensorType::F64: return "F64";
    case TensorType::I8: return "I8";
    case TensorType::I16: return "I16";
    case TensorType::I32: return "I32";
    case TensorType::I64: return "I64";
    case TensorType::Q4_0: return "Q4_0";
    case TensorType::Q4_1: return "Q4_1";
    case TensorType::Q5_0: return "Q5_0";
    case TensorType::Q5_1: return "Q5_1";
    case TensorType::Q8_0: return "Q8_0";
    case TensorType::Q8_1: return "Q8_1";
    case TensorType::Q2_K: return "Q2_K";
    case TensorType::Q3_K: return "Q3_K";
    case TensorType::Q4_K: return "Q4_K";
    case TensorType::Q5_K: return "Q5_K";
    case TensorType::Q6_K: return "Q6_K";
    case TensorType::Q8_K: return "Q8_K";
    case TensorType::IQ4_NL: return "IQ4_NL";
    case TensorType::IQ4_XS: return "IQ4_XS";
  }
  return "type " + std::to_string(ggml_type);
}

bool Value::is_integer() const {
  switch (type) {
    case ValueType::U8: case ValueType::I8: case ValueType::U16: case ValueType::I16:
    case ValueType::U32: case ValueType::I32: case ValueType::U64: case ValueType::I64:
      return true;
    default:
      return false;
  }
}

double Value::as_f64() const {
  if (is_float()) {
    double d;
    std::memcpy(&d, &bits, sizeof d);
    return d;
  }
  if (type == ValueType::U64) return double(bits);
  return double(int64_t(bits));
}

// ================================================================================================
// Values
// ================================================================================================

namespace {

// Reads one scalar of `type` (not String/Array) into value->bits.
Status read_scalar(Cursor& cur, ValueType type, Value* value, const std::string& what) {
  value->type = type;
  switch (type) {
    case ValueType::U8: { uint8_t v = 0; MAGNETAR_TRY(cur.read(&v, what)); value->bits = v; break; }
    case ValueType::I8: { int8_t v = 0; MAGNETAR_TRY(cur.read(&v, what)); value->bits = uint64_t(int64_t(v)); break; }
    case ValueType::U16: { uint16_t v = 0; MAGNETAR_TRY(cur.read(&v, what)); value->bits = v; break; }
    case ValueType::I16: { int16_t v = 0; MAGNETAR_TRY(cur.read(&v, what)); value->bits = uint64_t(int64_t(v)); break; }
    case ValueType::U32: { uint32_t v = 0; MAGNETAR_TRY(cur.read(&v, what)); value->bits = v; break; }
    case ValueType::I32: { int32_t v = 0; MAGNETAR_TRY(cur.read(&v, what)); value->bits = uint64_t(int64_t(v)); break; }
    case ValueType::U64: { uint64_t v = 0; MAGNETAR_TRY(cur.read(&v, what)); value->bits = v; break; }
    case ValueType::I64: { int64_t v = 0; MAGNETAR_TRY(cur.read(&v, what)); value->bits = uint64_t(v); break; }
    case ValueType::Bool: { uint8_t v = 0; MAGNETAR_TRY(cur.read(&v, what)); value->bits = v != 0; break; }
    case ValueType::F32: {
      float v = 0;
      MAGNETAR_TRY(cur.read(&v, what));
      const double d = v;
      std::memcpy(&value->bits, &d, sizeof d);
      break;
    }
    case ValueType::F64: { double v = 0; MAGNETAR_TRY(cur.read(&v, what)); std::memcpy(&value->bits, &v, sizeof v); break; }
    case ValueType::String: case ValueType::Array:
      return Status::error(what + ": internal error, not a scalar type");
  }
  return Status::ok();
}

Status read_value(Cursor& cur, ValueType type, Value* value, const std::string& what, uint32_t depth);

Status read_array(Cursor& cur, Value* value, const std::string& what, uint32_t depth) {
  if (depth >= kMaxArrayDepth)
    return Status::error(what + ": arrays nested deeper than " + std::to_string(kMaxArrayDepth));
  uint32_t element_type = 0;
  const uint64_t header_at = cur.pos();
  MAGNETAR_TRY(cur.read(&element_type, what + " element type"));
  if (!value_type_valid(element_type))
    return Status::error(what + " at offset " + std::to_string(header_at) +
                         ": unknown array element type " + std::to_string(element_type));
  uint64_t count = 0;
  MAGNETAR_TRY(cur.read(&count, what + " element count"));
  value->type = ValueType::Array;
  value->element_type = ValueType(element_type);
  const uint64_t min_bytes = min_element_bytes(value->element_type);
  if (count > cur.remaining() / min_bytes)
    return Status::error(what + " at offset " + std::to_string(header_at) + ": " +
                         std::to_string(count) + " elements of " +
                         value_type_name(value->element_type) + " cannot fit in the " +
                         std::to_string(cur.remaining()) + " bytes left");
  value->count = count;
  switch (value->element_type) {
    case ValueType::String:
      for (uint64_t i = 0; i < count; ++i) {
        std::string_view s;
        MAGNETAR_TRY(cur.read_string(&s, what + "[" + std::to_string(i) + "]"));
        value->strings.push_back(s);
      }
      break;
    case ValueType::Array:
      // Checked before building: the elements' Values are what costs memory, not their bytes.
      if (count > kMaxNestedArrayValues - cur.nested_values)
        return Status::error(what + " at offset " + std::to_string(header_at) + ": " +
                             std::to_string(count) + " nested arrays; a file may hold at most " +
                             std::to_string(kMaxNestedArrayValues) + " in all");
      cur.nested_values += count;
      value->arrays.reserve(size_t(count));
      for (uint64_t i = 0; i < count; ++i) {
        Value element;
        MAGNETAR_TRY(read_value(cur, ValueType::Array, &element, what + "[" + std::to_string(i) + "]",
                                depth + 1));
        value->arrays.push_back(std::move(element));
      }
      break;
    default:
      value->raw = cur.here();
      MAGNETAR_TRY(cur.skip(count * min_bytes, what + " elements"));  // count * size fits: checked above
      break;
  }
  return Status::ok();
}

Status read_value(Cursor& cur, ValueType type, Value* value, const std::string& what, uint32_t depth) {
  if (type == ValueType::String) {
    value->type = ValueType::String;
    return cur.read_string(&value->string, what);
  }
  if (type == ValueType::Array) return read_array(cur, value, what, depth);
  return read_scalar(cur, type, value, what);
}

}  // namespace

// ================================================================================================
// Header, metadata, tensor infos, data section
// ================================================================================================

Status parse(const uint8_t* data, uint64_t size, File* out) {
  *out = File();
  Cursor cur(data, size);
  char magic[4];
  MAGNETAR_TRY(cur.read(&magic, "GGUF magic"));
  if (std::memcmp(magic, "GGUF", 4) != 0) return Status::error("not a GGUF file (the magic bytes are not \"GGUF\")");
  uint32_t version = 0;
  MAGNETAR_TRY(cur.read(&version, "GGUF version"));
  if (version == 1) return Status::error("GGUF version 1 is not supported (convert the model again with a current llama.cpp)");
  if (version != 2 && version != 3) {
    if ((version & 0xffff) == 0 && version != 0)
      return Status::error("big-endian GGUF files are not supported");
    return Status::error("unsupported GGUF version " + std::to_string(version) + " (2 and 3 are supported)");
  }
  out->version = version;
  uint64_t n_tensors = 0, n_kv = 0;
  MAGNETAR_TRY(cur.read(&n_tensors, "tensor count"));
  MAGNETAR_TRY(cur.read(&n_kv, "metadata count"));
  constexpr uint64_t kMinKvBytes = 8 + 4 + 1;              // empty key, type, 1-byte value
  constexpr uint64_t kMinTensorInfoBytes = 8 + 4 + 4 + 8;  // empty name, n_dims 0, type, offset
  if (n_kv > cur.remaining() / kMinKvBytes)
    return Status::error("metadata count " + std::to_string(n_kv) + " cannot fit in a file of " +
                         std::to_string(size) + " bytes");
  if (n_tensors > cur.remaining() / kMinTensorInfoBytes)
    return Status::error("tensor count " + std::to_string(n_tensors) + " cannot fit in a file of " +
                         std::to_string(size) + " bytes");

  std::unordered_set<std::string_view> seen;
  out->metadata.reserve(size_t(n_kv));
  for (uint64_t i = 0; i < n_kv; ++i) {
    KeyValue kv;
    const std::string what = "metadata entry " + std::to_string(i);
    MAGNETAR_TRY(cur.read_string(&kv.key, what + " key"));
    if (!seen.insert(kv.key).second) return Status::error("duplicate metadata key " + quoted(kv.key));
    uint32_t type = 0;
    const uint64_t type_at = cur.pos();
    MAGNETAR_TRY(cur.read(&type, what + " type"));
    if (!value_type_valid(type))
      return Status::error("metadata " + quoted(kv.key) + " at offset " + std::to_string(type_at) +
                           " has unknown value type " + std::to_string(type));
    MAGNETAR_TRY(read_value(cur, ValueType(type), &kv.value, "metadata " + quoted(kv.key), 0));
    out->metadata.push_back(std::move(kv));
  }

  if (const Value* alignment = out->find("general.alignment")) {
    if (alignment->type != ValueType::U32)
      return Status::error(std::string("general.alignment must be uint32, not ") + value_type_name(alignment->type));
    const uint64_t a = alignment->as_u64();
    if (a == 0 || (a & (a - 1)) != 0)
      return Status::error("general.alignment " + std::to_string(a) + " is not a power of two");
    out->alignment = a;
  }

  seen.clear();
  out->tensors.reserve(size_t(n_tensors));
  for (uint64_t i = 0; i < n_tensors; ++i) {
    Tensor t;
    const std::string what = "tensor info " + std::to_string(i);
    MAGNETAR_TRY(cur.read_string(&t.name, what + " name"));
    const std::string name = "tensor " + quoted(t.name);
    if (t.name.empty() || t.name.size() >= 64)
      return Status::error(what + ": name length " + std::to_string(t.name.size()) + " is outside 1..63");
    if (!seen.insert(t.name).second) return Status::error("duplicate " + name);
    MAGNETAR_TRY(cur.read(&t.n_dims, name + " dimension count"));
    if (t.n_dims < 1 || t.n_dims > kMaxDims)
      return Status::error(name + " has " + std::to_string(t.n_dims) + " dimensions (1..4 allowed)");
    t.n_elements = 1;
    for (uint32_t d = 0; d < t.n_dims; ++d) {
      MAGNETAR_TRY(cur.read(&t.ne[d], name + " dimension"));
      if (t.ne[d] > uint64_t(std::numeric_limits<int64_t>::max()) ||
          (t.ne[d] != 0 && t.n_elements > uint64_t(std::numeric_limits<int64_t>::max()) / t.ne[d]))
        return Status::error(name + " has an element count that overflows 63 bits");
      t.n_elements *= t.ne[d];
    }
    MAGNETAR_TRY(cur.read(&t.ggml_type, name + " type"));
    uint64_t relative_offset = 0;
    MAGNETAR_TRY(cur.read(&relative_offset, name + " offset"));
    uint64_t block_elements = 0, block_bytes = 0;
    t.size_known = tensor_type_block(t.ggml_type, &block_elements, &block_bytes);
    if (t.size_known) {
      if (t.ne[0] % block_elements != 0)
        return Status::error(name + ": its row of " + std::to_string(t.ne[0]) + " elements is not a multiple of the " +
                             tensor_type_name(t.ggml_type) + " block size " + std::to_string(block_elements));
      const uint64_t blocks = t.n_elements / block_elements;
      if (blocks > std::numeric_limits<uint64_t>::max() / block_bytes)
        return Status::error(name + " is too large");
      t.bytes = blocks * block_bytes;
    }
    if (relative_offset % out->alignment != 0)
      return Status::error(name + " offset " + std::to_string(relative_offset) + " is not a multiple of the alignment " +
                           std::to_string(out->alignment));
    t.offset = relative_offset;  // made absolute below, once the data section's start is known
    out->tensors.push_back(t);
  }

  const uint64_t infos_end = cur.pos();
  // Align up without overflow: infos_end <= size and alignment is a power of two.
  const uint64_t padding = (out->alignment - infos_end % out->alignment) % out->alignment;
  if (n_tensors > 0 && padding > size - infos_end)
    return Status::error("file truncated: the tensor data section would start at offset " +
                         std::to_string(infos_end + padding) + ", past the end (" + std::to_string(size) + " bytes)");
  out->data_offset = infos_end + padding;
  const uint64_t data_bytes = n_tensors > 0 ? size - out->data_offset : 0;
  for (Tensor& t : out->tensors) {
    const std::string name = "tensor " + quoted(t.name);
    if (t.offset > data_bytes || t.bytes > data_bytes - t.offset)
      return Status::error(name + " (" + std::to_string(t.bytes) + " bytes at data offset " + std::to_string(t.offset) +
                           ") extends past the end of the file (data section holds " + std::to_string(data_bytes) +
                           " bytes)");
    t.offset += out->data_offset;
    t.data = data + t.offset;
  }
  // No two tensors may share bytes.
  std::vector<const Tensor*> by_offset;
  for (const Tensor& t : out->tensors)
    if (t.size_known && t.bytes > 0) by_offset.push_back(&t);
  std::sort(by_offset.begin(), by_offset.end(), [](const Tensor* a, const Tensor* b) { return a->offset < b->offset; });
  for (size_t i = 1; i < by_offset.size(); ++i)
    if (by_offset[i - 1]->offset + by_offset[i - 1]->bytes > by_offset[i]->offset)
      return Status::error("tensors " + quoted(by_offset[i - 1]->name) + " and " + quoted(by_offset[i]->name) +
                           " overlap in the file");
  return Status::ok();
}

// ================================================================================================
// Lookups and typed getters
// ================================================================================================

const Value* File::find(std::string_view key) const {
  for (const KeyValue& kv : metadata)
    if (kv.key == key) return &kv.value;
  return nullptr;
}

const Tensor* File::find_tensor(std::string_view name) const {
  for (const Tensor& t : tensors)
    if (t.name == name) return &t;
  return nullptr;
}

namespace {
Status missing(std::string_view key) { return Status::error("GGUF metadata " + quoted(key) + " is missing"); }
Status wrong_type(std::string_view key, const Value& v, const char* expected) {
  std::string found = value_type_name(v.type);
  if (v.type == ValueType::Array) found += std::string(" of ") + value_type_name(v.element_type);
  return Status::error("GGUF metadata " + quoted(key) + " is " + found + ", expected " + expected);
}
}  // namespace

Status File::get_u64(std::string_view key, uint64_t* out) const {
  const Value* v = find(key);
  if (v == nullptr) return missing(key);
  if (!v->is_integer()) return wrong_type(key, *v, "an integer");
  const bool is_signed = v->type == ValueType::I8 || v->type == ValueType::I16 || v->type == ValueType::I32 ||
                         v->type == ValueType::I64;
  if (is_signed && v->as_i64() < 0)
    return Status::error("GGUF metadata " + quoted(key) + " is negative (" + std::to_string(v->as_i64()) + ")");
  *out = v->as_u64();
  return Status::ok();
}

Status File::get_u32(std::string_view key, uint32_t* out) const {
  uint64_t wide = 0;
  MAGNETAR_TRY(get_u64(key, &wide));
  if (wide > std::numeric_limits<uint32_t>::max())
    return Status::error("GGUF metadata " + quoted(key) + " = " + std::to_string(wide) + " is out of range");
  *out = uint32_t(wide);
  return Status::ok();
}

Status File::get_f32(std::string_view key, float* out) const {
  const Value* v = find(key);
  if (v == nullptr) return missing(key);
  if (!v->is_float() && !v->is_integer()) return wrong_type(key, *v, "a number");
  *out = float(v->as_f64());
  return Status::ok();
}

Status File::get_bool(std::string_view key, bool* out) const {
  const Value* v = find(key);
  if (v == nullptr) return missing(key);
  if (v->type != ValueType::Bool) return wrong_type(key, *v, "bool");
  *out = v->bits != 0;
  return Status::ok();
}

Status File::get_string(std::string_view key, std::string_view* out) const {
  const Value* v = find(key);
  if (v == nullptr) return missing(key);
  if (v->type != ValueType::String) return wrong_type(key, *v, "string");
  *out = v->string;
  return Status::ok();
}

Status File::get_string_array(std::string_view key, std::vector<std::string_view>* out) const {
  const Value* v = find(key);
  if (v == nullptr) return missing(key);
  if (v->type != ValueType::Array || v->element_type != ValueType::String) return wrong_type(key, *v, "array of string");
  *out = v->strings;
  return Status::ok();
}

Status File::get_f32_array(std::string_view key, std::vector<float>* out) const {
  const Value* v = find(key);
  if (v == nullptr) return missing(key);
  if (v->type != ValueType::Array || v->element_type != ValueType::F32) return wrong_type(key, *v, "array of float32");
  out->resize(size_t(v->count));
  if (v->count > 0) std::memcpy(out->data(), v->raw, size_t(v->count) * sizeof(float));
  return Status::ok();
}

Status File::get_i64_array(std::string_view key, std::vector<int64_t>* out) const {
  const Value* v = find(key);
  if (v == nullptr) return missing(key);
  if (v->type != ValueType::Array) return wrong_type(key, *v, "array of integers");
  Value element;
  element.type = v->element_type;
  if (!element.is_integer()) return wrong_type(key, *v, "array of integers");
  const uint64_t stride = scalar_bytes(v->element_type);
  out->resize(size_t(v->count));
  for (uint64_t i = 0; i < v->count; ++i) {
    Cursor cur(v->raw + i * stride, stride);
    MAGNETAR_TRY(read_scalar(cur, v->element_type, &element, "array element"));
    (*out)[size_t(i)] = element.as_i64();
  }
  return Status::ok();
}

}  // namespace magnetar::gguf
