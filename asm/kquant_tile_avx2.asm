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
; weighs its sub-block's two bsums), d and dmin -> KT_D, KT_DMIN. The 12 packed bytes of the rows
; are transposed first (KT_STAGE + 8 j = byte j of each row), so the unpacking runs on all 8 rows
; at once: with B(j) the 8 rows' byte j, sc[0..3] = B(0..3) & 63, m[0..3] = B(4..7) & 63,
; sc[4..7] = B(8..11) & 15 | (B(0..3) >> 6) << 4, m[4..7] = B(8..11) >> 4 | (B(4..7) >> 6) << 4.
%macro KT_K_SCALES 0
  %assign kt_r 0
  %rep 8
    KT_ROW_ADDR kt_r
    vmovdqu xmm%[kt_r], [KT_R + 4]       ; the 12 bytes (and 4 of qs, unused)
    %assign kt_r kt_r + 1
  %endrep
  KT_BYTE_TRANSPOSE_HALF 1               ; (in registers: a 32-byte load of two 16-byte
  vinserti128 ymm12, ymm8, xmm9, 1       ; stores would wait for them instead of forwarding)
  vmovdqa [rsp + KT_STAGE + 64], ymm12   ; B(8..11)
  KT_BYTE_TRANSPOSE_HALF 0
  vinserti128 ymm0, ymm8, xmm9, 1        ; B(0..3)
  vinserti128 ymm1, ymm10, xmm11, 1      ; B(4..7)
  vmovdqa ymm2, [rsp + KT_STAGE + 64]
  vpand ymm4, ymm0, [rel kt_low6]        ; sc[0..3]
  vpand ymm5, ymm1, [rel kt_low6]        ; m[0..3]
  vpsrlw ymm6, ymm0, 2                   ; (word shifts: the bits crossing bytes are masked off)
  vpand ymm6, ymm6, [rel bits_45]
  vpand ymm7, ymm2, [rel low_nibble]
  vpor ymm6, ymm6, ymm7                  ; sc[4..7]
  vpsrlw ymm7, ymm1, 2
  vpand ymm7, ymm7, [rel bits_45]
  vpsrlw ymm8, ymm2, 4
  vpand ymm8, ymm8, [rel low_nibble]
  vpor ymm7, ymm7, ymm8                  ; m[4..7]
  vmovdqa [rsp + KT_STAGE], ymm4
  vmovdqa [rsp + KT_STAGE + 32], ymm6
  vmovdqa [rsp + KT_STAGE + 64], ymm5
  vmovdqa [rsp + KT_STAGE + 96], ymm7
  KT_SCALE_TABLE zx, 0, KT_SC, 8
  KT_SCALE_TABLE zx, 8, KT_PAIR, 8
  KT_HALVES 0, KT_D
  KT_HALVES 2, KT_DMIN
%endmacro

; Q5_K: run j's fifth bit is bit j of qh[l] (transposed into KT_QH with the quants' byte order).
%macro KT_EMIT_Q5K 2
  vmovdqa ymm11, [rsp + KT_QH + 32 * (%2)]
  vpsrlw ymm10, ymm%1, 4
  vpand ymm%1, ymm%1, [rel low_nibble]
  vpand ymm10, ymm10, [rel low_nibble]
  FIFTH_BIT kt_j, %1, 11, 12
  FIFTH_BIT (kt_j + 1), 10, 11, 12
  vmovdqa [rsp + KT_QS + 32 * (kt_base + (%2))], ymm%1
  vmovdqa [rsp + KT_QS + 32 * (kt_base + 8 + (%2))], ymm10
%endmacro

; KT_K_RUNS qs_offset, EMIT: runs 2p and 2p + 1 (sub-blocks: the low and high nibbles of the rows'
; qs bytes 32 p ..) from one transposition each.
%macro KT_K_RUNS 2
  %assign kt_j 0
  %rep 4
    %assign kt_base 8 * kt_j
    KT_LOAD_ROWS (%1) + 16 * kt_j
    KT_DWORD_TRANSPOSE %2
    %assign kt_j kt_j + 2
  %endrep
%endmacro

%macro Q4K_UNPACK 0
  KT_K_SCALES
  KT_K_RUNS 16, KT_EMIT_NIBBLES
%endmacro

%macro Q5K_UNPACK 0
  KT_K_SCALES
  KT_LOAD_ROWS 16
  KT_DWORD_TRANSPOSE KT_EMIT_QH
  KT_K_RUNS 48, KT_EMIT_Q5K
%endmacro

FUNCTION matmul_q4_k_tile_avx2, 7, 15, 16
  KTILE_MATMUL 144, Q4K_UNPACK, 8, 8, 1

FUNCTION matmul_q5_k_tile_avx2, 7, 15, 16
  KTILE_MATMUL 176, Q5K_UNPACK, 4, 8, 1

; ---- Q6_K: run j = chunk k = j % 4 of half h = j / 4 (asm/kquant_matmul_avx2.asm's Q6K_RUN) -------
; q = ql nibble | qh bit pair << 4.

; KT_EMIT_Q6K shift_low, shift_high: the runs of a 32-byte ql part (low nibbles: run kt_base,
; high: kt_base + 16) with their bit pairs from KT_QH moved to bits 4..5 (shift: + left, - right).
%macro KT_Q6K_BITS 2
  %if %2 > 0
    vpsllw ymm%1, ymm%1, %2
  %elif %2 < 0
    vpsrlw ymm%1, ymm%1, -(%2)
  %endif
  vpand ymm%1, ymm%1, [rel bits_45]
%endmacro
%macro KT_EMIT_Q6K 2
  vmovdqa ymm11, [rsp + KT_QH + 32 * (%2)]
  vmovdqa ymm12, ymm11
  KT_Q6K_BITS 11, kt_shift_low
  KT_Q6K_BITS 12, kt_shift_low - 4
  vpsrlw ymm10, ymm%1, 4
  vpand ymm%1, ymm%1, [rel low_nibble]
  vpand ymm10, ymm10, [rel low_nibble]
  vpor ymm%1, ymm%1, ymm11
  vpor ymm10, ymm10, ymm12
  vmovdqa [rsp + KT_QS + 32 * (kt_base + (%2))], ymm%1
  vmovdqa [rsp + KT_QS + 32 * (kt_base + 16 + (%2))], ymm10
%endmacro

; Q6_K: half h's runs 4h + k; ql bytes 64 h .. hold runs k = 0 (low) and 2 (high), bytes 64 h + 32 ..
; runs 1 and 3; the qh bytes 128 + 32 h their bit pairs 2k, 2k + 1.
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
  %assign kt_h 0
  %rep 2
    KT_LOAD_ROWS 128 + 32 * kt_h
    KT_DWORD_TRANSPOSE KT_EMIT_QH
    %assign kt_base 32 * kt_h
    %assign kt_shift_low 4
    KT_LOAD_ROWS 64 * kt_h
    KT_DWORD_TRANSPOSE KT_EMIT_Q6K
    %assign kt_base 32 * kt_h + 8
    %assign kt_shift_low 2
    KT_LOAD_ROWS 64 * kt_h + 32
    KT_DWORD_TRANSPOSE KT_EMIT_Q6K
    %assign kt_h kt_h + 1
  %endrep
%endmacro

FUNCTION matmul_q6_k_tile_avx2, 7, 15, 16
  KTILE_MATMUL 210, Q6K_UNPACK, 2, 4, 2
