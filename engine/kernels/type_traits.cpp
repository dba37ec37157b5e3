// One TypeTraits row per format::DType, and the dequantizing matmul the non-int8 block types
// compute with (see type_traits.h).
#include "kernels/type_traits.h"

#include <algorithm>
#include <cassert>
#include <cstdint>
#include <cstring>
#include <vector>

#include "kernels/kernels.h"
#include "kernels/kquant_low.h"
#include "kernels/kquant_decode.h"
#include "kernels/kquants.h"
#include "kernels/quant.h"

namespace magnetar::quant {

void matmul_dequant_ref(DequantizeRowFn dequantize, int64_t block, int64_t block_bytes, const void* w,
                        const float* x, float* y, int64_t rows, int64_t cols, int64_t n_tokens,
                        int64_t y_stride) {
  assert(cols % block == 0 && "matmul_dequant: rows are whole blocks");
  // A row is dequantized in chunks that stay in L1 while each token of a group passes over them.
  constexpr int64_t kChunk = 2048, kTokenGroup = 64;
  const int64_t chunk = std::max(block, kChunk / block * block);
  alignas(64) float values[kChunk];
  float sums[kTokenGroup];
  const kernels::DotF32Fn dot = kernels::active().dot_f32;
  const auto* base = static_cast<const uint8_t*>(w);
  const int64_t row_bytes = cols / block * block_bytes;
  for (int64_t t0 = 0; t0 < n_tokens; t0 += kTokenGroup) {
    const int64_t tokens = std::min(kTokenGroup, n_tokens - t0);
    for (int64_t r = 0; r < rows; ++r) {
      const uint8_t* row = base + r * row_bytes;
      std::fill(sums, sums + tokens, 0.0f);
      for (int64_t c0 = 0; c0 < cols; c0 += chunk) {
        const int64_t n = std::min(chunk, cols - c0);
        dequantize(row + c0 / block * block_bytes, values, n);
        for (int64_t t = 0; t < tokens; ++t) {
          float d;
          dot(values, x + (t0 + t) * cols + c0, n, &d);
          sums[t] += d;
        }
      }
      for (int64_t t = 0; t < tokens; ++t) y[(t0 + t) * y_stride + r] = sums[t];
    }
  }
}

namespace {

template <DequantizeRowFn Dequantize, format::DType Type>
void matmul_dequant(const void* w, const float* x, float* y, int64_t rows, int64_t cols, int64_t n_tokens,
                    int64_t y_stride) {
  const format::DTypeLayout& l = format::dtype_layout(Type);
  matmul_dequant_ref(Dequantize, l.block_elements, l.block_bytes, w, x, y, rows, cols, n_tokens, y_stride);
}

// The record's rows may start at any byte (a row inside a file or a tensor's parts), while
// quant.h's functions take typed, aligned blocks: unaligned rows pass block by block through an
// aligned copy.
template <typename Block, void (*Dequantize)(const Block*, float*, int64_t)>
void dequantize_blocks(const void* x, float* y, int64_t n) {
  if (reinterpret_cast<uintptr_t>(x) % alignof(Block) == 0) return Dequantize(static_cast<const Block*>(x), y, n);
  const auto* bytes = static_cast<const uint8_t*>(x);
  for (int64_t b = 0; b < n / kBlock; ++b) {
    Block block;
    std::memcpy(&block, bytes + b * sizeof(Block), sizeof(Block));
    Dequantize(&block, y + b * kBlock, kBlock);
  }
}
template <typename Block, void (*Quantize)(const float*, Block*, int64_t)>
void quantize_blocks(const float* x, void* y, int64_t n) {
  if (reinterpret_cast<uintptr_t>(y) % alignof(Block) == 0) return Quantize(x, static_cast<Block*>(y), n);
  auto* bytes = static_cast<uint8_t*>(y);
  for (int64_t b = 0; b < n / kBlock; ++b) {
    Block block;
    Quantize(x + b * kBlock, &block, kBlock);
    std::memcpy(bytes + b * sizeof(Block), &block, sizeof(Block));
  }
}
constexpr auto dequantize_q8_0 = dequantize_blocks<BlockQ8_0, dequantize_row_q8_0>;
constexpr auto dequantize_q4_0 = dequantize_blocks<BlockQ4_0, dequantize_row_q4_0>;
constexpr auto quantize_q8_0 = quantize_blocks<BlockQ8_0, quantize_row_q8_0>;
constexpr auto quantize_q4_0 = quantize_blocks<BlockQ4_0, quantize_row_q4_0>;

using format::DType;

// A type's AVX2 integer kernels as the record's two matmul slots (float and pre-quantized
// activations); empty where the type has none.
struct KQuantAsm {
  MatmulDequantFn matmul = nullptr;
  MatmulKFn matmul_k = nullptr;
};

template <DequantizeRowFn D, DType T>
constexpr TypeTraits dequantizing(QuantizeRowFn quantize = nullptr, KQuantAsm avx2 = {}) {
  return {T, D, quantize, false, matmul_dequant<D, T>, avx2.matmul, avx2.matmul_k};
}

#if defined(__x86_64__) || defined(_M_X64)
// The integer kernels (kquants.h) on activations already quantized: rows in chunks whose weights
// stay in L2 while every token passes over them. Where the type has a prefill tile, tokens go in
// groups of kKTileTokens (a group's activations stay in L1 while the chunk's rows pass; a last
// group of at least half a tile is a whole tile, the kernel repeating its last token); the
// tokens left, and every call of fewer than kKTileTokens tokens, take the matvec per token.
// Act / kActValues: the activation block (ActBlockK of 256 values, or the 32-value types' ActBlock).
// kTiled says whether Tile is a kernel: an extern function's address compared with nullptr is not
// a constant expression under GCC's sanitizers, so `if constexpr` tests the flag instead.
template <class Act, int64_t kActValues, void (*Matvec)(const void*, const Act*, float*, int64_t, int64_t),
          MatmulKFn Tile, DType T, bool kTiled>
void matmul_quantized_rows(const void* w, const Act* x, float* y, int64_t rows, int64_t cols, int64_t n_tokens,
                           int64_t y_stride) {
  constexpr int64_t kChunkBytes = 64 * 1024;
  const int64_t blocks = cols / kActValues;
  const int64_t row_bytes = int64_t(format::tensor_bytes(T, 1, uint64_t(cols)));
  const int64_t chunk = n_tokens == 1 ? rows : std::max<int64_t>(1, kChunkBytes / row_bytes);
  const auto* base = static_cast<const uint8_t*>(w);
  for (int64_t r = 0; r < rows; r += chunk) {
    const int64_t n = std::min(chunk, rows - r);
    int64_t t = 0;
    if constexpr (kTiled) {
      if (n_tokens >= kKTileTokens)
        for (; t + kKTileTokens / 2 <= n_tokens; t += kKTileTokens)
          Tile(base + r * row_bytes, x + t * blocks, y + t * y_stride + r, n, cols,
               std::min(kKTileTokens, n_tokens - t), y_stride);
    }
    for (; t < n_tokens; ++t) Matvec(base + r * row_bytes, x + t * blocks, y + t * y_stride + r, n, cols);
  }
}

// The same on FP32 activations: quantized per call into thread-local scratch (grown on the first
// calls, then reused).
template <MatmulKFn Quantized>
void matmul_k_int8(const void* w, const float* x, float* y, int64_t rows, int64_t cols, int64_t n_tokens,
                   int64_t y_stride) {
  const int64_t blocks = cols / kSuperBlock;
  thread_local std::vector<ActBlockK> act;
  if (int64_t(act.size()) < blocks * n_tokens) act.resize(size_t(blocks * n_tokens));
  for (int64_t t = 0; t < n_tokens; ++t) quantize_act_k_avx2(x + t * cols, act.data() + t * blocks, cols);
  Quantized(w, act.data(), y, rows, cols, n_tokens, y_stride);
}

template <MatvecKFn Matvec, MatmulKFn Tile, DType T, bool kTiled>
constexpr MatmulKFn matmul_k_quantized = matmul_quantized_rows<ActBlockK, kSuperBlock, Matvec, Tile, T, kTiled>;

template <MatvecKFn Matvec, MatmulKFn Tile, DType T, bool kTiled>
constexpr KQuantAsm k_quant_asm() {
  return {matmul_k_int8<matmul_k_quantized<Matvec, Tile, T, kTiled>>, matmul_k_quantized<Matvec, Tile, T, kTiled>};
}
// A type with an integer matvec kernel; with a prefill tile too.
#define MAGNETAR_KQUANT_ASM(kernel, type) k_quant_asm<kernel, nullptr, type, false>()
#define MAGNETAR_KQUANT_TILED_ASM(kernel, tile, type) k_quant_asm<kernel, tile, type, true>()

// The 32-value types' integer row kernels (kquant_low.h) as a matmul: as matmul_k_int8, with
// Q8_0-style activation blocks from the active quant table's quantizer (asm where it runs).
template <MatvecQFn Kernel, DType T>
void matmul_b32_int8(const void* w, const float* x, float* y, int64_t rows, int64_t cols, int64_t n_tokens,
                     int64_t y_stride) {
  const int64_t blocks = cols / kBlock;
  thread_local std::vector<ActBlock> act;
  if (int64_t(act.size()) < blocks * n_tokens) act.resize(size_t(blocks * n_tokens));
  const QuantizeActFn quantize = active().quantize_act;
  for (int64_t t = 0; t < n_tokens; ++t) quantize(x + t * cols, act.data() + t * blocks, cols);
  matmul_quantized_rows<ActBlock, kBlock, Kernel, nullptr, T, false>(w, act.data(), y, rows, cols, n_tokens, y_stride);
}
#define MAGNETAR_B32_ASM(kernel, type) KQuantAsm{matmul_b32_int8<kernel, type>, nullptr}
#else
#define MAGNETAR_KQUANT_ASM(kernel, type) KQuantAsm{}
#define MAGNETAR_KQUANT_TILED_ASM(kernel, tile, type) KQuantAsm{}
#define MAGNETAR_B32_ASM(kernel, type) KQuantAsm{}
#endif

// Indexed by DType.
const TypeTraits kTraits[format::kDTypeCount] = {
    {DType::F32, nullptr, nullptr, false, nullptr, nullptr, nullptr},
    {DType::F16, nullptr, nullptr, false, nullptr, nullptr, nullptr},
    {DType::Q8_0, dequantize_q8_0, quantize_q8_0, true, nullptr, nullptr, nullptr},
    {DType::Q4_0, dequantize_q4_0, quantize_q4_0, true, nullptr, nullptr, nullptr},
    dequantizing<dequantize_row_q2_k, DType::Q2_K>(quantize_row_q2_k,
                                                   MAGNETAR_KQUANT_ASM(magnetar_matvec_q2_k_avx2, DType::Q2_K)),
    dequantizing<dequantize_row_q3_k, DType::Q3_K>(quantize_row_q3_k,
                                                   MAGNETAR_KQUANT_ASM(magnetar_matvec_q3_k_avx2, DType::Q3_K)),
    dequantizing<dequantize_row_q4_k, DType::Q4_K>(quantize_row_q4_k,
                                                   MAGNETAR_KQUANT_TILED_ASM(magnetar_matvec_q4_k_r4_avx2, magnetar_matmul_q4_k_avx2, DType::Q4_K)),
    dequantizing<dequantize_row_q5_k, DType::Q5_K>(quantize_row_q5_k,
                                                   MAGNETAR_KQUANT_TILED_ASM(magnetar_matvec_q5_k_r4_avx2, magnetar_matmul_q5_k_avx2, DType::Q5_K)),
    dequantizing<dequantize_row_q6_k, DType::Q6_K>(quantize_row_q6_k,
                                                   MAGNETAR_KQUANT_TILED_ASM(magnetar_matvec_q6_k_r4_avx2, magnetar_matmul_q6_k_avx2, DType::Q6_K)),
    dequantizing<dequantize_row_iq4_nl, DType::IQ4_NL>(quantize_row_iq4_nl,
                                                       MAGNETAR_B32_ASM(magnetar_matvec_iq4_nl_avx2, DType::IQ4_NL)),
    dequantizing<dequantize_row_iq4_xs, DType::IQ4_XS>(
        quantize_row_iq4_xs, MAGNETAR_KQUANT_TILED_ASM(magnetar_matvec_iq4_xs_r4_avx2, magnetar_matmul_iq4_xs_avx2, DType::IQ4_XS)),
    dequantizing<dequantize_row_q4_1, DType::Q4_1>(quantize_row_q4_1,
                                                   MAGNETAR_B32_ASM(magnetar_matvec_q4_1_avx2, DType::Q4_1)),
    dequantizing<dequantize_row_q5_0, DType::Q5_0>(quantize_row_q5_0,
                                                   MAGNETAR_B32_ASM(magnetar_matvec_q5_0_avx2, DType::Q5_0)),
    dequantizing<dequantize_row_q5_1, DType::Q5_1>(quantize_row_q5_1,
                                                   MAGNETAR_B32_ASM(magnetar_matvec_q5_1_avx2, DType::Q5_1)),
};

}  // namespace

const TypeTraits& type_traits(format::DType dtype) {
  assert(format::dtype_is_valid(uint32_t(dtype)) && kTraits[uint32_t(dtype)].dtype == dtype);
  return kTraits[format::dtype_is_valid(uint32_t(dtype)) ? uint32_t(dtype) : 0];
}

MatmulDequantFn active_matmul(const TypeTraits& traits) {
  const bool use_asm = traits.matmul_avx2 != nullptr && &active() != &reference_table();
  return use_asm ? traits.matmul_avx2 : traits.matmul;
}

MatmulKFn active_matmul_k(const TypeTraits& traits) {
  return &active() != &reference_table() ? traits.matmul_k_avx2 : nullptr;
}

}  // namespace magnetar::quant
