; Q8_0 / Q4_0 decode and prefill over x16 tiles (engine/kernels/quant.h, "The x16 tile layout")
; with AVX-512 VNNI on ZMM (needs AVX512F/BW/VL + VNNI). C++ twins: matmul_q8_0_x16_ref and
; matmul_q4_0_x16_ref (engine/kernels/quant_tiles.cpp), matched bit for bit.
;
; Method: a tile is 16 rows; per block column, run k (64 bytes) holds elements 4k..4k+3 of all
; 16 rows as unsigned bytes (Q8_0: q + 128, stored so at load; Q4_0: the nibbles, masked here),
; so one vpdpbusd against the token's dword k broadcast from memory ({1to16}) adds four products
; to each row's int32 lane. Eight of them make every row's block dot; the offset comes off
; exactly (dot = lanes - C * sum(x), C = 128 for Q8_0, 8 for Q4_0, from ActBlock.sum; the
; accumulator starts at -C * sum). Then, as the twin: y += float(dot) * (d_w * d_x), each
; operation rounded on its own, in block order. No horizontal sums, no transposes, and each
; tile is one sequential stream — decode reads at the memory's pace, not the ALUs'.
;
; Tokens go in groups of 8, then 4, then 1, each group one pass over the tile (a tile of a
; 16384-column Q8_0 row set is 272 KiB: later groups find it in L2).

%include "quant_common.inc"

%define arg5 g5           ; n_tokens (then: blocks left in the pass)
%define arg6 g6           ; y_stride (floats, then bytes)

%define X16_Q8_BLOCK 544  ; 16 x 34
%define X16_Q4_BLOCK 288  ; 16 x 18

%ifndef X16_PREFETCH
  %define X16_PREFETCH 4096
%endif

RODATA
x16_low_nibble: dd 0x0f0f0f0f

; Registers through a call:
;   g0 = the tile's first block        g1 = ActBlocks of token 0      g2 = y of the tile's row 0
;   g3 = rows left                     g4 = blocks per row            g6 = y_stride (bytes)
;   g7 = token stride (bytes)          g8 = 3 x token stride
;   g9 = block cursor                  g10 = ActBlocks of the group's token 0 (block 0)
;   g11 / g12 = block cursors of tokens 0 / 4 of the group      g13 = tokens left
;   g14 = y of the group's token 0     [rsp] = n_tokens
;   zmm8..15 = FP32 sums of the group's tokens (lane = row)   zmm16..23 = run k (unsigned)
;   zmm24 = d_w of the 16 rows   zmm29 / zmm30 = 0xf0 / 0x0f bytes (Q4_0)   zmm31 = 0
; Q4_0's high nibbles stay in place (16 q, at most 240: still a u8), and their int32 sum is
; shifted right by 4 — one AND per nibble instead of a shift and an AND.

; X16_TOKEN_ADDR t: the address of token t's current ActBlock
%macro X16_TOKEN_ADDR 1
  %if %1 == 0
    %define X16_T g11
  %elif %1 == 1
    %define X16_T g11 + g7
  %elif %1 == 2
    %define X16_T g11 + 2 * g7
  %elif %1 == 3
    %define X16_T g11 + g8
  %elif %1 == 4
    %define X16_T g12
  %elif %1 == 5
    %define X16_T g12 + g7
  %elif %1 == 6
    %define X16_T g12 + 2 * g7
  %else
    %define X16_T g12 + g8
  %endif
%endmacro

; X16_PASS type (8 or 4), block_bytes, shift (7 or 3), tokens (8, 4 or 1): one pass over the
; tile for the group's tokens; stores their 16 outputs each.
%macro X16_PASS 4
  mov g9, g0
  mov g11, g10
  %if %4 == 8
    lea g12, [g10 + 4 * g7]
  %endif
  mov g5, g4
  %assign t 0
  %rep %4
    %assign acc 8 + t
    vpxord zmm%[acc], zmm%[acc], zmm%[acc]
    %assign t t + 1
  %endrep
