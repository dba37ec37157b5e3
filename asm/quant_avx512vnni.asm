; Q8_0 / Q4_0 matrix–vector kernels using AVX-512 VNNI on YMM registers (EVEX vpdpbusd,
; needs AVX512F/BW/VL + VNNI). Same contracts, layouts and C++ twins as asm/quant_avx2.asm
; (engine/kernels/quant.h): vpdpbusd forms the u8 × s8 block dot product in one instruction
; where AVX2 needs vpmaddubsw + vpmaddwd, and for Q4_0 the "- 8 × sum(x)" term is the
; accumulator's starting value instead of a separate subtraction. The loops are quant_common.inc's
; QUANT_MATVEC, as for AVX2: this file supplies the block dot products.

%include "quant_common.inc"

RODATA
align 32
low_nibble:   times 32 db 0x0f
nibble_shift: dq 0, 0, 4, 4            ; vpsrlvq counts: low lane as is, high lane >> 4

; ------------------------------------------------------------------------------------------------
; void magnetar_matvec_q8_0_avx512vnni(const void* w, const ActBlock* x, float* y, int64_t rows,
;                                      int64_t cols)
; ------------------------------------------------------------------------------------------------

; Q8V_INT tmp, row_ptr: ymm<tmp> = float lanes of the block's int8 dot product
; (Q8_ACT: ymm4 = x qs, ymm5 = |x qs|; ymm13 is the int32 accumulator).
%macro Q8V_INT 2
  vmovdqu ymm%1, [%2 + t1 + 2]
  vpsignb ymm%1, ymm%1, ymm4           ; w * sign(x), so the u8 operand can be |x|
  vpxor xmm13, xmm13, xmm13
  {evex} vpdpbusd ymm13, ymm5, ymm%1
  vcvtdq2ps ymm%1, ymm13
%endmacro

%macro Q8V_SETUP 0
%endmacro

FUNCTION matvec_q8_0_avx512vnni, 5, QUANT_GPRS, 16
  QUANT_MATVEC Q8_BLOCK, Q8V_SETUP, Q8_ACT, Q8V_INT, 1

; ------------------------------------------------------------------------------------------------
; void magnetar_matvec_q4_0_avx512vnni(const void* w, const ActBlock* x, float* y, int64_t rows,
;                                      int64_t cols)
; ------------------------------------------------------------------------------------------------

; Q4V_ACT bcast_reg: ymm4 = x qs, ymm13 = -sum(x) in every int32 lane, bcast_reg = x.d
%macro Q4V_ACT 1
  vmovdqu ymm4, [t2 + ACT_QS]
  vpbroadcastd ymm13, [t2 + ACT_SUM]
  vpxor xmm12, xmm12, xmm12
  vpsubd ymm13, ymm12, ymm13           ; -sum(x) in every lane
  vbroadcastss %1, [t2 + ACT_D]
%endmacro

; Q4V_INT tmp, row_ptr: ymm<tmp> = float lanes of sum (q - 8) * x for the block. The int32
; accumulator starts at -sum(x) in each of its 8 lanes (ymm13), which totals -8 × sum(x).
%macro Q4V_INT 2
  vbroadcasti128 ymm%1, [%2 + t1 + 2]
  vpsrlvq ymm%1, ymm%1, ymm14          ; high lane: the high nibbles (elements 16..31)
  vpand ymm%1, ymm%1, ymm15
  vmovdqa ymm5, ymm13
  {evex} vpdpbusd ymm5, ymm%1, ymm4
  vcvtdq2ps ymm%1, ymm5
%endmacro

%macro Q4V_SETUP 0
  vmovdqa ymm15, [rel low_nibble]
  vmovdqa ymm14, [rel nibble_shift]
%endmacro

FUNCTION matvec_q4_0_avx512vnni, 5, QUANT_GPRS, 16
  QUANT_MATVEC Q4_BLOCK, Q4V_SETUP, Q4V_ACT, Q4V_INT, 1
