; Q8_0 / Q4_0 integer matrix–vector kernels and the activation quantizer, AVX2 + FMA + F16C.
; Contracts and C++ twins: engine/kernels/quant.h (quantize_act_ref, matvec_q8_0_ref,
; matvec_q4_0_ref). Layouts: BlockQ8_0 = {u16 d; i8 qs[32]} (34 bytes), BlockQ4_0 = {u16 d;
; u8 qs[16]} (18 bytes), ActBlock = {f32 d; i32 sum; i8 qs[32]} (40 bytes).
;
; Method: the activation is quantized once per call to int8 blocks; each weight block's dot
; product is exact int32 (vpmaddubsw + vpmaddwd), converted to float and scaled by
; d_w * d_x into 8-lane accumulators. The loops (four rows sharing each activation load, a
; one-row tail) are quant_common.inc's QUANT_MATVEC; this file supplies the block dot products.


%include "quant_common.inc"

RODATA
align 32
abs_mask:   times 8 dd 0x7fffffff
ones_i16:   times 16 dw 1
low_nibble: times 32 db 0x0f
nibble_shift: dq 0, 0, 4, 4            ; vpsrlvq counts: low lane as is, high lane >> 4
pack_order: dd 0, 4, 1, 5, 2, 6, 3, 7     ; undoes vpackssdw/vpacksswb's lane interleave
f_127:      dd 127.0
f_one:      dd 1.0

; ------------------------------------------------------------------------------------------------
; void magnetar_quantize_act_avx2(const float* x, ActBlock* out, int64_t n)   n % 32 == 0
; d = amax / 127, q = round-to-nearest-even(x * (1 / d)) (0 when d == 0), sum = sum of q.
; ------------------------------------------------------------------------------------------------
FUNCTION quantize_act_avx2, 3, QUANT_GPRS, 16
  shr arg2, 5                          ; blocks
  jz .done
  vmovaps ymm15, [rel abs_mask]
  vmovdqa ymm14, [rel pack_order]
  vxorps xmm13, xmm13, xmm13
.block:
  vmovups ymm0, [arg0]
  vmovups ymm1, [arg0 + 32]
  vmovups ymm2, [arg0 + 64]
  vmovups ymm3, [arg0 + 96]
  vandps ymm4, ymm0, ymm15
  vandps ymm5, ymm1, ymm15
  vandps ymm6, ymm2, ymm15
  vandps ymm7, ymm3, ymm15
  vmaxps ymm4, ymm4, ymm5
  vmaxps ymm6, ymm6, ymm7
  vmaxps ymm4, ymm4, ymm6
  vextractf128 xmm5, ymm4, 1
  vmaxps xmm4, xmm4, xmm5
  vmovhlps xmm5, xmm5, xmm4
  vmaxps xmm4, xmm4, xmm5
  vmovshdup xmm5, xmm4
  vmaxss xmm4, xmm4, xmm5              ; amax
  vdivss xmm5, xmm4, [rel f_127]       ; d
  vmovss [arg1 + ACT_D], xmm5
  vmovss xmm6, [rel f_one]
  vdivss xmm6, xmm6, xmm5              ; 1 / d (inf when d == 0, masked next)
  vcmpneqss xmm7, xmm5, xmm13
  vandps xmm6, xmm6, xmm7
  vbroadcastss ymm6, xmm6
  vmulps ymm0, ymm0, ymm6
  vmulps ymm1, ymm1, ymm6
  vmulps ymm2, ymm2, ymm6
  vmulps ymm3, ymm3, ymm6
  vcvtps2dq ymm0, ymm0
  vcvtps2dq ymm1, ymm1
  vcvtps2dq ymm2, ymm2
  vcvtps2dq ymm3, ymm3
  vpaddd ymm4, ymm0, ymm1
  vpaddd ymm5, ymm2, ymm3
  vpaddd ymm4, ymm4, ymm5
  vextracti128 xmm5, ymm4, 1
  vpaddd xmm4, xmm4, xmm5
  vpshufd xmm5, xmm4, 0x4e
  vpaddd xmm4, xmm4, xmm5
  vpshufd xmm5, xmm4, 0xb1
  vpaddd xmm4, xmm4, xmm5
  vmovd [arg1 + ACT_SUM], xmm4
  vpackssdw ymm0, ymm0, ymm1
  vpackssdw ymm2, ymm2, ymm3
  vpacksswb ymm0, ymm0, ymm2
  vpermd ymm0, ymm14, ymm0
  vmovdqu [arg1 + ACT_QS], ymm0
  add arg0, 128
  add arg1, ACT_BLOCK
  dec arg2
  jnz .block
.done:
  RET

; ------------------------------------------------------------------------------------------------
; void magnetar_matvec_q8_0_avx2(const void* w, const ActBlock* x, float* y, int64_t rows,
;                                int64_t cols)
; ------------------------------------------------------------------------------------------------

; Q8_INT tmp, row_ptr: ymm<tmp> = float lanes of the block's int8 dot product
; (Q8_ACT: ymm4 = x qs, ymm5 = |x qs|; vpsignb moves the sign of x onto w for vpmaddubsw's s8 side)
%macro Q8_INT 2
  vmovdqu ymm%1, [%2 + t1 + 2]
  vpsignb ymm%1, ymm%1, ymm4
  vpmaddubsw ymm%1, ymm5, ymm%1
  vpmaddwd ymm%1, ymm%1, ymm15
  vcvtdq2ps ymm%1, ymm%1
%endmacro

%macro Q8_SETUP 0
  vmovdqa ymm15, [rel ones_i16]
%endmacro

FUNCTION matvec_q8_0_avx2, 5, QUANT_GPRS, 16
  QUANT_MATVEC Q8_BLOCK, Q8_SETUP, Q8_ACT, Q8_INT, 0

; ------------------------------------------------------------------------------------------------
; void magnetar_matvec_q4_0_avx2(const void* w, const ActBlock* x, float* y, int64_t rows,
;                                int64_t cols)
; ------------------------------------------------------------------------------------------------

; Q4_ACT bcast_reg: ymm4 = x qs, ymm13 = sum(x) in each int32 lane, bcast_reg = x.d
%macro Q4_ACT 1
  vmovdqu ymm4, [t2 + ACT_QS]
  vpbroadcastd ymm13, [t2 + ACT_SUM]
  vbroadcastss %1, [t2 + ACT_D]
%endmacro

; Q4_INT tmp, row_ptr: ymm<tmp> = float lanes of sum (q - 8) * x. The nibbles (0..15) go to
; vpmaddubsw unsigned; the -8 becomes "- sum(x)" in each of the 8 int32 lanes (ymm13).
%macro Q4_INT 2
  vbroadcasti128 ymm%1, [%2 + t1 + 2]
  vpsrlvq ymm%1, ymm%1, ymm5           ; high lane: the high nibbles (elements 16..31)
  vpand ymm%1, ymm%1, ymm14
  vpmaddubsw ymm%1, ymm%1, ymm4
  vpmaddwd ymm%1, ymm%1, ymm15
  vpsubd ymm%1, ymm%1, ymm13
  vcvtdq2ps ymm%1, ymm%1
%endmacro

%macro Q4_SETUP 0
  vmovdqa ymm15, [rel ones_i16]
  vmovdqa ymm14, [rel low_nibble]
  vmovdqa ymm5, [rel nibble_shift]
%endmacro

FUNCTION matvec_q4_0_avx2, 5, QUANT_GPRS, 16
  QUANT_MATVEC Q4_BLOCK, Q4_SETUP, Q4_ACT, Q4_INT, 0
