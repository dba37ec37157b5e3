; K-quant decode (matrix-vector), AVX2 + FMA + F16C: Q4_K, Q5_K, Q6_K, IQ4_XS, Q2_K and Q3_K rows,
; four per pass (asm/kquant_decode.inc), against Q8_K-style activations (ActBlockK). Same contract
; and twins as the row-at-a-time kernels of asm/kquant_avx2.asm (matvec_q4_k_ref, matvec_q5_k_ref,
; matvec_q6_k_ref, matvec_iq4_xs_ref in engine/kernels/kquant_dot.cpp), bit for bit; what differs
; is the work around the exact integer lanes:
;   Q4_K / Q5_K: the 6-bit scales and mins of two rows are unpacked at once in one YMM (one row
;     per 128-bit lane: two vpshufb gathers, shifts and masks) instead of in general-purpose
;     registers row by row; the mins of the four rows are dotted with the activation's bsum pairs
;     (computed once per pass) and reduced together (two vphaddd for four rows); d and dmin of
;     the four rows are converted in one vcvtph2ps and scaled by x.d in one vmulps.
;   Q6_K: the four rows' d in one conversion; one sign extension of the 16 scales serves both the
;     -32 offset term and the two halves' scale words.
;   IQ4_XS: the four rows' scales unpacked together in one YMM; the activation rearranged (and its
;     absolute value taken) once per block for the four rows, so the rows' nibbles need no
;     reordering (below).
; Per sub-block the lanes are formed as before: vpmaddubsw (unsigned quants x int8 activations),
; vpmaddwd with the sub-block scale broadcast by vpshufb.

%include "kquant_decode.inc"
%include "kquant_decode_prep.inc"  ; K45_PREP, Q6K_PREP, IQ4_PREP_SCALES

RODATA
align 32
; sub-block j's scale (byte j) as every word
%assign j 0
%rep 8
k_scale_byte_%[j]: times 16 db j, -128
%assign j j + 1
%endrep

; ---- Q4_K / Q5_K ------------------------------------------------------------------------------
; Registers: ymm8 = headers (then sc / m bytes) of rows 0 | 2, ymm9 of rows 1 | 3; ymm10 = 0x0f.

%macro K45_SETUP 0
  vmovdqa ymm10, [rel low_nibble]
%endmacro

; ymm0 |= 16 where bit %1 of qh (ymm3) is set (bit %1 moved to bit 4 by a word shift; what
; crosses into the neighbouring byte is masked off).
%macro K5_FIFTH_BIT 1
  %if %1 < 4
    vpsllw ymm4, ymm3, 4 - %1
  %elif %1 == 4
    vmovdqa ymm4, ymm3
  %else
    vpsrlw ymm4, ymm3, %1 - 4
  %endif
  vpand ymm4, ymm4, [rel bit_4]
  vpor ymm0, ymm0, ymm4
%endmacro

; K45_ROW r, qs offset, fifth bit: ymm6 = row r's int32 lanes. Run k of qs: low nibbles are
; sub-block 2k, high nibbles 2k + 1 (Q5_K: plus 16 where bit 2k / 2k + 1 of qh[l] is set).
%macro K45_ROW 3
  KD_ROW_ADDR %1
  %assign %%pair 8 + ((%1) & 1)                   ; rows 0 | 2 in ymm8, rows 1 | 3 in ymm9
  %if %1 < 2
    vinserti128 ymm7, ymm%[%%pair], xmm%[%%pair], 1 ; the row's sc / m bytes in both lanes
  %else
    vperm2i128 ymm7, ymm%[%%pair], ymm%[%%pair], 0x11
  %endif
  %if %3
    vmovdqu ymm3, [KD_R + 16]                     ; qh
  %endif
  %assign %%k 0
  %rep 4
    %assign %%lo 2 * %%k
    %assign %%hi 2 * %%k + 1
    vmovdqu ymm1, [KD_R + %2 + 32 * %%k]
    vpand ymm0, ymm1, ymm10
    %if %3
      K5_FIFTH_BIT %%lo
    %endif
    vpmaddubsw ymm0, ymm0, [kd_act + ACTK_QS + 64 * %%k]
    vpshufb ymm2, ymm7, [rel k_scale_byte_%[%%lo]]
    %if %%k == 0
      vpmaddwd ymm6, ymm0, ymm2
    %else
      vpmaddwd ymm0, ymm0, ymm2
      vpaddd ymm6, ymm6, ymm0
    %endif
    vpsrlw ymm0, ymm1, 4
    vpand ymm0, ymm0, ymm10
    %if %3
      K5_FIFTH_BIT %%hi
    %endif
    vpmaddubsw ymm0, ymm0, [kd_act + ACTK_QS + 64 * %%k + 32]
    vpshufb ymm2, ymm7, [rel k_scale_byte_%[%%hi]]
    vpmaddwd ymm0, ymm0, ymm2
    vpaddd ymm6, ymm6, ymm0
    %assign %%k %%k + 1
  %endrep
