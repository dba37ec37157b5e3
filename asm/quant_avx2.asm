; Q8_0 / Q4_0 integer matrix–vector kernels and the activation quantizer, AVX2 + FMA + F16C.
; Contracts and C++ twins: engine/kernels/quant.h (quantize_act_ref, matvec_q8_0_ref,
; matvec_q4_0_ref). Layouts: BlockQ8_0 = {u16 d; i8 qs[32]} (34 bytes), BlockQ4_0 = {u16 d;
; u8 qs[16]} (18 bytes), ActBlock = {f32 d; i32 sum; i8 qs[32]} (40 bytes).
;
; Method: the activation is quantized once per call to int8 blocks; each weight block's dot
; product is exact int32 (vpmaddubsw + vpmaddwd), converted to float and scaled by
; d_w * d_x into 8-lane accumulators. Four rows share each activation load; a one-row loop
; takes the tail rows.


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

; Q8_DOT acc, tmp, scale, row_ptr: acc += float(int8 dot of the block) * scale
; (ymm4 = x qs, ymm5 = |x qs|; the sign of x moves onto w so vpmaddubsw sees u8 x s8)
%macro Q8_DOT 4
  vmovdqu ymm%2, [%4 + t1 + 2]
  vpsignb ymm%2, ymm%2, ymm4
  vpmaddubsw ymm%2, ymm5, ymm%2
  vpmaddwd ymm%2, ymm%2, ymm15
  vcvtdq2ps ymm%2, ymm%2
  SCALE %3, %4
  vfmadd231ps ymm%1, ymm%2, ymm%3
%endmacro

; Q8_DOT4 acc, tmp, row_ptr, k: as Q8_DOT, with row k's scale taken from SCALES4's ymm7
%macro Q8_DOT4 4
  prefetchnta [%3 + t1 + QUANT_PREFETCH]
  vmovdqu ymm%2, [%3 + t1 + 2]
  vpsignb ymm%2, ymm%2, ymm4
  vpmaddubsw ymm%2, ymm5, ymm%2
  vpmaddwd ymm%2, ymm%2, ymm15
  vcvtdq2ps ymm%2, ymm%2
  vshufps ymm12, ymm7, ymm7, 0x55 * %4
  vfmadd231ps ymm%1, ymm%2, ymm12
%endmacro

FUNCTION matvec_q8_0_avx2, 5, QUANT_GPRS, 16
  mov t0, arg4
  shr t0, 5
  imul t0, t0, Q8_BLOCK                ; row bytes
  vmovdqa ymm15, [rel ones_i16]
  cmp arg3, 4
  jl .rows1
.rows4:
  mov t3, arg0
  lea t4, [arg0 + t0]
  lea t5, [arg0 + 2*t0]
  lea t6, [t4 + 2*t0]
  vxorps xmm0, xmm0, xmm0
  vxorps xmm1, xmm1, xmm1
  vxorps xmm2, xmm2, xmm2
  vxorps xmm3, xmm3, xmm3
  xor t1, t1
  mov t2, arg1
.blocks4:
  vmovdqu ymm4, [t2 + ACT_QS]
  vpsignb ymm5, ymm4, ymm4
  vbroadcastss xmm6, [t2 + ACT_D]
  SCALES4
  Q8_DOT4 0, 8, t3, 0
  Q8_DOT4 1, 9, t4, 1
  Q8_DOT4 2, 10, t5, 2
  Q8_DOT4 3, 11, t6, 3
  add t1, Q8_BLOCK
  add t2, ACT_BLOCK
  cmp t1, t0
  jb .blocks4
  HSUM4_STORE
  lea arg0, [arg0 + 4*t0]
  add arg2, 16
  sub arg3, 4
  cmp arg3, 4
  jge .rows4
.rows1:
  test arg3, arg3
  jle .done
.row1:
  mov t3, arg0
  vxorps xmm0, xmm0, xmm0
  xor t1, t1
  mov t2, arg1
.blocks1:
  vmovdqu ymm4, [t2 + ACT_QS]
  vpsignb ymm5, ymm4, ymm4
  vbroadcastss ymm6, [t2 + ACT_D]
  Q8_DOT 0, 7, 8, t3
  add t1, Q8_BLOCK
  add t2, ACT_BLOCK
  cmp t1, t0
  jb .blocks1
  HSUM1_STORE
  add arg0, t0
  add arg2, 4
  dec arg3
  jnz .row1
