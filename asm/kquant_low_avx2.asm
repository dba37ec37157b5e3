; Low-bit GGUF integer matrix–vector kernels, AVX2 + FMA + F16C: Q2_K and Q3_K against Q8_K-style
; activation blocks (ActBlockK = {f32 d; pad to 32; i16 bsums[16]; i8 qs[256]}: 320 bytes, as
; asm/kquant_avx2.asm), IQ4_NL, Q4_1, Q5_0 and Q5_1 against Q8_0-style ActBlocks ({f32 d; i32 sum;
; i8 qs[32]}: 40 bytes, quant_common.inc). C++ twins and contracts: engine/kernels/kquant_low.h
; (kquant_low_dot.cpp). Block layouts are GGUF's (kquants.h), at any alignment.
;
; One skeleton (LANES_MATVEC) walks rows and blocks; each type supplies one macro that leaves a
; block's 8 exact int32 lanes in ymm7 (and adds its mins term to xmm9). Quants are unpacked to
; bytes in registers; vpmaddubsw multiplies them (unsigned) with the int8 activations into int16
; pairs, vpmaddwd weighs the pairs with the sub-block scales (or 1) into int32 lanes. Q2_K / Q3_K
; follow the block contract (the lanes' integer sum S_b, acc = fma(d_w * d_x, float(S_b), acc),
; y = acc - mins), the 32-value types the lanes contract (each lane added as fma(d_w * d_x,
; float(lane), acc), the 8 float lanes summed in a fixed tree at the row's end), exactly as the
; twins do (kquant_lanes.h), so asm and twin agree bit for bit.

%include "quant_common.inc"             ; abi.inc, reduce.inc, the ActBlock layout (ACT_*)

%include "kquant_common.inc"            ; the ActBlockK layout (ACTK_*), the shared constants

RODATA
align 32
ones_words:     times 16 dw 1
low_high_shift: dq 0, 0, 4, 4           ; vpsrlvq: low lane the low nibbles, high lane the high ones
qh_byte_of:     times 8 db 0            ; Q5: byte j of the register <- byte j / 8 of qh
                times 8 db 1
                times 8 db 2
                times 8 db 3
qh_bit_of:      times 4 db 1, 2, 4, 8, 16, 32, 64, 128   ; ... and keeps bit j % 8

; xmm%1 = float(FP16 at %2) * the activation block's d (offset 0 in both layouts, block at g5)
%macro HALF_TIMES_XD 2
  movzx eax, word %2
  vmovd xmm%1, eax
  vcvtph2ps xmm%1, xmm%1
  vmulss xmm%1, xmm%1, [g5]
%endmacro

; LANES_MATVEC block_bytes, d_offset, act_bytes, log2(values per block), SETUP, BLOCK, mins,
; per_block
; void fn(const void* w, const Act* x, float* y, int64_t rows, int64_t cols): the whole kernel.
; Registers: g0 = weight block, g1 = first activation block, g2 = y, g3 = rows left, g4 = blocks
; per row, g5 = activation block, g6 = scratch, g7 = blocks left; ymm8 = the accumulator (the
; 8 float lanes; per_block = 1: one float, the block contract), xmm9 = the mins term. SETUP loads
; constants into ymm5, ymm6, ymm14, ymm15; BLOCK (weight block at g0, activation at g5) leaves
; the int32 lanes in ymm7 and may use ymm0..4, ymm10..13, and for a mins term (mins = 1) add to
; xmm9; y = acc (per_block) or tree(lanes), minus xmm9.
%macro LANES_MATVEC 8
  shr g4, %4
  test g3, g3
  jle %%done
  %5
%%row:
  vxorps xmm8, xmm8, xmm8
  vxorps xmm9, xmm9, xmm9
  mov g5, g1
  mov g7, g4
%%block:
  %6
  %if %8
    HSUM_EPI32 7, 0                    ; S_b
    vcvtdq2ps xmm7, xmm7
    HALF_TIMES_XD 13, [g0 + %2]
    vfmadd231ss xmm8, xmm13, xmm7
  %else
    vcvtdq2ps ymm7, ymm7
    HALF_TIMES_XD 13, [g0 + %2]
    vbroadcastss ymm13, xmm13
    vfmadd231ps ymm8, ymm13, ymm7
  %endif
  add g0, %1
  add g5, %3
  dec g7
  jnz %%block
  %if %8
    vmovaps xmm0, xmm8
  %else
    vmovaps ymm0, ymm8
    HSUM_YMM0                          ; the twin's tree
  %endif
  %if %7
    vsubss xmm0, xmm0, xmm9
  %endif
  vmovss [g2], xmm0
  add g2, 4
  dec g3
  jnz %%row
%%done:
  RET
%endmacro

; Q2_K / Q3_K: the integer steps are kquant_common.inc's TWO_BIT_RUNS (shared with the four-row
; kernels, asm/kquant_decode_avx2.asm) into ymm7: ymm10 = the 16 scale words, ymm11 / ymm12 its
; scratch, ymm14 = 0x03; Q3_K's hmask in ymm13, 0x04 in ymm6.
%macro Q3_HIGH_BIT 1
  Q3_RUN_HIGH_BIT 13, 6, %1
