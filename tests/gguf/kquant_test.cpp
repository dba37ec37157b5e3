// K-quants, IQ4 and the mixed-type GGUF files users download (testdata gguf-kquants/, made by
// llama.cpp's own quantizer): every block tensor dequantizes bit for bit to the goldens (first
// 32 rows element by element, whole tensors by sha256); import keeps each tensor's type (mixed
// fused matrices as their parts); the engine's logits match the float64 reference computed on
// the dequantized weights, and its greedy continuation the reference's where margins allow.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "common/logit_quality.h"
#include "common/sha256.h"
#include "common/testdata.h"
#include "convert/gguf_reader.h"
#include "convert/safetensors.h"
#include "format/model_reader.h"
#include "kernels/kernels.h"
#include "kernels/quant.h"
#include "kernels/type_traits.h"
#include "magnetar/convert.h"
#include "magnetar/engine.h"

namespace magnetar {
namespace {

const char kDir[] = "gguf-kquants";
const char* const kQuantizedStems[] = {
    "tiny-llama-Q4_K_M", "tiny-gemma-Q4_K_M", "tiny-gemma-Q5_K_M", "tiny-gemma-Q6_K",
    "tiny-gemma-Q8_0",   "tiny-gemma-Q3_K_M", "tiny-gemma-Q2_K",   "tiny-gemma-IQ4_XS",
    "tiny-gemma-IQ4_NL", "tiny-gemma-Q4_0"};

std::string golden(const std::string& stem, const std::string& suffix) {
  return test::testdata_path(std::string(kDir) + "/goldens/" + stem + suffix);
}
std::string gguf_path(const std::string& stem) { return test::testdata_path(std::string(kDir) + "/" + stem + ".gguf"); }

nlohmann::json read_json(const std::string& path) { return nlohmann::json::parse(test::read_file(path)); }

std::vector<float> read_floats(const std::string& path) {
  const std::string bytes = test::read_file(path);
  std::vector<float> out(bytes.size() / 4);
  std::memcpy(out.data(), bytes.data(), out.size() * 4);
  return out;
}

// All values of a GGUF tensor, dequantized by its type record.
std::vector<float> dequantize_all(const gguf::Tensor& t, format::DType type) {
  std::vector<float> out(size_t(t.n_elements));
  const uint64_t cols = t.ne[0], rows = t.n_elements / cols;
  const uint64_t row_bytes = format::tensor_bytes(type, 1, cols);
  for (uint64_t r = 0; r < rows; ++r)
    quant::type_traits(type).dequantize_row(t.data + r * row_bytes, out.data() + r * cols, int64_t(cols));
  return out;
}

TEST(KQuantDequant, EveryBlockTensorMatchesTheGoldensBitForBit) {
  MAGNETAR_REQUIRE_TESTDATA(kDir);
  int checked = 0;
  for (const char* stem : kQuantizedStems) {
    SCOPED_TRACE(stem);
    const std::string file = test::read_file(gguf_path(stem));
    gguf::File f;
    ASSERT_TRUE(gguf::parse(reinterpret_cast<const uint8_t*>(file.data()), file.size(), &f).is_ok());
    convert::SafetensorsFile st;
    ASSERT_TRUE(convert::read_safetensors_header(golden(stem, ".dequant.safetensors"), &st).is_ok());
    const std::string st_bytes = test::read_file(golden(stem, ".dequant.safetensors"));
    const nlohmann::json check = read_json(golden(stem, ".json"))["dequant_check"];
    const nlohmann::json types = read_json(golden(stem, ".types.json"))["tensors"];
    for (const gguf::Tensor& t : f.tensors) {
      const std::string name(t.name);
      SCOPED_TRACE(name);
      ASSERT_EQ(gguf::tensor_type_name(t.ggml_type), types[name].get<std::string>());
      format::DType type;
      ASSERT_TRUE(format::dtype_from_ggml(t.ggml_type, &type));
      if (!format::dtype_is_quantized(type)) continue;
      const std::vector<float> values = dequantize_all(t, type);
      // Whole tensor: the digest of its FP32 bytes.
      EXPECT_EQ(test::sha256_hex(values.data(), values.size() * 4), check[name]["sha256_f32"].get<std::string>());
      // First rows: element by element (a failure names the first differing value).
      const auto it = st.tensors.find(name);
      ASSERT_NE(it, st.tensors.end());
      const size_t n = size_t(it->second.bytes / 4);
      ASSERT_LE(n, values.size());
      std::vector<float> want(n);
      std::memcpy(want.data(), st_bytes.data() + it->second.data_offset, n * 4);
      for (size_t i = 0; i < n; ++i)
        ASSERT_EQ(std::memcmp(&values[i], &want[i], 4), 0) << "value " << i << ": " << values[i] << " vs " << want[i];
      ++checked;
    }
  }
  EXPECT_GE(checked, 100);
}

class KQuantImport : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = test::make_temp_dir("kquant"); }
  void TearDown() override { test::remove_tree(dir_); }
  std::string dir_;
};

