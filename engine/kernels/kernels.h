// Kernel signatures and THE kernel table: one table per choice (reference twins, each asm ISA,
// the tuned variants), holding the float ops and, per weight type (indexed by format::DType), the
// matrix kernels ops/ drives for that type.
//
// One signature per kernel, shared by the C++ reference twin, the NASM declaration and the tests:
// extern "C", pointers and 64-bit integers only (never a float by value, never a 32-bit int:
// Win64 and System V pass them differently). Contracts (multiples, alignment) are stated per
// kernel; the table entries below accept ANY size — the ops/ drivers and the wrappers in
// dispatch.cpp / asm_table.cpp / type_traits.cpp handle tails and call the asm for the bulk.
//
// The tables are built once, on first use: the float ops from reference.cpp / asm_table.cpp, the
// block types' entries from their type records (kernels/type_traits.h), the F16/F32 entries from
// the table's own float matrix kernels. active() picks one from CPUID/XGETBV (core/cpu_features.h),
// MAGNETAR_KERNELS and the decode tuning; MAGNETAR_KERNELS=reference forces the reference twins.
#pragma once
#include <array>
#include <cstdint>
#include <string_view>
#include <vector>

#include "format/model_format.h"

namespace magnetar::kernels {

// y[r] = sum_c w[r*ldw + c] * x[c] for r < rows, c < cols. w is FP16 (IEEE half), x, y FP32.
using MatvecF16Fn = void (*)(const uint16_t* w, int64_t ldw, const float* x, float* y,
                             int64_t rows, int64_t cols);
using MatvecF32Fn = void (*)(const float* w, int64_t ldw, const float* x, float* y,
                             int64_t rows, int64_t cols);
// Prefill: y[t*ldy + r] = sum_c w[r*ldw + c] * x[t*ldx + c] for t < n_tokens, r < rows.
// accumulate != 0 adds the sums to y instead (one column stripe of a striped matrix, ops/ops.h).
using MatmulF16Fn = void (*)(const uint16_t* w, int64_t ldw, const float* x, int64_t ldx,
                             float* y, int64_t ldy, int64_t rows, int64_t cols, int64_t n_tokens,
                             int64_t accumulate);
using MatmulF32Fn = void (*)(const float* w, int64_t ldw, const float* x, int64_t ldx,
                             float* y, int64_t ldy, int64_t rows, int64_t cols, int64_t n_tokens,
                             int64_t accumulate);
// out[i] = x[i] / sqrt(mean(x^2) + *eps) * weight[i]. out may alias x.
using RmsNormFn = void (*)(float* out, const float* x, const float* weight, int64_t n,
                           const float* eps);
// x <- softmax(x), numerically stable (subtracts the max).
using SoftmaxFn = void (*)(float* x, int64_t n);
// gate[i] <- act(gate[i]) * up[i]; act = SiLU (Llama) or tanh-approximated GELU (Gemma).
using GatedActFn = void (*)(float* gate, const float* up, int64_t n);
// Rotate-half RoPE on n_heads consecutive heads of head_dim: for i < head_dim/2,
// (x[i], x[i+half]) <- (x[i] cos[i] - x[i+half] sin[i], x[i+half] cos[i] + x[i] sin[i]).
using RopeFn = void (*)(float* x, int64_t n_heads, int64_t head_dim, const float* cos,
                        const float* sin);
using F16ToF32Fn = void (*)(const uint16_t* src, float* dst, int64_t n);
// Dot product of two FP32 vectors, result in *out (the dequantizing reference matmul's rows).
using DotF32Fn = void (*)(const float* a, const float* b, int64_t n, float* out);

// ---- Matrix kernels of one weight type (KernelTable::types) ----
// The activation format a type's kernels take: FP32 values, 32-value int8 blocks (quant::ActBlock,
// Q8_0-style, quant.h) or 256-value int8 blocks (quant::ActBlockK, Q8_K-style, kquants.h).
enum class ActFormat : uint8_t { F32, Q8_0, Q8_K };
// Bytes of one token's activations of `cols` values (a multiple of the format's block).
constexpr int64_t activation_bytes(ActFormat f, int64_t cols) {
  return f == ActFormat::F32 ? cols * 4 : f == ActFormat::Q8_0 ? cols / 32 * 40 : cols / 256 * 320;
}
// n FP32 values into the format's blocks (n a multiple of the block; x needs no alignment).
using QuantizeActivationsFn = void (*)(const float* x, void* out, int64_t n);
// Decode: y[r] = row r of w . x, r < rows. w: rows of the type, row-major (any alignment);
// x: one token in the entry's activation format.
using MatrixDecodeFn = void (*)(const void* w, const void* x, float* y, int64_t rows, int64_t cols);
// Prefill: y[t * y_stride + r] = row r of w . token t, r < rows, t < n_tokens (any counts >= 0;
// x: n_tokens tokens back to back; y_stride >= rows). Every output is bit for bit what the
// entry's decode gives for that token, so prefill and decode agree exactly.
using MatrixPrefillFn = void (*)(const void* w, const void* x, float* y, int64_t rows, int64_t cols,
                                 int64_t n_tokens, int64_t y_stride);

struct TypeKernels {
  ActFormat act = ActFormat::F32;
  QuantizeActivationsFn quantize_act = nullptr;  // FP32 -> act; nullptr when act is F32
  MatrixDecodeFn decode = nullptr;
  MatrixPrefillFn prefill = nullptr;
  // The same over x16 tiles (quant.h; rows a multiple of 16), any token count; nullptr where the
  // type has no tile layout.
  MatrixPrefillFn prefill_x16 = nullptr;
};

// The ISAs a table's kernels are written for, in order of preference.
enum class Isa : uint8_t { Reference, Avx2, Avx512Vnni };
const char* isa_name(Isa isa);  // "reference", "avx2", "avx512vnni"

struct KernelTable {
  MatvecF16Fn matvec_f16;
  MatvecF32Fn matvec_f32;
  MatmulF16Fn matmul_f16;
  MatmulF32Fn matmul_f32;
  RmsNormFn rmsnorm;
  SoftmaxFn softmax;
  GatedActFn silu_mul;
  GatedActFn gelu_tanh_mul;
  RopeFn rope;
  F16ToF32Fn f16_to_f32;
  DotF32Fn dot_f32;
  // Per weight type, indexed by format::DType: every valid type's entry has decode and prefill.
  std::array<TypeKernels, format::kDTypeCount> types;
  const char* isa;        // the table's: "reference", "avx2" or "avx512vnni"
  const char* float_isa;  // the float ops' and F16/F32 kernels': "reference" or "avx2"