%endmacro

; ------------------------------------------------------------------------------------------------
; void magnetar_matvec_q2_k_avx2(const void* w, const ActBlockK* x, float* y, int64_t rows,
;                                int64_t cols)                     cols % 256 == 0, cols > 0
; Block (84 bytes): scales[16] (low nibble scale, high nibble min of 16 values), qs[64], d, dmin.
; ------------------------------------------------------------------------------------------------
%macro Q2_K_SETUP 0
  vmovdqa ymm15, [rel low_nibble]
  vmovdqa ymm14, [rel two_bit_mask]
%endmacro

%macro Q2_K_BLOCK 0
  vmovdqu xmm0, [g0]
  vpsrlw xmm1, xmm0, 4
  vpand xmm0, xmm0, xmm15
  vpand xmm1, xmm1, xmm15
  vpmovzxbw ymm10, xmm0                ; 16 scale words
  vpmovzxbw ymm1, xmm1                 ; 16 min words
  vpmaddwd ymm1, ymm1, [g5 + ACTK_BSUMS]
  vextracti128 xmm2, ymm1, 1
  vpaddd xmm1, xmm1, xmm2
  vphaddd xmm1, xmm1, xmm1
  vphaddd xmm1, xmm1, xmm1             ; mins . bsums, exact
  vcvtdq2ps xmm1, xmm1
  HALF_TIMES_XD 2, [g0 + 82]
  vfmadd231ss xmm9, xmm2, xmm1
  TWO_BIT_RUNS g0 + 16, g5, 10, 11, 12, 7, 14, NO_HIGH_BIT
%endmacro

FUNCTION matvec_q2_k_avx2, 5, 8, 16
  LANES_MATVEC 84, 80, ACTK_BYTES, 8, Q2_K_SETUP, Q2_K_BLOCK, 1, 1

; ------------------------------------------------------------------------------------------------
; void magnetar_matvec_q3_k_avx2(const void* w, const ActBlockK* x, float* y, int64_t rows,
;                                int64_t cols)                     cols % 256 == 0, cols > 0
; Block (110 bytes): hmask[32], qs[64], scales[12] (16 6-bit scales), d. A value is
; d (sc - 32) (q + 4 h - 4): the unsigned q + 4 h (0..7) goes to vpmaddubsw and lane i takes
; -4 (sc[2i] bsums[2i] + sc[2i+1] bsums[2i+1]) off exactly.
; ------------------------------------------------------------------------------------------------
%macro Q3_K_SETUP 0
  vmovdqa ymm14, [rel two_bit_mask]
  vmovdqa ymm6, [rel bit_2]
%endmacro

%macro Q3_K_BLOCK 0
  vmovdqu ymm13, [g0]                  ; hmask
  Q3K_BLOCK_LANES g0, g5, 10, 11, 12, 7, 14, 3, Q3_HIGH_BIT
%endmacro

FUNCTION matvec_q3_k_avx2, 5, 8, 16
  LANES_MATVEC 110, 108, ACTK_BYTES, 8, Q3_K_SETUP, Q3_K_BLOCK, 0, 1

; ------------------------------------------------------------------------------------------------
; The 32-value types: void magnetar_matvec_<type>_avx2(const void* w, const ActBlock* x, float* y,
; int64_t rows, int64_t cols)                                       cols % 32 == 0, cols > 0
; Element j is the low nibble of qs[j] (j < 16) or the high nibble of qs[j - 16]: one 16-byte
; load in both lanes, the high lane shifted right by 4, gives all 32 in element order. Lane i =
; elements 4i..4i+3 (vpmaddwd with ones).
; ------------------------------------------------------------------------------------------------
%macro B32_SETUP 0
  vmovdqa ymm15, [rel low_nibble]
  vmovdqa ymm6, [rel ones_words]
  vmovdqa ymm5, [rel low_high_shift]