%endmacro

%macro Q4K_ROW 1
  K45_ROW %1, 16, 0
%endmacro

%macro Q5K_ROW 1
  K45_ROW %1, 48, 1
%endmacro

; ------------------------------------------------------------------------------------------------
; void magnetar_matvec_q4_k_r4_avx2(const void* w, const ActBlockK* x, float* y, int64_t rows,
;                                   int64_t cols)                  cols % 256 == 0, cols > 0
; void magnetar_matvec_q5_k_r4_avx2(...)                           the same for Q5_K
; ------------------------------------------------------------------------------------------------
FUNCTION matvec_q4_k_r4_avx2, 5, KD_GPRS, 16
  KDECODE_MATVEC 144, K45_SETUP, K45_PREP, Q4K_ROW, 1, 0

FUNCTION matvec_q5_k_r4_avx2, 5, KD_GPRS, 16
  KDECODE_MATVEC 176, K45_SETUP, K45_PREP, Q5K_ROW, 1, 0

; ---- Q6_K -------------------------------------------------------------------------------------
; Block: ql[128], qh[64], scales[16] (int8), d (f16) at 208. q = 6 bits from ql nibbles and qh
; bit pairs; value = d * sc * (q - 32): lane i takes sum(sc q x) - 32 (sc[2i] bsums[2i] +
; sc[2i + 1] bsums[2i + 1]). Registers: ymm10 = 0x0f, ymm11 = 0x30.

%macro Q6K_SETUP 0
  vmovdqa ymm10, [rel low_nibble]
  vmovdqa ymm11, [rel bits_45]
%endmacro

%macro Q6K_ROW 1
  KD_ROW_ADDR %1
  vmovdqu ymm2, [KD_R]                            ; the block's bytes in address order (a
  vmovdqu ymm3, [KD_R + 32]                       ; row's reads go forward): ql of the two
  vmovdqu ymm7, [KD_R + 64]                       ; halves, their qh, the scales
  vmovdqu ymm15, [KD_R + 96]
  vmovdqu ymm8, [KD_R + 128]
  vmovdqu ymm4, [KD_R + 160]
  vpmovsxbw ymm5, [KD_R + 192]                    ; the 16 scales as words
  %assign %%h 0
  %rep 2
    %if %%h == 0
      vinserti128 ymm9, ymm5, xmm5, 1             ; this half's 8 scale words in both lanes
      %define %%ql0 ymm2
      %define %%ql1 ymm3
      %define %%qh ymm8
    %else
      vperm2i128 ymm9, ymm5, ymm5, 0x11
      %define %%ql0 ymm7
      %define %%ql1 ymm15
      %define %%qh ymm4
    %endif
    %assign %%k 0
    %rep 4
      %if %%k == 0
        vpsllw ymm1, %%qh, 4
        vpand ymm1, ymm1, ymm11
      %elif %%k == 1
        vpsllw ymm1, %%qh, 2
        vpand ymm1, ymm1, ymm11
      %elif %%k == 2
        vpand ymm1, %%qh, ymm11
      %else
        vpsrlw ymm1, %%qh, 2
        vpand ymm1, ymm1, ymm11
      %endif                                      ; high bits at 4..5
      %if %%k == 0
        vpand ymm0, %%ql0, ymm10
      %elif %%k == 1
        vpand ymm0, %%ql1, ymm10
      %elif %%k == 2
        vpsrlw ymm0, %%ql0, 4
        vpand ymm0, ymm0, ymm10
      %else
        vpsrlw ymm0, %%ql1, 4
        vpand ymm0, ymm0, ymm10
      %endif
      vpor ymm0, ymm0, ymm1                       ; q in 0..63
      vpmaddubsw ymm0, ymm0, [kd_act + ACTK_QS + 128 * %%h + 32 * %%k]
      vpshufb ymm1, ymm9, [rel scale_pair_%[%%k]]
      %if %%h == 0 && %%k == 0
        vpmaddwd ymm6, ymm0, ymm1
      %else
        vpmaddwd ymm0, ymm0, ymm1
        vpaddd ymm6, ymm6, ymm0
      %endif
      %assign %%k %%k + 1
    %endrep
    %assign %%h %%h + 1
  %endrep
  vpmaddwd ymm4, ymm5, [kd_act + ACTK_BSUMS]
  vpslld ymm4, ymm4, 5                            ; the -32 offset's lanes
  vpsubd ymm6, ymm6, ymm4
