; K-quant prefill on a transposed 16-row tile, AVX-512 (F, BW, VL) + VNNI: Q4_K, Q5_K, Q6_K and
; IQ4_XS on GGUF's row-major blocks (any alignment). Contract and twins: engine/kernels/kquant_tile.h;
; the skeleton, tile and numerics: asm/kquant_tile.inc; the quants' UNPACK pieces (RUNS):
; asm/kquant_tile_unpack.inc, here on ZMM. k-step k of the tile is one ZMM whose dword r holds
; values 4k..4k + 3 of row r, as the Q4_0 x16 tiles' runs, so a token's dword k meets all 16 rows
; through vpdpbusd's embedded broadcast ({1to16}): one instruction per 64 products, no broadcast
; instruction, and no fold of lanes afterwards (one lane per row). Per token and scale entry
; (sub-block) the vpdpbusd sums stay int32 (two chains, added) and take the row's scale by one
; vpmulld, so no type has an int16 bound to keep. The int32 sums per row and token are the YMM
; pass's S exactly (only integer sums are reordered), and the float work is the same.
; The scales of the 16 rows are unpacked at once (KTZ_*_SCALES): the rows' header bytes
; transposed into B(j) = byte j of the 16 rows, the type's fields decoded on 16 lanes, and every
; tile entry written once, whole (an entry stored in two halves would not forward to the pass's
; 64-byte loads).
; Measured: the two 512-bit multiply pipes of Zen 5 take vpdpbusd, vpdpwssd, vpmulld and the
; float multiplies alike, so the pass counts those per product (asm/README.md).
; IQ4_XS (no AVX2 transposed tile: its codebook is signed, and vpmaddubsw needs one unsigned
; operand): the tile holds the codebook value + 128 (1..241), the sub-block's vpdpbusd sums (up to
; 32 x 241 x 127) take vpmulld with the signed scale, and S -= 128 (scales . bsums) (fix 3).

%define KT_TILE_ROWS 16
%include "kquant_tile_unpack.inc"

; KTZ_TOKEN t, low, high: KT_T = token t's address (t < 4 from low, t >= 4 from high; g7 = token
; stride, g8 = 3 x stride)
%macro KTZ_TOKEN 3
  %if %1 < 4
    KT_TOKEN %1, %2
  %else
    KT_TOKEN %1 - 4, %3
  %endif
%endmacro

