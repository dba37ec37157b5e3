; K-quant decode (matrix-vector), AVX-512 (F, BW, VL) + VNNI: Q4_K, Q5_K, Q6_K and IQ4_XS rows,
; four per pass (asm/kquant_decode.inc), against Q8_K-style activations (ActBlockK). Same contract
; and twins as asm/kquant_decode_avx2.asm (matvec_q4_k_ref, matvec_q5_k_ref, matvec_q6_k_ref,
; matvec_iq4_xs_ref in engine/kernels/kquant_dot.cpp), bit for bit, and the same per-block shared
; work (asm/kquant_decode_prep.inc). What differs is a row's dot product: ZMM registers carry 128
; values (two or four sub-blocks) per step, and vpdpwssd folds the sub-block scale multiply and
; the accumulation into one instruction (IQ4_XS: vpdpbusd and one vpmulld, below). Per 64 weights
; of a row the AVX2 kernels spend about 9 (Q4_K) to 14 (IQ4_XS) vector instructions; these spend
; 3.5 to 5.5, which is what a core that can read 30+ GB/s needs (Zen 4 / 5, Ice Lake and later).
; Exactness: vpmaddubsw's pair sums stay below 2^15 (quants <= 63 against |x| <= 127), vpdpwssd
; and vpdpbusd accumulate int32 without saturation, and the row's lanes end as the AVX2 kernels'
; do (8 int32 lanes in ymm6 whose sum is the exact S_b); the lanes hold other partial sums, which
; the block contract allows (only the block's integer sum is defined).
; Registers besides the skeleton's (ymm11..14): zmm16..19 the block's activation as the row dots
; read it (rearranged once per block for the four rows), zmm20..25 per-type constants (IQ4_XS:
; and the block's sums), k1..k7 per-type masks. zmm16..31
; are not callee-saved on Win64 and need no vzeroupper.

%include "kquant_decode.inc"
%include "kquant_decode_prep.inc"

RODATA
align 64
; vpshufb selectors of a word per 128-bit lane from a row's 8 scale bytes (in every lane):
; lanes 0, 1 take byte %1, lanes 2, 3 byte %2 (zero-extended).
%macro SCALE_BYTES_BY_HALF 2
  times 16 db %1, -128
  times 16 db %2, -128
%endmacro
; Q4_K / Q5_K step k (qs bytes 64k..64k+63): the low nibbles are sub-blocks 4k | 4k + 2, the high
; nibbles 4k + 1 | 4k + 3 (each 256-bit half one sub-block).
k45v_scale_lo_0: SCALE_BYTES_BY_HALF 0, 2
k45v_scale_hi_0: SCALE_BYTES_BY_HALF 1, 3
k45v_scale_lo_1: SCALE_BYTES_BY_HALF 4, 6
k45v_scale_hi_1: SCALE_BYTES_BY_HALF 5, 7
; Q5_K: the qh bit of each half's sub-block (qh broadcast to both halves)
%macro BIT_BY_HALF 2
  times 32 db 1 << (%1)
  times 32 db 1 << (%2)
%endmacro
k5v_bit_lo_0: BIT_BY_HALF 0, 2
k5v_bit_hi_0: BIT_BY_HALF 1, 3
k5v_bit_lo_1: BIT_BY_HALF 4, 6
k5v_bit_hi_1: BIT_BY_HALF 5, 7
; IQ4_XS: vpermd indices spreading a row's 8 scale dwords over the lanes (lane i of step p: scale
; 4p + i), and the block's 8 sub-block sums into dword 0 of the lanes (the other dwords masked)
%assign p 0
%rep 2
align 64
iq4v_lane_scale_%[p]:
  %assign i 0
  %rep 4
    times 4 dd 4 * p + i
    %assign i i + 1
  %endrep
align 64
iq4v_lane_sum_%[p]:
  %assign i 0
  %rep 4
    dd 4 * p + i, 0, 0, 0
    %assign i i + 1
  %endrep
%assign p p + 1
%endrep
words_m128: times 16 dw -128
align 64
; Q6_K half h: word indices (vpermw) of the 16 scale words, lane i of the low nibbles' step takes
; scale 8h + i, of the high nibbles' 8h + 4 + i
%assign h 0
%rep 2
q6v_scale_lo_%[h]:
  %assign i 0
  %rep 4
    times 8 dw 8 * h + i
    %assign i i + 1
  %endrep
q6v_scale_hi_%[h]:
  %assign i 0
  %rep 4
    times 8 dw 8 * h + 4 + i
    %assign i i + 1
  %endrep
%assign h h + 1
%endrep
; Q6_K: qh (in both halves) shifted per word so that each half's 2-bit field lands at bits 4..5:
; the low nibbles' values take bits 0..1 | 2..3, the high nibbles' bits 4..5 | 6..7
q6v_shift_lo: times 16 dw 4
              times 16 dw 2
q6v_shift_hi: times 16 dw 0
              times 16 dw 2

; KV_PAIR_DOTS first, a, sa, b, sb: ymm/zmm6 (+)= the word-pair dots of zmm<a> with zmm<sa> and of
; zmm<b> with zmm<sb> (the first step of a row starts the sum); KV_FOLD: a row's 16 lanes into
; the skeleton's 8 (ymm6).
%macro KV_PAIR_DOTS 5
  %if %1
    vpmaddwd zmm6, zmm%2, zmm%3
  %else
    vpdpwssd zmm6, zmm%2, zmm%3
  %endif
  vpdpwssd zmm6, zmm%4, zmm%5
%endmacro

%macro KV_FOLD 0
  vextracti64x4 ymm0, zmm6, 1
  vpaddd ymm6, ymm6, ymm0
%endmacro

; ---- Q4_K / Q5_K ------------------------------------------------------------------------------
; Block: d, dmin, scales[12], (Q5_K: qh[32],) qs[128]. A 64-byte step k of qs holds sub-blocks
; 4k..4k + 3: low nibbles 4k (bytes 0..31) | 4k + 2 (bytes 32..63), high nibbles 4k + 1 | 4k + 3.
; The activation is rearranged to match once per block (zmm16 = x of sub-blocks 0 | 2, zmm17 =
; 1 | 3, zmm18 = 4 | 6, zmm19 = 5 | 7). Registers: ymm8 / ymm9 = K45_PREP's sc / m bytes of rows
; 0 | 2 and 1 | 3; zmm10 = 0x0f; zmm20 = 0x10 (Q5_K's fifth bit).

%macro K45V_SETUP 0
  vpbroadcastd zmm10, [rel low_nibble]
  vpbroadcastd zmm20, [rel bit_4]
%endmacro

%macro K45V_PREP 0
  K45_PREP
  vmovdqu64 ymm16, [kd_act + ACTK_QS]
  vinserti64x4 zmm16, zmm16, [kd_act + ACTK_QS + 64], 1
  vmovdqu64 ymm17, [kd_act + ACTK_QS + 32]
  vinserti64x4 zmm17, zmm17, [kd_act + ACTK_QS + 96], 1
  vmovdqu64 ymm18, [kd_act + ACTK_QS + 128]
  vinserti64x4 zmm18, zmm18, [kd_act + ACTK_QS + 192], 1
  vmovdqu64 ymm19, [kd_act + ACTK_QS + 160]
  vinserti64x4 zmm19, zmm19, [kd_act + ACTK_QS + 224], 1
%endmacro

; K45V_ROW r, qs offset, fifth bit: ymm6 = row r's int32 lanes
%macro K45V_ROW 3
  KD_ROW_ADDR %1
  %assign %%src 8 + ((%1) & 1)
  vshufi32x4 zmm7, zmm%[%%src], zmm%[%%src], ((%1) >> 1) * 0x55  ; the row's sc / m bytes in every lane
  %if %3
    vbroadcasti64x4 zmm5, [KD_R + 16]             ; qh in both halves
  %endif
  %assign %%k 0
  %rep 2
    %assign %%xlo 16 + 2 * %%k
    %assign %%xhi 17 + 2 * %%k
    vmovdqu64 zmm1, [KD_R + %2 + 64 * %%k]
    vpsrlw zmm2, zmm1, 4
    vpandq zmm1, zmm1, zmm10                      ; sub-blocks 4k | 4k + 2
    vpandq zmm2, zmm2, zmm10                      ; 4k + 1 | 4k + 3
    %if %3
      vptestmb k1, zmm5, [rel k5v_bit_lo_%[%%k]]
      vptestmb k2, zmm5, [rel k5v_bit_hi_%[%%k]]
      vpaddb zmm1{k1}, zmm1, zmm20
      vpaddb zmm2{k2}, zmm2, zmm20
    %endif
    vpmaddubsw zmm1, zmm1, zmm%[%%xlo]
    vpmaddubsw zmm2, zmm2, zmm%[%%xhi]
    vpshufb zmm3, zmm7, [rel k45v_scale_lo_%[%%k]]
    vpshufb zmm4, zmm7, [rel k45v_scale_hi_%[%%k]]
    KV_PAIR_DOTS %%k == 0, 1, 3, 2, 4
    %assign %%k %%k + 1
  %endrep
  KV_FOLD
%endmacro

%macro Q4KV_ROW 1
  K45V_ROW %1, 16, 0
%endmacro

%macro Q5KV_ROW 1
  K45V_ROW %1, 48, 1
%endmacro

; ------------------------------------------------------------------------------------------------
; void magnetar_matvec_q4_k_r4_avx512vnni(const void* w, const ActBlockK* x, float* y, int64_t rows,
;                                         int64_t cols)            cols % 256 == 0, cols > 0
; void magnetar_matvec_q5_k_r4_avx512vnni(...)                     the same for Q5_K
; ------------------------------------------------------------------------------------------------
FUNCTION matvec_q4_k_r4_avx512vnni, 5, KD_GPRS, 16
  KDECODE_MATVEC 144, K45V_SETUP, K45V_PREP, Q4KV_ROW, 1, 0

FUNCTION matvec_q5_k_r4_avx512vnni, 5, KD_GPRS, 16
  KDECODE_MATVEC 176, K45V_SETUP, K45V_PREP, Q5KV_ROW, 1, 0

; ---- Q6_K -------------------------------------------------------------------------------------
; Block: ql[128], qh[64], scales[16] (int8), d (f16) at 208. Half h's 64 ql bytes: low nibbles are
; values 128h + 0..63, high nibbles 128h + 64..127, each 128-bit lane 16 values of one scale
; (8h + i, 8h + 4 + i), so the activation is read in its own order (zmm16..19 = x[0..255]).
; Registers: zmm10 = 0x0f, zmm20 = 0x30, zmm21..24 = the vpermw scale indices.

%macro Q6KV_SETUP 0
  vpbroadcastd zmm10, [rel low_nibble]
  vpbroadcastd zmm20, [rel bits_45]
  vmovdqa64 zmm21, [rel q6v_scale_lo_0]
  vmovdqa64 zmm22, [rel q6v_scale_hi_0]
  vmovdqa64 zmm23, [rel q6v_scale_lo_1]
  vmovdqa64 zmm24, [rel q6v_scale_hi_1]
%endmacro

%macro Q6KV_PREP 0
  Q6K_PREP
  vmovdqu64 zmm16, [kd_act + ACTK_QS]
  vmovdqu64 zmm17, [kd_act + ACTK_QS + 64]
  vmovdqu64 zmm18, [kd_act + ACTK_QS + 128]
  vmovdqu64 zmm19, [kd_act + ACTK_QS + 192]
%endmacro

%macro Q6KV_ROW 1
  KD_ROW_ADDR %1
  vpmovsxbw ymm5, [KD_R + 192]                    ; the 16 scales as words
  vpmaddwd ymm4, ymm5, [kd_act + ACTK_BSUMS]
  vpslld ymm4, ymm4, 5                            ; the -32 offset's lanes (subtracted below)
  %assign %%h 0
  %rep 2
    %assign %%xlo 16 + 2 * %%h
    %assign %%xhi 17 + 2 * %%h
    %assign %%ilo 21 + 2 * %%h
    %assign %%ihi 22 + 2 * %%h
    vmovdqu64 zmm1, [KD_R + 64 * %%h]             ; ql of the half
    vbroadcasti64x4 zmm2, [KD_R + 128 + 32 * %%h] ; its qh in both halves
    vpsrlw zmm0, zmm1, 4
    vpandq zmm1, zmm1, zmm10
    vpandq zmm0, zmm0, zmm10
    vpsllvw zmm3, zmm2, [rel q6v_shift_lo]
    vpsrlvw zmm2, zmm2, [rel q6v_shift_hi]
    vpternlogd zmm1, zmm3, zmm20, 0xf8            ; low nibbles | (qh field & 0x30): q in 0..63
    vpternlogd zmm0, zmm2, zmm20, 0xf8
    vpmaddubsw zmm1, zmm1, zmm%[%%xlo]
    vpmaddubsw zmm0, zmm0, zmm%[%%xhi]
    vpermw zmm3, zmm%[%%ilo], zmm5
    vpermw zmm2, zmm%[%%ihi], zmm5
    KV_PAIR_DOTS %%h == 0, 1, 3, 0, 2
    %assign %%h %%h + 1
  %endrep
  KV_FOLD
  vpsubd ymm6, ymm6, ymm4
%endmacro

; ------------------------------------------------------------------------------------------------
; void magnetar_matvec_q6_k_r4_avx512vnni(const void* w, const ActBlockK* x, float* y, int64_t rows,
;                                         int64_t cols)            cols % 256 == 0, cols > 0
; ------------------------------------------------------------------------------------------------
FUNCTION matvec_q6_k_r4_avx512vnni, 5, KD_GPRS, 16
  KDECODE_MATVEC 210, Q6KV_SETUP, Q6KV_PREP, Q6KV_ROW, 0, 0

; ---- IQ4_XS -----------------------------------------------------------------------------------
; Block: d, scales_h, scales_l[4], qs[128]. A 64-byte step p of qs holds sub-blocks 4p..4p + 3, one
; per 128-bit lane: the low nibbles are their values 0..15, the high nibbles 16..31. The activation
; is rearranged to match once per block (zmm16 / zmm17 = x values 0..15 / 16..31 of sub-blocks
; 0..3, zmm18 / zmm19 of 4..7). The codebook value is looked up + 128 (1..241, vpdpbusd's unsigned
; operand) and both halves of a step go into one `vpdpbusd` accumulator whose lane i is sub-block
; 4p + i; the accumulator starts at -128 x (that sub-block's sum of x) in the lane's dword 0
; (zmm20 / zmm21, made once per block from the bsums), so its lane sums are the exact dots, and
; one `vpmulld` by the lane's scale (zmm3 / zmm5, the row's scale words widened and spread) weighs
; them: per step 3 multiply-pipe instructions and no sign handling (the vpmaddubsw form needed
; |x| against w sign(x): 4 multiplies and 2 masked subtractions per step).
; Registers: zmm10 = 0x0f, zmm11 = the codebook + 128 in every lane, zmm22 / zmm23 = the vpermd
; indices of the two steps' scales, zmm24 / zmm25 = those of the block's -128 x sums, k7 = dword
; 0 of each lane.

%macro IQ4V_SETUP 0
  vpbroadcastd zmm10, [rel low_nibble]
  vmovdqu64 zmm11, [rel iq4_u_values]
  vmovdqa64 zmm22, [rel iq4v_lane_scale_0]
  vmovdqa64 zmm23, [rel iq4v_lane_scale_1]
  vmovdqa64 zmm24, [rel iq4v_lane_sum_0]
  vmovdqa64 zmm25, [rel iq4v_lane_sum_1]
  mov kd_tmpd, 0x1111
  kmovw k7, kd_tmpd
%endmacro

%macro IQ4V_PREP 0
  IQ4_PREP_SCALES
  %assign %%p 0
  %rep 2
    %assign %%lo 16 + 2 * %%p
    %assign %%hi 17 + 2 * %%p
    vmovdqu64 zmm0, [kd_act + ACTK_QS + 128 * %%p]       ; sub-blocks 4p, 4p + 1
    vmovdqu64 zmm1, [kd_act + ACTK_QS + 128 * %%p + 64]  ; 4p + 2, 4p + 3
    vshufi64x2 zmm%[%%lo], zmm0, zmm1, 0x88              ; values 0..15 of each
    vshufi64x2 zmm%[%%hi], zmm0, zmm1, 0xdd              ; values 16..31
    %assign %%p %%p + 1
  %endrep
  vmovdqu ymm0, [kd_act + ACTK_BSUMS]
  vpmaddwd ymm0, ymm0, [rel words_m128]                ; dword j = -128 (bsums 2j + 2j + 1)
  vpermd zmm20{k7}{z}, zmm24, zmm0                      ; lane i, dword 0: sub-block i's
  vpermd zmm21{k7}{z}, zmm25, zmm0                      ; sub-block 4 + i's
%endmacro

%macro IQ4V_ROW 1
  KD_ROW_ADDR %1
  vpmovsxwd ymm9, [rsp + IQ4_SCALES + 32 * ((%1) & 1) + 16 * ((%1) >> 1)]  ; the row's 8 scales
  vpermd zmm3, zmm22, zmm9                        ; lane i: scale i (step 0), 4 + i (step 1)
  vpermd zmm5, zmm23, zmm9
  %assign %%p 0
  %rep 2
    %assign %%xlo 16 + 2 * %%p
    %assign %%xhi 17 + 2 * %%p
    %assign %%sum 20 + %%p
    %assign %%sc 3 + 2 * %%p
    vmovdqu64 zmm1, [KD_R + 8 + 64 * %%p]
    vpsrlw zmm2, zmm1, 4
    vpandq zmm1, zmm1, zmm10
    vpandq zmm2, zmm2, zmm10
    vpshufb zmm1, zmm11, zmm1                       ; codebook + 128
    vpshufb zmm2, zmm11, zmm2
    vmovdqa64 zmm4, zmm%[%%sum]
    vpdpbusd zmm4, zmm1, zmm%[%%xlo]
    vpdpbusd zmm4, zmm2, zmm%[%%xhi]
    %if %%p
      vpmulld zmm4, zmm4, zmm%[%%sc]
      vpaddd zmm6, zmm6, zmm4
    %else
      vpmulld zmm6, zmm4, zmm%[%%sc]
    %endif
    %assign %%p %%p + 1
  %endrep
  KV_FOLD
%endmacro

; ------------------------------------------------------------------------------------------------
; void magnetar_matvec_iq4_xs_r4_avx512vnni(const void* w, const ActBlockK* x, float* y,
;                                           int64_t rows, int64_t cols)   cols % 256 == 0, cols > 0
; ------------------------------------------------------------------------------------------------
FUNCTION matvec_iq4_xs_r4_avx512vnni, 5, KD_GPRS, 16
  KDECODE_MATVEC 136, IQ4V_SETUP, IQ4V_PREP, IQ4V_ROW, 0, 64

; ---- Q2_K / Q3_K --------------------------------------------------------------------------------
; Q2_K block (84 bytes): scales[16] (low nibble the scale, high nibble the min of 16 values),
; qs[64], d, dmin. Q3_K (110): hmask[32], qs[64], scales[12] (16 packed 6-bit scales), d. Value l
; (0..31) of run r (0..7) is the 2-bit field at bit 2 (r % 4) of qs[32 (r / 4) + l] (Q3_K: plus
; bit r of hmask[l] as 4), so one 64-byte load of qs, shifted right by 2s and masked, holds runs s
; (bytes 0..31) | 4 + s (32..63): 128-bit lanes = sub-blocks 2s, 2s + 1 | 8 + 2s, 9 + 2s. The
; activation is rearranged to match once per block (zmm16 + s = x of runs s | 4 + s). Per step s:
; vpmaddubsw of the unsigned values (Q2_K 0..3, Q3_K q + 4h = 0..7) with x, vpdpwssd with the
; lane's scale word (vpermw of the row's 16 scale words). Q2_K's mins term is formed for the four
; rows at once in Q2KV_PREP (the skeleton's xmm11); Q3_K's -4 comes off as
; 4 (sc . bsums), as in the AVX2 kernel. Exact: the pairs stay below 2^11.
; Registers: zmm10 = 0x03, zmm20 = 0x04 (Q3_K), zmm21..24 = the vpermw scale indices of steps
; 0..3, ymm8 / ymm9 = Q2_K's scale nibbles of rows 0 | 2 and 1 | 3 (Q2KV_PREP).

RODATA
align 64
; step s: lane 0 takes scale word 2s, lane 1 2s + 1, lane 2 8 + 2s, lane 3 9 + 2s (vpermw indices)
%assign s 0
%rep 4
q23v_scale_%[s]:
  times 8 dw 2 * s
  times 8 dw 2 * s + 1
  times 8 dw 8 + 2 * s
  times 8 dw 9 + 2 * s
%assign s s + 1
%endrep
; Q3_K scales, per 128-bit lane = a row's bytes 94..109 (scales[i] at 2 + i): bytes 0..7 and 8..15
; of q3v_low_src take scales[0..7] (the second copy shifted by 4), q3v_high_src byte k
; scales[8 + k % 4] (dword q shifted by 2q)
q3v_low_src:    times 4 db 2, 3, 4, 5, 6, 7, 8, 9, 2, 3, 4, 5, 6, 7, 8, 9
q3v_low_shift:  times 4 dq 0, 4
q3v_high_src:   times 16 db 10, 11, 12, 13
q3v_high_shift: times 4 dd 0, 2, 4, 6
; Q3_K step s: hmask (in both halves) bit s for the low half's run s, bit 4 + s for run 4 + s
%assign s 0
%rep 4
q3v_bit_%[s]: BIT_BY_HALF s, 4 + s
%assign s s + 1
%endrep

%macro Q23V_SETUP 0
  vpbroadcastd zmm10, [rel two_bit_mask]
  vpbroadcastd zmm20, [rel bit_2]
  vmovdqa64 zmm21, [rel q23v_scale_0]
  vmovdqa64 zmm22, [rel q23v_scale_1]
  vmovdqa64 zmm23, [rel q23v_scale_2]
  vmovdqa64 zmm24, [rel q23v_scale_3]
%endmacro

; zmm16 + s = x of runs s | 4 + s
%macro Q23V_ACT 0
  %assign %%s 0
  %rep 4
    %assign %%x 16 + %%s
    vmovdqu64 ymm%[%%x], [kd_act + ACTK_QS + 32 * %%s]
    vinserti64x4 zmm%[%%x], zmm%[%%x], [kd_act + ACTK_QS + 128 + 32 * %%s], 1
    %assign %%s %%s + 1
  %endrep
%endmacro

; Q23V_STEPS qs offset, HIGH_BIT: ymm6 = the row's int32 lanes (ymm5 = its 16 scale words, KD_R
; its block); HIGH_BIT s adds the third bit to zmm0's values (Q3_K) or nothing (Q2_K).
%macro Q23V_STEPS 2
  vmovdqu64 zmm1, [KD_R + (%1)]
  %assign %%s 0
  %rep 4
    %if %%s
      vpsrlw zmm0, zmm1, 2 * %%s
      vpandq zmm0, zmm0, zmm10
    %else
      vpandq zmm0, zmm1, zmm10
    %endif
    %2 %%s
    %assign %%x 16 + %%s
    %assign %%i 21 + %%s
    vpmaddubsw zmm0, zmm0, zmm%[%%x]
    vpermw zmm3, zmm%[%%i], zmm5
    %if %%s
      vpdpwssd zmm6, zmm0, zmm3
    %else
      vpmaddwd zmm6, zmm0, zmm3
    %endif
    %assign %%s %%s + 1
  %endrep
  KV_FOLD
%endmacro

; zmm0 += 4 where the value's hmask bit (zmm7: the row's hmask in both halves) is set
%macro Q3V_HIGH_BIT 1
  vptestmb k1, zmm7, [rel q3v_bit_%1]
  vpaddb zmm0{k1}, zmm0, zmm20
