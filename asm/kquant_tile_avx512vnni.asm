; K-quant prefill on the transposed 8-row tile, AVX-512 (F, BW, VL) + VNNI: Q4_K, Q5_K, Q6_K and
; IQ4_XS on GGUF's row-major blocks (any alignment). Contract and twins: engine/kernels/kquant_tile.h; the
; skeleton, tile and numerics: asm/kquant_tile.inc; the UNPACKs: asm/kquant_tile_unpack.inc, the
; same tile as the AVX2 kernels, then rearranged once per tile for ZMM passes (KTV_RELAYOUT):
;   the quants: one ZMM per two k-steps 2j, 2j + 1, dword 2r = row r's step 2j, 2r + 1 its step
;     2j + 1, so a token's 8 values 8j..8j + 7 broadcast as a qword meet all 8 rows at once;
;   the scales: one ZMM per scale entry, dwords 2r and 2r + 1 = row r's scale as (sc, 0) words
;     (after vpdpbusd: the int32 partial sums, which fit in int16) or (sc, sc) (after vpmaddubsw).
; KT_PASS_V then costs one vpdpbusd per 64 products (Q4_K, Q5_K; Q6_K: vpmaddubsw and vpdpwssd),
; where the YMM pass spends about two instructions per 32; the int32 sums per row and token are
; the YMM pass's S exactly (only integer sums are reordered), and the float work is the same.
; int16 bounds of the vpdpbusd partial sums before their vpdpwssd (16 values per dword lane per
; 4 k-pairs): Q4_K 4 k-pairs, 16 x 15 x 127 = 30480; Q5_K 2 k-pairs, 8 x 31 x 127 = 31496. Q6_K:
; vpmaddubsw pair sums (2 x 63 x 127 = 16002) straight into vpdpwssd with (sc, sc).
; IQ4_XS (no AVX2 transposed tile: its codebook is signed, and vpmaddubsw needs one unsigned
; operand): the tile holds the codebook value + 128 (1..241), the sub-block's vpdpbusd sums (up to
; 16 x 241 x 127) take vpmulld with the signed scale, and S -= 128 (scales . bsums) (fix 3).

%include "kquant_tile_unpack.inc"

RODATA
align 64
ktv_interleave: dd 0, 8, 1, 9, 2, 10, 3, 11, 4, 12, 5, 13, 6, 14, 7, 15
ktv_pairs:      dd 0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7
; IQ4_XS: the codebook + 128
iq4v_u_values:  times 2 db 1, 24, 45, 63, 79, 93, 106, 118, 129, 141, 153, 166, 181, 197, 217, 241
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

; KTV_QUANTS: the tile's quants into k-pair order, in place.
%macro KTV_QUANTS 0
  vmovdqa64 zmm1, [rel ktv_interleave]
  %assign kt_j 0
  %rep 32
    vpermd zmm0, zmm1, [rsp + KT_QS + 64 * kt_j]
    vmovdqa64 [rsp + KT_QS + 64 * kt_j], zmm0
    %assign kt_j kt_j + 1
  %endrep
%endmacro

; KTV_RELAYOUT format, entries: KTV_QUANTS, and the tile's `entries` scale entries into KT_SCV
; (format 0: (sc, 0) words, from unsigned scales; 1: (sc, sc)).
%macro KTV_RELAYOUT 2
  KTV_QUANTS
  %if %1
    vmovdqa64 zmm1, [rel ktv_pairs]
  %endif
  %assign kt_e 0
  %rep %2
    %if %1
      vpermd zmm0, zmm1, [rsp + KT_SC + 32 * kt_e]
    %else
      vpmovzxwd zmm0, [rsp + KT_SC + 32 * kt_e]
    %endif
    vmovdqa64 [rsp + KT_SCV + 64 * kt_e], zmm0
    %assign kt_e kt_e + 1
  %endrep
%endmacro

; KT_PASS_V tokens (4 or 1), pairs, sub, fix: the skeleton's pass on ZMM (KTILE_MATMUL's PASS).
;   pairs  k-pairs whose vpdpbusd sums go into one vpdpwssd; 0: vpmaddubsw per k-pair instead;
;          -1: the scale entry's 4 k-pairs of vpdpbusd, then vpmulld (int32 scale entries)
;   sub    k-pairs per scale entry
;   fix    as KT_PASS
; Registers: zmm16..19 = the tokens' int32 sums (two lanes per row), zmm20..23 their partial
; sums, zmm24 = the k-pair's quants, zmm25..28 the tokens' broadcast values.
%macro KT_PASS_V 4
  lea g9, [rsp + KT_QS]
  lea g0, [rsp + KT_SCV]
  lea g1, [g11 + ACTK_QS]
  lea g2, [rsp + KT_QS + 2048]
  %assign kt_t 0
  %rep %1
    %assign kt_s 16 + kt_t
    vpxord xmm%[kt_s], xmm%[kt_s], xmm%[kt_s]
    %assign kt_t kt_t + 1
  %endrep
