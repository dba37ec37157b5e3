; K-quant integer matrix–vector kernels, AVX2 + FMA + F16C: Q4_K, Q5_K, Q6_K and IQ4_XS weights against
; activations quantized to Q8_K-style blocks (ActBlockK = {f32 d; pad to 32; i16 bsums[16];
; i8 qs[256]}: 320 bytes, qs at 64). C++ twins and contracts: engine/kernels/kquants.h
; (matvec_q4_k_ref, matvec_q5_k_ref, matvec_q6_k_ref); block layouts are GGUF's (BlockQ4_K 144
; bytes, BlockQ5_K 176, BlockQ6_K 210; any alignment).
;
; Method (per row, per 256-value super-block): the quants are unpacked to bytes in registers,
; vpmaddubsw multiplies them with the int8 activations into int16 pairs, vpmaddwd weighs the
; pairs with the sub-block scale (broadcast by vpshufb) into 8 int32 lanes, exact. Q4_K's mins
; and Q6_K's -32 offset come from the activation's 16-value sums (bsums). The block contract
; (kquants.h): the lanes' integer sum S_b is converted to float once and added as
; acc = fma(d_w * d_x, S_b, acc); y = acc [- mins] at the row's end — the twin's operations, so
; asm and twin agree bit for bit. The pieces the prefill kernels share (scale and min decoding,
; constants) are kquant_common.inc's.

%include "kquant_common.inc"

; xmm%1 = float(half at [%2]) * activation d at [%3]; clobbers g8.
%macro SCALE_TIMES_XD 3
  movzx g8d, word %2
  vmovd xmm%1, g8d
  vcvtph2ps xmm%1, xmm%1
  vmulss xmm%1, xmm%1, %3
%endmacro

; Q4_K / Q5_K block at g0, activation block at g5: ymm10 = the 8 sub-block scales as words (in
; both lanes); xmm9 += dmin * x.d * (mins . (bsums[2j] + bsums[2j + 1])).
%macro K_SCALES_AND_MINS 0
  K_SCALE_MIN_WORDS 10, 11
  vmovdqu xmm12, [g5 + ACTK_BSUMS]
  vphaddw xmm12, xmm12, [g5 + ACTK_BSUMS + 16]
  vpmaddwd xmm12, xmm12, xmm11
  vphaddd xmm12, xmm12, xmm12
  vphaddd xmm12, xmm12, xmm12
  vcvtdq2ps xmm12, xmm12
  SCALE_TIMES_XD 13, [g0 + 2], [g5 + ACTK_D]
  vfmadd231ss xmm9, xmm13, xmm12
%endmacro

; ymm7 += the sub-block's int32 lanes: ymm0 = 32 unsigned quants of sub-block %1, multiplied
; with the activation's values 32 %1 .. 32 %1 + 31 and weighed by scale word %1.
%macro K_SUBBLOCK_DOT 1
  vpmaddubsw ymm0, ymm0, [g5 + ACTK_QS + 32 * %1]
  vpshufb ymm2, ymm10, [rel scale_word_%[%1]]
  vpmaddwd ymm0, ymm0, ymm2
  vpaddd ymm7, ymm7, ymm0
%endmacro

; ymm7 += sub-block %2's int32 lanes; ymm%1 holds its 32 indices in value order.
%macro IQ4_SUBBLOCK_DOT 2
  vpshufb ymm%1, ymm15, ymm%1          ; int8 weights
  vmovdqu ymm0, [g5 + ACTK_QS + 32 * %2]
  vpsignb ymm0, ymm0, ymm%1            ; x * sign(w)
  vpsignb ymm%1, ymm%1, ymm%1          ; |w|
  vpmaddubsw ymm0, ymm%1, ymm0
  vpshufb ymm2, ymm10, [rel scale_word_%[%2]]
  vpmaddwd ymm0, ymm0, ymm2
  vpaddd ymm7, ymm7, ymm0
%endmacro

; Row end: y = acc (%1 = 1: minus the mins term xmm9, Q4_K / Q5_K); next row.
%macro K_ROW_END 1
  %if %1
    vsubss xmm8, xmm8, xmm9
  %endif
  vmovss [g2], xmm8
  add g2, 4
  dec g3
  jnz .row
%endmacro

