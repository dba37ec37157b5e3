// The kernels' record of each weight type (the role of ggml's type_traits): how to dequantize
// and quantize a row, and which matrix kernels compute with it. The file layer's half of the
// record (name, block elements, block bytes, GGML id) is format::dtype_layout(); a type's whole
// description is those two rows, found by its format::DType.
//
// Compute paths. Q8_0 and Q4_0 quantize the activations to int8 blocks and run the integer
// kernels of quant.h (asm per ISA, x16 tiles). The other block types run `matmul`: each weight
// row is dequantized once per group of tokens into a small buffer (exactly the values GGML's
// dequantizer gives) and dotted with the FP32 activations, so their results are those of the
// float model on the dequantized weights. Where a type has asm (`matmul_avx2`: Q2_K..Q6_K and IQ4_XS
// with activations quantized like GGML's Q8_K, kquants.h / kquant_low.h; IQ4_NL, Q4_1, Q5_0 and
// Q5_1 with Q8_0-style activation blocks, kquant_low.h) the CPU runs that instead unless
// MAGNETAR_KERNELS=reference: faster, and as close to the float model as llama.cpp is.
// `matmul_k_avx2` is the same computation on activations the caller quantized once
// (quantize_act_k_ref), so threads that split the rows share one quantization; it runs the
// matvec kernel per token below kKTileTokens tokens and the prefill tiles from there.
#pragma once
#include <cstdint>

#include "format/model_format.h"
#include "kernels/kquants.h"  // MatmulKFn, ActBlockK

namespace magnetar::quant {

// n values (a multiple of the type's block) from row-major blocks x (any alignment) into y.
using DequantizeRowFn = void (*)(const void* x, float* y, int64_t n);
// n values x into n / block blocks y (Q8_0 / Q4_0 / Q4_1 / Q5_0 / Q5_1: bit-exact with GGML's
// reference quantizer on finite input; the K-quants and IQ4: Magnetar's own scale search into
// GGML's layout, kquants.h). Every type has one.
using QuantizeRowFn = void (*)(const float* x, void* y, int64_t n);
// y[t * y_stride + r] = row r of w · x[t * cols ..], r < rows, t < n_tokens (FP32 activations).
using MatmulDequantFn = void (*)(const void* w, const float* x, float* y, int64_t rows, int64_t cols,
                                 int64_t n_tokens, int64_t y_stride);

struct TypeTraits {
  format::DType dtype;
  DequantizeRowFn dequantize_row;  // nullptr for F32 / F16 (not block types)
  QuantizeRowFn quantize_row;      // nullptr where Magnetar has no quantizer for the type
  bool int8_activations;           // Q8_0 / Q4_0: quant.h's integer kernels (QuantKernelTable)
  MatmulDequantFn matmul;          // the other block types; nullptr for int8_activations types
  MatmulDequantFn matmul_avx2;     // AVX2 asm (integer, Q8_K activations), nullptr where none
  MatmulKFn matmul_k_avx2;         // the same on activations quantized by the caller, nullptr where none
};

// The record of a valid dtype (format::dtype_is_valid).
const TypeTraits& type_traits(format::DType dtype);
// The matmul the engine runs for a non-int8 block type: matmul_avx2 when the active quant table
// is an asm one (quant::active()) and the type has it, else matmul.
MatmulDequantFn active_matmul(const TypeTraits& traits);
// matmul_k_avx2 when the active quant table is an asm one, else nullptr (then active_matmul).
MatmulKFn active_matmul_k(const TypeTraits& traits);

// The reference dequantizing matmul of a type (tests call it with each type's dequantizer).
void matmul_dequant_ref(DequantizeRowFn dequantize, int64_t block, int64_t block_bytes, const void* w,
                        const float* x, float* y, int64_t rows, int64_t cols, int64_t n_tokens,
                        int64_t y_stride);

}  // namespace magnetar::quant