; KT_PASS_Z tokens (8, 4 or 1), chains, sub, fix: the 16-row pass (KTILE_MATMUL's PASS).
;   chains  vpdpbusd partials per token and scale entry (1 or 2: k-steps alternate between them,
;           two dependency chains of half the length), added, then one vpmulld by the entry
;   sub     k-steps per scale entry (8: 32-value sub-blocks; 4: Q6_K's 16)
;   fix     as KT_PASS (3: S -= 128 (KT_PAIR . bsums), the tile holding quants + 128)
; Registers: zmm16..23 = the tokens' S (lane r = row r), zmm24..31 and zmm2..9 their partials,
; zmm0 / zmm1 = the k-step's quants (alternating); g1 / g10 = tokens 0 / 4's qs at the k-step.
%macro KT_PASS_Z 4
  lea g9, [rsp + KT_QS]
  lea g0, [rsp + KT_SC]
  lea g1, [g11 + ACTK_QS]
  %if %1 > 4
    lea g10, [g1 + 4 * g7]
  %endif
  lea g2, [rsp + KT_QS + 64 * KT_TS]
  %assign kt_t 0
  %rep %1
    %assign kt_s 16 + kt_t
    vpxord xmm%[kt_s], xmm%[kt_s], xmm%[kt_s]
    %assign kt_t kt_t + 1
  %endrep
%%steps:                                           ; 8 k-steps (32 values) per iteration
  %assign kt_k 0
  %rep 8
    %assign kt_q kt_k % 2
    vmovdqa64 zmm%[kt_q], [g9 + KT_TS * kt_k]
    %assign kt_c kt_k % (%2)                       ; the k-step's chain
    %assign kt_t 0
    %rep %1
      KTZ_TOKEN kt_t, g1, g10
      %assign kt_s 16 + kt_t
      %assign kt_u 24 + kt_t                       ; chain 0's partial; chain 1's: kt_v
      %assign kt_v 2 + kt_t
      %if kt_c
        %assign kt_p kt_v
      %else
        %assign kt_p kt_u
      %endif
      %if kt_k % (%3) == kt_c
        vpxord xmm%[kt_p], xmm%[kt_p], xmm%[kt_p]
      %endif
      vpdpbusd zmm%[kt_p], zmm%[kt_q], [KT_T + 4 * kt_k]{1to16}
      %if (kt_k + 1) % (%3) == 0
        %if (%2) > 1
          vpaddd zmm%[kt_u], zmm%[kt_u], zmm%[kt_v]
        %endif
        vpmulld zmm%[kt_u], zmm%[kt_u], [g0 + KT_TS * (kt_k / (%3))]
        vpaddd zmm%[kt_s], zmm%[kt_s], zmm%[kt_u]
      %endif
      %assign kt_t kt_t + 1
    %endrep
    %assign kt_k kt_k + 1
  %endrep
  add g9, 8 * KT_TS
  add g0, KT_TS * (8 / (%3))
  add g1, 32
  %if %1 > 4
    add g10, 32
  %endif
  cmp g9, g2
  jb %%steps
  KT_PASS_FLOAT_Z %1, %4
%endmacro

; KT_PASS_FLOAT_Z tokens, fix: KT_PASS_FLOAT on 16 rows, S of the tokens in zmm16..: the pair dots
; (vpdpwssd against the bsums dword broadcast, the 8 pair entries in zmm24..31) into zmm0.., then
; acc (and mins) per token at g12, in the YMM pass's arithmetic.
%macro KT_PASS_FLOAT_Z 2
  %if %1 > 4
    lea g3, [g11 + 4 * g7]
  %endif
  %if %2
    %assign kt_i 0
    %rep 8
      %assign kt_e 24 + kt_i
      vmovdqa64 zmm%[kt_e], [rsp + KT_PAIR + KT_TS * kt_i]
      %assign kt_i kt_i + 1
    %endrep
    %assign kt_t 0
    %rep %1
      KTZ_TOKEN kt_t, g11, g3
      vpxord xmm%[kt_t], xmm%[kt_t], xmm%[kt_t]
      %assign kt_i 0
      %rep 8
        %assign kt_e 24 + kt_i
        vpdpwssd zmm%[kt_t], zmm%[kt_e], [KT_T + ACTK_BSUMS + 4 * kt_i]{1to16}
        %assign kt_i kt_i + 1
      %endrep
      %assign kt_t kt_t + 1
    %endrep
  %endif
  vmovaps zmm8, [rsp + KT_D]
  %if %2 == 1
    vmovaps zmm9, [rsp + KT_DMIN]
  %endif
  %assign kt_t 0
  %rep %1
    KTZ_TOKEN kt_t, g11, g3
    %assign kt_s 16 + kt_t
    %if %2 == 2                                    ; S -= 32 x the pair dot
      vpslld zmm%[kt_t], zmm%[kt_t], 5
      vpsubd zmm%[kt_s], zmm%[kt_s], zmm%[kt_t]
    %elif %2 == 3                                  ; S -= 128 x the pair dot
      vpslld zmm%[kt_t], zmm%[kt_t], 7
      vpsubd zmm%[kt_s], zmm%[kt_s], zmm%[kt_t]
    %elif %2 == 4                                  ; S -= 4 x the pair dot
      vpslld zmm%[kt_t], zmm%[kt_t], 2
      vpsubd zmm%[kt_s], zmm%[kt_s], zmm%[kt_t]
    %endif
    vmulps zmm10, zmm8, [KT_T + ACTK_D]{1to16}     ; d_w * x.d
    vcvtdq2ps zmm%[kt_s], zmm%[kt_s]
    vfmadd213ps zmm%[kt_s], zmm10, [g12 + KT_TS * kt_t]
    vmovaps [g12 + KT_TS * kt_t], zmm%[kt_s]
    %if %2 == 1
      vmulps zmm11, zmm9, [KT_T + ACTK_D]{1to16}   ; dmin * x.d
      vcvtdq2ps zmm%[kt_t], zmm%[kt_t]
      vfmadd213ps zmm%[kt_t], zmm11, [g12 + KT_MINS - KT_ACC + KT_TS * kt_t]
      vmovaps [g12 + KT_MINS - KT_ACC + KT_TS * kt_t], zmm%[kt_t]
    %endif
    %assign kt_t kt_t + 1
  %endrep
%endmacro

; KTZ_BYTES16 offset: xmm16 + j = B(j), byte j of the 16 bytes at `offset` of the 16 rows' blocks:
; byte-transposed per 8 rows (KT_BYTE_TRANSPOSE_HALF) and the halves joined in registers (half 0's
; pieces wait in xmm24..31).
%macro KTZ_BYTES16 1
  %assign kt_h 0
  %rep 2
    %assign kt_r 0
    %rep 8
      %if kt_h == 0
        KT_ROW_ADDR kt_r
        vmovdqu xmm%[kt_r], [KT_R + (%1)]
      %elif kt_r == 0
        vmovdqu xmm0, [g12 + (%1)]
      %else
        vmovdqu xmm%[kt_r], [g12 + g%[kt_r] + (%1)]
      %endif
      %assign kt_r kt_r + 1
    %endrep
    %assign kt_b 0
    %rep 2
      KT_BYTE_TRANSPOSE_HALF kt_b                  ; xmm8 + i: B(8b + 2i), B(8b + 2i + 1)
      %assign kt_i 0
      %rep 4
        %assign kt_k 24 + 4 * kt_b + kt_i          ; half 0's piece
        %assign kt_t 8 + kt_i
        %if kt_h == 0
          vmovdqa64 xmm%[kt_k], xmm%[kt_t]
        %else
          %assign kt_j 16 + 8 * kt_b + 2 * kt_i
          %assign kt_j1 kt_j + 1
          vpunpcklqdq xmm%[kt_j], xmm%[kt_k], xmm%[kt_t]
          vpunpckhqdq xmm%[kt_j1], xmm%[kt_k], xmm%[kt_t]
        %endif
        %assign kt_i kt_i + 1
      %endrep
      %assign kt_b kt_b + 1
    %endrep
    %assign kt_h kt_h + 1
  %endrep
%endmacro

; KTZ_K_SCALES: Q4_K / Q5_K's d, dmin, scales and mins of the 16 rows at once (KT_K_SCALES's
; arithmetic on 16 lanes) from the first 16 bytes of their blocks (d, dmin, the 12 packed bytes):
; the 6-bit fields unpacked four j at a time in ZMM, and every entry written once, whole: KT_SC as
; int32, KT_PAIR as (m, m) words, d and dmin from the byte pairs B(0, 1) and B(2, 3).
%macro KTZ_K_SCALES 0
  KTZ_BYTES16 0
  %assign kt_z 20                                  ; zmm20 = B(4..7), zmm24 = B(8..11), zmm28 = B(12..15)
  %rep 3
    %assign kt_i 1
    %rep 3
      %assign kt_k kt_z + kt_i
      vinserti32x4 zmm%[kt_z], zmm%[kt_z], xmm%[kt_k], kt_i
      %assign kt_i kt_i + 1
    %endrep
    %assign kt_z kt_z + 4
  %endrep
  vpandd zmm0, zmm20, [rel kt_low6]{1to16}         ; sc[0..3]
  vpandd zmm1, zmm24, [rel kt_low6]{1to16}         ; m[0..3]
  vpsrlw zmm2, zmm20, 2                            ; (word shifts: the bits crossing bytes are masked off)
  vpandd zmm2, zmm2, [rel bits_45]{1to16}
  vpandd zmm3, zmm28, [rel low_nibble]{1to16}
  vpord zmm2, zmm2, zmm3                           ; sc[4..7]
  vpsrlw zmm3, zmm24, 2
  vpandd zmm3, zmm3, [rel bits_45]{1to16}
  vpsrlw zmm4, zmm28, 4
  vpandd zmm4, zmm4, [rel low_nibble]{1to16}
  vpord zmm3, zmm3, zmm4                           ; m[4..7]
  %assign kt_e 0
  %rep 8
    %assign kt_l kt_e % 4
    %if kt_e < 4
      %assign kt_sc 0
      %assign kt_m 1
    %else
      %assign kt_sc 2
      %assign kt_m 3
    %endif
    KTZ_LANE kt_sc, kt_l, 5
    vpmovzxbd zmm6, xmm5
    vmovdqa64 [rsp + KT_SC + 64 * kt_e], zmm6
    KTZ_LANE kt_m, kt_l, 5
    vpmovzxbd zmm6, xmm5
    vpslld zmm7, zmm6, 16
    vpord zmm6, zmm6, zmm7
    vmovdqa64 [rsp + KT_PAIR + 64 * kt_e], zmm6
    %assign kt_e kt_e + 1
  %endrep
  KTZ_HALVES 16, 17, KT_D
  KTZ_HALVES 18, 19, KT_DMIN
%endmacro

; KTZ_LANE z, lane, x: xmm<x> = 128-bit lane `lane` of zmm<z>
%macro KTZ_LANE 3
  %if %2
    vextracti32x4 xmm%3, zmm%1, %2
  %else
    vmovdqa64 xmm%3, xmm%1
  %endif
%endmacro

; KTZ_HALVES lo, hi, slot: the 16 rows' FP16 from their bytes (xmm<lo>, xmm<hi>) -> 16 floats
%macro KTZ_HALVES 3
  vpunpcklbw xmm5, xmm%1, xmm%2
  vpunpckhbw xmm6, xmm%1, xmm%2
  vinserti32x4 ymm5, ymm5, xmm6, 1
  vcvtph2ps zmm5, ymm5
  vmovaps [rsp + (%3)], zmm5
%endmacro

; KTZ_HALVES16 offset, slot: the 16 rows' FP16 at byte offset of their blocks -> 16 floats at slot
%macro KTZ_HALVES16 2
  %assign kt_r 0
  %rep 8
    KT_ROW_ADDR kt_r
    vpinsrw xmm5, xmm5, word [KT_R + (%1)], kt_r
    %if kt_r
      vpinsrw xmm6, xmm6, word [g12 + g%[kt_r] + (%1)], kt_r
    %else
      vpinsrw xmm6, xmm6, word [g12 + (%1)], 0
    %endif
    %assign kt_r kt_r + 1
  %endrep
  vinserti32x4 ymm5, ymm5, xmm6, 1
  vcvtph2ps zmm5, ymm5
  vmovaps [rsp + (%2)], zmm5
%endmacro

; KTZ_SC_TABLE ext (zx / sx)[, mask]: KT_SC entry e = byte e of the 16 rows (xmm16 + e = B(e),
; KTZ_BYTES16's), [& the mask constant,] zero- or sign-extended to int32, e < 16
%macro KTZ_SC_TABLE 1-2
  %assign kt_e 0
  %rep 16
    %assign kt_j 16 + kt_e
    %if %0 > 1
      vpandd xmm5, xmm%[kt_j], [rel %2]{1to4}
      vpmov%1bd zmm6, xmm5
    %else
      vpmov%1bd zmm6, xmm%[kt_j]
    %endif
    vmovdqa64 [rsp + KT_SC + 64 * kt_e], zmm6
    %assign kt_e kt_e + 1
  %endrep
%endmacro

; KTZ_PAIR_WORDS ext (zx / sx), a, b, out, tmp: zmm<out> = dword r (byte r of xmm<a>, byte r of
; xmm<b>) as words, zero- or sign-extended, r < 16 (clobbers xmm<tmp>)
%macro KTZ_PAIR_WORDS 5
  vpunpcklbw xmm%4, xmm%2, xmm%3                   ; rows 0..7
  vpunpckhbw xmm%5, xmm%2, xmm%3                   ; rows 8..15
  vinserti32x4 ymm%4, ymm%4, xmm%5, 1
  vpmov%1bw zmm%4, ymm%4
%endmacro

; KTZ_Q6K_SCALES: Q6_K's 16 signed scales of the 16 rows -> KT_SC (int32), KT_PAIR (scales 2i,
; 2i + 1 as words), d -> KT_D.
%macro KTZ_Q6K_SCALES 0
  KTZ_BYTES16 192
  KTZ_SC_TABLE sx
  %assign kt_e 0
  %rep 8
    %assign kt_j 16 + 2 * kt_e
    %assign kt_j1 kt_j + 1
    KTZ_PAIR_WORDS sx, kt_j, kt_j1, 5, 6           ; (scale 2i, scale 2i + 1)
    vmovdqa64 [rsp + KT_PAIR + 64 * kt_e], zmm5
    %assign kt_e kt_e + 1
  %endrep
  KTZ_HALVES16 208, KT_D
%endmacro

%macro Q4KZ_UNPACK 0
  KTZ_K_SCALES
  Q4K_RUNS
%endmacro

%macro Q5KZ_UNPACK 0
  KTZ_K_SCALES
  Q5K_RUNS
%endmacro

%macro Q6KZ_UNPACK 0
  KTZ_Q6K_SCALES
  Q6K_RUNS
%endmacro

; ---- IQ4_XS -------------------------------------------------------------------------------------
; KT_EMIT_IQ4: the codebook values + 128 of a 32-byte qs part's nibbles (kt_base = 16 p for qs
; bytes 32 p ..): dword s < 4 holds sub-block 2p's bytes 4s .. 4s + 3 (low nibbles: values 4s ..,
; k-step 16 p + s; high nibbles: values 16 + 4s .., k-step 16 p + 4 + s), dword s >= 4 sub-block
; 2p + 1's (k-steps 16 p + 4 + s and 16 p + 8 + s). zmm30 = the table.
%macro KT_EMIT_IQ4 2
  %if (%2) < 4
    %assign kt_k kt_base + (%2)
  %else
    %assign kt_k kt_base + 4 + (%2)
  %endif
  KT_NIBBLES %1, 10
  vpshufb zmm%1, zmm30, zmm%1
  vpshufb zmm10, zmm30, zmm10
  vmovdqa64 [rsp + KT_QS + KT_TS * kt_k], zmm%1
  vmovdqa64 [rsp + KT_QS + KT_TS * (kt_k + 4)], zmm10