%endmacro

; The block's shared work: [rsp + 4 r] = d_r * x.d; xmm11 += fma(dmin_r * x.d, float(the row's
; mins . bsums)); ymm8 / ymm9 = the scale nibbles of rows 0 | 2, 1 | 3; the activation.
%macro Q2KV_PREP 0
  Q2K_HEADERS
  vbroadcasti64x4 zmm4, [kd_act + ACTK_BSUMS]
  vpsrlw ymm3, ymm8, 4
  vpand ymm3, ymm3, [rel low_nibble]
  vpmovzxbw zmm3, ymm3                            ; the min words of rows 0 | 2
  vpmaddwd zmm3, zmm3, zmm4
  vpsrlw ymm5, ymm9, 4
  vpand ymm5, ymm5, [rel low_nibble]
  vpmovzxbw zmm5, ymm5                            ; rows 1 | 3
  vpmaddwd zmm5, zmm5, zmm4
  vextracti64x4 ymm6, zmm3, 1                     ; row 2's 8 partial sums (ymm3: row 0's)
  vextracti64x4 ymm7, zmm5, 1                     ; row 3's (ymm5: row 1's)
  vphaddd ymm3, ymm3, ymm5
  vphaddd ymm6, ymm6, ymm7
  vphaddd ymm3, ymm3, ymm6                        ; per 128-bit lane: rows 0..3's partial sums
  vextracti128 xmm6, ymm3, 1
  vpaddd xmm3, xmm3, xmm6                         ; [mins_0 .. mins_3], exact
  vcvtdq2ps xmm3, xmm3
  vfmadd231ps xmm11, xmm2, xmm3
  vpand ymm8, ymm8, [rel low_nibble]
  vpand ymm9, ymm9, [rel low_nibble]
  Q23V_ACT
