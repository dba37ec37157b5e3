; Q8_0 / Q4_0 matrix–vector kernels using AVX-512 VNNI on YMM registers (EVEX vpdpbusd,
; needs AVX512F/BW/VL + VNNI). Same contracts, layouts and C++ twins as asm/quant_avx2.asm
; (engine/kernels/quant.h): vpdpbusd forms the u8 × s8 block dot product in one instruction
; where AVX2 needs vpmaddubsw + vpmaddwd, and for Q4_0 the "- 8 × sum(x)" term is the
; accumulator's starting value instead of a separate subtraction.

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
; (ymm4 = x qs, ymm5 = |x qs|; ymm13 is the int32 accumulator).
%macro Q8V_INT 2
  prefetchnta [%2 + t1 + QUANT_PREFETCH]
  vmovdqu ymm%1, [%2 + t1 + 2]
  vpsignb ymm%1, ymm%1, ymm4           ; w * sign(x), so the u8 operand can be |x|
  vpxor xmm13, xmm13, xmm13
  {evex} vpdpbusd ymm13, ymm5, ymm%1
  vcvtdq2ps ymm%1, ymm13
%endmacro

FUNCTION matvec_q8_0_avx512vnni, 5, QUANT_GPRS, 16
  mov t0, arg4
  shr t0, 5
  imul t0, t0, Q8_BLOCK                ; row bytes
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
  %assign k 0
  %rep 4
    %assign tmp 8 + k
    %assign row 3 + k
    Q8V_INT tmp, t%[row]
    vshufps ymm12, ymm7, ymm7, 0x55 * k
    vfmadd231ps ymm%[k], ymm%[tmp], ymm12
    %assign k k + 1
  %endrep
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
  Q8V_INT 7, t3
  SCALE 8, t3
  vfmadd231ps ymm0, ymm7, ymm8
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
; void magnetar_matvec_q4_0_avx512vnni(const void* w, const ActBlock* x, float* y, int64_t rows,
;                                      int64_t cols)
; ------------------------------------------------------------------------------------------------

; Q4V_INT tmp, row_ptr: ymm<tmp> = float lanes of sum (q - 8) * x for the block. The int32
; accumulator starts at -sum(x) in each of its 8 lanes (ymm13), which totals -8 × sum(x).
%macro Q4V_INT 2
  prefetchnta [%2 + t1 + QUANT_PREFETCH]
  vbroadcasti128 ymm%1, [%2 + t1 + 2]
  vpsrlvq ymm%1, ymm%1, ymm14          ; high lane: the high nibbles (elements 16..31)
  vpand ymm%1, ymm%1, ymm15
  vmovdqa ymm5, ymm13
  {evex} vpdpbusd ymm5, ymm%1, ymm4
  vcvtdq2ps ymm%1, ymm5
%endmacro

FUNCTION matvec_q4_0_avx512vnni, 5, QUANT_GPRS, 16
  mov t0, arg4
  shr t0, 5
  imul t0, t0, Q4_BLOCK                ; row bytes
  vmovdqa ymm15, [rel low_nibble]
  vmovdqa ymm14, [rel nibble_shift]
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
  vpxor xmm12, xmm12, xmm12
  vpsubd ymm13, ymm12, ymm13           ; -sum(x) in every lane
  vbroadcastss xmm6, [t2 + ACT_D]
  SCALES4
  %assign k 0
  %rep 4
    %assign tmp 8 + k
    %assign row 3 + k
    Q4V_INT tmp, t%[row]
    vshufps ymm12, ymm7, ymm7, 0x55 * k
    vfmadd231ps ymm%[k], ymm%[tmp], ymm12
    %assign k k + 1
  %endrep
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
  vpxor xmm12, xmm12, xmm12
  vpsubd ymm13, ymm12, ymm13
  vbroadcastss ymm6, [t2 + ACT_D]
  Q4V_INT 7, t3
  SCALE 8, t3
  vfmadd231ps ymm0, ymm7, ymm8
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