%endmacro

; ------------------------------------------------------------------------------------------------
; void magnetar_matvec_q6_k_r4_avx2(const void* w, const ActBlockK* x, float* y, int64_t rows,
;                                   int64_t cols)                  cols % 256 == 0, cols > 0
; ------------------------------------------------------------------------------------------------
FUNCTION matvec_q6_k_r4_avx2, 5, KD_GPRS, 16
  KDECODE_MATVEC 210, Q6K_SETUP, KD_NO_PREP, Q6K_ROW, 0, 0, Q6K_PREP

; ---- IQ4_XS -----------------------------------------------------------------------------------
; Block: d (f16), scales_h (u16), scales_l[4], qs[128] (136 bytes). Sub-block j's 32 values are
; qs[16 j .. 16 j + 15]: low nibbles (values 0..15), then high nibbles (16..31), each an index into
; the int8 codebook; its scale is ((scales_l[j / 2] >> 4 (j % 2)) & 15) | ((scales_h >> 2 j) & 3)
; << 4, minus 32.
;
; A 32-byte load of qs holds sub-blocks 2p | 2p + 1 (p = 0..3): its low nibbles are values 0..15
; of both, its high nibbles values 16..31. The row kernel moves them into value order per row (two
; vperm2i128 per load); here the ACTIVATION is rearranged instead, once per block for the four
; rows (BLOCK_PREP: x values 0..15 of both sub-blocks side by side, and 16..31), and each row's two
; products per load keep the nibbles' order: A (low nibbles) holds sub-block 2p's values 0..15 in
; its low half and 2p + 1's in its high half, B (high nibbles) their values 16..31. The block
; contract needs only the block's integer sum, so A + B summed over p is the row's int32 lanes
; (no reordering: any order gives the same exact S_b). One vpshufb of the row's scale words
; serves both products ([scale 2p | scale 2p + 1]: Q6_K's scale_pair masks). The products: |x|
; (shared by the rows, unsigned) by w sign(x) (vpsignb), both <= 127 in magnitude, so
; vpmaddubsw's pair sums (<= 32258) never saturate.
; Registers: ymm10 = 0x0f, ymm11 = the codebook in both lanes.
;
; Scratch ([rsp + KD_SCRATCH + ...], 32-byte aligned): the four rows' 8 scale words (16 bytes a
; row), then per p the signed activation x of the low / high nibbles' values (64 bytes), then
; their |x| (64 bytes).
%define IQ4_SX      KD_SCRATCH + 64
%define IQ4_AX      KD_SCRATCH + 320
%define IQ4_SCRATCH 576

%macro IQ4_SETUP 0
  vmovdqa ymm10, [rel low_nibble]
  vmovdqa ymm11, [rel iq4_values]
%endmacro