%endmacro

; KTZ_IQ4_SCALES: IQ4_XS's scales of the 16 rows from the first 8 bytes of their blocks (d,
; scales_h, scales_l: B(0..7)), the IQ4_SCALE_WORDS fields on 16 lanes: u_j = (scales_l[j / 2] >>
; 4 (j % 2)) & 15 | ((scales_h >> 2 j) & 3) << 4 (0..63), the scale u_j - 32 -> KT_SC (int32) and
; KT_PAIR ((sc, sc) words: it weighs the two bsums of its sub-block); d -> KT_D.
%macro KTZ_IQ4_SCALES 0
  KTZ_BYTES16 0
  vpbroadcastd zmm9, [rel words_32]                ; (32, 32) words
  vpsrld zmm10, zmm9, 16                           ; 32 per dword
  %assign kt_e 0
  %rep 8
    %assign kt_l 20 + kt_e / 2                     ; B(4 + j / 2): scales_l
    %if kt_e % 2
      vpsrlw xmm5, xmm%[kt_l], 4
      vpandd xmm5, xmm5, [rel low_nibble]{1to4}
    %else
      vpandd xmm5, xmm%[kt_l], [rel low_nibble]{1to4}
    %endif
    %assign kt_hb 18 + kt_e / 4                    ; B(2 + j / 4): scales_h's byte
    %assign kt_sh 2 * (kt_e % 4)                   ; the field's bits -> bits 4..5
    %if kt_sh < 4
      vpsllw xmm6, xmm%[kt_hb], 4 - kt_sh
    %elif kt_sh == 4
      vmovdqa64 xmm6, xmm%[kt_hb]
    %else
      vpsrlw xmm6, xmm%[kt_hb], kt_sh - 4
    %endif
    vpandd xmm6, xmm6, [rel bits_45]{1to4}
    vpord xmm5, xmm5, xmm6                         ; u_j
    vpmovzxbd zmm6, xmm5
    vpsubd zmm7, zmm6, zmm10
    vmovdqa64 [rsp + KT_SC + 64 * kt_e], zmm7
    vpslld zmm7, zmm6, 16
    vpord zmm7, zmm7, zmm6
    vpsubw zmm7, zmm7, zmm9
    vmovdqa64 [rsp + KT_PAIR + 64 * kt_e], zmm7
    %assign kt_e kt_e + 1
  %endrep
  KTZ_HALVES 16, 17, KT_D
