// GGUF's K-quants (Q2_K..Q6_K), IQ4_NL / IQ4_XS and the older Q4_1 / Q5_0 / Q5_1: block layouts
// and dequantizers, bit for bit llama.cpp's (ggml-quants.c dequantize_row_*): the same float
// operations in the same order, no FMA contraction (the engine is built without -mfma).
//
// K-quants are super-blocks of 256 values (QK_K) with an FP16 scale d (and dmin) and per-
// sub-block 4..8-bit scales; IQ4 maps 4-bit indices through a fixed non-linear codebook.
// A row of a quantized tensor is a whole number of blocks; rows are contiguous.
#pragma once
#include <cstdint>

namespace magnetar::quant {

inline constexpr int64_t kSuperBlock = 256;  // QK_K

struct BlockQ4_1 { uint16_t d, m; uint8_t qs[16]; };                      // v = q·d + m
struct BlockQ5_0 { uint16_t d; uint8_t qh[4]; uint8_t qs[16]; };          // v = (q − 16)·d
struct BlockQ5_1 { uint16_t d, m; uint8_t qh[4]; uint8_t qs[16]; };       // v = q·d + m
struct BlockQ2_K { uint8_t scales[16]; uint8_t qs[64]; uint16_t d, dmin; };
struct BlockQ3_K { uint8_t hmask[32]; uint8_t qs[64]; uint8_t scales[12]; uint16_t d; };
struct BlockQ4_K { uint16_t d, dmin; uint8_t scales[12]; uint8_t qs[128]; };
struct BlockQ5_K { uint16_t d, dmin; uint8_t scales[12]; uint8_t qh[32]; uint8_t qs[128]; };
struct BlockQ6_K { uint8_t ql[128]; uint8_t qh[64]; int8_t scales[16]; uint16_t d; };
struct BlockIQ4_NL { uint16_t d; uint8_t qs[16]; };
struct BlockIQ4_XS { uint16_t d; uint16_t scales_h; uint8_t scales_l[4]; uint8_t qs[128]; };
static_assert(sizeof(BlockQ4_1) == 20 && sizeof(BlockQ5_0) == 22 && sizeof(BlockQ5_1) == 24);
static_assert(sizeof(BlockQ2_K) == 84 && sizeof(BlockQ3_K) == 110 && sizeof(BlockQ4_K) == 144);
static_assert(sizeof(BlockQ5_K) == 176 && sizeof(BlockQ6_K) == 210);
static_assert(sizeof(BlockIQ4_NL) == 18 && sizeof(BlockIQ4_XS) == 136);

// IQ4_NL / IQ4_XS codebook (kvalues_iq4nl).
inline constexpr int8_t kIq4Values[16] = {-127, -104, -83, -65, -49, -35, -22, -10,
                                          1,    13,   25,  38,  53,  69,  89,  113};

// n values (a multiple of the type's block) from blocks x (any alignment) into y.
void dequantize_row_q4_1(const void* x, float* y, int64_t n);
void dequantize_row_q5_0(const void* x, float* y, int64_t n);
void dequantize_row_q5_1(const void* x, float* y, int64_t n);
void dequantize_row_q2_k(const void* x, float* y, int64_t n);
void dequantize_row_q3_k(const void* x, float* y, int64_t n);
void dequantize_row_q4_k(const void* x, float* y, int64_t n);
void dequantize_row_q5_k(const void* x, float* y, int64_t n);
void dequantize_row_q6_k(const void* x, float* y, int64_t n);
void dequantize_row_iq4_nl(const void* x, float* y, int64_t n);
void dequantize_row_iq4_xs(const void* x, float* y, int64_t n);

// Quantizers (kquant_quantize.cpp): n values (a multiple of the block: 256 for K-quants and
// IQ4_XS, 32 for IQ4_NL / Q4_1 / Q5_0 / Q5_1) into blocks y (any alignment). The K-quants and
// IQ4 use Magnetar's own error-minimising scale search (the layouts are llama.cpp's, the chosen
// scales need not be); Q4_1 / Q5_0 / Q5_1 follow GGML's reference rule. Every block is
// quantized on its own: any split of a row at block boundaries gives the same bytes.
// Non-finite input: NaN encodes as the level nearest 0, ±inf saturates.
void quantize_row_q2_k(const float* x, void* y, int64_t n);
void quantize_row_q3_k(const float* x, void* y, int64_t n);
void quantize_row_q4_k(const float* x, void* y, int64_t n);
void quantize_row_q5_k(const float* x, void* y, int64_t n);
void quantize_row_q6_k(const float* x, void* y, int64_t n);
void quantize_row_iq4_nl(const float* x, void* y, int64_t n);
void quantize_row_iq4_xs(const float* x, void* y, int64_t n);
void quantize_row_q4_1(const float* x, void* y, int64_t n);
void quantize_row_q5_0(const float* x, void* y, int64_t n);
void quantize_row_q5_1(const float* x, void* y, int64_t n);

// Q4_K / Q5_K: the 6-bit scale and min of sub-block j (0..7) from the 12 packed scale bytes.
void k_scale_min(int j, const uint8_t* scales, uint8_t* scale, uint8_t* min);
// Q3_K: the 16 6-bit sub-block scales (0..63; the value uses scale - 32) from the 12 packed bytes
// (low 4 bits in bytes 0..7, high 2 bits in bytes 8..11).
void q3_k_scales(const uint8_t* packed, int8_t* scales);

// ---- Integer kernels: Q4_K / Q5_K / Q6_K / IQ4_XS weights x activations quantized like GGML's Q8_K ----
// One 256-value activation block (kernel input, in scratch memory; layout shared with
// asm/kquant_avx2.asm). GGML's quantize_row_q8_K rule: max = the value of largest magnitude
// (first wins), q = min(127, round-half-even(x * (-127 / max))), d = 1 / (-127 / max);
// bsums[j] = sum of q[16 j .. 16 j + 15].
struct ActBlockK {
  float d;
  int32_t pad[7];      // bsums and qs start on 32 / 64-byte offsets
  int16_t bsums[16];
  int8_t qs[kSuperBlock];
};
static_assert(sizeof(ActBlockK) == 320, "ActBlockK layout is shared with asm/kquant_avx2.asm");

void quantize_act_k_ref(const float* x, ActBlockK* out, int64_t n);  // n % 256 == 0

// y[r] = row r of w (Q4_K / Q5_K / Q6_K / IQ4_XS blocks, any alignment) . x, r < rows; cols % 256 == 0.
// Numerics, the block contract (what every asm kernel of these types reproduces bit for bit,
// kquant_lanes.h): per row, acc = 0, m = 0; for each super-block b in order, S_b = the block's
// exact int32 dot (each value weighted by its sub-block scale; Q6_K subtracts
// 32 sum_s sc[s] bsums[s]; any summation order gives the same integer) and
// acc = fma(d_w * d_x, float(S_b), acc) (d_w * d_x rounded once, then one fma); the mins (Q4_K,
// Q5_K) m = fma(dmin_w * d_x, float(mins . pair sums of bsums), m); y = acc [- m].
using MatvecKFn = void (*)(const void* w, const ActBlockK* x, float* y, int64_t rows, int64_t cols);
void matvec_q4_k_ref(const void* w, const ActBlockK* x, float* y, int64_t rows, int64_t cols);
void matvec_q5_k_ref(const void* w, const ActBlockK* x, float* y, int64_t rows, int64_t cols);
void matvec_q6_k_ref(const void* w, const ActBlockK* x, float* y, int64_t rows, int64_t cols);
void matvec_iq4_xs_ref(const void* w, const ActBlockK* x, float* y, int64_t rows, int64_t cols);

// Prefill: y[t * y_stride + r] = row r of w . token t of x, r < rows, t < n_tokens (x: n_tokens
// tokens of cols / 256 blocks each, back to back; y_stride >= rows). Every output is bit for bit
// the matvec's for that token (the asm tiles follow the numerics above), so prefill and decode
// agree exactly. The twin: the matvec twin once per token.
using MatmulKFn = void (*)(const void* w, const ActBlockK* x, float* y, int64_t rows, int64_t cols,
                           int64_t n_tokens, int64_t y_stride);
void matmul_k_ref(MatvecKFn matvec, const void* w, const ActBlockK* x, float* y, int64_t rows, int64_t cols,
                  int64_t n_tokens, int64_t y_stride);
// Tokens per register tile of the asm prefill kernels (asm/kquant_matmul.inc): below this many
// tokens the matvec per token is as fast.
inline constexpr int64_t kKTileTokens = 8;

}  // namespace magnetar::quant

