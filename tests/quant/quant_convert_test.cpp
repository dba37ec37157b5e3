// convert --dtype q8_0 / q4_0: matrices with whole 32-blocks per row become GGML-exact blocks of
// the FP32 conversion's values; other matrices stay F16 and norms F32.
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "common/testdata.h"
#include "format/model_reader.h"
#include "kernels/quant.h"
#include "magnetar/convert.h"

namespace magnetar::quant {
namespace {

const char kStories[] = "stories260K-hf/f32";

struct Converted {
  std::string bytes;
  format::ModelFileView view;
};

void convert_to(const std::string& dir, WeightType type, Converted* out) {
  const std::string path = dir + "/" + weight_type_name(type) + ".mgn";
  ConvertOptions options;
  options.weight_type = type;
  const Status s = convert_model(test::testdata_path(kStories), path, options);
  ASSERT_TRUE(s.is_ok()) << s.message();
  out->bytes = test::read_file(path);
  ASSERT_TRUE(format::parse_model_file(reinterpret_cast<const uint8_t*>(out->bytes.data()), out->bytes.size(),
                                       &out->view)
                  .is_ok());
}

TEST(QuantConvert, QuantizedMatricesAreGgmlBlocksOfTheF32Values) {
  MAGNETAR_REQUIRE_TESTDATA(kStories);
  const std::string dir = test::make_temp_dir("quant_convert");
  Converted f32, q8, q4;
  convert_to(dir, WeightType::F32, &f32);
  convert_to(dir, WeightType::Q8_0, &q8);
  convert_to(dir, WeightType::Q4_0, &q4);
  ASSERT_EQ(f32.view.tensors.size(), q8.view.tensors.size());
  int quantized = 0, kept_f16 = 0;
  for (const format::TensorView& t : f32.view.tensors) {
    for (const Converted* c : {&q8, &q4}) {
      const format::TensorView* qt = c->view.find(t.name);
      ASSERT_NE(qt, nullptr) << t.name;
      if (t.n_dims == 1) {  // norms
        EXPECT_EQ(qt->dtype, format::DType::F32) << t.name;
        continue;
      }
      if (t.cols % 32 != 0) {  // stories260K's w_down: 172 columns
        EXPECT_EQ(qt->dtype, format::DType::F16) << t.name;
        ++kept_f16;
        continue;
      }
      const bool is_q8 = c == &q8;
      ASSERT_EQ(qt->dtype, is_q8 ? format::DType::Q8_0 : format::DType::Q4_0) << t.name;
      const int64_t row_bytes = is_q8 ? row_bytes_q8_0(int64_t(t.cols)) : row_bytes_q4_0(int64_t(t.cols));
      std::vector<float> row(t.cols);
      std::vector<uint8_t> want(static_cast<size_t>(row_bytes));
      for (uint64_t r = 0; r < t.rows; ++r) {
        std::memcpy(row.data(), t.data + r * t.cols * 4, t.cols * 4);
        if (is_q8)
          quantize_row_q8_0(row.data(), reinterpret_cast<BlockQ8_0*>(want.data()), int64_t(t.cols));
        else
          quantize_row_q4_0(row.data(), reinterpret_cast<BlockQ4_0*>(want.data()), int64_t(t.cols));
        ASSERT_EQ(0, std::memcmp(want.data(), qt->data + r * uint64_t(row_bytes), size_t(row_bytes)))
            << t.name << " row " << r;
      }
      ++quantized;
    }
  }
  EXPECT_GT(quantized, 0);
  EXPECT_GT(kept_f16, 0);
  EXPECT_LT(q8.bytes.size(), f32.bytes.size() / 2);
  EXPECT_LT(q4.bytes.size(), q8.bytes.size());
  test::remove_tree(dir);
}

}  // namespace
}  // namespace magnetar::quant
