// One TypeTraits row per format::DType with the type's matrix kernels per ISA, the dequantizing
// matmul the block types' reference entries compute with, and the prefill drivers that give each
// integer kernel family the any-token-count contract of kernels.h (see type_traits.h).
#include "kernels/type_traits.h"

#include <algorithm>
#include <cassert>
#include <cstdint>
#include <cstring>

#include "kernels/kernels.h"
#include "kernels/kquant_low.h"
#include "kernels/kquant_decode.h"
#include "kernels/kquant_tile.h"
#include "kernels/kquants.h"
#include "kernels/quant.h"
#include "kernels/reference.h"
#include "kernels/tables.h"

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

using format::DType;
using kernels::ActFormat;
using kernels::TypeKernels;

static_assert(kernels::activation_bytes(ActFormat::Q8_0, kBlock) == sizeof(ActBlock) &&
              kernels::activation_bytes(ActFormat::Q8_K, kSuperBlock) == sizeof(ActBlockK),
              "kernels.h's activation sizes are quant.h's and kquants.h's blocks");

// The typed kernels as table entries (kernels.h erases the activation type to void).
template <class Act, void (*Quantize)(const float*, Act*, int64_t)>
void quantize_as(const float* x, void* out, int64_t n) {
  Quantize(x, static_cast<Act*>(out), n);
}
template <class Act, void (*Decode)(const void*, const Act*, float*, int64_t, int64_t)>
void decode_as(const void* w, const void* x, float* y, int64_t rows, int64_t cols) {
  Decode(w, static_cast<const Act*>(x), y, rows, cols);
}
template <class Act, void (*Prefill)(const void*, const Act*, float*, int64_t, int64_t, int64_t, int64_t)>
void prefill_as(const void* w, const void* x, float* y, int64_t rows, int64_t cols, int64_t n_tokens,
                int64_t y_stride) {
  Prefill(w, static_cast<const Act*>(x), y, rows, cols, n_tokens, y_stride);
}

// ---- Reference entries of the block types without int8 twins: the dequantizing matmul ----
template <DequantizeRowFn Dequantize, DType T>
struct DequantEntry {
  static void prefill(const void* w, const void* x, float* y, int64_t rows, int64_t cols, int64_t n_tokens,
                      int64_t y_stride) {
    const format::DTypeLayout& l = format::dtype_layout(T);
    matmul_dequant_ref(Dequantize, l.block_elements, l.block_bytes, w, static_cast<const float*>(x), y, rows, cols,
                       n_tokens, y_stride);
  }
  static void decode(const void* w, const void* x, float* y, int64_t rows, int64_t cols) {
    prefill(w, x, y, rows, cols, 1, rows);
  }
  static constexpr TypeKernels kernels() { return {ActFormat::F32, nullptr, decode, prefill, nullptr}; }
};

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

// ---- Q8_0 / Q4_0: quant.h's int8 kernels of one ISA ----
// Prefill with the matmul kernels (4x4 / 8x8 row x token tiles) from this many tokens; fewer
// take the matvec kernel per token over row chunks of kRowChunkBytes, small enough to stay in L2
// while every token passes. The matmul kernels walk row tiles outermost, each tile's weights
// staying in L1/L2 while a token chunk of kTokenChunkBytes streams past.
constexpr int64_t kMatmulMinTokens = 4;
constexpr int64_t kRowChunkBytes = 64 * 1024;
constexpr int64_t kTokenChunkBytes = 256 * 1024;
// The x16 kernels stream each 16-row tile once per token chunk and pass all the chunk's tokens
// over it while it sits in L2, so their chunks are larger: on magnetar_bench_quant's prefill
// (64 tokens x 4096 x 8192) 1 MiB ran 16-20 % faster than 256 KiB, 4 MiB no faster than 1 MiB.
constexpr int64_t kTileTokenChunkBytes = 1024 * 1024;