%%steps:                                           ; 4 k-pairs (32 values) per iteration
  %assign kt_p 0
  %rep 4
    vmovdqa64 zmm24, [g9 + 64 * kt_p]
    %assign kt_t 0
    %rep %1
      KT_TOKEN kt_t, g1
      %assign kt_s 16 + kt_t
      %assign kt_u 20 + kt_t
      %assign kt_x 25 + kt_t
      vpbroadcastq zmm%[kt_x], [KT_T + 8 * kt_p]
      %if %2 == 0
        vpmaddubsw zmm%[kt_u], zmm24, zmm%[kt_x]
        vpdpwssd zmm%[kt_s], zmm%[kt_u], [g0 + 64 * (kt_p / (%3))]
      %elif %2 < 0
        %if kt_p == 0
          vpxord xmm%[kt_u], xmm%[kt_u], xmm%[kt_u]
        %endif
        vpdpbusd zmm%[kt_u], zmm24, zmm%[kt_x]
        %if kt_p == 3
          vpmulld zmm%[kt_u], zmm%[kt_u], [g0]
          vpaddd zmm%[kt_s], zmm%[kt_s], zmm%[kt_u]
        %endif
      %else
        %if kt_p % (%2) == 0
          vpxord xmm%[kt_u], xmm%[kt_u], xmm%[kt_u]
        %endif
        vpdpbusd zmm%[kt_u], zmm24, zmm%[kt_x]
        %if (kt_p + 1) % (%2) == 0
          vpdpwssd zmm%[kt_s], zmm%[kt_u], [g0 + 64 * (kt_p / (%3))]
        %endif
      %endif
      %assign kt_t kt_t + 1
    %endrep
    %assign kt_p kt_p + 1
  %endrep
  add g9, 256
  add g0, 64 * (4 / (%3))
  add g1, 32
  cmp g9, g2
  jb %%steps
  %assign kt_t 0                                   ; S of row r = lanes 2r + 2r + 1 -> ymm<t>
  %rep %1
    %assign kt_s 16 + kt_t
    vpshufd zmm29, zmm%[kt_s], 0xb1
    vpaddd zmm%[kt_s], zmm%[kt_s], zmm29
    vpmovqd ymm%[kt_t], zmm%[kt_s]
    %assign kt_t kt_t + 1
  %endrep
  KT_PASS_FLOAT %1, %4, 1
%endmacro

%macro Q4KV_UNPACK 0
  Q4K_UNPACK
  KTV_RELAYOUT 0, 8
%endmacro

%macro Q5KV_UNPACK 0
  Q5K_UNPACK
  KTV_RELAYOUT 0, 8
%endmacro

%macro Q6KV_UNPACK 0
  Q6K_UNPACK
  KTV_RELAYOUT 1, 16
%endmacro

; ---- IQ4_XS -------------------------------------------------------------------------------------
; KT_EMIT_IQ4: the codebook values + 128 of a 32-byte qs part's nibbles (kt_base = 16 p for qs
; bytes 32 p ..): dword s < 4 holds sub-block 2p's bytes 4s .. 4s + 3 (low nibbles: values 4s ..,
; k-step 16 p + s; high nibbles: values 16 + 4s .., k-step 16 p + 4 + s), dword s >= 4 sub-block
; 2p + 1's (k-steps 16 p + 4 + s and 16 p + 8 + s). ymm30 = the table.
%macro KT_EMIT_IQ4 2
  %if (%2) < 4
    %assign kt_k kt_base + (%2)
  %else
    %assign kt_k kt_base + 4 + (%2)
  %endif
  vpsrlw ymm10, ymm%1, 4
  vpand ymm%1, ymm%1, [rel low_nibble]
  vpand ymm10, ymm10, [rel low_nibble]
  vpshufb ymm%1, ymm30, ymm%1
  vpshufb ymm10, ymm30, ymm10
  vmovdqa [rsp + KT_QS + 32 * kt_k], ymm%1
  vmovdqa [rsp + KT_QS + 32 * (kt_k + 4)], ymm10
%endmacro

; IQ4V_UNPACK: the 8 rows' scales (IQ4_SCALE_WORDS per row into KT_STAGE + 16 r, then scale j of
; every row gathered) -> KT_SCV (int32, two lanes per row) and KT_PAIR ((sc, sc): weighs the two
; bsums of its sub-block); d -> KT_D; the quants as codebook values + 128.
%macro IQ4V_UNPACK 0
  vmovdqu64 ymm30, [rel iq4v_u_values]
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
    vmovdqa [rsp + KT_PAIR + 32 * kt_e], ymm5
    vpmovsxwd zmm6, ymm5
    vmovdqa64 [rsp + KT_SCV + 64 * kt_e], zmm6
    %assign kt_e kt_e + 1
  %endrep
  KT_HALVES 0, KT_D
  %assign kt_p 0
  %rep 4
    %assign kt_base 16 * kt_p
    KT_LOAD_ROWS 8 + 32 * kt_p
    KT_DWORD_TRANSPOSE KT_EMIT_IQ4
    %assign kt_p kt_p + 1
  %endrep
  KTV_QUANTS
%endmacro

FUNCTION matmul_q4_k_tile_avx512vnni, 7, 15, 16
  KTILE_MATMUL 144, Q4KV_UNPACK, 4, 4, 1, KT_PASS_V

FUNCTION matmul_q5_k_tile_avx512vnni, 7, 15, 16
  KTILE_MATMUL 176, Q5KV_UNPACK, 2, 4, 1, KT_PASS_V

FUNCTION matmul_q6_k_tile_avx512vnni, 7, 15, 16
  KTILE_MATMUL 210, Q6KV_UNPACK, 0, 2, 2, KT_PASS_V

FUNCTION matmul_iq4_xs_tile_avx512vnni, 7, 15, 16
  KTILE_MATMUL 136, IQ4V_UNPACK, -1, 4, 3, KT_PASS_V
