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
; Tails: when rows (tokens) >= the tile, the last group overlaps the previous one (recomputed
; outputs are identical); when fewer, the group repeats the last row (token) and only real rows
; (tokens) are stored. Q4_0 uses an 8-row x 4-token transposed tile (below).

%include "quant_common.inc"

%define arg5 g5           ; n_tokens (g5 is quant_common's t0: saved before t0 is used)
%define arg6 g6           ; y_stride (likewise t1)

RODATA
align 32
mm_ones_i16:     times 16 dw 1
mm_low_nibble:   times 32 db 0x0f
mm_nibble_shift: dq 0, 0, 4, 4          ; vpsrlvq counts: low lane as is, high lane >> 4
mm_lane_index:   dd 0, 1, 2, 3

; Stack frame (bytes from rsp after the prologue's `sub rsp, MM_FRAME`)
%define F_W        0      ; weights, row 0
%define F_X        8      ; ActBlocks, token 0
%define F_Y        16
%define F_ROWS     24
%define F_TOKENS   32
%define F_YSTRIDE  40     ; bytes
%define F_ROWBYTES 48
%define F_TSTRIDE  56     ; bytes of one token's ActBlocks
%define F_BLOCKS   64
%define F_ROW_OFF  72     ; 3 qwords: byte offsets of rows 1..3 of a group from row 0
%define F_ROW      96     ; first row of the current group
%define F_TOKEN    104    ; first token of the current group
%define F_STORE_T  112    ; tokens stored per group: min(n_tokens, 4)
%define F_MASK     128    ; 16 bytes: vmaskmovps lanes of the rows stored per group
%define F_GROUP_ROW   144  ; first row / token of the current group after the tail clamp
%define F_GROUP_TOKEN 152
%define MM_FRAME   160

; Registers of the block loop: g0, g7, g8, g9 = weight block of rows 0..3; g10 = ActBlock of
; token 0; g11..g13 = byte offsets of tokens 1..3 from token 0; g14 = blocks left.
; ymm10..13 = weights (s8) of rows 0..3, ymm14 = [d_w rows 0..3 | same], ymm15 = ones (i16),
; ymm8 = [tokens 0 | 1] x rows 0..3 sums, ymm9 = [tokens 2 | 3].

; LOAD_W_Q8 ymm, row_ptr : the block's 32 int8 weights
%macro LOAD_W_Q8 2
  vmovdqu ymm%1, [%2 + 2]
%endmacro


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

; MATMUL_BODY load_macro, block_bytes
%macro MATMUL_BODY 2
  test arg3, arg3
  jle .exit
  test arg5, arg5
  jle .exit
  sub rsp, MM_FRAME
  mov [rsp + F_W], arg0
  mov [rsp + F_X], arg1
  mov [rsp + F_Y], arg2
  mov [rsp + F_ROWS], arg3
  mov [rsp + F_TOKENS], arg5
  shl arg6, 2
  mov [rsp + F_YSTRIDE], arg6
  shr arg4, 5
  mov [rsp + F_BLOCKS], arg4
  imul t0, arg4, %2
  mov [rsp + F_ROWBYTES], t0
  imul t1, arg4, ACT_BLOCK
  mov [rsp + F_TSTRIDE], t1

  ; row offsets k * row_bytes, k = min(i, rows - 1) when rows < 4; store mask lanes < rows
  mov g1, arg3
  cmp g1, 4
  jl .few_rows
  mov g1, 4
.few_rows:
  vmovd xmm0, g1d
  vpbroadcastd xmm0, xmm0
  vpcmpgtd xmm0, xmm0, [rel mm_lane_index]       ; lane i: i < min(rows, 4)
  vmovdqu [rsp + F_MASK], xmm0
  dec g1                                         ; largest row index of a group
  mov g2, 1
  xor g3, g3
.row_off:
  mov g4, g2
  cmp g4, g1
  cmova g4, g1
  imul g4, t0
  mov [rsp + F_ROW_OFF + 8 * g3], g4
  inc g3
  inc g2
  cmp g2, 4
  jb .row_off

  ; token offsets k * token_stride, k = min(i, n_tokens - 1) when n_tokens < 4
  mov g1, [rsp + F_TOKENS]
  cmp g1, 4
  jl .few_tokens
  mov g1, 4
.few_tokens:
  mov [rsp + F_STORE_T], g1
  dec g1
  mov g2, 1
  cmp g2, g1
  cmova g2, g1
  mov g11, g2
  imul g11, [rsp + F_TSTRIDE]
  mov g2, 2
  cmp g2, g1
  cmova g2, g1
  mov g12, g2
  imul g12, [rsp + F_TSTRIDE]
  mov g2, 3
  cmp g2, g1
  cmova g2, g1
  mov g13, g2
  imul g13, [rsp + F_TSTRIDE]

  vmovdqa ymm15, [rel mm_ones_i16]
  mov qword [rsp + F_ROW], 0
.row_group:
  ; first row of the group: min(row, rows - 4) when rows >= 4 (the last group overlaps)
  mov g1, [rsp + F_ROW]
  mov g2, [rsp + F_ROWS]
  sub g2, 4
  jl .row_set
  cmp g1, g2
  cmovg g1, g2
.row_set:
  mov [rsp + F_GROUP_ROW], g1
  mov qword [rsp + F_TOKEN], 0
.token_group:
  mov g2, [rsp + F_TOKEN]
  mov g3, [rsp + F_TOKENS]
  sub g3, 4
  jl .token_set
  cmp g2, g3
  cmovg g2, g3
.token_set:
  mov [rsp + F_GROUP_TOKEN], g2
  ; pointers: rows (g0, g7, g8, g9), token 0 (g10)
  mov g0, [rsp + F_GROUP_ROW]
  imul g0, [rsp + F_ROWBYTES]
  add g0, [rsp + F_W]
  mov g7, g0
  add g7, [rsp + F_ROW_OFF]
  mov g8, g0
  add g8, [rsp + F_ROW_OFF + 8]
  mov g9, g0
  add g9, [rsp + F_ROW_OFF + 16]
  mov g10, g2
  imul g10, [rsp + F_TSTRIDE]
  add g10, [rsp + F_X]
  mov g14, [rsp + F_BLOCKS]
  vxorps xmm8, xmm8, xmm8
  vxorps xmm9, xmm9, xmm9
.block:
  movzx g1d, word [g0]
  vmovd xmm14, g1d
  vpinsrw xmm14, xmm14, word [g7], 1
  vpinsrw xmm14, xmm14, word [g8], 2
  vpinsrw xmm14, xmm14, word [g9], 3
  vcvtph2ps xmm14, xmm14
  vinsertf128 ymm14, ymm14, xmm14, 1
  %1 10, g0
  %1 11, g7
  %1 12, g8
  %1 13, g9
  TOKEN4 4, g10
  TOKEN4 0, g10 + g11
  ACCUMULATE 8, g10, g10 + g11
  TOKEN4 4, g10 + g12
  TOKEN4 0, g10 + g13
  ACCUMULATE 9, g10 + g12, g10 + g13
  add g0, %2
  add g7, %2
  add g8, %2
  add g9, %2
  add g10, ACT_BLOCK
  dec g14
  jnz .block

  ; store: token k of the group at y + (token + k) * y_stride + row * 4, masked to real rows
  mov g1, [rsp + F_GROUP_TOKEN]
  imul g1, [rsp + F_YSTRIDE]
  add g1, [rsp + F_Y]
  mov g2, [rsp + F_GROUP_ROW]
  lea g1, [g1 + 4 * g2]
  mov g2, [rsp + F_YSTRIDE]
  mov g3, [rsp + F_STORE_T]
  vmovdqu xmm6, [rsp + F_MASK]
  vmaskmovps [g1], xmm6, xmm8
  cmp g3, 2
  jb .stored
  add g1, g2
  vextractf128 xmm0, ymm8, 1
  vmaskmovps [g1], xmm6, xmm0
  cmp g3, 3
  jb .stored
  add g1, g2
  vmaskmovps [g1], xmm6, xmm9
  cmp g3, 4
  jb .stored
  add g1, g2
  vextractf128 xmm0, ymm9, 1
  vmaskmovps [g1], xmm6, xmm0
.stored:
  mov g2, [rsp + F_TOKEN]
  add g2, 4
  mov [rsp + F_TOKEN], g2
  cmp g2, [rsp + F_TOKENS]
  jl .token_group
  mov g1, [rsp + F_ROW]
  add g1, 4
  mov [rsp + F_ROW], g1
  cmp g1, [rsp + F_ROWS]
  jl .row_group
  add rsp, MM_FRAME
.exit:
  RET
%endmacro

FUNCTION matmul_q8_0_avx2, 7, 15, 16
  MATMUL_BODY LOAD_W_Q8, Q8_BLOCK

; ------------------------------------------------------------------------------------------------
; Q4_0: an 8-row x 4-token tile with one row per int32 lane, no horizontal sums (the VNNI
; kernel's scheme on AVX2). The nibbles q (0..15) are unsigned, so vpmaddubsw takes them as
; the u8 operand against the token's dword k broadcast (s8): each i16 is at most 2*15*127 =
; 3810 in magnitude, so the eight k steps add up in i16 without saturating (<= 30480), and one
; vpmaddwd widens them. dot = that - 8 * sum(x), exact.
; ------------------------------------------------------------------------------------------------

; Stack frame of the Q4_0 kernel
%define G_W        0
%define G_X        8
%define G_Y        16
%define G_ROWS     24
%define G_TOKENS   32
%define G_YSTRIDE  40      ; bytes
%define G_ROWBYTES 48
%define G_TSTRIDE  56
%define G_BLOCKS   64
%define G_ROW      72
%define G_TOKEN    80
%define G_GROUP_ROW   88
%define G_GROUP_TOKEN 96
%define G_STORE_T  104     ; min(n_tokens, 4)
%define G_MASK     128     ; 32 bytes: vmaskmovps lanes of the rows stored (lane < min(rows, 8))
%define G_ROW_OFF  160     ; 8 qwords
%define G_TOK_OFF  224     ; 4 qwords
%define G_FRAME    256

; Registers of the block loop: g0 = weight block of the group's row 0, g1 = ActBlock of token 0,
; g2/g3 scratch, g4 = blocks left; ymm8..15 = transposed nibbles (see Q4T_TRANSPOSE for which
; holds dword k), ymm7 = d_w of rows 0..7, ymm3..6 = FP32 sums of tokens 0..3 (lane = row).

; Q4T_TOKEN acc, token : acc += float(dot of rows 0..7 with the token) * (d_w * d_x)
%macro Q4T_TOKEN 2
  mov g3, [rsp + G_TOK_OFF + 8 * %2]
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

FUNCTION matmul_q4_0_avx2, 7, 7, 16
  test arg3, arg3
  jle .exit
  test arg5, arg5
  jle .exit
  sub rsp, G_FRAME
  mov [rsp + G_W], arg0
  mov [rsp + G_X], arg1
  mov [rsp + G_Y], arg2
  mov [rsp + G_ROWS], arg3
  mov [rsp + G_TOKENS], arg5
  shl arg6, 2
  mov [rsp + G_YSTRIDE], arg6
  shr arg4, 5
  mov [rsp + G_BLOCKS], arg4
  imul g2, arg4, Q4_BLOCK
  mov [rsp + G_ROWBYTES], g2
  imul g3, arg4, ACT_BLOCK
  mov [rsp + G_TSTRIDE], g3

  ; row offsets min(k, last) * row_bytes (last = min(rows, 8) - 1); store mask lanes k <= last
  mov g0, [rsp + G_ROWS]
  cmp g0, 8
  jl .few_rows
  mov g0, 8
.few_rows:
  dec g0
  xor g1, g1
.row_off:
  mov g4, g1
  cmp g4, g0
  cmova g4, g0
  imul g4, g2
  mov [rsp + G_ROW_OFF + 8 * g1], g4
  xor g4, g4
  cmp g1, g0
  ja .lane_off
  dec g4
.lane_off:
  mov [rsp + G_MASK + 4 * g1], g4d
  inc g1
  cmp g1, 8
  jb .row_off

  ; token offsets min(k, last) * token_stride (last = min(n_tokens, 4) - 1)
  mov g0, [rsp + G_TOKENS]
  cmp g0, 4
  jl .few_tokens
  mov g0, 4
.few_tokens:
  mov [rsp + G_STORE_T], g0
  dec g0
  xor g1, g1
.tok_off:
  mov g4, g1
  cmp g4, g0
  cmova g4, g0
  imul g4, g3
  mov [rsp + G_TOK_OFF + 8 * g1], g4
  inc g1
  cmp g1, 4
  jb .tok_off

  mov qword [rsp + G_ROW], 0
.row_group:
  mov g0, [rsp + G_ROW]
  mov g2, [rsp + G_ROWS]
  sub g2, 8
  jl .row_set
  cmp g0, g2
  cmovg g0, g2
.row_set:
  mov [rsp + G_GROUP_ROW], g0
  mov qword [rsp + G_TOKEN], 0
.token_group:
  mov g1, [rsp + G_TOKEN]
  mov g2, [rsp + G_TOKENS]
  sub g2, 4
  jl .token_set
  cmp g1, g2
  cmovg g1, g2
.token_set:
  mov [rsp + G_GROUP_TOKEN], g1
  imul g1, [rsp + G_TSTRIDE]
  add g1, [rsp + G_X]
  mov g0, [rsp + G_GROUP_ROW]
  imul g0, [rsp + G_ROWBYTES]
  add g0, [rsp + G_W]
  mov g4, [rsp + G_BLOCKS]
  vxorps xmm3, xmm3, xmm3
  vxorps xmm4, xmm4, xmm4
  vxorps xmm5, xmm5, xmm5
  vxorps xmm6, xmm6, xmm6
.block:
  ; rows 0..7: nibbles (elements 0..31 as bytes) in ymm8..15, d_w halves -> ymm7
  %assign k 0
  %rep 8
    %assign reg 8 + k
    mov g2, [rsp + G_ROW_OFF + 8 * k]
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
  add g0, Q4_BLOCK
  add g1, ACT_BLOCK
  dec g4
  jnz .block

  ; store token k of the group at y + (token + k) * y_stride + row * 4, lanes of real rows
  mov g2, [rsp + G_GROUP_TOKEN]
  imul g2, [rsp + G_YSTRIDE]
  add g2, [rsp + G_Y]
  mov g3, [rsp + G_GROUP_ROW]
  lea g2, [g2 + 4 * g3]
  mov g3, [rsp + G_YSTRIDE]
  mov g4, [rsp + G_STORE_T]
  vmovdqu ymm0, [rsp + G_MASK]
  vmaskmovps [g2], ymm0, ymm3
  cmp g4, 2
  jb .stored
  add g2, g3
  vmaskmovps [g2], ymm0, ymm4
  cmp g4, 3
  jb .stored
  add g2, g3
  vmaskmovps [g2], ymm0, ymm5
  cmp g4, 4
  jb .stored
  add g2, g3
  vmaskmovps [g2], ymm0, ymm6
.stored:
  mov g2, [rsp + G_TOKEN]
  add g2, 4
  mov [rsp + G_TOKEN], g2
  cmp g2, [rsp + G_TOKENS]
  jl .token_group
  mov g0, [rsp + G_ROW]
  add g0, 8
  mov [rsp + G_ROW], g0
  cmp g0, [rsp + G_ROWS]
  jl .row_group
  add rsp, G_FRAME
.exit:
  RET
