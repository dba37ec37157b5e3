// Quantized weights: GGUF's Q8_0 and Q4_0 block formats, their quantizers and dequantizers, and
// the integer matrix–vector and prefill (matrix × tokens) kernels (C++ reference twins + NASM
// AVX2 / AVX-512 VNNI). Their type records (type_traits.cpp) put them in the kernel tables
// (kernels.h: KernelTable::types[Q8_0 / Q4_0], one entry per ISA).
//
// Block layout and rounding are GGUF's, bit for bit, so a GGUF tensor of these types is used
// without requantising and our quantizer's output equals GGML's reference quantizer's:
//   Q8_0: d = amax / 127, q[i] = round-half-away(x[i] / d)             value = q * d
//   Q4_0: d = m / -8 (m = the value of largest magnitude, first wins),
//         q[i] = min(15, trunc(x[i] / d + 8.5))                         value = (q - 8) * d
//   d is stored as IEEE half (kernels::f32_to_f16_scalar, round to nearest even, as GGML's
//   GGML_FP32_TO_FP16); 1/d is taken from the unrounded d.
//   Q4_0 packs element j in the low nibble of qs[j] and element j + 16 in its high nibble.
// A quantized matrix [rows, cols] is row-major in the file: each row is cols / 32 blocks, rows
// contiguous. A loaded model rearranges it into x16 tiles (below) for the decode kernels.
//
// The kernels multiply such a matrix by an FP32 vector quantized once per call to int8 blocks
// (ActBlock: symmetric, d = amax / 127, round to nearest even) and use integer dot products per
// block; the FP32 result is sum_b wd_b * xd_b * dot_b. Not here: K-quants, other GGUF types.
#pragma once
#include <cstdint>

#include "kernels/kernels.h"

namespace magnetar::quant {

inline constexpr int64_t kBlock = 32;  // weights per block, both types

struct BlockQ8_0 {
  uint16_t d;            // scale, IEEE half
  int8_t qs[kBlock];     // value[i] = qs[i] * d
};
struct BlockQ4_0 {
  uint16_t d;                // scale, IEEE half
  uint8_t qs[kBlock / 2];    // element j: low nibble of qs[j]; element j + 16: high nibble
};
static_assert(sizeof(BlockQ8_0) == 34 && alignof(BlockQ8_0) == 2, "GGUF block_q8_0 is 34 bytes");
static_assert(sizeof(BlockQ4_0) == 18 && alignof(BlockQ4_0) == 2, "GGUF block_q4_0 is 18 bytes");

// One 32-value block of a quantized activation vector (kernel input, lives in scratch memory).
struct ActBlock {
  float d;               // scale: x[i] ≈ qs[i] * d
  int32_t sum;           // sum of qs (Q4_0 kernels subtract 8 * d_w * d * sum)
  int8_t qs[kBlock];     // in [-127, 127]
};
static_assert(sizeof(ActBlock) == 40, "ActBlock layout is shared with asm/quant_*.asm");

// Bytes of one row of `cols` weights (cols a multiple of kBlock).
inline int64_t row_bytes_q8_0(int64_t cols) { return cols / kBlock * int64_t(sizeof(BlockQ8_0)); }
inline int64_t row_bytes_q4_0(int64_t cols) { return cols / kBlock * int64_t(sizeof(BlockQ4_0)); }

// GGML's reference quantizers (bit-exact) and dequantizers. n is a multiple of kBlock.
void quantize_row_q8_0(const float* x, BlockQ8_0* y, int64_t n);
void quantize_row_q4_0(const float* x, BlockQ4_0* y, int64_t n);
void dequantize_row_q8_0(const BlockQ8_0* x, float* y, int64_t n);
void dequantize_row_q4_0(const BlockQ4_0* x, float* y, int64_t n);

// ---- Kernel signatures (shared by twin, asm and tests; pointers and 64-bit ints only) ----
// x[n] -> n / 32 ActBlocks. n must be a multiple of 32; x needs no alignment.
using QuantizeActFn = void (*)(const float* x, ActBlock* out, int64_t n);
// y[r] = sum over blocks b of row r: w.d * x[b].d * sum_i w.q[i] * x[b].qs[i], r < rows.
// w: [rows, cols / 32] blocks of the kernel's type (any alignment), x: [cols / 32] ActBlocks,
// y: [rows] FP32. cols a multiple of 32 (> 0); any rows >= 0. Weights of Q8_0 must lie in
// [-127, 127] (GGML's quantizer never emits -128).
using MatvecQFn = void (*)(const void* w, const ActBlock* x, float* y, int64_t rows, int64_t cols);

// Prefill: y[t * y_stride + r] = row r of w . token t, r < rows, t < n_tokens; x holds n_tokens
// tokens of cols / 32 ActBlocks back to back; y_stride >= rows (floats). Any rows >= 0 and
// n_tokens >= 0, any alignment. Numerics: each output is exactly what matvec_*_ref computes
// for that token (exact int32 block dot, float(dot) * (d_w * d_x), added in block order, each
// operation rounded on its own), so asm and twin agree bit for bit.
using MatmulQFn = void (*)(const void* w, const ActBlock* x, float* y, int64_t rows, int64_t cols,
                           int64_t n_tokens, int64_t y_stride);

// ---- The x16 tile layout (quant_tiles.cpp): a load-time rearrangement for decode speed ----
// Row-major blocks make a matvec kernel read one stream per row and reduce each block's 8 int32
// lanes horizontally. A tile of 16 consecutive rows instead lays out, per block column b, the 16
// rows' scales, then the quants transposed so that one 64-byte run holds the same 4 elements of
// all 16 rows: the kernel broadcasts 4 activation bytes, and every int32 lane of one vpdpbusd is
// a different row's dot product. A tile is one sequential stream; a matrix keeps its byte size.
//   Q8_0x16, per block column (544 bytes = 16 x 34):
//     16 x half d (row order) | 8 runs g: byte 4r + j = row r's qs[4g + j] XOR 0x80 (q + 128)
//   Q4_0x16, per block column (288 bytes = 16 x 18):
//     16 x half d (row order) | 4 runs m: byte 4r + j = row r's qs[4m + j] (as stored: low
//     nibble element 4m + j, high nibble element 16 + 4m + j)
// A tiled matrix is its floor(rows / 16) tiles followed by the remaining rows, row-major.
inline constexpr int64_t kTileRows = 16;
// One tile: rows src[0..15] (row-major, row_bytes apart) -> dst (16 row_bytes). No aliasing.
void tile_rows_q8_0(const void* src, void* dst, int64_t cols);
void tile_rows_q4_0(const void* src, void* dst, int64_t cols);
// Row r (< 16) of a tile back to FP32 (embedding lookups in a tiled table).
void dequantize_tile_row_q8_0(const void* tile, int64_t r, float* y, int64_t cols);
void dequantize_tile_row_q4_0(const void* tile, int64_t r, float* y, int64_t cols);

// Decode and prefill over tiles: y[t * y_stride + r] = row r . token t for r < rows (a multiple
// of 16), t < n_tokens; w points at the first tile (needs no alignment). Bit for bit the
// row-major twins' numbers (matvec_q8_0_ref on the untiled rows) for every token count.
using MatmulQx16Fn = MatmulQFn;

// Reference twins (always compiled: the fallback and the test oracle).
void quantize_act_ref(const float* x, ActBlock* out, int64_t n);
void matvec_q8_0_ref(const void* w, const ActBlock* x, float* y, int64_t rows, int64_t cols);
void matvec_q4_0_ref(const void* w, const ActBlock* x, float* y, int64_t rows, int64_t cols);
void matmul_q8_0_ref(const void* w, const ActBlock* x, float* y, int64_t rows, int64_t cols,
                     int64_t n_tokens, int64_t y_stride);
void matmul_q4_0_ref(const void* w, const ActBlock* x, float* y, int64_t rows, int64_t cols,
                     int64_t n_tokens, int64_t y_stride);
void matmul_q8_0_x16_ref(const void* w, const ActBlock* x, float* y, int64_t rows, int64_t cols,
                         int64_t n_tokens, int64_t y_stride);
void matmul_q4_0_x16_ref(const void* w, const ActBlock* x, float* y, int64_t rows, int64_t cols,
                         int64_t n_tokens, int64_t y_stride);

}  // namespace magnetar::quant

