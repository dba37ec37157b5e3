; matvec_avx2.asm — decode-time kernels on AVX2 + FMA + F16C: matrix–vector products (F16 and
; F32 weights), dot product, axpy, F16 -> F32 widening. The C++ wrappers in
; engine/kernels/asm_table.cpp call these for the bulk and handle tails; contracts per symbol in
; asm/README.md.

%include "abi.inc"

; Bytes ahead of the current column that each weight row is prefetched (0 = no software
; prefetch). Measured on Zen 5: hardware prefetch alone keeps up (see asm/README.md).
%ifndef MATVEC_PREFETCH
  %define MATVEC_PREFETCH 0
%endif

; ymm0 <- (sum of ymm0 lanes) in xmm0[0]; clobbers xmm1.
%macro HSUM_YMM0 0
  vextractf128 xmm1, ymm0, 1
  vaddps xmm0, xmm0, xmm1
  vmovhlps xmm1, xmm0, xmm0
  vaddps xmm0, xmm0, xmm1
  vmovshdup xmm1, xmm0
  vaddss xmm0, xmm0, xmm1
%endmacro

; Four row sums (ymm0, ymm2, ymm4, ymm6 after folding ymm1/3/5/7 in) -> xmm0 = [r0 r1 r2 r3].
%macro REDUCE4_ROWS 0
  vaddps ymm0, ymm0, ymm1
  vaddps ymm2, ymm2, ymm3
  vaddps ymm4, ymm4, ymm5
  vaddps ymm6, ymm6, ymm7
  vhaddps ymm0, ymm0, ymm2
  vhaddps ymm4, ymm4, ymm6
  vhaddps ymm0, ymm0, ymm4
  vextractf128 xmm1, ymm0, 1
  vaddps xmm0, xmm0, xmm1
%endmacro

; The matvec body, shared by F16 and F32 weights.
;   %1 = element size of w (2 or 4). Registers: g0 w, g1 ldw (bytes after scaling), g2 x, g3 y,
;   g4 rows, g5 cols, g6 column index, g7..g9 rows 1..3 of the current pass.
; Each pass takes 4 rows x 16 columns per step: two x loads feed 8 FMAs into 8 independent
; accumulators (2 per row), enough to cover FMA latency; weight loads are the stream.
%macro MATVEC_BODY 1
  %if %1 == 2
    %define LOADW(dst, base, off) vcvtph2ps dst, [base + g6 * 2 + off]
    %define WHALF 16
  %else
    %define LOADW(dst, base, off) vmovups dst, [base + g6 * 4 + off]
    %define WHALF 32
  %endif
  imul g1, g1, %1              ; ldw in bytes
  cmp g4, 4
  jb %%row_tail
%%pass4:
  lea g7, [g0 + g1]
  lea g8, [g0 + g1 * 2]
  lea g9, [g7 + g1 * 2]
  vxorps xmm0, xmm0, xmm0
  vxorps xmm1, xmm1, xmm1
  vxorps xmm2, xmm2, xmm2
  vxorps xmm3, xmm3, xmm3
  vxorps xmm4, xmm4, xmm4
  vxorps xmm5, xmm5, xmm5
  vxorps xmm6, xmm6, xmm6
  vxorps xmm7, xmm7, xmm7
  xor g6, g6
  align 16
%%cols4:
  %if MATVEC_PREFETCH > 0
    prefetcht0 [g0 + g6 * %1 + MATVEC_PREFETCH]
    prefetcht0 [g7 + g6 * %1 + MATVEC_PREFETCH]
    prefetcht0 [g8 + g6 * %1 + MATVEC_PREFETCH]
    prefetcht0 [g9 + g6 * %1 + MATVEC_PREFETCH]
  %endif
  vmovups ymm8, [g2 + g6 * 4]
  vmovups ymm9, [g2 + g6 * 4 + 32]
  LOADW(ymm10, g0, 0)
  LOADW(ymm11, g0, WHALF)
  vfmadd231ps ymm0, ymm10, ymm8
  vfmadd231ps ymm1, ymm11, ymm9
  LOADW(ymm10, g7, 0)
  LOADW(ymm11, g7, WHALF)
  vfmadd231ps ymm2, ymm10, ymm8
  vfmadd231ps ymm3, ymm11, ymm9
  LOADW(ymm10, g8, 0)
  LOADW(ymm11, g8, WHALF)
  vfmadd231ps ymm4, ymm10, ymm8
  vfmadd231ps ymm5, ymm11, ymm9
  LOADW(ymm10, g9, 0)
  LOADW(ymm11, g9, WHALF)
  vfmadd231ps ymm6, ymm10, ymm8
  vfmadd231ps ymm7, ymm11, ymm9
  add g6, 16
  cmp g6, g5
  jb %%cols4
  REDUCE4_ROWS
  vmovups [g3], xmm0
  add g3, 16
  lea g0, [g9 + g1]
  sub g4, 4
  cmp g4, 4
  jae %%pass4