// The model file's type for each GGUF source of a canonical tensor (fused ones possibly as parts).
void expect_types_kept(const std::string& mgn, const nlohmann::json& gguf_types) {
  const std::string bytes = test::read_file(mgn);
  format::ModelFileView view;
  ASSERT_TRUE(format::parse_model_file(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(), &view).is_ok());
  auto type_of = [&](const std::string& name) -> std::string {
    const format::TensorView* t = view.find(name);
    return t ? format::dtype_name(t->dtype) : "absent";
  };
  auto lower = [](std::string s) {
    for (char& c : s) c = char(std::tolower(static_cast<unsigned char>(c)));
    return s;
  };
  EXPECT_EQ(type_of("tok_embeddings"), lower(gguf_types["token_embd.weight"]));
  for (int l = 0; l < int(view.header.n_layers); ++l) {
    const std::string src = "blk." + std::to_string(l) + ".", dst = "layers." + std::to_string(l) + ".";
    const std::string q = lower(gguf_types[src + "attn_q.weight"]), v = lower(gguf_types[src + "attn_v.weight"]);
    if (q == v) {
      EXPECT_EQ(type_of(dst + "wqkv"), q);
    } else {  // mixed: stored as parts, each its own type
      EXPECT_EQ(type_of(dst + "wqkv"), "absent");
      EXPECT_EQ(type_of(dst + "wq"), q);
      EXPECT_EQ(type_of(dst + "wk"), lower(gguf_types[src + "attn_k.weight"]));
      EXPECT_EQ(type_of(dst + "wv"), v);
    }
    EXPECT_EQ(type_of(dst + "wo"), lower(gguf_types[src + "attn_output.weight"]));
    EXPECT_EQ(type_of(dst + "w_down"), lower(gguf_types[src + "ffn_down.weight"]));
  }
}

// Whether the active kernels quantize the activations for some matrix type of the file (Q8_0,
// Q4_0; every other block type with the asm kernels), which bounds its logits like llama.cpp's.
bool quantizes_activations(const nlohmann::json& gguf_types) {
  for (const auto& [name, type] : gguf_types.items()) {
    format::DType dtype;
    const std::string lower = [&] {
      std::string s = type.get<std::string>();
      for (char& ch : s) ch = char(std::tolower(static_cast<unsigned char>(ch)));
      return s;
    }();
    if (!format::dtype_from_name(lower.c_str(), &dtype) || !format::dtype_is_quantized(dtype)) continue;
    if (kernels::active().of(dtype).act != kernels::ActFormat::F32) return true;
  }
  return false;
}

struct LogitDiff {
  double max = 0, rms = 0;
};
LogitDiff compare(const std::vector<float>& got, const std::vector<float>& want) {
  LogitDiff d;
  for (size_t i = 0; i < want.size(); ++i) {
    const double e = std::fabs(double(got[i]) - want[i]);
    d.max = std::max(d.max, e);
    d.rms += e * e;
  }
  d.rms = std::sqrt(d.rms / double(want.size()));
  return d;
}

