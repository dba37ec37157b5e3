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
; Tails as in the AVX2 kernel: groups overlap when rows (tokens) >= 8, else the last row (token)
; repeats and only real ones are stored (masked stores).

%include "quant_common.inc"

%define arg5 g5           ; n_tokens
%define arg6 g6           ; y_stride (floats)

RODATA
align 32
vm_nibble_shift: dq 0, 0, 4, 4          ; vpsrlvq counts: low lane as is, high lane >> 4
vm_low_nibble:   dd 0x0f0f0f0f
vm_sign_bytes:   dd 0x80808080

; Stack frame (bytes from rsp after `sub rsp, VM_FRAME`)
%define F_W        0
%define F_X        8
%define F_Y        16
%define F_ROWS     24
%define F_TOKENS   32
%define F_YSTRIDE  40      ; bytes
%define F_ROWBYTES 48
%define F_TSTRIDE  56
%define F_BLOCKS   64
%define F_ROW      72      ; first row of the current group (before the tail clamp)
%define F_TOKEN    80
%define F_GROUP_ROW   88
%define F_GROUP_TOKEN 96
%define F_STORE_T  104     ; tokens stored per group: min(n_tokens, 8)
%define F_MASK     112     ; row lanes stored: (1 << min(rows, 8)) - 1
%define F_ROW_OFF  128     ; 8 qwords: byte offset of row k of a group from row 0
%define F_TOK_OFF  192     ; 8 qwords: byte offset of token k's ActBlocks from token 0's
%define VM_FRAME   256

; Block loop registers: g0 = weight block of the group's row 0, g1 = ActBlock of token 0,
; g2/g3 = scratch, g4 = blocks left. ymm8..15 = FP32 sums of tokens 0..7 (lane = row),
; ymm16..23 = the transposed unsigned weights (register k = dword k of rows 0..7),
; ymm24 = d_w of rows 0..7, ymm26 = 0x80 bytes.

; MM_VNNI_BODY type (8 or 4), block_bytes, offset C (128 or 8) as shift (7 or 3)
%macro MM_VNNI_BODY 3
  test arg3, arg3
  jle .exit
  test arg5, arg5
  jle .exit
  sub rsp, VM_FRAME
  mov [rsp + F_W], arg0
  mov [rsp + F_X], arg1
  mov [rsp + F_Y], arg2
  mov [rsp + F_ROWS], arg3
  mov [rsp + F_TOKENS], arg5
  shl arg6, 2
  mov [rsp + F_YSTRIDE], arg6
  shr arg4, 5
  mov [rsp + F_BLOCKS], arg4
  imul g2, arg4, %2
  mov [rsp + F_ROWBYTES], g2
  imul g3, arg4, ACT_BLOCK
  mov [rsp + F_TSTRIDE], g3

  ; row offsets min(k, last) * row_bytes, last = min(rows, 8) - 1; store mask
  mov g0, [rsp + F_ROWS]
  cmp g0, 8
  jl .few_rows
  mov g0, 8
.few_rows:
  mov g1, 1
  shlx g1, g1, g0
  dec g1
  mov [rsp + F_MASK], g1
  dec g0
  xor g1, g1
.row_off:
  mov g4, g1
  cmp g4, g0
  cmova g4, g0
  imul g4, g2
  mov [rsp + F_ROW_OFF + 8 * g1], g4
  inc g1
  cmp g1, 8
  jb .row_off

  ; token offsets min(k, last) * token_stride, last = min(n_tokens, 8) - 1
  mov g0, [rsp + F_TOKENS]
  cmp g0, 8
  jl .few_tokens
  mov g0, 8
.few_tokens:
  mov [rsp + F_STORE_T], g0
  dec g0
  xor g1, g1
.tok_off:
  mov g4, g1
  cmp g4, g0
  cmova g4, g0
  imul g4, g3
  mov [rsp + F_TOK_OFF + 8 * g1], g4
  inc g1
  cmp g1, 8
  jb .tok_off

  vpbroadcastd ymm26, [rel vm_sign_bytes]
  mov qword [rsp + F_ROW], 0
