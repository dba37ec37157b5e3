// The kernels' record of each weight type (the role of ggml's type_traits): how to dequantize
// and quantize a row, and the type's matrix kernels per ISA. The file layer's half of the record
// (name, block elements, block bytes, GGML id) is format::dtype_layout(); a type's whole
// description is those two rows, found by its format::DType. The kernel tables (kernels.h) are
// built from these records once, at first use: nothing on the hot path looks a record up.
//
// Matrix kernels (kernels::TypeKernels: activation format, decode, prefill, x16 tiles):
// - reference, every valid type. Q8_0 / Q4_0: int8 activation blocks (ActBlock) and quant.h's
//   twins. F16 / F32: the float twins. The other block types: a dequantizing FP32 matmul (each
//   weight row dequantized once per group of tokens, exactly GGML's values, dotted with the FP32
//   activations), so their results are those of the float model on the dequantized weights.
// - avx2, where the type has asm: Q8_0 / Q4_0 (quant.h, x16 tiles too); Q2_K..Q6_K and IQ4_XS
//   against activations quantized like GGML's Q8_K (ActBlockK, kquants.h / kquant_decode.h /
//   kquant_low.h); IQ4_NL, Q4_1, Q5_0 and Q5_1 against Q8_0-style blocks (kquant_low.h). Faster,
//   and as close to the float model as llama.cpp is. (F16 / F32's asm entries are the asm
//   tables' own float kernels, whose F16 stream count the tuning chooses: tables.h.)
// - avx512vnni, where the type has VNNI kernels: Q8_0 / Q4_0; Q4_K, Q5_K, Q6_K and IQ4_XS decode
//   (kquant_decode.h) and their transposed prefill tiles (kquant_tile.h).
// Prefill entries run the decode kernel per token below their prefill tiles' token count and
// walk rows in chunks that stay in cache while every token passes; each output is bit for bit the
// decode kernel's for that token.
#pragma once
#include <cstdint>

#include "format/model_format.h"
#include "kernels/kernels.h"

namespace magnetar::quant {

// n values (a multiple of the type's block) from row-major blocks x (any alignment) into y.
using DequantizeRowFn = void (*)(const void* x, float* y, int64_t n);
// n values x into n / block blocks y (Q8_0 / Q4_0 / Q4_1 / Q5_0 / Q5_1: bit-exact with GGML's
// reference quantizer on finite input; the K-quants and IQ4: Magnetar's own scale search into
// GGML's layout, kquants.h). Every block type has one.
using QuantizeRowFn = void (*)(const float* x, void* y, int64_t n);

struct TypeTraits {
  format::DType dtype;
  DequantizeRowFn dequantize_row;  // nullptr for F32 / F16 (not block types)
  QuantizeRowFn quantize_row;      // nullptr for F32 / F16
  kernels::TypeKernels reference;  // every valid type
  kernels::TypeKernels avx2;        // decode == nullptr: no AVX2 kernels of its own
  kernels::TypeKernels avx512vnni;  // decode == nullptr: no VNNI kernels of its own
};

// The record of a valid dtype (format::dtype_is_valid).
const TypeTraits& type_traits(format::DType dtype);
// The kernels a table of `isa` runs for the type: the isa's own, else the nearest lower ISA's
// (avx512vnni -> avx2 -> reference).
const kernels::TypeKernels& type_kernels(const TypeTraits& traits, kernels::Isa isa);

// The reference dequantizing matmul of a type (tests call it with each type's dequantizer):
// y[t * y_stride + r] = row r of w . x[t * cols ..] on FP32 activations.
void matmul_dequant_ref(DequantizeRowFn dequantize, int64_t block, int64_t block_bytes, const void* w,
                        const float* x, float* y, int64_t rows, int64_t cols, int64_t n_tokens,
                        int64_t y_stride);

}  // namespace magnetar::quant