%%row_tail:
  test g4, g4
  jz %%done
%%pass1:
  vxorps xmm0, xmm0, xmm0
  vxorps xmm2, xmm2, xmm2
  xor g6, g6
%%cols1:
  LOADW(ymm10, g0, 0)
  LOADW(ymm11, g0, WHALF)
  vfmadd231ps ymm0, ymm10, [g2 + g6 * 4]
  vfmadd231ps ymm2, ymm11, [g2 + g6 * 4 + 32]
  add g6, 16
  cmp g6, g5
  jb %%cols1
  vaddps ymm0, ymm0, ymm2
  HSUM_YMM0
  vmovss [g3], xmm0
  add g3, 4
  add g0, g1
  dec g4
  jnz %%pass1
%%done:
  %undef LOADW
  %undef WHALF
%endmacro

; void magnetar_matvec_f16_avx2(const uint16_t* w, int64_t ldw, const float* x, float* y,
;                               int64_t rows, int64_t cols)
; cols: a positive multiple of 16. rows >= 0. No alignment needed.
FUNCTION matvec_f16_avx2, 6, 10, 12
  MATVEC_BODY 2
  RET

; void magnetar_matvec_f32_avx2(const float* w, int64_t ldw, const float* x, float* y,
;                               int64_t rows, int64_t cols)
; cols: a positive multiple of 16. rows >= 0. No alignment needed.
FUNCTION matvec_f32_avx2, 6, 10, 12
  MATVEC_BODY 4
  RET

; void magnetar_dot_f32_avx2(const float* a, const float* b, int64_t n, float* out)
; n: a multiple of 32 (0 allowed: *out = 0). Four accumulators x 8 lanes.
FUNCTION dot_f32_avx2, 4, 5, 4
  vxorps xmm0, xmm0, xmm0
  vxorps xmm1, xmm1, xmm1
  vxorps xmm2, xmm2, xmm2
  vxorps xmm3, xmm3, xmm3
  xor g4, g4
  test g2, g2
  jz .sum
.loop:
  vmovups ymm1, [g0 + g4 * 4]
  vfmadd231ps ymm0, ymm1, [g1 + g4 * 4]
  vmovups ymm1, [g0 + g4 * 4 + 32]
  vfmadd231ps ymm2, ymm1, [g1 + g4 * 4 + 32]
  vmovups ymm1, [g0 + g4 * 4 + 64]
  vfmadd231ps ymm3, ymm1, [g1 + g4 * 4 + 64]
  vmovups ymm1, [g0 + g4 * 4 + 96]
  vfmadd231ps ymm0, ymm1, [g1 + g4 * 4 + 96]
  add g4, 32
  cmp g4, g2
  jb .loop
.sum:
  vaddps ymm0, ymm0, ymm2
  vaddps ymm0, ymm0, ymm3
  HSUM_YMM0
  vmovss [g3], xmm0
  RET

; void magnetar_axpy_f32_avx2(float* y, const float* x, int64_t n, const float* scale)
; y[i] += *scale * x[i]; n: a multiple of 16.
FUNCTION axpy_f32_avx2, 4, 5, 4
  vbroadcastss ymm0, [g3]
  xor g4, g4
  test g2, g2
  jz .done
.loop:
  vmovups ymm1, [g0 + g4 * 4]
  vmovups ymm2, [g0 + g4 * 4 + 32]
  vfmadd231ps ymm1, ymm0, [g1 + g4 * 4]
  vfmadd231ps ymm2, ymm0, [g1 + g4 * 4 + 32]
  vmovups [g0 + g4 * 4], ymm1
  vmovups [g0 + g4 * 4 + 32], ymm2
  add g4, 16
  cmp g4, g2
  jb .loop
.done:
  RET

; void magnetar_f16_to_f32_avx2(const uint16_t* src, float* dst, int64_t n)
; n: a multiple of 16. Exact (F16C widening).
FUNCTION f16_to_f32_avx2, 3, 4, 2
  xor g3, g3
  test g2, g2
  jz .done
.loop:
  vcvtph2ps ymm0, [g0 + g3 * 2]
  vcvtph2ps ymm1, [g0 + g3 * 2 + 16]
  vmovups [g1 + g3 * 4], ymm0
  vmovups [g1 + g3 * 4 + 32], ymm1
  add g3, 16
  cmp g3, g2
  jb .loop
.done:
  RET
