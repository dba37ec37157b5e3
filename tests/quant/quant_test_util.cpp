#include "quant_test_util.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstring>
#include <string>
#include <string_view>

#include "kernels/kernels.h"

extern "C" uint64_t magnetar_checked_call(const void* fn, const int64_t* args, const uint64_t* seeds);

namespace magnetar::quant {

// Twin and asm differ only in the order of FP32 additions: allow a few ulps per term.
constexpr double kSummationOrderUlpsPerTerm = 4.0;

int64_t row_bytes_of(format::DType dtype, int64_t cols) {
  return dtype == format::DType::Q8_0 ? row_bytes_q8_0(cols) : row_bytes_q4_0(cols);
}

QuantMatrix make_matrix(format::DType dtype, int64_t rows, int64_t cols, std::mt19937& rng) {
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<float> row(cols);
  QuantMatrix m;
  m.rows = rows;
  m.cols = cols;
  const int64_t row_bytes = row_bytes_of(dtype, cols);
  m.storage.assign(size_t(rows * row_bytes + 2 + 64), 0xcd);
  uint8_t* base = m.storage.data() + 2;
  for (int64_t r = 0; r < rows; ++r) {
    const float scale = std::ldexp(1.0f, int(r % 9) - 4);
    for (float& v : row) v = normal(rng) * scale;
    if (dtype == format::DType::Q8_0)
      quantize_row_q8_0(row.data(), reinterpret_cast<BlockQ8_0*>(base + r * row_bytes), cols);
    else
      quantize_row_q4_0(row.data(), reinterpret_cast<BlockQ4_0*>(base + r * row_bytes), cols);
  }
  m.data = base;
  return m;
}

std::vector<float> make_activation(int64_t cols, std::mt19937& rng) {
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<float> x(cols);
  for (int64_t i = 0; i < cols; ++i) x[i] = normal(rng) * (i % 97 == 0 ? 20.0f : 1.0f);
  return x;
}

const char* type_name(format::DType dtype) { return dtype == format::DType::Q8_0 ? "q8_0" : "q4_0"; }

std::vector<double> order_tolerance(format::DType dtype, const QuantMatrix& m, const std::vector<ActBlock>& x) {
  const int64_t n_blocks = m.cols / 32;
  std::vector<float> w(m.cols);
  std::vector<double> tol(m.rows);
  const int64_t row_bytes = row_bytes_of(dtype, m.cols);
  for (int64_t r = 0; r < m.rows; ++r) {
    const uint8_t* row = static_cast<const uint8_t*>(m.data) + r * row_bytes;
    if (dtype == format::DType::Q8_0)
      dequantize_row_q8_0(reinterpret_cast<const BlockQ8_0*>(row), w.data(), m.cols);
    else
      dequantize_row_q4_0(reinterpret_cast<const BlockQ4_0*>(row), w.data(), m.cols);
    double abs_sum = 0;
    for (int64_t c = 0; c < m.cols; ++c) abs_sum += std::fabs(double(w[c]) * x[c / 32].qs[c % 32] * x[c / 32].d);
    tol[r] = kSummationOrderUlpsPerTerm * double(FLT_EPSILON) * double(n_blocks + 8) * abs_sum + 1e-30;
  }
  return tol;
}

void expect_sentinels(const std::vector<float>& y, int64_t rows) {
  for (int64_t i = rows; i < rows + kGuard; ++i) ASSERT_EQ(y[i], kSentinel) << "write past row " << rows;
}

std::vector<float> sentinel_outputs(int64_t rows, int64_t n_tokens, int64_t y_stride) {
  return std::vector<float>(size_t(std::max<int64_t>(n_tokens - 1, 0) * y_stride + rows + kGuard), kSentinel);
}

void expect_outputs(const std::vector<float>& got, const std::vector<float>& want, int64_t rows, int64_t n_tokens,
                    int64_t y_stride, const std::string& what) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    const int64_t t = int64_t(i) / y_stride, r = int64_t(i) % y_stride;
    if (t < n_tokens && r < rows)
      ASSERT_EQ(std::memcmp(&got[i], &want[i], 4), 0)
          << what << " token " << t << " row " << r << ": " << got[i] << " vs " << want[i];
    else
      ASSERT_EQ(got[i], kSentinel) << what << " wrote outside its outputs at token " << t << " row " << r;
  }
}

ExtremeBlocks make_extreme_blocks(int64_t rows, int64_t blocks, int64_t n_tokens) {
  ExtremeBlocks e;
  e.w8.resize(size_t(rows * blocks));
  e.w4.resize(size_t(rows * blocks));
  for (int64_t i = 0; i < rows * blocks; ++i) {
    e.w8[i].d = e.w4[i].d = kernels::f32_to_f16_scalar(0.5f + float(i));
    for (int k = 0; k < 32; ++k) e.w8[i].qs[k] = int8_t(((i + k) % 3 == 0) ? -127 : 127);
    for (int k = 0; k < 16; ++k) e.w4[i].qs[k] = uint8_t(((i + k) % 2) ? 0xf0 : 0x0f);
  }
  e.x.resize(size_t(blocks * n_tokens));
  for (int64_t i = 0; i < blocks * n_tokens; ++i) {
    e.x[i].d = 0.25f * float(i + 1);
    e.x[i].sum = 0;
    for (int k = 0; k < 32; ++k) {
      e.x[i].qs[k] = int8_t(((i * 7 + k) % 5 < 2) ? -127 : 127);
      e.x[i].sum += e.x[i].qs[k];
    }
  }
  return e;
}