%%block:
  %if X16_PREFETCH > 0
    %assign line 0
    %rep (%2 + 63) / 64
      prefetcht0 [g9 + X16_PREFETCH + 64 * line]
      %assign line line + 1
    %endrep
  %endif
  vcvtph2ps zmm24, [g9]                          ; the 16 rows' d_w
  %if %1 == 8
    %assign k 0
    %rep 8
      %assign reg 16 + k
      vmovdqu32 zmm%[reg], [g9 + 32 + 64 * k]
      %assign k k + 1
    %endrep
  %else
    %assign m 0
    %rep 4
      %assign lo 16 + m
      %assign hi 20 + m
      vmovdqu32 zmm25, [g9 + 32 + 64 * m]
      vpandd zmm%[lo], zmm25, zmm30              ; elements 4m..4m+3
      vpandd zmm%[hi], zmm25, zmm29              ; 16 x elements 16+4m..16+4m+3 (unshifted)
      %assign m m + 1
    %endrep
  %endif
  %assign t 0
  %rep %4
    X16_TOKEN_ADDR t
    %assign acc 8 + t
    vpsubd zmm0, zmm31, [X16_T + ACT_SUM]{1to16}
    vpslld zmm0, zmm0, %3                        ; -C * sum(x)
    vpxord zmm1, zmm1, zmm1
    vpdpbusd zmm0, zmm16, [X16_T + ACT_QS + 0]{1to16}
    vpdpbusd zmm1, zmm17, [X16_T + ACT_QS + 4]{1to16}
    vpdpbusd zmm0, zmm18, [X16_T + ACT_QS + 8]{1to16}
    vpdpbusd zmm1, zmm19, [X16_T + ACT_QS + 12]{1to16}
    %if %1 == 8
      vpdpbusd zmm0, zmm20, [X16_T + ACT_QS + 16]{1to16}
      vpdpbusd zmm1, zmm21, [X16_T + ACT_QS + 20]{1to16}
      vpdpbusd zmm0, zmm22, [X16_T + ACT_QS + 24]{1to16}
      vpdpbusd zmm1, zmm23, [X16_T + ACT_QS + 28]{1to16}
      vpaddd zmm0, zmm0, zmm1                    ; exact int32 block dots of the 16 rows
    %else
      vpaddd zmm0, zmm0, zmm1
      vpxord zmm1, zmm1, zmm1                    ; high nibbles, 16 x each product
      vpdpbusd zmm1, zmm20, [X16_T + ACT_QS + 16]{1to16}
      vpdpbusd zmm1, zmm21, [X16_T + ACT_QS + 20]{1to16}
      vpdpbusd zmm1, zmm22, [X16_T + ACT_QS + 24]{1to16}
      vpdpbusd zmm1, zmm23, [X16_T + ACT_QS + 28]{1to16}
      vpsrad zmm1, zmm1, 4                       ; exact: a multiple of 16
      vpaddd zmm0, zmm0, zmm1                    ; exact int32 block dots of the 16 rows
    %endif
    vcvtdq2ps zmm0, zmm0
    vmulps zmm1, zmm24, [X16_T + ACT_D]{1to16}   ; d_w * d_x
    vmulps zmm0, zmm0, zmm1
    vaddps zmm%[acc], zmm%[acc], zmm0
    %assign t t + 1
  %endrep
  add g9, %2
  add g11, ACT_BLOCK
  %if %4 == 8
    add g12, ACT_BLOCK
  %endif
  dec g5
  jnz %%block
  mov g5, g14
  %assign t 0
  %rep %4
    %assign acc 8 + t
    vmovups [g5], zmm%[acc]
    %if t + 1 < %4
      add g5, g6
    %endif
    %assign t t + 1
  %endrep
%endmacro

; X16_BODY type, block_bytes, shift
%macro X16_BODY 3
  test arg3, arg3
  jle .exit
  test arg5, arg5
  jle .exit
  sub rsp, 16
  mov [rsp], arg5
  shr arg4, 5                                    ; blocks per row
  imul g7, arg4, ACT_BLOCK
  lea g8, [g7 + 2 * g7]
  shl arg6, 2
  vpxord zmm31, zmm31, zmm31
  %if %1 == 4
    vpbroadcastd zmm30, [rel x16_low_nibble]
    vpslld zmm29, zmm30, 4                       ; 0xf0 bytes
  %endif
.tile:
  mov g13, [rsp]
  mov g10, g1
  mov g14, g2
.group8:
  cmp g13, 8
  jb .group4
  X16_PASS %1, %2, %3, 8
  sub g13, 8
  lea g10, [g10 + 8 * g7]
  lea g14, [g14 + 8 * g6]
  jmp .group8
.group4:
  cmp g13, 4
  jb .group1
  X16_PASS %1, %2, %3, 4
  sub g13, 4
  lea g10, [g10 + 4 * g7]
  lea g14, [g14 + 4 * g6]
.group1:
  test g13, g13
  jz .tile_done
  X16_PASS %1, %2, %3, 1
  dec g13
  add g10, g7
  add g14, g6
  jmp .group1
.tile_done:
  mov g0, g9                                     ; the next tile follows this one
  add g2, 64
  sub arg3, 16
  jg .tile
  add rsp, 16
.exit:
  RET
%endmacro

FUNCTION matmul_q8_0_x16_avx512vnni, 7, 15, 16
  X16_BODY 8, X16_Q8_BLOCK, 7

FUNCTION matmul_q4_0_x16_avx512vnni, 7, 15, 16
  X16_BODY 4, X16_Q4_BLOCK, 3
