; Q8_0 / Q4_0 prefill kernels (quantized matrix x many int8-quantized tokens), AVX2 + FMA + F16C.
; Contracts and C++ twins: engine/kernels/quant.h (matmul_q8_0_ref, matmul_q4_0_ref).
;
; void magnetar_matmul_q8_0_avx2(const void* w, const ActBlock* x, float* y, int64_t rows,
;                                int64_t cols, int64_t n_tokens, int64_t y_stride)
; (and _q4_0_): y[t * y_stride + r] = row r of w . token t of x, for r < rows, t < n_tokens.
; x holds n_tokens tokens of cols / 32 ActBlocks each, back to back.
;
; Q8_0 method: a 4-row x 4-token register tile. Per 32-block, each weight block feeds four
; tokens and each activation block four rows. A pair's block dot product
; is exact int32 (sign trick + vpmaddubsw + vpmaddwd, then vphaddd / vperm2i128 gather eight
; pairs' sums into one register), then float(dot) * (d_w * d_x) is added to the FP32 sum with
; separate roundings, in block order: bit for bit the matvec twin's arithmetic per token.
; Q4_0 uses an 8-row x 4-token transposed tile (below). The frame, offset tables, group loops and
; tails are quant_matmul.inc's QUANT_MATMUL; this file supplies the tiles and the masked stores.

%include "quant_matmul.inc"

RODATA
align 32
mm_ones_i16:     times 16 dw 1
mm_low_nibble:   times 32 db 0x0f
mm_nibble_shift: dq 0, 0, 4, 4          ; vpsrlvq counts: low lane as is, high lane >> 4
mm_lane_index:   dd 0, 1, 2, 3, 4, 5, 6, 7

; MM_LANE_MASK (QUANT_MATMUL's ROW_MASK): [rsp + MM_LANES] lane k = all ones when k < g0 (the
; rows a group stores), for vmaskmovps.
%macro MM_LANE_MASK 0
  vmovd xmm0, g0d
  vpbroadcastd ymm0, xmm0
  vpcmpgtd ymm0, ymm0, [rel mm_lane_index]
  vmovdqu [rsp + MM_LANES], ymm0
%endmacro

; MM_STORE4 mask, s0, s1, s2, s3 (QUANT_MATMUL's STORE for four tokens): token k's sums s_k
; (lane = row) at y + (group token + k) * y_stride + group row * 4, vmaskmovps'd to real rows.
%macro MM_STORE4 5
  MM_STORE_ADDRESS
  vmaskmovps [g2], %1, %2
  MM_NEXT_TOKEN 2
  vmaskmovps [g2], %1, %3
  MM_NEXT_TOKEN 3
  vmaskmovps [g2], %1, %4
  MM_NEXT_TOKEN 4
  vmaskmovps [g2], %1, %5
%endmacro

; ------------------------------------------------------------------------------------------------
; Q8_0: a 4-row x 4-token tile.
; Registers of the block loop: g0 = weight block of row 0, rows 1..3 at g0 + g7, g8, g9;
; g1 = ActBlock of token 0, tokens 1..3 at g1 + g11, g12, g13; g10 scratch; g4 = blocks left.
; ymm10..13 = weights (s8) of rows 0..3, ymm14 = [d_w rows 0..3 | same], ymm15 = ones (i16),
; ymm8 = [tokens 0 | 1] x rows 0..3 sums, ymm9 = [tokens 2 | 3].
; ------------------------------------------------------------------------------------------------

; PAIR ymm_out, ymm_w, x_qs_addr : int32 lanes of w . x (ymm7 = |x|); the sign of x moves onto w
%macro PAIR 3
  vpsignb ymm%1, ymm%2, [%3]
  vpmaddubsw ymm%1, ymm7, ymm%1
  vpmaddwd ymm%1, ymm%1, ymm15
%endmacro

; TOKEN4 ymm_out, act_addr : ymm_out = per 128-bit half, the four rows' partial dots with
; this token ([r0 r1 r2 r3] of each half; the halves sum to the block dot products)
%macro TOKEN4 2
  vpabsb ymm7, [%2 + ACT_QS]
  PAIR 0, 10, %2 + ACT_QS
  PAIR 1, 11, %2 + ACT_QS
  PAIR 2, 12, %2 + ACT_QS
  PAIR 3, 13, %2 + ACT_QS
  vphaddd ymm0, ymm0, ymm1
  vphaddd ymm2, ymm2, ymm3
  vphaddd ymm%1, ymm0, ymm2
%endmacro

; ACCUMULATE acc, act_a, act_b : two tokens' partials (ymm4 = token a, ymm0 = token b) ->
; acc += float(dot) * (d_w * d_x), lanes [a: rows 0..3 | b: rows 0..3]
%macro ACCUMULATE 3
  vperm2i128 ymm1, ymm4, ymm0, 0x20
  vperm2i128 ymm2, ymm4, ymm0, 0x31
  vpaddd ymm1, ymm1, ymm2
  vcvtdq2ps ymm1, ymm1
  vbroadcastss ymm2, [%2 + ACT_D]
  vbroadcastss ymm3, [%3 + ACT_D]
  vblendps ymm2, ymm2, ymm3, 0xf0
  vmulps ymm2, ymm2, ymm14
  vmulps ymm1, ymm1, ymm2
  vaddps ymm%1, ymm%1, ymm1
%endmacro

; Q8_SETUP: the offsets of rows 1..3 and tokens 1..3 in registers, the i16 ones
%macro Q8_SETUP 0
  mov g7, [rsp + MM_ROW_OFF + 8]
  mov g8, [rsp + MM_ROW_OFF + 16]
  mov g9, [rsp + MM_ROW_OFF + 24]
  mov g11, [rsp + MM_TOK_OFF + 8]
  mov g12, [rsp + MM_TOK_OFF + 16]
  mov g13, [rsp + MM_TOK_OFF + 24]
  vmovdqa ymm15, [rel mm_ones_i16]
%endmacro

%macro Q8_GROUP 0
  vxorps xmm8, xmm8, xmm8
  vxorps xmm9, xmm9, xmm9
%endmacro

%macro Q8_BLOCK_COLUMN 0
  movzx g10d, word [g0]
  vmovd xmm14, g10d
  vpinsrw xmm14, xmm14, word [g0 + g7], 1
  vpinsrw xmm14, xmm14, word [g0 + g8], 2
  vpinsrw xmm14, xmm14, word [g0 + g9], 3
  vcvtph2ps xmm14, xmm14
  vinsertf128 ymm14, ymm14, xmm14, 1
  vmovdqu ymm10, [g0 + 2]
  vmovdqu ymm11, [g0 + g7 + 2]
  vmovdqu ymm12, [g0 + g8 + 2]
  vmovdqu ymm13, [g0 + g9 + 2]
  TOKEN4 4, g1
  TOKEN4 0, g1 + g11
  ACCUMULATE 8, g1, g1 + g11
  TOKEN4 4, g1 + g12
  TOKEN4 0, g1 + g13
  ACCUMULATE 9, g1 + g12, g1 + g13
%endmacro

; Q8_STORE: the group's four tokens ([tokens 0 | 1] in ymm8, [2 | 3] in ymm9), masked to real rows
%macro Q8_STORE 0
  vmovdqu xmm6, [rsp + MM_LANES]
  vextractf128 xmm0, ymm8, 1
  vextractf128 xmm1, ymm9, 1
  MM_STORE4 xmm6, xmm8, xmm0, xmm9, xmm1
%endmacro

FUNCTION matmul_q8_0_avx2, 7, 14, 16
  QUANT_MATMUL 4, 4, Q8_BLOCK, MM_FRAME_LANES, MM_LANE_MASK, Q8_SETUP, Q8_GROUP, Q8_BLOCK_COLUMN, Q8_STORE

; ------------------------------------------------------------------------------------------------
; Q4_0: an 8-row x 4-token tile with one row per int32 lane, no horizontal sums (the VNNI
; kernel's scheme on AVX2). The nibbles q (0..15) are unsigned, so vpmaddubsw takes them as
; the u8 operand against the token's dword k broadcast (s8): each i16 is at most 2*15*127 =
; 3810 in magnitude, so the eight k steps add up in i16 without saturating (<= 30480), and one
; vpmaddwd widens them. dot = that - 8 * sum(x), exact.
; ------------------------------------------------------------------------------------------------

; Registers of the block loop: g0 = weight block of the group's row 0, g1 = ActBlock of token 0,
; g2/g3 scratch, g4 = blocks left; ymm8..15 = transposed nibbles (see the transpose for which
; holds dword k), ymm7 = d_w of rows 0..7, ymm3..6 = FP32 sums of tokens 0..3 (lane = row).

; Q4T_TOKEN acc, token : acc += float(dot of rows 0..7 with the token) * (d_w * d_x)
%macro Q4T_TOKEN 2
  mov g3, [rsp + MM_TOK_OFF + 8 * %2]
  add g3, g1
  vpbroadcastd ymm1, [g3 + ACT_QS + 0]
  vpmaddubsw ymm0, ymm8, ymm1
  vpbroadcastd ymm1, [g3 + ACT_QS + 4]
  vpmaddubsw ymm2, ymm10, ymm1
  vpbroadcastd ymm1, [g3 + ACT_QS + 8]
  vpmaddubsw ymm1, ymm9, ymm1
  vpaddw ymm0, ymm0, ymm1
  vpbroadcastd ymm1, [g3 + ACT_QS + 12]
  vpmaddubsw ymm1, ymm11, ymm1
  vpaddw ymm2, ymm2, ymm1
  vpbroadcastd ymm1, [g3 + ACT_QS + 16]
  vpmaddubsw ymm1, ymm12, ymm1
  vpaddw ymm0, ymm0, ymm1
  vpbroadcastd ymm1, [g3 + ACT_QS + 20]
  vpmaddubsw ymm1, ymm14, ymm1
  vpaddw ymm2, ymm2, ymm1
  vpbroadcastd ymm1, [g3 + ACT_QS + 24]
  vpmaddubsw ymm1, ymm13, ymm1
  vpaddw ymm0, ymm0, ymm1
  vpbroadcastd ymm1, [g3 + ACT_QS + 28]
  vpmaddubsw ymm1, ymm15, ymm1
  vpaddw ymm2, ymm2, ymm1
  vpaddw ymm0, ymm0, ymm2
  vpmaddwd ymm0, ymm0, [rel mm_ones_i16]
  vpbroadcastd ymm1, [g3 + ACT_SUM]
  vpslld ymm1, ymm1, 3
  vpsubd ymm0, ymm0, ymm1
  vcvtdq2ps ymm0, ymm0
  vbroadcastss ymm1, [g3 + ACT_D]
  vmulps ymm1, ymm7, ymm1
  vmulps ymm0, ymm0, ymm1
  vaddps ymm%1, ymm%1, ymm0
%endmacro

%macro Q4_NO_SETUP 0
%endmacro

%macro Q4_GROUP 0
  vxorps xmm3, xmm3, xmm3
  vxorps xmm4, xmm4, xmm4
  vxorps xmm5, xmm5, xmm5
  vxorps xmm6, xmm6, xmm6
%endmacro

%macro Q4_BLOCK_COLUMN 0
  ; rows 0..7: nibbles (elements 0..31 as bytes) in ymm8..15, d_w halves -> ymm7
  %assign k 0
  %rep 8
    %assign reg 8 + k
    mov g2, [rsp + MM_ROW_OFF + 8 * k]
    add g2, g0
    %if k == 0
      movzx g3d, word [g2]
      vmovd xmm7, g3d
    %else
      vpinsrw xmm7, xmm7, word [g2], k
    %endif
    vbroadcasti128 ymm%[reg], [g2 + 2]
    vpsrlvq ymm%[reg], ymm%[reg], [rel mm_nibble_shift]
    vpand ymm%[reg], ymm%[reg], [rel mm_low_nibble]
    %assign k k + 1
  %endrep
  vcvtph2ps ymm7, xmm7
  ; 8 x 8 dword transpose in place (ymm0 spare). Result: dword k of rows 0..7 in
  ; k0: ymm8, k1: ymm10, k2: ymm9, k3: ymm11, k4: ymm12, k5: ymm14, k6: ymm13, k7: ymm15.
  vpunpckhdq ymm0, ymm8, ymm9
  vpunpckldq ymm8, ymm8, ymm9
  vmovdqa ymm9, ymm0
  vpunpckhdq ymm0, ymm10, ymm11
  vpunpckldq ymm10, ymm10, ymm11
  vmovdqa ymm11, ymm0
  vpunpckhdq ymm0, ymm12, ymm13
  vpunpckldq ymm12, ymm12, ymm13
  vmovdqa ymm13, ymm0
  vpunpckhdq ymm0, ymm14, ymm15
  vpunpckldq ymm14, ymm14, ymm15
  vmovdqa ymm15, ymm0
  vpunpckhqdq ymm0, ymm8, ymm10
  vpunpcklqdq ymm8, ymm8, ymm10
  vmovdqa ymm10, ymm0
  vpunpckhqdq ymm0, ymm9, ymm11
  vpunpcklqdq ymm9, ymm9, ymm11
  vmovdqa ymm11, ymm0
  vpunpckhqdq ymm0, ymm12, ymm14
  vpunpcklqdq ymm12, ymm12, ymm14
  vmovdqa ymm14, ymm0
  vpunpckhqdq ymm0, ymm13, ymm15
  vpunpcklqdq ymm13, ymm13, ymm15
  vmovdqa ymm15, ymm0
  vperm2i128 ymm0, ymm8, ymm12, 0x31
  vperm2i128 ymm8, ymm8, ymm12, 0x20
  vmovdqa ymm12, ymm0
  vperm2i128 ymm0, ymm10, ymm14, 0x31
  vperm2i128 ymm10, ymm10, ymm14, 0x20
  vmovdqa ymm14, ymm0
  vperm2i128 ymm0, ymm9, ymm13, 0x31
  vperm2i128 ymm9, ymm9, ymm13, 0x20
  vmovdqa ymm13, ymm0
  vperm2i128 ymm0, ymm11, ymm15, 0x31
  vperm2i128 ymm11, ymm11, ymm15, 0x20
  vmovdqa ymm15, ymm0
  Q4T_TOKEN 3, 0
  Q4T_TOKEN 4, 1
  Q4T_TOKEN 5, 2
  Q4T_TOKEN 6, 3
%endmacro

; Q4_STORE: the group's four tokens (ymm3..6, lane = row), lanes of real rows
%macro Q4_STORE 0
  vmovdqu ymm0, [rsp + MM_LANES]
  MM_STORE4 ymm0, ymm3, ymm4, ymm5, ymm6
%endmacro

FUNCTION matmul_q4_0_avx2, 7, 7, 16
  QUANT_MATMUL 8, 4, Q4_BLOCK, MM_FRAME_LANES, MM_LANE_MASK, Q4_NO_SETUP, Q4_GROUP, Q4_BLOCK_COLUMN, Q4_STORE
