// Q8_0 / Q4_0: GGML-exact quantizers and dequantizers, the reference twins of the integer
// matrix–vector kernels, and the quant kernel table (see quant.h for the formats).
#include "kernels/quant.h"

#include "core/cpu_features.h"

#include <atomic>
#include <cassert>
#include <cmath>
#include <cstdlib>
#include <cstring>

// The NASM kernels are part of every x86-64 build (engine/CMakeLists.txt assembles asm/*.asm).
#if defined(__x86_64__) || defined(_M_X64)
#define MAGNETAR_HAVE_QUANT_ASM 1
#endif

namespace magnetar::quant {

// ================================================================================================
// GGML-exact quantizers and dequantizers
// ================================================================================================

namespace {
// float -> int8 as GGML's implicit conversion does for in-range values; non-finite inputs (where
// GGML's conversion is undefined) become 0 instead of undefined behaviour.
int8_t clamp_to_int8(float v, float lo, float hi) {
  if (!(v >= lo)) return v < lo ? int8_t(lo) : int8_t(0);  // NaN -> 0
  if (v > hi) return int8_t(hi);
  return int8_t(v);
}
}  // namespace

void quantize_row_q8_0(const float* x, BlockQ8_0* y, int64_t n) {
  assert(n % kBlock == 0 && "quantize_row_q8_0: n must be a multiple of 32");
  for (int64_t b = 0; b < n / kBlock; ++b) {
    const float* xb = x + b * kBlock;
    float amax = 0.0f;
    for (int64_t i = 0; i < kBlock; ++i) {
      const float a = std::fabs(xb[i]);
      amax = amax > a ? amax : a;  // GGML's MAX(amax, a), NaN behaviour included
    }
    const float d = amax / 127.0f;
    const float id = d != 0.0f ? 1.0f / d : 0.0f;
    y[b].d = kernels::f32_to_f16_scalar(d);
    for (int64_t i = 0; i < kBlock; ++i) y[b].qs[i] = clamp_to_int8(std::round(xb[i] * id), -127, 127);
  }
}

void quantize_row_q4_0(const float* x, BlockQ4_0* y, int64_t n) {
  assert(n % kBlock == 0 && "quantize_row_q4_0: n must be a multiple of 32");
  for (int64_t b = 0; b < n / kBlock; ++b) {
    const float* xb = x + b * kBlock;
    float amax = 0.0f, max = 0.0f;  // largest magnitude and its signed value (first one wins)
    for (int64_t i = 0; i < kBlock; ++i) {
      if (amax < std::fabs(xb[i])) {
        amax = std::fabs(xb[i]);
        max = xb[i];
      }
    }
    const float d = max / -8.0f;
    const float id = d != 0.0f ? 1.0f / d : 0.0f;
    y[b].d = kernels::f32_to_f16_scalar(d);
    for (int64_t j = 0; j < kBlock / 2; ++j) {
      // GGML: MIN(15, (int8_t)(x * id + 8.5f)); the argument lies in [0.5, 16.5] for finite x.
      const float lo_f = xb[j] * id + 8.5f;
      const float hi_f = xb[j + kBlock / 2] * id + 8.5f;
      const int lo = clamp_to_int8(lo_f, 0, 15);
      const int hi = clamp_to_int8(hi_f, 0, 15);
      y[b].qs[j] = uint8_t(lo | (hi << 4));
    }
  }
}

void dequantize_row_q8_0(const BlockQ8_0* x, float* y, int64_t n) {
  assert(n % kBlock == 0 && "dequantize_row_q8_0: n must be a multiple of 32");
  for (int64_t b = 0; b < n / kBlock; ++b) {
    const float d = kernels::f16_to_f32_scalar(x[b].d);
    for (int64_t i = 0; i < kBlock; ++i) y[b * kBlock + i] = float(x[b].qs[i]) * d;
  }
}

void dequantize_row_q4_0(const BlockQ4_0* x, float* y, int64_t n) {
  assert(n % kBlock == 0 && "dequantize_row_q4_0: n must be a multiple of 32");
  for (int64_t b = 0; b < n / kBlock; ++b) {
    const float d = kernels::f16_to_f32_scalar(x[b].d);
    for (int64_t j = 0; j < kBlock / 2; ++j) {
      y[b * kBlock + j] = float((x[b].qs[j] & 0x0f) - 8) * d;
      y[b * kBlock + j + kBlock / 2] = float((x[b].qs[j] >> 4) - 8) * d;
    }
  }
}

// ================================================================================================
// Reference twins of the kernels
// ================================================================================================

void quantize_act_ref(const float* x, ActBlock* out, int64_t n) {
  assert(n % kBlock == 0 && "quantize_act: n must be a multiple of 32");
  for (int64_t b = 0; b < n / kBlock; ++b) {
    const float* xb = x + b * kBlock;
    float amax = 0.0f;
    for (int64_t i = 0; i < kBlock; ++i) amax = std::fmax(amax, std::fabs(xb[i]));
    const float d = amax / 127.0f;
    const float id = d != 0.0f ? 1.0f / d : 0.0f;
    int32_t sum = 0;
    for (int64_t i = 0; i < kBlock; ++i) {
      // Round to nearest even, as vcvtps2dq does under the default MXCSR.
      const int8_t q = clamp_to_int8(std::nearbyint(xb[i] * id), -127, 127);
      out[b].qs[i] = q;
      sum += q;
    }
    out[b].d = d;
    out[b].sum = sum;
  }
}

void matvec_q8_0_ref(const void* w, const ActBlock* x, float* y, int64_t rows, int64_t cols) {
  assert(cols % kBlock == 0 && cols > 0 && "matvec_q8_0: cols must be a positive multiple of 32");
  const int64_t n_blocks = cols / kBlock;
  const auto* blocks = static_cast<const BlockQ8_0*>(w);  // [rows, n_blocks]
  for (int64_t r = 0; r < rows; ++r) {
    float acc = 0.0f;
    for (int64_t b = 0; b < n_blocks; ++b) {
      const BlockQ8_0& wb = blocks[r * n_blocks + b];
      int32_t dot = 0;
      for (int64_t i = 0; i < kBlock; ++i) dot += int32_t(wb.qs[i]) * int32_t(x[b].qs[i]);
      acc += float(dot) * (kernels::f16_to_f32_scalar(wb.d) * x[b].d);
    }
    y[r] = acc;
  }
}

void matvec_q4_0_ref(const void* w, const ActBlock* x, float* y, int64_t rows, int64_t cols) {
  assert(cols % kBlock == 0 && cols > 0 && "matvec_q4_0: cols must be a positive multiple of 32");
  const int64_t n_blocks = cols / kBlock;
  const auto* blocks = static_cast<const BlockQ4_0*>(w);  // [rows, n_blocks]
  for (int64_t r = 0; r < rows; ++r) {
    float acc = 0.0f;
    for (int64_t b = 0; b < n_blocks; ++b) {
      const BlockQ4_0& wb = blocks[r * n_blocks + b];
      int32_t dot = 0;  // sum (q - 8) * x  =  sum q * x  -  8 * sum x
      for (int64_t j = 0; j < kBlock / 2; ++j) {
        dot += int32_t(wb.qs[j] & 0x0f) * int32_t(x[b].qs[j]);
        dot += int32_t(wb.qs[j] >> 4) * int32_t(x[b].qs[j + kBlock / 2]);
      }
      dot -= 8 * x[b].sum;
      acc += float(dot) * (kernels::f16_to_f32_scalar(wb.d) * x[b].d);
    }
    y[r] = acc;
  }
}

// The prefill twins are the matvec twins per token: the asm matches them bit for bit, and
// nothing here may be contracted into FMAs (the engine is built without -mfma; see quant.h).
void matmul_q8_0_ref(const void* w, const ActBlock* x, float* y, int64_t rows, int64_t cols,
                     int64_t n_tokens, int64_t y_stride) {
  for (int64_t t = 0; t < n_tokens; ++t) matvec_q8_0_ref(w, x + t * (cols / kBlock), y + t * y_stride, rows, cols);
}

void matmul_q4_0_ref(const void* w, const ActBlock* x, float* y, int64_t rows, int64_t cols,
                     int64_t n_tokens, int64_t y_stride) {
  for (int64_t t = 0; t < n_tokens; ++t) matvec_q4_0_ref(w, x + t * (cols / kBlock), y + t * y_stride, rows, cols);
}

// ================================================================================================
// Dispatch
// ================================================================================================

namespace {
const QuantKernelTable kReferenceTable = {quantize_act_ref,    matvec_q8_0_ref,    matvec_q4_0_ref,
                                          matmul_q8_0_ref,     matmul_q4_0_ref,    matmul_q8_0_x16_ref,
                                          matmul_q4_0_x16_ref, "reference"};
#if defined(MAGNETAR_HAVE_QUANT_ASM)
const QuantKernelTable kAvx2Table = {magnetar_quantize_act_avx2,       magnetar_matvec_q8_0_avx2,
                                     magnetar_matvec_q4_0_avx2,        magnetar_matmul_q8_0_avx2,
                                     magnetar_matmul_q4_0_avx2,        magnetar_matmul_q8_0_x16_avx2,
                                     magnetar_matmul_q4_0_x16_avx2,    "avx2"};
const QuantKernelTable kVnniTable = {magnetar_quantize_act_avx2,          magnetar_matvec_q8_0_avx512vnni,
                                     magnetar_matvec_q4_0_avx512vnni,     magnetar_matmul_q8_0_avx512vnni,
                                     magnetar_matmul_q4_0_avx512vnni,     magnetar_matmul_q8_0_x16_avx512vnni,
                                     magnetar_matmul_q4_0_x16_avx512vnni, "avx512vnni"};
#endif

std::atomic<const QuantKernelTable*> g_active{nullptr};
// Decode tuning's table (its isa name; empty: the best), used by Auto choices only; and whether
// the active table came from one (so a new tuning may replace it).
std::atomic<const QuantKernelTable*> g_tuned{nullptr};
std::atomic<bool> g_active_is_auto{true};

const QuantKernelTable* choose(kernels::KernelChoice choice) {
  if (choice == kernels::KernelChoice::Auto) choice = kernels::choice_from_environment();  // one rule
  if (choice == kernels::KernelChoice::Reference || !asm_available()) return &kReferenceTable;
  const QuantKernelTable* tuned = g_tuned.load(std::memory_order_acquire);
  return choice == kernels::KernelChoice::Auto && tuned ? tuned : &asm_table();
}

bool chosen_by_auto(kernels::KernelChoice choice) {
  return (choice == kernels::KernelChoice::Auto ? kernels::choice_from_environment() : choice) ==
         kernels::KernelChoice::Auto;
}
}  // namespace

bool asm_available() {
#if defined(MAGNETAR_HAVE_QUANT_ASM)
  return cpu::features().has_avx2_kernels();
#else
  return false;
#endif
}

const QuantKernelTable& reference_table() { return kReferenceTable; }

std::vector<const QuantKernelTable*> asm_tables() {
  std::vector<const QuantKernelTable*> tables;
#if defined(MAGNETAR_HAVE_QUANT_ASM)
  const cpu::Features& f = cpu::features();
  if (f.has_avx2_kernels()) tables.push_back(&kAvx2Table);
  if (f.has_avx512_kernels() && f.avx512vnni) tables.push_back(&kVnniTable);
#endif
  return tables;
}

const QuantKernelTable& asm_table() {
  assert(asm_available() && "quant::asm_table: no asm kernels on this CPU/build; use active()");
  const auto tables = asm_tables();
  return tables.empty() ? kReferenceTable : *tables.back();
}

const QuantKernelTable* asm_table_named(std::string_view isa) {
  for (const QuantKernelTable* table : asm_tables())
    if (isa == table->isa) return table;
  return nullptr;
}

void set_tuned_isa(std::string_view isa) {
  g_tuned.store(asm_table_named(isa), std::memory_order_release);
  if (g_active.load(std::memory_order_acquire) != nullptr && g_active_is_auto.load(std::memory_order_acquire))
    g_active.store(choose(kernels::KernelChoice::Auto), std::memory_order_release);
}

void select(kernels::KernelChoice choice) {
  g_active_is_auto.store(chosen_by_auto(choice), std::memory_order_release);
  g_active.store(choose(choice), std::memory_order_release);
}

const QuantKernelTable& active() {
  const QuantKernelTable* table = g_active.load(std::memory_order_acquire);
  if (table != nullptr) return *table;
  // First use: racing threads all compute the same answer.
  const QuantKernelTable* expected = nullptr;
  if (g_active.compare_exchange_strong(expected, choose(kernels::KernelChoice::Auto), std::memory_order_acq_rel))
    g_active_is_auto.store(chosen_by_auto(kernels::KernelChoice::Auto), std::memory_order_release);
  return *g_active.load(std::memory_order_acquire);
}

}  // namespace magnetar::quant