// Tokens per chunk of `bytes` activations, in whole groups of 8 (the kernels' token tiles).
int64_t token_chunk(int64_t bytes, int64_t cols) {
  return std::max<int64_t>(8, bytes / kernels::activation_bytes(ActFormat::Q8_0, cols) / 8 * 8);
}

template <MatvecQFn Matvec, MatmulQFn Matmul, DType T>
void prefill_int8(const void* w, const void* xv, float* y, int64_t rows, int64_t cols, int64_t n_tokens,
                  int64_t y_stride) {
  const auto* x = static_cast<const ActBlock*>(xv);
  const int64_t blocks = cols / kBlock;
  if (n_tokens == 1) return Matvec(w, x, y, rows, cols);
  if (n_tokens >= kMatmulMinTokens) {
    const int64_t chunk = token_chunk(kTokenChunkBytes, cols);
    for (int64_t t = 0; t < n_tokens; t += chunk)
      Matmul(w, x + t * blocks, y + t * y_stride, rows, cols, std::min(chunk, n_tokens - t), y_stride);
    return;
  }
  const int64_t row_bytes = int64_t(format::tensor_bytes(T, 1, uint64_t(cols)));
  const int64_t chunk = std::max<int64_t>(4, kRowChunkBytes / row_bytes / 4 * 4);
  const auto* base = static_cast<const uint8_t*>(w);
  for (int64_t r = 0; r < rows; r += chunk) {
    const int64_t n = std::min(chunk, rows - r);
    for (int64_t t = 0; t < n_tokens; ++t) Matvec(base + r * row_bytes, x + t * blocks, y + t * y_stride + r, n, cols);
  }
}

template <MatmulQx16Fn Tiles>
void prefill_x16(const void* w, const void* xv, float* y, int64_t rows, int64_t cols, int64_t n_tokens,
                 int64_t y_stride) {
  const auto* x = static_cast<const ActBlock*>(xv);
  const int64_t chunk = token_chunk(kTileTokenChunkBytes, cols);
  for (int64_t t = 0; t < n_tokens; t += chunk)
    Tiles(w, x + t * (cols / kBlock), y + t * y_stride, rows, cols, std::min(chunk, n_tokens - t), y_stride);
}

template <QuantizeActFn Quantize, MatvecQFn Matvec, MatmulQFn Matmul, MatmulQx16Fn Tiles, DType T>
constexpr TypeKernels int8_kernels() {
  return {ActFormat::Q8_0, quantize_as<ActBlock, Quantize>, decode_as<ActBlock, Matvec>,
          prefill_int8<Matvec, Matmul, T>, prefill_x16<Tiles>};
}

template <DequantizeRowFn D, DType T>
constexpr TypeTraits dequantizing(QuantizeRowFn quantize, TypeKernels avx2 = {}, TypeKernels avx512vnni = {}) {
  return {T, D, quantize, DequantEntry<D, T>::kernels(), avx2, avx512vnni};
}

#if defined(__x86_64__) || defined(_M_X64)
// The integer kernels (kquants.h, kquant_low.h) over a row range: rows in chunks whose weights
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