%endmacro

; ymm0 = the 32 nibbles of the qs[16] at %1, in element order
%macro B32_NIBBLES 1
  vbroadcasti128 ymm0, %1
  vpsrlvq ymm0, ymm0, ymm5
  vpand ymm0, ymm0, ymm15
%endmacro

; ymm0 |= 16 at element j where bit j of the qh dword at %1 is set
%macro B32_FIFTH_BIT 1
  vpbroadcastd ymm1, %1
  vpshufb ymm1, ymm1, [rel qh_byte_of]
  vpand ymm1, ymm1, [rel qh_bit_of]
  vpcmpeqb ymm1, ymm1, [rel qh_bit_of]
  vpand ymm1, ymm1, [rel bit_4]
  vpor ymm0, ymm0, ymm1
%endmacro

; ymm7 = the lanes of the unsigned quants in ymm0 times the activation
%macro B32_LANES 0
  vpmaddubsw ymm0, ymm0, [g5 + ACT_QS]
  vpmaddwd ymm7, ymm0, ymm6
%endmacro

; xmm9 -= (FP16 min at %1) * d_x * float(sum of x): the twin's fma(-(m_w d_x), sum, mins)
%macro B32_MIN_TERM 1
  vmovd xmm1, [g5 + ACT_SUM]
  vcvtdq2ps xmm1, xmm1
  HALF_TIMES_XD 2, %1
  vfnmadd231ss xmm9, xmm2, xmm1
%endmacro

; IQ4_NL (18 bytes: d, qs[16]): weights are the codebook's int8 values (vpshufb); vpmaddubsw
; takes |w| unsigned and sign(w) x (vpsignb; |w|, |x| <= 127, so no pair sum saturates).
%macro IQ4_NL_SETUP 0
  B32_SETUP
  vmovdqa ymm14, [rel iq4_values]
%endmacro

%macro IQ4_NL_BLOCK 0
  B32_NIBBLES [g0 + 2]
  vpshufb ymm0, ymm14, ymm0
  vmovdqu ymm1, [g5 + ACT_QS]
  vpsignb ymm1, ymm1, ymm0
  vpsignb ymm0, ymm0, ymm0
  vpmaddubsw ymm0, ymm0, ymm1
  vpmaddwd ymm7, ymm0, ymm6
%endmacro

FUNCTION matvec_iq4_nl_avx2, 5, 8, 16
  LANES_MATVEC 18, 0, ACT_BLOCK, 5, IQ4_NL_SETUP, IQ4_NL_BLOCK, 0, 0

; Q4_1 (20 bytes: d, m, qs[16]): value q d + m.
%macro Q4_1_BLOCK 0
  B32_NIBBLES [g0 + 4]
  B32_LANES
  B32_MIN_TERM [g0 + 2]
%endmacro

FUNCTION matvec_q4_1_avx2, 5, 8, 16
  LANES_MATVEC 20, 0, ACT_BLOCK, 5, B32_SETUP, Q4_1_BLOCK, 1, 0

; Q5_0 (22 bytes: d, qh[4], qs[16]): value (q - 16) d; each lane takes 2 sum(x) off.
%macro Q5_0_BLOCK 0
  B32_NIBBLES [g0 + 6]
  B32_FIFTH_BIT [g0 + 2]
  B32_LANES
  vpbroadcastd ymm1, [g5 + ACT_SUM]
  vpslld ymm1, ymm1, 1
  vpsubd ymm7, ymm7, ymm1
%endmacro

FUNCTION matvec_q5_0_avx2, 5, 8, 16
  LANES_MATVEC 22, 0, ACT_BLOCK, 5, B32_SETUP, Q5_0_BLOCK, 0, 0

; Q5_1 (24 bytes: d, m, qh[4], qs[16]): value q d + m.
%macro Q5_1_BLOCK 0
  B32_NIBBLES [g0 + 8]
  B32_FIFTH_BIT [g0 + 4]
  B32_LANES
  B32_MIN_TERM [g0 + 2]
%endmacro

FUNCTION matvec_q5_1_avx2, 5, 8, 16
  LANES_MATVEC 24, 0, ACT_BLOCK, 5, B32_SETUP, Q5_1_BLOCK, 1, 0
