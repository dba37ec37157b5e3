; K-quant prefill on a transposed 16-row tile, AVX-512 (F, BW, VL) + VNNI: Q4_K, Q5_K, Q6_K and
; IQ4_XS on GGUF's row-major blocks (any alignment). Contract and twins: engine/kernels/kquant_tile.h;
; the skeleton, tile and numerics: asm/kquant_tile.inc; the UNPACKs: asm/kquant_tile_unpack.inc.
; The tile is the AVX2 kernels' 8-row tile twice, side by side (KT_TILE_ROWS 16): k-step k is one
; ZMM whose dword r holds values 4k..4k + 3 of row r, as the Q4_0 x16 tiles' runs, so a token's
; dword k meets all 16 rows through vpdpbusd's embedded broadcast ({1to16}): one instruction per
; 64 products, no broadcast instruction, and no fold of lanes afterwards (one lane per row).
; Per token and scale entry (sub-block), the vpdpbusd sums go either
;   into int16-bounded partials of `pairs` k-steps, each taken by one vpdpwssd against the entry
;   as (sc, 0) words (Q4_K: 4 k-steps, 16 x 15 x 127 = 30480), or
;   (pairs = -1) into one int32 partial per entry, multiplied by the entry with vpmulld (Q5_K,
;   Q6_K, IQ4_XS: signed scales, or partials beyond int16).
; The scale entries are sign-extended to int32 once per tile (KTZ_SCALES): (sc, 0) words for the
; unsigned 6-bit scales, the int32 operand of vpmulld for all. The int32 sums per row and token
; are the YMM pass's S exactly (only integer sums are reordered), and the float work is the same.
; Measured: the two 512-bit multiply pipes of Zen 5 take vpdpbusd, vpdpwssd, vpmulld and the
; float multiplies alike, so the pass counts those per product (asm/README.md).
; IQ4_XS (no AVX2 transposed tile: its codebook is signed, and vpmaddubsw needs one unsigned
; operand): the tile holds the codebook value + 128 (1..241), the sub-block's vpdpbusd sums (up to
; 32 x 241 x 127) take vpmulld with the signed scale, and S -= 128 (scales . bsums) (fix 3).

%define KT_TILE_ROWS 16
%include "kquant_tile_unpack.inc"

RODATA
align 64
; IQ4_XS: the codebook + 128
iq4v_u_values:  times 4 db 1, 24, 45, 63, 79, 93, 106, 118, 129, 141, 153, 166, 181, 197, 217, 241
; IQ4_XS: vpermi2w indices gathering scale j of rows 0..7 (row r's 8 words at 8 r) as word pairs
align 64
%assign j 0
%rep 8
iq4v_scale_idx_%[j]:
  %assign r 0
  %rep 8
    dw 8 * r + j, 8 * r + j
    %assign r r + 1
  %endrep
  times 16 dw 0
%assign j j + 1
%endrep

; KTZ_SCALES entries: the tile's scale entries ((sc, sc) words) -> int32.
%macro KTZ_SCALES 1
  %assign kt_e 0
  %rep %1
    vpslld zmm0, [rsp + KT_SC + 64 * kt_e], 16
    vpsrad zmm0, zmm0, 16
    vmovdqa64 [rsp + KT_SC + 64 * kt_e], zmm0
    %assign kt_e kt_e + 1
  %endrep
%endmacro

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

%macro Q4KZ_UNPACK 0
  KT_BY_HALVES KT_K_SCALES
  Q4K_RUNS
  KTZ_SCALES 8
%endmacro

%macro Q5KZ_UNPACK 0
  KT_BY_HALVES KT_K_SCALES
  Q5K_RUNS
  KTZ_SCALES 8
%endmacro

%macro Q6KZ_UNPACK 0
  KT_BY_HALVES Q6K_SCALES
  Q6K_RUNS
  KTZ_SCALES 16
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

; IQ4_SCALES: the 8 rows' scales (IQ4_SCALE_WORDS per row into KT_STAGE + 16 r, then scale j of
; every row gathered) -> KT_SC and KT_PAIR ((sc, sc): weighs the two bsums of its sub-block);
; d -> KT_D.
%macro IQ4_SCALES 0
  %assign kt_r 0
  %rep 8
    KT_ROW_ADDR kt_r
    lea g0, [KT_R]
    IQ4_SCALE_WORDS 0, 1, 2
    vmovdqa [rsp + KT_STAGE + 16 * kt_r], xmm0
    %assign kt_r kt_r + 1
  %endrep
  vmovdqu64 zmm3, [rsp + KT_STAGE]
  vmovdqu64 zmm4, [rsp + KT_STAGE + 64]
  %assign kt_e 0
  %rep 8
    vmovdqa64 zmm5, [rel iq4v_scale_idx_%[kt_e]]
    vpermi2w zmm5, zmm3, zmm4
    vmovdqa [rsp + KT_AT(KT_PAIR, kt_e)], ymm5
    vmovdqa [rsp + KT_AT(KT_SC, kt_e)], ymm5
    %assign kt_e kt_e + 1
  %endrep
  KT_HALVES 0, KT_D
%endmacro

; IQ4_RUNS: the 16 rows' quants as codebook values + 128.
%macro IQ4_RUNS 0
  vmovdqu64 zmm30, [rel iq4v_u_values]
  %assign kt_p 0
  %rep 4
    %assign kt_base 16 * kt_p
    KT_LOAD_ROWS 8 + 32 * kt_p
    KT_DWORD_TRANSPOSE KT_EMIT_IQ4
    %assign kt_p kt_p + 1
  %endrep
%endmacro

%macro IQ4Z_UNPACK 0
  KT_BY_HALVES IQ4_SCALES
  IQ4_RUNS
  KTZ_SCALES 8
%endmacro

FUNCTION matmul_q4_k_tile_avx512vnni, 7, 15, 16
  KTILE_MATMUL 144, Q4KZ_UNPACK, 2, 8, 1, KT_PASS_Z

FUNCTION matmul_q5_k_tile_avx512vnni, 7, 15, 16
  KTILE_MATMUL 176, Q5KZ_UNPACK, 2, 8, 1, KT_PASS_Z

FUNCTION matmul_q6_k_tile_avx512vnni, 7, 15, 16
  KTILE_MATMUL 210, Q6KZ_UNPACK, 2, 4, 2, KT_PASS_Z

FUNCTION matmul_iq4_xs_tile_avx512vnni, 7, 15, 16
  KTILE_MATMUL 136, IQ4Z_UNPACK, 2, 8, 3, KT_PASS_Z