%endmacro

; IQ4_RUNS: the 16 rows' quants as codebook values + 128.
%macro IQ4_RUNS 0
  vmovdqu64 zmm30, [rel iq4_u_values]
  %assign kt_p 0
  %rep 4
    %assign kt_base 16 * kt_p
    KT_LOAD_ROWS 8 + 32 * kt_p
    KT_DWORD_TRANSPOSE KT_EMIT_IQ4
    %assign kt_p kt_p + 1
  %endrep
%endmacro

%macro IQ4Z_UNPACK 0
  KTZ_IQ4_SCALES
  IQ4_RUNS
%endmacro

; ---- Q2_K / Q3_K -------------------------------------------------------------------------------
; The runs are asm/kquant_tile_unpack.inc's (Q2K_RUNS, Q3K_RUNS); here the 16 rows' scales.
; Sub-blocks are 16 values (4 k-steps per scale entry). Q2_K: the scale nibbles -> KT_SC, the min
; nibbles -> KT_PAIR (mins 2i, 2i + 1 weigh bsums 2i, 2i + 1), d / dmin -> KT_D / KT_DMIN (fix 1:
; the mins term). Q3_K: the signed scales (6 bits - 32) -> KT_SC and KT_PAIR, the values q + 4h
; (0..7) unsigned and 4 (sc . bsums) off S (fix 4), as the AVX2 kernel.