// asm/kquant_avx2.asm (decode); same contracts as the twins above.
extern "C" {
void magnetar_matvec_q4_k_avx2(const void* w, const magnetar::quant::ActBlockK* x, float* y, int64_t rows,
                               int64_t cols);
void magnetar_matvec_q5_k_avx2(const void* w, const magnetar::quant::ActBlockK* x, float* y, int64_t rows,
                               int64_t cols);
void magnetar_matvec_q6_k_avx2(const void* w, const magnetar::quant::ActBlockK* x, float* y, int64_t rows,
                               int64_t cols);
void magnetar_matvec_iq4_xs_avx2(const void* w, const magnetar::quant::ActBlockK* x, float* y, int64_t rows,
                                 int64_t cols);
// asm/kquant_matmul_avx2.asm (prefill, MatmulKFn's contract)
void magnetar_matmul_q4_k_avx2(const void* w, const magnetar::quant::ActBlockK* x, float* y, int64_t rows,
                               int64_t cols, int64_t n_tokens, int64_t y_stride);
void magnetar_matmul_q5_k_avx2(const void* w, const magnetar::quant::ActBlockK* x, float* y, int64_t rows,
                               int64_t cols, int64_t n_tokens, int64_t y_stride);
void magnetar_matmul_q6_k_avx2(const void* w, const magnetar::quant::ActBlockK* x, float* y, int64_t rows,
                               int64_t cols, int64_t n_tokens, int64_t y_stride);
void magnetar_matmul_iq4_xs_avx2(const void* w, const magnetar::quant::ActBlockK* x, float* y, int64_t rows,
                                 int64_t cols, int64_t n_tokens, int64_t y_stride);
}