// A 256-value type's integer kernels on Q8_K-style activations (quantize_act_k_avx2), with a
// row-major prefill tile.
template <MatvecKFn Matvec, MatmulKFn Tile, DType T>
constexpr TypeKernels k_quant_kernels() {
  return {ActFormat::Q8_K, quantize_as<ActBlockK, quantize_act_k_avx2>, decode_as<ActBlockK, Matvec>,
          prefill_as<ActBlockK, matmul_quantized_rows<ActBlockK, kSuperBlock, Matvec, Tile, T, true>>, nullptr};
}
// The transposed tiles (kquant_tile.h: 8 rows in AVX2, 16 in AVX-512 VNNI) from kKTransMinTokens
// tokens, fewer as above (the matvec per token). The kernel transposes each group of rows once per
// call and re-reads the call's activations for every group, so a call takes as many tokens as
// kTransChunkBytes of activations (408 tokens of 2048 columns, 100 of 8192; the kernel takes
// them 64 at a time): in L2 while every group passes. 1 MiB shares each transposition among all
// 64 tokens of a 64-token prompt of the 8192- and 16384-column matrices too, where 256 KiB split
// them into calls of 24 and 12: with the 16-row tile's cheaper pass the transposition is the
// larger share (asm/README.md). Prefill at 64 tokens, three alternating series on Zen 5, 1 / 2
// threads: llama-3.2-1b Q4_K_M 1.04 / 1.06x, gemma-2b Q4_K_M 1.24 / 1.13x (medians).
template <MatvecKFn Matvec, MatmulKFn Tile, DType T>
void prefill_k_transposed(const void* w, const ActBlockK* x, float* y, int64_t rows, int64_t cols, int64_t n_tokens,
                          int64_t y_stride) {
  if (n_tokens < kKTransMinTokens)
    return matmul_quantized_rows<ActBlockK, kSuperBlock, Matvec, nullptr, T, false>(w, x, y, rows, cols, n_tokens,
                                                                                   y_stride);
  constexpr int64_t kTransChunkBytes = 1024 * 1024;
  const int64_t blocks = cols / kSuperBlock;
  // whole 4-token passes where the call allows (a 1-token pass loads every k-step for one token)
  const int64_t chunk = std::max<int64_t>(4, kTransChunkBytes / (blocks * int64_t(sizeof(ActBlockK))) / 4 * 4);
  for (int64_t t = 0; t < n_tokens; t += chunk)
    Tile(w, x + t * blocks, y + t * y_stride, rows, cols, std::min(chunk, n_tokens - t), y_stride);
}
template <MatvecKFn Matvec, MatmulKFn Tile, DType T>
constexpr TypeKernels k_quant_transposed_kernels() {
  return {ActFormat::Q8_K, quantize_as<ActBlockK, quantize_act_k_avx2>, decode_as<ActBlockK, Matvec>,
          prefill_as<ActBlockK, prefill_k_transposed<Matvec, Tile, T>>, nullptr};
}
// A 32-value type's integer row kernel on Q8_0-style activations (the Q8_0 path's asm quantizer).
template <MatvecQFn Matvec, DType T>
constexpr TypeKernels b32_kernels() {
  return {ActFormat::Q8_0, quantize_as<ActBlock, magnetar_quantize_act_avx2>, decode_as<ActBlock, Matvec>,
          prefill_as<ActBlock, matmul_quantized_rows<ActBlock, kBlock, Matvec, nullptr, T, false>>, nullptr};
}
// A type's integer matvec kernel with a row-major prefill tile; an ISA's four-row matvec
// (magnetar_matvec_<lower>_r4_<isa>) with its transposed tile (magnetar_matmul_<lower>_tile_<isa>);
// a 32-value type's.
#define MAGNETAR_KQUANT_TILED_ASM(kernel, tile, type) k_quant_kernels<kernel, tile, type>()
#define MAGNETAR_KQUANT_TRANSPOSED_ASM(isa, type, lower) \
  k_quant_transposed_kernels<magnetar_matvec_##lower##_r4_##isa, magnetar_matmul_##lower##_tile_##isa, type>()
#define MAGNETAR_B32_ASM(kernel, type) b32_kernels<kernel, type>()
#define MAGNETAR_INT8_ASM(isa, type, lower)                                                                 \
  int8_kernels<magnetar_quantize_act_avx2, magnetar_matvec_##lower##_##isa, magnetar_matmul_##lower##_##isa, \
               magnetar_matmul_##lower##_x16_##isa, type>()