// NASM kernels (asm/quant_avx2.asm); same contracts as the twins above.
extern "C" {
void magnetar_quantize_act_avx2(const float* x, magnetar::quant::ActBlock* out, int64_t n);
void magnetar_matvec_q8_0_avx2(const void* w, const magnetar::quant::ActBlock* x, float* y,
                               int64_t rows, int64_t cols);
void magnetar_matvec_q4_0_avx2(const void* w, const magnetar::quant::ActBlock* x, float* y,
                               int64_t rows, int64_t cols);
// asm/quant_matmul_avx2.asm
void magnetar_matmul_q8_0_avx2(const void* w, const magnetar::quant::ActBlock* x, float* y,
                               int64_t rows, int64_t cols, int64_t n_tokens, int64_t y_stride);
void magnetar_matmul_q4_0_avx2(const void* w, const magnetar::quant::ActBlock* x, float* y,
                               int64_t rows, int64_t cols, int64_t n_tokens, int64_t y_stride);
// asm/quant_matmul_avx512vnni.asm
void magnetar_matmul_q8_0_avx512vnni(const void* w, const magnetar::quant::ActBlock* x, float* y,
                                     int64_t rows, int64_t cols, int64_t n_tokens, int64_t y_stride);
void magnetar_matmul_q4_0_avx512vnni(const void* w, const magnetar::quant::ActBlock* x, float* y,
                                     int64_t rows, int64_t cols, int64_t n_tokens, int64_t y_stride);
// asm/quant_avx512vnni.asm
void magnetar_matvec_q8_0_avx512vnni(const void* w, const magnetar::quant::ActBlock* x, float* y,
                                     int64_t rows, int64_t cols);
void magnetar_matvec_q4_0_avx512vnni(const void* w, const magnetar::quant::ActBlock* x, float* y,
                                     int64_t rows, int64_t cols);
// asm/quant_x16_avx512vnni.asm and asm/quant_x16_avx2.asm: the x16 tile kernels
void magnetar_matmul_q8_0_x16_avx512vnni(const void* w, const magnetar::quant::ActBlock* x, float* y,
                                         int64_t rows, int64_t cols, int64_t n_tokens, int64_t y_stride);
void magnetar_matmul_q4_0_x16_avx512vnni(const void* w, const magnetar::quant::ActBlock* x, float* y,
                                         int64_t rows, int64_t cols, int64_t n_tokens, int64_t y_stride);
void magnetar_matmul_q8_0_x16_avx2(const void* w, const magnetar::quant::ActBlock* x, float* y,
                                   int64_t rows, int64_t cols, int64_t n_tokens, int64_t y_stride);
void magnetar_matmul_q4_0_x16_avx2(const void* w, const magnetar::quant::ActBlock* x, float* y,
                                   int64_t rows, int64_t cols, int64_t n_tokens, int64_t y_stride);
}