; Block end: acc = fma(d * x.d, float(S_b), acc), S_b = the sum of ymm7's lanes; next block.
%macro K_BLOCK_END 2                    ; offset of d, block bytes
  HSUM_EPI32 7, 0
  vcvtdq2ps xmm7, xmm7
  SCALE_TIMES_XD 13, [g0 + %1], [g5 + ACTK_D]
  vfmadd231ss xmm8, xmm13, xmm7
  add g0, %2
  add g5, ACTK_BYTES
  dec g7
  jnz .block
%endmacro

%macro K_ROW_BEGIN 0
  vxorps xmm8, xmm8, xmm8              ; acc
  vxorps xmm9, xmm9, xmm9              ; mins term
  mov g5, g1                           ; activation block
  mov g7, g4
%endmacro

; ------------------------------------------------------------------------------------------------
; void magnetar_matvec_q4_k_avx2(const void* w, const ActBlockK* x, float* y, int64_t rows,
;                                int64_t cols)                     cols % 256 == 0, cols > 0
; Run k (0..3) of qs: low nibbles are sub-block 2k, high nibbles sub-block 2k + 1.
; ------------------------------------------------------------------------------------------------
FUNCTION matvec_q4_k_avx2, 5, 13, 16
  shr g4, 8                            ; super-blocks per row
  test g3, g3
  jle .done
  vmovdqa ymm6, [rel low_nibble]
.row:
  K_ROW_BEGIN
.block:
  K_SCALES_AND_MINS
  vpxor xmm7, xmm7, xmm7
%assign k 0
%rep 4
%assign lo 2 * k
%assign hi 2 * k + 1
  vmovdqu ymm1, [g0 + 16 + 32 * k]
  vpand ymm0, ymm1, ymm6
  K_SUBBLOCK_DOT lo
  vpsrlw ymm0, ymm1, 4
  vpand ymm0, ymm0, ymm6
  K_SUBBLOCK_DOT hi
%assign k k + 1
%endrep
  K_BLOCK_END 0, 144
  K_ROW_END 1
.done:
  RET

; ------------------------------------------------------------------------------------------------
; void magnetar_matvec_q5_k_avx2(const void* w, const ActBlockK* x, float* y, int64_t rows,
;                                int64_t cols)                     cols % 256 == 0, cols > 0
; As Q4_K, plus the fifth bit of sub-block j's values in bit j of qh[l] (q = nibble + 16 bit).
; ------------------------------------------------------------------------------------------------
FUNCTION matvec_q5_k_avx2, 5, 13, 16
  shr g4, 8
  test g3, g3
  jle .done
  vmovdqa ymm6, [rel low_nibble]
.row:
  K_ROW_BEGIN
.block:
  K_SCALES_AND_MINS
  vpxor xmm7, xmm7, xmm7
  vmovdqu ymm14, [g0 + 16]             ; qh
%assign k 0
%rep 4
%assign lo 2 * k
%assign hi 2 * k + 1
  vmovdqu ymm1, [g0 + 48 + 32 * k]
  vpand ymm0, ymm1, ymm6
  FIFTH_BIT lo, 0, 14, 2
  K_SUBBLOCK_DOT lo
  vpsrlw ymm0, ymm1, 4
  vpand ymm0, ymm0, ymm6
  FIFTH_BIT hi, 0, 14, 2
  K_SUBBLOCK_DOT hi
%assign k k + 1
%endrep
  K_BLOCK_END 0, 176
  K_ROW_END 1
.done:
  RET

; ------------------------------------------------------------------------------------------------
; void magnetar_matvec_q6_k_avx2(const void* w, const ActBlockK* x, float* y, int64_t rows,
;                                int64_t cols)                     cols % 256 == 0, cols > 0
; q = 6-bit (0..63) from ql nibbles and qh bit pairs; value = d * sc * (q - 32). Per block:
; sum_i = sum over the lane's values of sc * q * x  -  32 * (sc[2i] bsums[2i] + sc[2i+1] bsums[2i+1]).
; ------------------------------------------------------------------------------------------------
FUNCTION matvec_q6_k_avx2, 5, 9, 16
  shr g4, 8
  test g3, g3
  jle .done
  vmovdqa ymm14, [rel low_nibble]
  vmovdqa ymm15, [rel bits_45]
.row:
  K_ROW_BEGIN