std::vector<uint8_t> make_k_blocks(int64_t block_bytes, const std::vector<int>& half_offsets, int64_t rows,
                                   int64_t cols, std::mt19937& rng, bool extreme) {
  const int64_t n = rows * cols / kSuperBlock;
  std::vector<uint8_t> storage(size_t(n * block_bytes + 2));
  std::uniform_int_distribution<int> byte(0, 255);
  std::uniform_real_distribution<float> scale(-0.01f, 0.01f);
  for (size_t i = 2; i < storage.size(); ++i) storage[i] = extreme ? 0xff : uint8_t(byte(rng));
  for (int64_t b = 0; b < n; ++b)
    for (int offset : half_offsets) {
      const uint16_t h = kernels::f32_to_f16_scalar(extreme ? 1.0f : scale(rng));
      std::memcpy(storage.data() + 2 + b * block_bytes + offset, &h, 2);
    }
  return storage;
}

std::vector<ActBlockK> make_k_activation(int64_t cols, std::mt19937& rng, bool extreme) {
  std::vector<float> x = make_activation(cols, rng);
  if (extreme)
    // q = +-127 everywhere, one sign per 64 values (every sub-block's sums at their largest), a
    // quarter of them negative (the row's sum does not cancel to zero)
    for (size_t i = 0; i < x.size(); ++i) x[i] = (i / 64) % 4 == 3 ? -1.0f : 1.0f;
  std::vector<ActBlockK> out(size_t(cols / kSuperBlock));
  quantize_act_k_ref(x.data(), out.data(), cols);
  return out;
}

uint64_t checked_call(const void* fn, const std::vector<int64_t>& args) {
  static std::mt19937_64 rng(0x9e3779b9);
  int64_t packed[10] = {};
  std::copy(args.begin(), args.end(), packed);
  uint64_t seeds[48];
  for (uint64_t& s : seeds) s = rng();
  return magnetar_checked_call(fn, packed, seeds);
}

int64_t as_arg(const void* p) { return int64_t(reinterpret_cast<intptr_t>(p)); }

namespace {
// call(out) runs the kernel directly into out; args are its arguments after the output pointer.
template <class Call>
void expect_preserved(const void* fn, const void* w, const ActBlockK* x, size_t outputs, Call call,
                      const std::vector<int64_t>& sizes) {
  std::vector<float> direct(outputs), checked(outputs);
  call(direct.data());
  std::vector<int64_t> args = {as_arg(w), as_arg(x), as_arg(checked.data())};
  args.insert(args.end(), sizes.begin(), sizes.end());
  EXPECT_EQ(checked_call(fn, args), 0u) << "bit mask of clobbered callee-saved registers";
  EXPECT_EQ(direct, checked);
}
}  // namespace

void expect_callee_saved_preserved(MatvecKFn fn, const void* w, const ActBlockK* x, int64_t rows, int64_t cols) {
  expect_preserved(reinterpret_cast<const void*>(fn), w, x, size_t(rows),
                   [&](float* y) { fn(w, x, y, rows, cols); }, {rows, cols});
}

void expect_callee_saved_preserved(MatmulKFn fn, const void* w, const ActBlockK* x, int64_t rows, int64_t cols,
                                   int64_t n_tokens, int64_t y_stride) {
  expect_preserved(reinterpret_cast<const void*>(fn), w, x, size_t((n_tokens - 1) * y_stride + rows),
                   [&](float* y) { fn(w, x, y, rows, cols, n_tokens, y_stride); }, {rows, cols, n_tokens, y_stride});
}

void run_entry(const kernels::TypeKernels& e, const void* w, const float* x, float* y, int64_t rows, int64_t cols,
               int64_t n_tokens, int64_t y_stride) {
  if (e.act == kernels::ActFormat::F32) return e.prefill(w, x, y, rows, cols, n_tokens, y_stride);
  const int64_t token_bytes = kernels::activation_bytes(e.act, cols);
  std::vector<int64_t> act(size_t((token_bytes * n_tokens + 7) / 8));  // 8-byte aligned
  auto* bytes = reinterpret_cast<uint8_t*>(act.data());
  for (int64_t t = 0; t < n_tokens; ++t) e.quantize_act(x + t * cols, bytes + t * token_bytes, cols);
  e.prefill(w, bytes, y, rows, cols, n_tokens, y_stride);
}

std::vector<const Int8AsmKernels*> int8_asm_kernels() {
  static const Int8AsmKernels kAvx2 = {"avx2",
                                       magnetar_quantize_act_avx2,
                                       magnetar_matvec_q8_0_avx2,
                                       magnetar_matvec_q4_0_avx2,
                                       magnetar_matmul_q8_0_avx2,
                                       magnetar_matmul_q4_0_avx2,
                                       magnetar_matmul_q8_0_x16_avx2,
                                       magnetar_matmul_q4_0_x16_avx2};
  static const Int8AsmKernels kVnni = {"avx512vnni",
                                       magnetar_quantize_act_avx2,
                                       magnetar_matvec_q8_0_avx512vnni,
                                       magnetar_matvec_q4_0_avx512vnni,
                                       magnetar_matmul_q8_0_avx512vnni,
                                       magnetar_matmul_q4_0_avx512vnni,
                                       magnetar_matmul_q8_0_x16_avx512vnni,
                                       magnetar_matmul_q4_0_x16_avx512vnni};
  std::vector<const Int8AsmKernels*> list;
  for (const kernels::KernelTable* table : kernels::asm_tables())
    for (const Int8AsmKernels* k : {&kAvx2, &kVnni})
      if (std::string_view(table->isa) == k->isa) list.push_back(k);
  return list;
}

bool cpu_runs(kernels::Isa isa) { return kernels::asm_table_named(kernels::isa_name(isa), 0) != nullptr; }

}  // namespace magnetar::quant