// Converts every file (types kept), then evaluates it with the given kernels: teacher-forced over
// the prompt and the reference's greedy continuation, so that every argmax with a clear margin
// equal to the reference's next token means greedy decoding reproduces the reference.
void check_all_files(const std::string& dir, kernels::KernelChoice choice) {
  kernels::select(choice);
  for (const char* stem : kQuantizedStems) {
    SCOPED_TRACE(stem);
    const std::string mgn = dir + "/" + stem + ".mgn";
    ASSERT_TRUE(convert_model(gguf_path(stem), mgn, ConvertOptions{}).is_ok());
    const nlohmann::json types = read_json(golden(stem, ".types.json"))["tensors"];
    expect_types_kept(mgn, types);

    const nlohmann::json g = read_json(golden(stem, ".json"));
    const std::vector<int> prompt = g["prompt_ids"].get<std::vector<int>>();
    const std::vector<int> greedy = g["ref"]["greedy_ids"].get<std::vector<int>>();
    const std::vector<double> greedy_margin = g["ref"]["greedy_top2_margin"].get<std::vector<double>>();
    const std::vector<double> margin = g["ref"]["top2_margin"].get<std::vector<double>>();
    std::vector<int> tokens = prompt;
    tokens.insert(tokens.end(), greedy.begin(), greedy.end() - 1);
    LoadOptions options;
    options.threads = 2;
    std::vector<float> logits = test::evaluate_logits(mgn, options, tokens);
    const std::vector<float> ref = read_floats(golden(stem, ".ref.logits.f32"));
    const std::vector<float> llamacpp = read_floats(golden(stem, ".llamacpp.logits.f32"));
    const size_t vocab = ref.size() / prompt.size();
    ASSERT_EQ(logits.size(), tokens.size() * vocab);

    // FP32 math on exactly dequantized weights: the README's 1e-4. Quantized activations (as
    // llama.cpp's): its llama.cpp-sized bound, against both goldens.
    const bool int8 = quantizes_activations(types);
    const LogitDiff vs_ref = compare(logits, ref), vs_llamacpp = compare(logits, llamacpp);
    std::printf("%-10s %-20s vs ref: max %.3g rms %.3g | vs llama.cpp: max %.3g rms %.3g\n",
                kernels::active().isa, stem, vs_ref.max, vs_ref.rms, vs_llamacpp.max, vs_llamacpp.rms);
    if (int8) {
      EXPECT_LE(vs_ref.max, 0.5);
      EXPECT_LE(vs_ref.rms, 0.1);
      EXPECT_LE(vs_llamacpp.max, 0.5);
      EXPECT_LE(vs_llamacpp.rms, 0.1);
    } else {
      EXPECT_LE(vs_ref.max, 1e-4);
    }
    const double min_margin = int8 ? 0.3 : 1e-3;
    auto argmax = [&](size_t pos) {
      const float* row = logits.data() + pos * vocab;
      return int(std::max_element(row, row + vocab) - row);
    };
    for (size_t p = 0; p < prompt.size(); ++p) {
      if (margin[p] <= min_margin) continue;  // too close to call
      EXPECT_EQ(argmax(p), g["ref"]["argmax"][p].get<int>()) << "position " << p;
    }
    for (size_t i = 0; i < greedy.size(); ++i) {
      if (greedy_margin[i] <= min_margin) continue;
      EXPECT_EQ(argmax(prompt.size() - 1 + i), greedy[i]) << "greedy token " << i;
    }
  }
  kernels::select(kernels::KernelChoice::Auto);
}

TEST_F(KQuantImport, ReferenceKernelsMatchTheFloat64Goldens) {
  MAGNETAR_REQUIRE_TESTDATA(kDir);
  check_all_files(dir_, kernels::KernelChoice::Reference);
}

TEST_F(KQuantImport, AsmKernelsMatchTheGoldensLikeLlamaCpp) {
  MAGNETAR_REQUIRE_TESTDATA(kDir);
  if (!kernels::asm_available()) GTEST_SKIP() << "CPU lacks AVX2/FMA/F16C";
  check_all_files(dir_, kernels::KernelChoice::Auto);
}

TEST_F(KQuantImport, ExplicitTypeStillRequantises) {
  MAGNETAR_REQUIRE_TESTDATA(kDir);
  ConvertOptions options;
  options.weight_type = WeightType::Q8_0;
  const std::string mgn = dir_ + "/q8.mgn";
  ASSERT_TRUE(convert_model(gguf_path("tiny-gemma-Q4_K_M"), mgn, options).is_ok());
  const std::string bytes = test::read_file(mgn);
  format::ModelFileView view;
  ASSERT_TRUE(format::parse_model_file(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(), &view).is_ok());
  for (const format::TensorView& t : view.tensors)
    EXPECT_EQ(t.dtype, t.n_dims == 1 ? format::DType::F32 : format::DType::Q8_0) << t.name;
  EXPECT_NE(view.find("layers.0.wqkv"), nullptr);
}

}  // namespace
}  // namespace magnetar