; The block's shared work: the scales (IQ4_PREP_SCALES); the activation rearranged and its
; absolute values.
%macro IQ4_PREP 0
  IQ4_PREP_SCALES
  %assign %%p 0
  %rep 4
    vmovdqu xmm1, [kd_act + ACTK_QS + 64 * %%p]              ; values 0..15 of sub-block 2p
    vinserti128 ymm1, ymm1, [kd_act + ACTK_QS + 64 * %%p + 32], 1  ; and of 2p + 1
    vmovdqu xmm2, [kd_act + ACTK_QS + 64 * %%p + 16]         ; values 16..31 of 2p
    vinserti128 ymm2, ymm2, [kd_act + ACTK_QS + 64 * %%p + 48], 1
    vmovdqa [rsp + IQ4_SX + 64 * %%p], ymm1
    vmovdqa [rsp + IQ4_SX + 64 * %%p + 32], ymm2
    vpabsb ymm1, ymm1
    vpabsb ymm2, ymm2
    vmovdqa [rsp + IQ4_AX + 64 * %%p], ymm1
    vmovdqa [rsp + IQ4_AX + 64 * %%p + 32], ymm2
    %assign %%p %%p + 1
  %endrep
%endmacro

%macro IQ4_ROW 1
  KD_ROW_ADDR %1
  vbroadcasti128 ymm9, [rsp + IQ4_SCALES + 32 * ((%1) & 1) + 16 * ((%1) >> 1)]  ; the row's 8 scale words in both lanes
  %assign %%p 0
  %rep 4
    vmovdqu ymm1, [KD_R + 8 + 32 * %%p]
    vpsrlw ymm2, ymm1, 4
    vpand ymm1, ymm1, ymm10
    vpand ymm2, ymm2, ymm10
    vpshufb ymm1, ymm11, ymm1                       ; int8 weights
    vpshufb ymm2, ymm11, ymm2
    vpsignb ymm1, ymm1, [rsp + IQ4_SX + 64 * %%p]   ; w sign(x)
    vpsignb ymm2, ymm2, [rsp + IQ4_SX + 64 * %%p + 32]
    vmovdqa ymm3, [rsp + IQ4_AX + 64 * %%p]
    vpmaddubsw ymm1, ymm3, ymm1
    vmovdqa ymm3, [rsp + IQ4_AX + 64 * %%p + 32]
    vpmaddubsw ymm2, ymm3, ymm2
    vpshufb ymm3, ymm9, [rel scale_pair_%[%%p]]     ; [scale 2p | scale 2p + 1]
    %if %%p == 0
      vpmaddwd ymm4, ymm1, ymm3
      vpmaddwd ymm5, ymm2, ymm3
    %else
      vpmaddwd ymm1, ymm1, ymm3
      vpmaddwd ymm2, ymm2, ymm3
      vpaddd ymm4, ymm4, ymm1
      vpaddd ymm5, ymm5, ymm2
    %endif
    %assign %%p %%p + 1
  %endrep
  vpaddd ymm6, ymm4, ymm5                         ; lanes whose sum is the block's S_b
%endmacro

; ------------------------------------------------------------------------------------------------
; void magnetar_matvec_iq4_xs_r4_avx2(const void* w, const ActBlockK* x, float* y, int64_t rows,
;                                     int64_t cols)                cols % 256 == 0, cols > 0
; ------------------------------------------------------------------------------------------------
FUNCTION matvec_iq4_xs_r4_avx2, 5, KD_GPRS, 16
  KDECODE_MATVEC 136, IQ4_SETUP, IQ4_PREP, IQ4_ROW, 0, IQ4_SCRATCH

; ---- Q2_K / Q3_K ------------------------------------------------------------------------------
; Blocks as in asm/kquant_low_avx2.asm (twins matvec_q2_k_ref, matvec_q3_k_ref, kquant_low.h); a
; row's integer steps are the row kernel's (kquant_common.inc's TWO_BIT_RUNS: ymm5 = the row's 16
; scale words, ymm7 / ymm3 its scratch, into ymm6). Shared per block: the four rows' d
; (and Q2_K's dmin and mins term, reduced together; its scale nibbles of rows 0 | 2 in ymm8, 1 | 3
; in ymm9). Registers: ymm10 = 0x03, ymm11 = 0x04 (Q3_K).

%macro Q23_SETUP 0
  vmovdqa ymm10, [rel two_bit_mask]