.row_group:
  mov g0, [rsp + F_ROW]
  mov g2, [rsp + F_ROWS]
  sub g2, 8
  jl .row_set
  cmp g0, g2
  cmovg g0, g2
.row_set:
  mov [rsp + F_GROUP_ROW], g0
  mov qword [rsp + F_TOKEN], 0
.token_group:
  mov g1, [rsp + F_TOKEN]
  mov g2, [rsp + F_TOKENS]
  sub g2, 8
  jl .token_set
  cmp g1, g2
  cmovg g1, g2
.token_set:
  mov [rsp + F_GROUP_TOKEN], g1
  imul g1, [rsp + F_TSTRIDE]
  add g1, [rsp + F_X]
  mov g0, [rsp + F_GROUP_ROW]
  imul g0, [rsp + F_ROWBYTES]
  add g0, [rsp + F_W]
  mov g4, [rsp + F_BLOCKS]
  vpxord ymm8, ymm8, ymm8
  vpxord ymm9, ymm9, ymm9
  vpxord ymm10, ymm10, ymm10
  vpxord ymm11, ymm11, ymm11
  vpxord ymm12, ymm12, ymm12
  vpxord ymm13, ymm13, ymm13
  vpxord ymm14, ymm14, ymm14
  vpxord ymm15, ymm15, ymm15
.block:
  ; the eight rows' blocks (ymm0..7, unsigned) and scales (xmm25 halves -> ymm24)
  %assign k 0
  %rep 8
    mov g2, [rsp + F_ROW_OFF + 8 * k]
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
    mov g3, [rsp + F_TOK_OFF + 8 * t]
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
    vpslld ymm1, ymm1, %3
    vpsubd ymm0, ymm0, ymm1              ; exact int32 block dots of rows 0..7 with token t
    vcvtdq2ps ymm0, ymm0
    vmulps ymm1, ymm24, [g3 + ACT_D]{1to8}
    vmulps ymm0, ymm0, ymm1
    %assign acc 8 + t
    vaddps ymm%[acc], ymm%[acc], ymm0
    %assign t t + 1
  %endrep
  add g0, %2
  add g1, ACT_BLOCK
  dec g4
  jnz .block

  ; store token k of the group at y + (token + k) * y_stride + row * 4, lanes of real rows
  mov g2, [rsp + F_MASK]
  kmovw k1, g2d
  mov g2, [rsp + F_GROUP_TOKEN]
  imul g2, [rsp + F_YSTRIDE]
  add g2, [rsp + F_Y]
  mov g3, [rsp + F_GROUP_ROW]
  lea g2, [g2 + 4 * g3]
  mov g3, [rsp + F_YSTRIDE]
  mov g4, [rsp + F_STORE_T]
  %assign t 0
  %rep 8
    %assign acc 8 + t
    %assign next t + 2
    vmovups [g2]{k1}, ymm%[acc]
    %if t < 7
      cmp g4, next
      jb .stored
      add g2, g3
    %endif
    %assign t t + 1
  %endrep
.stored:
  mov g2, [rsp + F_TOKEN]
  add g2, 8
  mov [rsp + F_TOKEN], g2
  cmp g2, [rsp + F_TOKENS]
  jl .token_group
  mov g0, [rsp + F_ROW]
  add g0, 8
  mov [rsp + F_ROW], g0
  cmp g0, [rsp + F_ROWS]
  jl .row_group
  add rsp, VM_FRAME
.exit:
  RET
%endmacro

FUNCTION matmul_q8_0_avx512vnni, 7, 7, 16
  MM_VNNI_BODY 8, Q8_BLOCK, 7

FUNCTION matmul_q4_0_avx512vnni, 7, 7, 16
  MM_VNNI_BODY 4, Q4_BLOCK, 3