.block:
  ; -32 offset: lanes of 32 * (scales . bsums), subtracted lane by lane at the end
  vpmovsxbw ymm9, [g0 + 192]            ; 16 scale words
  vpmaddwd ymm9, ymm9, [g5 + ACTK_BSUMS]
  vpslld ymm9, ymm9, 5
  vpxor xmm7, xmm7, xmm7
%assign h 0
%rep 2
  vpmovsxbw xmm10, [g0 + 192 + 8 * h]   ; this half's 8 scale words
  vpermq ymm10, ymm10, 0x44
  vmovdqu ymm11, [g0 + 64 * h]          ; ql[0..31] of the half
  vmovdqu ymm12, [g0 + 64 * h + 32]     ; ql[32..63]
  vmovdqu ymm13, [g0 + 128 + 32 * h]    ; qh
%assign k 0
%rep 4
  %if k == 0
    vpsllw ymm1, ymm13, 4
  %elif k == 1
    vpsllw ymm1, ymm13, 2
  %elif k == 2
    vmovdqa ymm1, ymm13
  %else
    vpsrlw ymm1, ymm13, 2
  %endif
  vpand ymm1, ymm1, ymm15               ; high bits at 4..5
  %if k == 0
    vpand ymm0, ymm11, ymm14
  %elif k == 1
    vpand ymm0, ymm12, ymm14
  %elif k == 2
    vpsrlw ymm0, ymm11, 4
    vpand ymm0, ymm0, ymm14
  %else
    vpsrlw ymm0, ymm12, 4
    vpand ymm0, ymm0, ymm14
  %endif
  vpor ymm0, ymm0, ymm1                 ; q in 0..63
  vpmaddubsw ymm0, ymm0, [g5 + ACTK_QS + 128 * h + 32 * k]
  vpshufb ymm2, ymm10, [rel scale_pair_%[k]]
  vpmaddwd ymm0, ymm0, ymm2
  vpaddd ymm7, ymm7, ymm0
%assign k k + 1
%endrep
%assign h h + 1
%endrep
  vpsubd ymm7, ymm7, ymm9
  K_BLOCK_END 208, 210
  K_ROW_END 0
.done:
  RET

; ------------------------------------------------------------------------------------------------
; void magnetar_matvec_iq4_xs_avx2(const void* w, const ActBlockK* x, float* y, int64_t rows,
;                                  int64_t cols)                   cols % 256 == 0, cols > 0
; Block: d (f16), scales_h (u16), scales_l[4], qs[128]. Sub-block j (32 values from qs[16 j..]:
; low nibbles then high nibbles) has scale ((scales_l[j / 2] >> 4 (j % 2)) & 15) | ((scales_h
; >> 2 j) & 3) << 4, minus 32; weights are the codebook's int8 values (vpshufb), multiplied with
; the activations as |w| (unsigned) by sign(w)·x (vpsignb) so vpmaddubsw sees an unsigned side.
; ------------------------------------------------------------------------------------------------
FUNCTION matvec_iq4_xs_avx2, 5, 12, 16
  shr g4, 8
  test g3, g3
  jle .done
  vmovdqa ymm6, [rel low_nibble]
  vmovdqa ymm15, [rel iq4_values]
.row:
  K_ROW_BEGIN
.block:
  IQ4_SCALE_WORDS 10, 11, 12
  vpxor xmm7, xmm7, xmm7
%assign p 0
%rep 4
%assign lo 2 * p
%assign hi 2 * p + 1
  vmovdqu ymm1, [g0 + 8 + 32 * p]      ; sub-blocks 2p (bytes 0..15) and 2p + 1 (16..31)
  vpsrlw ymm2, ymm1, 4
  vpand ymm1, ymm1, ymm6               ; low nibbles
  vpand ymm2, ymm2, ymm6               ; high nibbles
  vperm2i128 ymm3, ymm1, ymm2, 0x20    ; sub-block 2p in value order
  vperm2i128 ymm4, ymm1, ymm2, 0x31    ; sub-block 2p + 1
  IQ4_SUBBLOCK_DOT 3, lo
  IQ4_SUBBLOCK_DOT 4, hi
%assign p p + 1
%endrep
  K_BLOCK_END 0, 136
  K_ROW_END 0
.done:
  RET
