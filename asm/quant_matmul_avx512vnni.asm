; Q8_0 / Q4_0 prefill kernels with AVX-512 VNNI on YMM registers (EVEX, ymm0..31; needs
; AVX512F/BW/VL + VNNI). Same contract and twins as asm/quant_matmul_avx2.asm
; (engine/kernels/quant.h: matmul_q8_0_ref, matmul_q4_0_ref), bit for bit.
;
; Method: an 8-row x 8-token tile in which each int32 lane is one row's dot product with one
; token, so no horizontal sums are needed. Per 32-block, the eight rows' weights are made
; unsigned (Q8_0: w + 128; Q4_0: the nibble q) and transposed so that register k holds dword k
; (elements 4k..4k+3) of every row; per token, vpdpbusd with the token's dword k broadcast from
; memory ({1to8}) adds four products to every row's lane, eight times. The offset comes off
; exactly: dot = lanes - C * sum(x) (C = 128 for Q8_0, 8 for Q4_0; ActBlock.sum). Then, as the
; twin: y += float(dot) * (d_w * d_x), each operation rounded on its own, in block order.
; The frame, offset tables, group loops and tails are quant_matmul.inc's QUANT_MATMUL (8 x 8
; groups); this file supplies the block column and the masked stores.

%include "quant_matmul.inc"

RODATA
align 32
vm_nibble_shift: dq 0, 0, 4, 4          ; vpsrlvq counts: low lane as is, high lane >> 4
vm_low_nibble:   dd 0x0f0f0f0f
vm_sign_bytes:   dd 0x80808080

; Block loop registers (QUANT_MATMUL: g0 = the group's row-0 block, g1 = token 0's ActBlock,
; g2/g3 = scratch, g4 = blocks left). ymm8..15 = FP32 sums of tokens 0..7 (lane = row),
; ymm16..23 = the transposed unsigned weights (register k = dword k of rows 0..7),
; ymm24 = d_w of rows 0..7, ymm26 = 0x80 bytes.

%macro VM_ROW_MASK 0
  mov g1, 1
  shlx g1, g1, g0
  dec g1
  mov [rsp + MM_KMASK], g1
%endmacro

%macro VM_SETUP 0
  vpbroadcastd ymm26, [rel vm_sign_bytes]
%endmacro

%macro VM_GROUP 0
  vpxord ymm8, ymm8, ymm8
  vpxord ymm9, ymm9, ymm9
  vpxord ymm10, ymm10, ymm10
  vpxord ymm11, ymm11, ymm11
  vpxord ymm12, ymm12, ymm12
  vpxord ymm13, ymm13, ymm13
  vpxord ymm14, ymm14, ymm14
  vpxord ymm15, ymm15, ymm15
%endmacro

