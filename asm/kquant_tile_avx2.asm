; K-quant prefill on a transposed 8-row tile, AVX2 + FMA + F16C: Q4_K, Q5_K, Q6_K on GGUF's
; row-major blocks (any alignment). Contract and twins: engine/kernels/kquant_tile.h; the
; skeleton, tile layout and numerics: asm/kquant_tile.inc. This file supplies each type's UNPACK
; (8 rows' super-block -> the tile) and its int16 bound:
;   Q4_K  nibbles 0..15:     8 k-steps of pair sums (8 x 2 x 15 x 127 = 30480) per vpmaddwd
;   Q5_K  0..31:             4 k-steps (4 x 2 x 31 x 127 = 31496)
;   Q6_K  0..63 (q + 32):    2 k-steps (2 x 2 x 63 x 127 = 32004), sub-blocks of 16 values;
;                            the -32 comes off S as 32 (sc . bsums) through the pair table.

%include "kquant_tile.inc"

; ---- Q4_K / Q5_K -----------------------------------------------------------------------------------

; KT_K_SCALES: the 8 rows' 6-bit scales and mins -> KT_SC (8 entries) and KT_PAIR (each min
; weighs its sub-block's two bsums), d and dmin -> KT_D, KT_DMIN.
%macro KT_K_SCALES 0
  %assign kt_r 0
  %rep 8
    KT_ROW_ADDR kt_r
    lea g0, [KT_R]
    K_SCALE_MIN_WORDS 0, 1               ; (g8..g12 scratch)
    vpackuswb xmm0, xmm0, xmm1           ; sc[0..7], m[0..7] as bytes
    vmovdqa [rsp + KT_STAGE_ROWS + 16 * kt_r], xmm0
    %assign kt_r kt_r + 1
  %endrep
  %assign kt_r 0
  %rep 8
    vmovdqa xmm%[kt_r], [rsp + KT_STAGE_ROWS + 16 * kt_r]
    %assign kt_r kt_r + 1
  %endrep
  KT_BYTE_TRANSPOSE
  KT_SCALE_TABLE zx, 0, KT_SC, 8
  KT_SCALE_TABLE zx, 8, KT_PAIR, 8
  KT_HALVES 0, KT_D
  KT_HALVES 2, KT_DMIN
%endmacro

; KT_K_RUNS qs_offset, fifth: run j = sub-block j: the low (even j) or high (odd j) nibbles of
; the rows' qs bytes 32 (j / 2) ..; fifth = 1 (Q5_K): + 16 where bit j of qh[l] (offset 16) is set.
%macro KT_K_RUNS 2
  %assign kt_j 0
  %rep 8
    %assign kt_r 0
    %rep 8
      KT_ROW_ADDR kt_r
      vmovdqu ymm%[kt_r], [KT_R + (%1) + 32 * (kt_j / 2)]
      %if kt_j % 2
        vpsrlw ymm%[kt_r], ymm%[kt_r], 4
      %endif
      vpand ymm%[kt_r], ymm%[kt_r], [rel low_nibble]
      %if %2
        vmovdqu ymm8, [KT_R + 16]
        FIFTH_BIT kt_j, %[kt_r], 8, 8
      %endif
      %assign kt_r kt_r + 1
    %endrep
    KT_DWORD_TRANSPOSE 8 * kt_j
    %assign kt_j kt_j + 1
  %endrep
%endmacro

%macro Q4K_UNPACK 0
  KT_K_SCALES
  KT_K_RUNS 16, 0
%endmacro

%macro Q5K_UNPACK 0
  KT_K_SCALES
  KT_K_RUNS 48, 1
%endmacro

FUNCTION matmul_q4_k_tile_avx2, 7, 15, 16
  KTILE_MATMUL 144, Q4K_UNPACK, 8, 8, 1

FUNCTION matmul_q5_k_tile_avx2, 7, 15, 16
  KTILE_MATMUL 176, Q5K_UNPACK, 4, 8, 1

; ---- Q6_K: run j = chunk k = j % 4 of half h = j / 4 (asm/kquant_matmul_avx2.asm's Q6K_RUN) -------
; q = ql nibble | qh bit pair << 4.

%macro Q6K_UNPACK 0
  %assign kt_r 0
  %rep 8
    KT_ROW_ADDR kt_r
    vmovdqu xmm%[kt_r], [KT_R + 192]     ; the 16 signed scales
    %assign kt_r kt_r + 1
  %endrep
  KT_BYTE_TRANSPOSE
  KT_SCALE_TABLE sx, 0, KT_SC, 16
  KT_PAIR_TABLE
  KT_HALVES 208, KT_D
  %assign kt_j 0
  %rep 8
    %assign kt_h kt_j / 4
    %assign kt_k kt_j % 4
    %assign kt_r 0
    %rep 8
      KT_ROW_ADDR kt_r
      vmovdqu ymm%[kt_r], [KT_R + 64 * kt_h + 32 * (kt_k % 2)]
      %if kt_k >= 2
        vpsrlw ymm%[kt_r], ymm%[kt_r], 4
      %endif
      vpand ymm%[kt_r], ymm%[kt_r], [rel low_nibble]
      vmovdqu ymm8, [KT_R + 128 + 32 * kt_h]
      %if kt_k == 0
        vpsllw ymm8, ymm8, 4
      %elif kt_k == 1
        vpsllw ymm8, ymm8, 2
      %elif kt_k == 3
        vpsrlw ymm8, ymm8, 2
      %endif
      vpand ymm8, ymm8, [rel bits_45]
      vpor ymm%[kt_r], ymm%[kt_r], ymm8
      %assign kt_r kt_r + 1
    %endrep
    KT_DWORD_TRANSPOSE 8 * kt_j
    %assign kt_j kt_j + 1
  %endrep
%endmacro

FUNCTION matmul_q6_k_tile_avx2, 7, 15, 16
  KTILE_MATMUL 210, Q6K_UNPACK, 2, 4, 2