%endmacro

%macro Q2KV_ROW 1
  KD_ROW_ADDR %1
  %assign %%src 8 + ((%1) & 1)
  %if (%1) >> 1
    vextracti128 xmm5, ymm%[%%src], 1
    vpmovzxbw ymm5, xmm5
  %else
    vpmovzxbw ymm5, xmm%[%%src]
  %endif
  Q23V_STEPS 16, NO_HIGH_BIT
%endmacro

; Q3_K's scratch: the four rows' 16 scale words (32 bytes a row), then their 4 (sc . bsums) lanes
%define Q3V_WORDS  KD_SCRATCH
%define Q3V_OFFSET (KD_SCRATCH + 128)

; The block's shared work: [rsp + 4 r] = d_r * x.d; the four rows' 16 signed scales (6 bits - 32),
; one row per 128-bit lane (the AVX2 kernel's unpacking, four rows at once), as words and their
; 4 (sc . bsums) lanes in the scratch; the activation.
%macro Q3KV_PREP 0
  D_PREP 108
  vmovdqu xmm0, [kd_w + 94]                       ; bytes 2..13: scales[0..11] (94: inside the block)
  vinserti32x4 zmm0, zmm0, [kd_w + kd_o1 + 94], 1
  vinserti32x4 zmm0, zmm0, [kd_w + kd_o2 + 94], 2
  vinserti32x4 zmm0, zmm0, [kd_w + kd_o3 + 94], 3
  vpshufb zmm1, zmm0, [rel q3v_low_src]           ; scales[0..7] twice
  vpsrlvq zmm1, zmm1, [rel q3v_low_shift]         ; the second copy's high nibbles
  vpandd zmm1, zmm1, [rel low_nibble]{1to16}      ; low 4 bits of scales 0..7 | 8..15
  vpshufb zmm2, zmm0, [rel q3v_high_src]          ; byte k: scales[8 + k % 4]
  vpsrlvd zmm2, zmm2, [rel q3v_high_shift]        ; its bits 2 (k / 4) at bits 0..1
  vpsllw zmm2, zmm2, 4
  vpternlogd zmm1, zmm2, [rel bits_45]{1to16}, 0xf8  ; 16 scales per row, 0..63
  vpbroadcastd zmm4, [rel words_32]
  vbroadcasti64x4 zmm5, [kd_act + ACTK_BSUMS]
  vpmovzxbw zmm2, ymm1                            ; rows 0 | 1
  vpsubw zmm2, zmm2, zmm4
  vmovdqu64 [rsp + Q3V_WORDS], zmm2
  vpmaddwd zmm2, zmm2, zmm5
  vpslld zmm2, zmm2, 2
  vmovdqu64 [rsp + Q3V_OFFSET], zmm2
  vextracti64x4 ymm1, zmm1, 1
  vpmovzxbw zmm2, ymm1                            ; rows 2 | 3
  vpsubw zmm2, zmm2, zmm4
  vmovdqu64 [rsp + Q3V_WORDS + 64], zmm2
  vpmaddwd zmm2, zmm2, zmm5
  vpslld zmm2, zmm2, 2
  vmovdqu64 [rsp + Q3V_OFFSET + 64], zmm2
  Q23V_ACT
%endmacro

%macro Q3KV_ROW 1
  KD_ROW_ADDR %1
  vmovdqu ymm5, [rsp + Q3V_WORDS + 32 * (%1)]
  vbroadcasti64x4 zmm7, [KD_R]                    ; hmask in both halves
  Q23V_STEPS 32, Q3V_HIGH_BIT
  vpsubd ymm6, ymm6, [rsp + Q3V_OFFSET + 32 * (%1)]
%endmacro

; ------------------------------------------------------------------------------------------------
; void magnetar_matvec_q2_k_r4_avx512vnni(const void* w, const ActBlockK* x, float* y, int64_t rows,
;                                         int64_t cols)            cols % 256 == 0, cols > 0
; void magnetar_matvec_q3_k_r4_avx512vnni(...)                     the same for Q3_K
; Twins: matvec_q2_k_ref, matvec_q3_k_ref (engine/kernels/kquant_low_dot.cpp).
; ------------------------------------------------------------------------------------------------
FUNCTION matvec_q2_k_r4_avx512vnni, 5, KD_GPRS, 16
  KDECODE_MATVEC 84, Q23V_SETUP, Q2KV_PREP, Q2KV_ROW, 1, 0

FUNCTION matvec_q3_k_r4_avx512vnni, 5, KD_GPRS, 16
  KDECODE_MATVEC 110, Q23V_SETUP, Q3KV_PREP, Q3KV_ROW, 0, 256
