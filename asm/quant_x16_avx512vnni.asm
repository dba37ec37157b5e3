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

%include "quant_x16.inc"

; Software prefetch: distance in bytes ahead of the block (0: none) and instruction.
%ifndef X16_PREFETCH
  %define X16_PREFETCH 0
%endif
%ifndef X16_PREFETCH_INSN
  %define X16_PREFETCH_INSN prefetcht0
%endif

; X16_PREFETCH_BLOCK pointer, block_bytes: prefetch the lines of the block X16_PREFETCH ahead
%macro X16_PREFETCH_BLOCK 2
  %if X16_PREFETCH > 0
    %assign line 0
    %rep (%2 + 63) / 64
      X16_PREFETCH_INSN [%1 + X16_PREFETCH + 64 * line]
      %assign line line + 1
    %endrep
  %endif
%endmacro

RODATA
x16_low_nibble: dd 0x0f0f0f0f

; Registers through a call:
;   the general-purpose ones as asm/quant_x16.inc says (one-token decode: g9 + g12 = the
;   second stream's block cursor, g8 = the y offset of its tile)
;   zmm8..15 = FP32 sums of the group's tokens (lane = row)
;   register set 0: runs in zmm16..23, d_w in zmm24, scratch zmm0, zmm1; set 1 (odd tiles of a
;   multi-tile decode, whose sums are zmm8..11): runs in zmm12..15, zmm4..7, d_w zmm28, scratch
;   zmm2, zmm3    zmm25 = loaded Q4_0 run   zmm29 / zmm30 = 0xf0 / 0x0f bytes   zmm31 = 0
; Q4_0's high nibbles stay in place (16 q, at most 240: still a u8) and their int32 sum, which
; starts at -16 * 8 * sum(x), is shifted right by 4 (exact: a multiple of 16) — one AND per
; nibble instead of a shift and an AND.

; X16_WREG k: X16_W = the register of run k (elements 4k..4k+3) of the loaded block
%macro X16_WREG 1
  %assign X16_W 16 + %1
%endmacro

; X16_LOAD_BLOCK type (8 or 4), block pointer: the block's 16 d_w (zmm24) and its eight runs as
; unsigned bytes (zmm16..23)
%macro X16_LOAD_BLOCK 2
  vcvtph2ps zmm24, [%2]
  %if %1 == 8
    %assign k 0
    %rep 8
      X16_WREG k
      vmovdqu32 zmm%[X16_W], [%2 + 32 + 64 * k]
      %assign k k + 1
    %endrep
  %else
    %assign m 0
    %rep 4
      X16_WREG m
      %assign lo X16_W
      X16_WREG m + 4
      %assign hi X16_W
      vmovdqu32 zmm25, [%2 + 32 + 64 * m]
      vpandd zmm%[lo], zmm25, zmm30              ; elements 4m..4m+3
      vpandd zmm%[hi], zmm25, zmm29              ; 16 x elements 16+4m..16+4m+3
      %assign m m + 1
    %endrep
  %endif
%endmacro

; X16_TOKEN_DOT type, acc: the loaded block's exact int32 dots of the 16 rows with the token at
; X16_T (in zmm0, zmm1), then zmm<acc> += float(dot) * (d_w * d_x)
%macro X16_TOKEN_DOT 2
  %if %1 == 8
    vpsubd zmm0, zmm31, [X16_T + ACT_SUM]{1to16}
    vpslld zmm0, zmm0, 7                       ; -128 * sum(x): the runs hold q + 128
    vpxord zmm1, zmm1, zmm1
    %assign k 0
    %rep 8
      X16_WREG k
      %if k % 2 == 0
        vpdpbusd zmm0, zmm%[X16_W], [X16_T + ACT_QS + 4 * k]{1to16}
      %else
        vpdpbusd zmm1, zmm%[X16_W], [X16_T + ACT_QS + 4 * k]{1to16}
      %endif
      %assign k k + 1
    %endrep
  %else
    vpxord zmm0, zmm0, zmm0
    vpsubd zmm1, zmm31, [X16_T + ACT_SUM]{1to16}
    vpslld zmm1, zmm1, 7                       ; 16 x (-8 * sum(x))
    %assign k 0
    %rep 8
      X16_WREG k
      %if k < 4
        vpdpbusd zmm0, zmm%[X16_W], [X16_T + ACT_QS + 4 * k]{1to16}
      %else
        vpdpbusd zmm1, zmm%[X16_W], [X16_T + ACT_QS + 4 * k]{1to16}
      %endif
      %assign k k + 1
    %endrep
    vpsrad zmm1, zmm1, 4
  %endif
  vpaddd zmm0, zmm0, zmm1                     ; exact int32 block dots of the 16 rows
  vcvtdq2ps zmm0, zmm0
  vmulps zmm1, zmm24, [X16_T + ACT_D]{1to16}    ; d_w * d_x
  vmulps zmm0, zmm0, zmm1
  vaddps zmm%2, zmm%2, zmm0
%endmacro

; X16_PASS type, block_bytes, tokens (8, 4 or 1): one pass over the tile for the group's
; tokens; stores their 16 outputs each.
%macro X16_PASS 3
  mov g9, g0
  mov g11, g10
  %if %3 == 8
    lea g12, [g10 + 4 * g7]
  %endif
  mov g5, g4
  %assign t 0
  %rep %3
    %assign acc 8 + t
    vpxord zmm%[acc], zmm%[acc], zmm%[acc]
    %assign t t + 1
  %endrep
%%block:
  X16_PREFETCH_BLOCK g9, %2
  X16_LOAD_BLOCK %1, g9
  %assign t 0
  %rep %3
    X16_TOKEN_ADDR t
    %assign acc 8 + t
    X16_TOKEN_DOT %1, acc
    %assign t t + 1
  %endrep
  add g9, %2
  add g11, ACT_BLOCK
  %if %3 == 8
    add g12, ACT_BLOCK
  %endif
  dec g5
  jnz %%block
  mov g5, g14
  %assign t 0
  %rep %3
    %assign acc 8 + t
    vmovups [g5], zmm%[acc]
    %if t + 1 < %3
      add g5, g6
    %endif
    %assign t t + 1
  %endrep
%endmacro

; X16_TILE_ADDR i: X16_P = the block cursor of stream i (0 or 1) of X16_DECODE2: g9 + i x g12
%macro X16_TILE_ADDR 1
  %if %1 == 0
    %define X16_P g9
  %else
    %define X16_P g9 + g12
  %endif
%endmacro

; X16_DECODE2 type, block_bytes: one token over two tiles g12 bytes apart (two sequential
; streams: X16_CHUNKS in asm/quant_x16.inc), block column by block column; their 16 outputs
; each go to g14 and g14 + g8. Leaves g9 at the end of the first tile.
%macro X16_DECODE2 2
  mov g9, g0
  mov g11, g10
  mov g5, g4
  %assign i 0
  %rep 2
    %assign acc 8 + i
    vpxord zmm%[acc], zmm%[acc], zmm%[acc]
    %assign i i + 1
  %endrep
  X16_TOKEN_ADDR 0
%%block:
  %assign i 0
  %rep 2
    X16_TILE_ADDR i
    %assign acc 8 + i
    X16_PREFETCH_BLOCK X16_P, %2
    X16_LOAD_BLOCK %1, X16_P
    X16_TOKEN_DOT %1, acc
    %assign i i + 1
  %endrep
  add g9, %2
  add g11, ACT_BLOCK
  dec g5
  jnz %%block
  vmovups [g14], zmm8
  vmovups [g14 + g8], zmm9
%endmacro

; X16_SETUP type: the constant registers (zmm31 = 0; Q4_0: the nibble masks)
%macro X16_SETUP 1
  vpxord zmm31, zmm31, zmm31
  %if %1 == 4
    vpbroadcastd zmm30, [rel x16_low_nibble]
    vpslld zmm29, zmm30, 4                       ; 0xf0 bytes
  %endif
%endmacro

FUNCTION matmul_q8_0_x16_avx512vnni, 7, 15, 16
  X16_TILE_LOOP 8, X16_Q8_BLOCK, X16_PASS, 8, X16_DECODE2, X16_SETUP

FUNCTION matmul_q4_0_x16_avx512vnni, 7, 15, 16
  X16_TILE_LOOP 4, X16_Q4_BLOCK, X16_PASS, 8, X16_DECODE2, X16_SETUP