.done:
  RET

; ------------------------------------------------------------------------------------------------
; void magnetar_matvec_q4_0_avx2(const void* w, const ActBlock* x, float* y, int64_t rows,
;                                int64_t cols)
; ------------------------------------------------------------------------------------------------

; Q4_DOT acc, tmp, scale, row_ptr: acc += float(sum (q - 8) * x) * scale. The nibbles (0..15)
; go to vpmaddubsw unsigned; the -8 becomes "- sum(x)" in each of the 8 int32 lanes (ymm13).
%macro Q4_DOT 4
  vbroadcasti128 ymm%2, [%4 + t1 + 2]
  vpsrlvq ymm%2, ymm%2, ymm5           ; high lane: the high nibbles (elements 16..31)
  vpand ymm%2, ymm%2, ymm14
  vpmaddubsw ymm%2, ymm%2, ymm4
  vpmaddwd ymm%2, ymm%2, ymm15
  vpsubd ymm%2, ymm%2, ymm13
  vcvtdq2ps ymm%2, ymm%2
  SCALE %3, %4
  vfmadd231ps ymm%1, ymm%2, ymm%3
%endmacro

; Q4_DOT4 acc, tmp, row_ptr, k: as Q4_DOT, with row k's scale taken from SCALES4's ymm7
%macro Q4_DOT4 4
  prefetchnta [%3 + t1 + QUANT_PREFETCH]
  vbroadcasti128 ymm%2, [%3 + t1 + 2]
  vpsrlvq ymm%2, ymm%2, ymm5
  vpand ymm%2, ymm%2, ymm14
  vpmaddubsw ymm%2, ymm%2, ymm4
  vpmaddwd ymm%2, ymm%2, ymm15
  vpsubd ymm%2, ymm%2, ymm13
  vcvtdq2ps ymm%2, ymm%2
  vshufps ymm12, ymm7, ymm7, 0x55 * %4
  vfmadd231ps ymm%1, ymm%2, ymm12
%endmacro

FUNCTION matvec_q4_0_avx2, 5, QUANT_GPRS, 16
  mov t0, arg4
  shr t0, 5
  imul t0, t0, Q4_BLOCK                ; row bytes
  vmovdqa ymm15, [rel ones_i16]
  vmovdqa ymm14, [rel low_nibble]
  vmovdqa ymm5, [rel nibble_shift]
  cmp arg3, 4
  jl .rows1
.rows4:
  mov t3, arg0
  lea t4, [arg0 + t0]
  lea t5, [arg0 + 2*t0]
  lea t6, [t4 + 2*t0]
  vxorps xmm0, xmm0, xmm0
  vxorps xmm1, xmm1, xmm1
  vxorps xmm2, xmm2, xmm2
  vxorps xmm3, xmm3, xmm3
  xor t1, t1
  mov t2, arg1
.blocks4:
  vmovdqu ymm4, [t2 + ACT_QS]
  vpbroadcastd ymm13, [t2 + ACT_SUM]
  vbroadcastss xmm6, [t2 + ACT_D]
  SCALES4
  Q4_DOT4 0, 8, t3, 0
  Q4_DOT4 1, 9, t4, 1
  Q4_DOT4 2, 10, t5, 2
  Q4_DOT4 3, 11, t6, 3
  add t1, Q4_BLOCK
  add t2, ACT_BLOCK
  cmp t1, t0
  jb .blocks4
  HSUM4_STORE
  lea arg0, [arg0 + 4*t0]
  add arg2, 16
  sub arg3, 4
  cmp arg3, 4
  jge .rows4
.rows1:
  test arg3, arg3
  jle .done
.row1:
  mov t3, arg0
  vxorps xmm0, xmm0, xmm0
  xor t1, t1
  mov t2, arg1
.blocks1:
  vmovdqu ymm4, [t2 + ACT_QS]
  vpbroadcastd ymm13, [t2 + ACT_SUM]
  vbroadcastss ymm6, [t2 + ACT_D]
  Q4_DOT 0, 7, 8, t3
  add t1, Q4_BLOCK
  add t2, ACT_BLOCK
  cmp t1, t0
  jb .blocks1
  HSUM1_STORE
  add arg0, t0
  add arg2, 4
  dec arg3
  jnz .row1
.done:
  RET