  const TypeKernels& of(format::DType t) const { return types[static_cast<uint32_t>(t)]; }
};

enum class KernelChoice { Auto, Reference, Asm };

// MAGNETAR_KERNELS, read here and nowhere else: unset/"auto" -> Auto, "reference" -> Reference,
// "asm", "avx2", "avx512vnni" -> Asm (the last two: that table where the CPU runs it, else the
// best); anything else is Auto with a notice on stderr.
KernelChoice choice_from_environment();

// The table in use. Chosen on first call (Auto, unless MAGNETAR_KERNELS says otherwise): Auto is
// the tuned table (set_tuned_kernels) or else the best asm table, Asm the best asm table (or the
// one MAGNETAR_KERNELS names) with the built-in F16 rule, Reference the twins. No asm on this
// CPU/build: the reference table.
const KernelTable& active();
// Choose again (tests, bench --kernels; Auto re-reads MAGNETAR_KERNELS). Not thread-safe against
// running kernels.
void select(KernelChoice choice);
const KernelTable& reference_table();
// Every asm table this CPU runs, with the built-in F16 rule, in order of preference (best last):
// "avx2", then "avx512vnni" (VNNI Q8_0/Q4_0 and K-quant kernels) where the CPU has AVX512F/BW/VL
// + VNNI.
// Empty without asm. Tests and the calibration iterate it.
std::vector<const KernelTable*> asm_tables();
bool asm_available();  // asm_tables() is not empty
// The table of that isa name (empty: the best asm one) with that F16 stream count (4 or 8; 0 or
// anything else: the built-in rule by width); nullptr when this CPU does not run it.
const KernelTable* asm_table_named(std::string_view isa, int f16_streams = 0);
// Decode tuning (magnetar/tuning.h): the table Auto choices use — an isa name (empty, or one this
// CPU lacks: the best) and the F16 kernel's streams; takes effect at once when the active table
// came from Auto. Not thread-safe against running kernels.
void set_tuned_kernels(std::string_view isa, int f16_streams);

// The streaming read the bandwidth probe times (core/bandwidth.h ReadLoop): AVX2 loads
// (magnetar_read_sum_avx2) when this CPU runs the asm kernels, else the portable loop — the
// ceiling is measured with loads as wide as the kernels' own. *name says which.
uint64_t (*streaming_read_loop(const char** name))(const uint64_t* data, uint64_t words);

// Scalar FP16 <-> FP32 conversion (IEEE binary16, round to nearest even).
float f16_to_f32_scalar(uint16_t h);
uint16_t f32_to_f16_scalar(float f);
float bf16_to_f32_scalar(uint16_t h);

}  // namespace magnetar::kernels