%endmacro

%macro Q3_SETUP 0
  Q23_SETUP
  vmovdqa ymm11, [rel bit_2]
%endmacro

; ymm0 |= 4 where the run's hmask bit (the row's hmask in ymm9) is set
%macro Q3_HIGH_BIT 1
  Q3_RUN_HIGH_BIT 9, 11, %1
%endmacro

; The block's shared work: [rsp + 4 r] = d_r * x.d; xmm11 += fma(dmin_r * x.d, float(the row's
; mins . bsums)) for rows 0..3, reduced together; ymm8 / ymm9 = the scale nibbles of rows 0 | 2, 1 | 3.
%macro Q2_PREP 0
  Q2K_HEADERS
  %assign %%p 0
  %rep 2                                          ; rows 0 | 2 (ymm8), then 1 | 3 (ymm9)
    %assign %%src 8 + %%p
    %assign %%lo 3 + 2 * %%p                       ; row p's partial sums (rows 0, 1: ymm3, ymm5)
    %assign %%hi 4 + 2 * %%p                       ; row 2 + p's (ymm4, ymm6)
    vpsrlw ymm7, ymm%[%%src], 4
    vpand ymm7, ymm7, [rel low_nibble]            ; the min nibbles
    vpmovzxbw ymm%[%%lo], xmm7
    vpmaddwd ymm%[%%lo], ymm%[%%lo], [kd_act + ACTK_BSUMS]
    vextracti128 xmm7, ymm7, 1
    vpmovzxbw ymm%[%%hi], xmm7
    vpmaddwd ymm%[%%hi], ymm%[%%hi], [kd_act + ACTK_BSUMS]
    %assign %%p %%p + 1
  %endrep
  vphaddd ymm3, ymm3, ymm5                        ; rows 0, 1
  vphaddd ymm4, ymm4, ymm6                        ; rows 2, 3
  vphaddd ymm3, ymm3, ymm4                        ; per 128-bit lane: rows 0..3's partial sums
  vextracti128 xmm4, ymm3, 1
  vpaddd xmm3, xmm3, xmm4                         ; [mins_0 .. mins_3], exact
  vcvtdq2ps xmm3, xmm3
  vfmadd231ps xmm11, xmm2, xmm3
  vpand ymm8, ymm8, [rel low_nibble]
  vpand ymm9, ymm9, [rel low_nibble]
%endmacro

%macro Q2_ROW 1
  KD_ROW_ADDR %1
  %assign %%src 8 + ((%1) & 1)
  %if (%1) >> 1
    vextracti128 xmm5, ymm%[%%src], 1
    vpmovzxbw ymm5, xmm5
  %else
    vpmovzxbw ymm5, xmm%[%%src]
  %endif
  TWO_BIT_RUNS KD_R + 16, kd_act, 5, 7, 3, 6, 10, NO_HIGH_BIT
%endmacro

%macro Q3_PREP 0
  D_PREP 108
%endmacro

; The row kernel's block body (ymm5 = the row's scale words, ymm4 = its -4 offset's lanes).
%macro Q3_ROW 1
  KD_ROW_ADDR %1
  vmovdqu ymm9, [KD_R]                            ; hmask
  Q3K_BLOCK_LANES KD_R, kd_act, 5, 7, 3, 6, 10, 4, Q3_HIGH_BIT
%endmacro

; ------------------------------------------------------------------------------------------------
; void magnetar_matvec_q2_k_r4_avx2(const void* w, const ActBlockK* x, float* y, int64_t rows,
;                                   int64_t cols)                  cols % 256 == 0, cols > 0
; void magnetar_matvec_q3_k_r4_avx2(...)                           the same for Q3_K
; ------------------------------------------------------------------------------------------------
FUNCTION matvec_q2_k_r4_avx2, 5, KD_GPRS, 16
  KDECODE_MATVEC 84, Q23_SETUP, Q2_PREP, Q2_ROW, 1, 0

FUNCTION matvec_q3_k_r4_avx2, 5, KD_GPRS, 16
  KDECODE_MATVEC 110, Q3_SETUP, Q3_PREP, Q3_ROW, 0, 0