; KTZ_Q2K_SCALES: B(j) = scale byte j of the 16 rows; sc = low nibble -> KT_SC, (m_2i, m_2i+1)
; words -> KT_PAIR, d, dmin -> KT_D, KT_DMIN.
%macro KTZ_Q2K_SCALES 0
  KTZ_BYTES16 0
  KTZ_SC_TABLE zx, low_nibble
  %assign kt_e 0
  %rep 8
    %assign kt_j 16 + 2 * kt_e
    %assign kt_j1 kt_j + 1
    KTZ_PAIR_WORDS zx, kt_j, kt_j1, 5, 6
    vpsrlw zmm5, zmm5, 4                           ; the min nibbles
    vmovdqa64 [rsp + KT_PAIR + 64 * kt_e], zmm5
    %assign kt_e kt_e + 1
  %endrep
  KTZ_HALVES16 80, KT_D
  KTZ_HALVES16 82, KT_DMIN
%endmacro

; KTZ_Q3K_SCALES: the 16 bytes at 94 of the 16 rows (qs' last two, scales[12], d): B(2 + i) =
; scales[i], B(14, 15) = d. Scale k's low 4 bits: scales[k] & 15 (k < 8), scales[k - 8] >> 4
; (k >= 8); its high 2: bits 2 (k / 4) of scales[8 + k % 4]; u_k (0..63) in xmm k, then
; KT_SC = u - 32 (int32), KT_PAIR = (u_2i - 32, u_2i+1 - 32) words.
%macro KTZ_Q3K_SCALES 0
  KTZ_BYTES16 94
  KTZ_HALVES 30, 31, KT_D
  %assign kt_e 0
  %rep 16
    %if kt_e < 8
      %assign kt_j 18 + kt_e
      vpandd xmm%[kt_e], xmm%[kt_j], [rel low_nibble]{1to4}
    %else
      %assign kt_j 10 + kt_e
      vpsrlw xmm%[kt_e], xmm%[kt_j], 4
      vpandd xmm%[kt_e], xmm%[kt_e], [rel low_nibble]{1to4}
    %endif
    %assign kt_j 26 + kt_e % 4                     ; scales[8 + k % 4]
    %assign kt_sh 2 * (kt_e / 4)                   ; its bits kt_sh, kt_sh + 1 -> bits 4, 5
    %if kt_sh < 4
      vpsllw xmm16, xmm%[kt_j], 4 - kt_sh
    %elif kt_sh > 4
      vpsrlw xmm16, xmm%[kt_j], kt_sh - 4
    %else
      vmovdqa64 xmm16, xmm%[kt_j]
    %endif
    vpternlogd xmm%[kt_e], xmm16, [rel bits_45]{1to4}, 0xf8
    %assign kt_e kt_e + 1
  %endrep
  vpbroadcastd zmm18, [rel words_32]               ; (32, 32) words
  vpsrld zmm19, zmm18, 16                          ; 32 per dword
  %assign kt_e 0
  %rep 16
    vpmovzxbd zmm17, xmm%[kt_e]
    vpsubd zmm17, zmm17, zmm19
    vmovdqa64 [rsp + KT_SC + 64 * kt_e], zmm17
    %assign kt_e kt_e + 1
  %endrep
  %assign kt_e 0
  %rep 8
    %assign kt_j 2 * kt_e
    %assign kt_j1 kt_j + 1
    KTZ_PAIR_WORDS zx, kt_j, kt_j1, 20, 21             ; (B(4), B(5) are no longer needed)
    vpsubw zmm20, zmm20, zmm18
    vmovdqa64 [rsp + KT_PAIR + 64 * kt_e], zmm20
    %assign kt_e kt_e + 1
  %endrep
%endmacro

%macro Q2KZ_UNPACK 0
  KTZ_Q2K_SCALES
  Q2K_RUNS
%endmacro

%macro Q3KZ_UNPACK 0
  KTZ_Q3K_SCALES
  Q3K_RUNS
%endmacro

FUNCTION matmul_q4_k_tile_avx512vnni, 7, 15, 16
  KTILE_MATMUL 144, Q4KZ_UNPACK, 2, 8, 1, KT_PASS_Z

FUNCTION matmul_q5_k_tile_avx512vnni, 7, 15, 16
  KTILE_MATMUL 176, Q5KZ_UNPACK, 2, 8, 1, KT_PASS_Z

FUNCTION matmul_q6_k_tile_avx512vnni, 7, 15, 16
  KTILE_MATMUL 210, Q6KZ_UNPACK, 2, 4, 2, KT_PASS_Z

FUNCTION matmul_iq4_xs_tile_avx512vnni, 7, 15, 16
  KTILE_MATMUL 136, IQ4Z_UNPACK, 2, 8, 3, KT_PASS_Z

FUNCTION matmul_q2_k_tile_avx512vnni, 7, 15, 16
  KTILE_MATMUL 84, Q2KZ_UNPACK, 2, 4, 1, KT_PASS_Z

FUNCTION matmul_q3_k_tile_avx512vnni, 7, 15, 16
  KTILE_MATMUL 110, Q3KZ_UNPACK, 2, 4, 4, KT_PASS_Z
