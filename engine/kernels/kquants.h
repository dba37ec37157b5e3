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

// Q4_K / Q5_K: the 6-bit scale and min of sub-block j (0..7) from the 12 packed scale bytes.
void k_scale_min(int j, const uint8_t* scales, uint8_t* scale, uint8_t* min);

}  // namespace magnetar::quant