#else
#define MAGNETAR_KQUANT_TILED_ASM(kernel, tile, type) TypeKernels{}
#define MAGNETAR_KQUANT_TRANSPOSED_ASM(isa, type, lower) TypeKernels{}
#define MAGNETAR_B32_ASM(kernel, type) TypeKernels{}
#define MAGNETAR_INT8_ASM(isa, type, lower) TypeKernels{}
#endif

// The record of a 256-value type with four-row decode kernels and transposed prefill tiles in
// both ISAs (Q2_K..Q6_K): kquants.h's / kquant_low.h's dequantizer and quantizer, the kernels by
// name.
#define MAGNETAR_TRANSPOSED_K_RECORD(TYPE, lower)                                           \
  dequantizing<dequantize_row_##lower, DType::TYPE>(                                        \
      quantize_row_##lower, MAGNETAR_KQUANT_TRANSPOSED_ASM(avx2, DType::TYPE, lower),       \
      MAGNETAR_KQUANT_TRANSPOSED_ASM(avx512vnni, DType::TYPE, lower))

using F32Entry = kernels::FloatEntry<float, kernels::ref::matvec_f32, kernels::ref::matmul_f32>;
using F16Entry = kernels::FloatEntry<uint16_t, kernels::ref::matvec_f16, kernels::ref::matmul_f16>;

// Indexed by DType.
const TypeTraits kTraits[format::kDTypeCount] = {
    {DType::F32, nullptr, nullptr, F32Entry::kernels(), {}, {}},
    {DType::F16, nullptr, nullptr, F16Entry::kernels(), {}, {}},
    {DType::Q8_0, dequantize_q8_0, quantize_q8_0,
     int8_kernels<quantize_act_ref, matvec_q8_0_ref, matmul_q8_0_ref, matmul_q8_0_x16_ref, DType::Q8_0>(),
     MAGNETAR_INT8_ASM(avx2, DType::Q8_0, q8_0), MAGNETAR_INT8_ASM(avx512vnni, DType::Q8_0, q8_0)},
    {DType::Q4_0, dequantize_q4_0, quantize_q4_0,
     int8_kernels<quantize_act_ref, matvec_q4_0_ref, matmul_q4_0_ref, matmul_q4_0_x16_ref, DType::Q4_0>(),
     MAGNETAR_INT8_ASM(avx2, DType::Q4_0, q4_0), MAGNETAR_INT8_ASM(avx512vnni, DType::Q4_0, q4_0)},
    MAGNETAR_TRANSPOSED_K_RECORD(Q2_K, q2_k),
    MAGNETAR_TRANSPOSED_K_RECORD(Q3_K, q3_k),
    MAGNETAR_TRANSPOSED_K_RECORD(Q4_K, q4_k),
    MAGNETAR_TRANSPOSED_K_RECORD(Q5_K, q5_k),
    MAGNETAR_TRANSPOSED_K_RECORD(Q6_K, q6_k),
    dequantizing<dequantize_row_iq4_nl, DType::IQ4_NL>(quantize_row_iq4_nl,
                                                       MAGNETAR_B32_ASM(magnetar_matvec_iq4_nl_avx2, DType::IQ4_NL)),
    dequantizing<dequantize_row_iq4_xs, DType::IQ4_XS>(
        quantize_row_iq4_xs,
        MAGNETAR_KQUANT_TILED_ASM(magnetar_matvec_iq4_xs_r4_avx2, magnetar_matmul_iq4_xs_avx2, DType::IQ4_XS),
        MAGNETAR_KQUANT_TRANSPOSED_ASM(avx512vnni, DType::IQ4_XS, iq4_xs)),
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

const kernels::TypeKernels& type_kernels(const TypeTraits& traits, kernels::Isa isa) {
  if (isa == kernels::Isa::Avx512Vnni && traits.avx512vnni.decode != nullptr) return traits.avx512vnni;
  if (isa != kernels::Isa::Reference && traits.avx2.decode != nullptr) return traits.avx2;
  return traits.reference;
}

}  // namespace magnetar::quant