; VM_BLOCK type (8 or 4), offset C (128 or 8) as shift (7 or 3): one block column
%macro VM_BLOCK 2
  ; the eight rows' blocks (ymm0..7, unsigned) and scales (xmm25 halves -> ymm24)
  %assign k 0
  %rep 8
    mov g2, [rsp + MM_ROW_OFF + 8 * k]
    add g2, g0
    vpinsrw xmm25, xmm25, word [g2], k
    %if %1 == 8
      vpxord ymm%[k], ymm26, [g2 + 2]          ; w + 128 (w >= -127)
    %else
      vbroadcasti32x4 ymm%[k], [g2 + 2]
      vpsrlvq ymm%[k], ymm%[k], [rel vm_nibble_shift]
      vpandd ymm%[k], ymm%[k], [rel vm_low_nibble]{1to8}
    %endif
    %assign k k + 1
  %endrep
  vcvtph2ps ymm24, xmm25
  ; 8 x 8 dword transpose: ymm0..7 (rows) -> ymm16..23 (dword k of every row)
  vpunpckldq ymm16, ymm0, ymm1
  vpunpckhdq ymm17, ymm0, ymm1
  vpunpckldq ymm18, ymm2, ymm3
  vpunpckhdq ymm19, ymm2, ymm3
  vpunpckldq ymm20, ymm4, ymm5
  vpunpckhdq ymm21, ymm4, ymm5
  vpunpckldq ymm22, ymm6, ymm7
  vpunpckhdq ymm23, ymm6, ymm7
  vpunpcklqdq ymm0, ymm16, ymm18      ; rows 0-3: dwords 0 | 4
  vpunpckhqdq ymm1, ymm16, ymm18      ; 1 | 5
  vpunpcklqdq ymm2, ymm17, ymm19      ; 2 | 6
  vpunpckhqdq ymm3, ymm17, ymm19      ; 3 | 7
  vpunpcklqdq ymm4, ymm20, ymm22      ; rows 4-7
  vpunpckhqdq ymm5, ymm20, ymm22
  vpunpcklqdq ymm6, ymm21, ymm23
  vpunpckhqdq ymm7, ymm21, ymm23
  vshufi64x2 ymm16, ymm0, ymm4, 0x0
  vshufi64x2 ymm20, ymm0, ymm4, 0x3
  vshufi64x2 ymm17, ymm1, ymm5, 0x0
  vshufi64x2 ymm21, ymm1, ymm5, 0x3
  vshufi64x2 ymm18, ymm2, ymm6, 0x0
  vshufi64x2 ymm22, ymm2, ymm6, 0x3
  vshufi64x2 ymm19, ymm3, ymm7, 0x0
  vshufi64x2 ymm23, ymm3, ymm7, 0x3
  ; the eight tokens
  %assign t 0
  %rep 8
    mov g3, [rsp + MM_TOK_OFF + 8 * t]
    add g3, g1
    vpxord ymm0, ymm0, ymm0
    vpxord ymm1, ymm1, ymm1
    vpdpbusd ymm0, ymm16, [g3 + ACT_QS + 0]{1to8}
    vpdpbusd ymm1, ymm17, [g3 + ACT_QS + 4]{1to8}
    vpdpbusd ymm0, ymm18, [g3 + ACT_QS + 8]{1to8}
    vpdpbusd ymm1, ymm19, [g3 + ACT_QS + 12]{1to8}
    vpdpbusd ymm0, ymm20, [g3 + ACT_QS + 16]{1to8}
    vpdpbusd ymm1, ymm21, [g3 + ACT_QS + 20]{1to8}
    vpdpbusd ymm0, ymm22, [g3 + ACT_QS + 24]{1to8}
    vpdpbusd ymm1, ymm23, [g3 + ACT_QS + 28]{1to8}
    vpaddd ymm0, ymm0, ymm1
    vpbroadcastd ymm1, [g3 + ACT_SUM]
    vpslld ymm1, ymm1, %2
    vpsubd ymm0, ymm0, ymm1              ; exact int32 block dots of rows 0..7 with token t
    vcvtdq2ps ymm0, ymm0
    vmulps ymm1, ymm24, [g3 + ACT_D]{1to8}
    vmulps ymm0, ymm0, ymm1
    %assign acc 8 + t
    vaddps ymm%[acc], ymm%[acc], ymm0
    %assign t t + 1
  %endrep
%endmacro

%macro VM_BLOCK_Q8 0
  VM_BLOCK 8, 7
%endmacro

%macro VM_BLOCK_Q4 0
  VM_BLOCK 4, 3
%endmacro

; VM_STORE: token k of the group at y + (token + k) * y_stride + row * 4, lanes of real rows
%macro VM_STORE 0
  mov g2, [rsp + MM_KMASK]
  kmovw k1, g2d
  MM_STORE_ADDRESS
  %assign t 0
  %rep 8
    %assign acc 8 + t
    %assign next t + 2
    vmovups [g2]{k1}, ymm%[acc]
    %if t < 7
      MM_NEXT_TOKEN next
    %endif
    %assign t t + 1
  %endrep
%endmacro

FUNCTION matmul_q8_0_avx512vnni, 7, 7, 16
  QUANT_MATMUL 8, 8, Q8_BLOCK, MM_FRAME, VM_ROW_MASK, VM_SETUP, VM_GROUP, VM_BLOCK_Q8, VM_STORE

FUNCTION matmul_q4_0_avx512vnni, 7, 7, 16
  QUANT_MATMUL 8, 8, Q4_BLOCK, MM_FRAME, VM_ROW_MASK, VM_SETUP, VM_GROUP, VM_BLOCK_Q4, VM_STORE
