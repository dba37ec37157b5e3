; K-quant prefill kernels (quantized matrix x many Q8_K-quantized tokens), AVX2 + FMA + F16C:
; Q4_K, Q5_K, Q6_K and IQ4_XS on GGUF's row-major blocks (any alignment).
;
; void magnetar_matmul_<type>_avx2(const void* w, const ActBlockK* x, float* y, int64_t rows,
;                                  int64_t cols, int64_t n_tokens, int64_t y_stride)
; y[t * y_stride + r] = row r of w . token t of x for r < rows, t < n_tokens; cols % 256 == 0,
; cols > 0; x = n_tokens tokens of cols / 256 ActBlockK back to back. Each output equals the
; matvec twin's (engine/kernels/kquants.h: matvec_<type>_ref) for that token bit for bit.
;
; The tile, its registers and numerics are kquant_matmul.inc's (1 row x 8 tokens); this file
; supplies each type's unpacking of a super-block into eight runs of 32 unsigned quants with
; their scale words (the matvec kernels' steps, asm/kquant_avx2.asm) and its correction.

%include "kquant_matmul.inc"

%macro KQ_NO_SETUP 0
%endmacro

; ---- Q4_K / Q5_K: sub-block j = low (even j) or high (odd j) nibbles of run j / 2 ----------------

; K_TILE_BEGIN: ymm12 = scale words, ymm13 = the min words each twice ([m0 m0 m1 m1 .. m7 m7]:
; min j weighs bsums 2j and 2j + 1), xmm14 = float(d), xmm15 = float(dmin).
%macro K_TILE_BEGIN 0
  K_SCALE_MIN_WORDS 12, 13
  vpunpckhwd xmm10, xmm13, xmm13
  vpunpcklwd xmm13, xmm13, xmm13
  vinsertf128 ymm13, ymm13, xmm10, 1
  vmovd xmm14, dword [g0]              ; d, dmin (FP16)
  vcvtph2ps xmm14, xmm14
  vmovshdup xmm15, xmm14
%endmacro

%macro Q5K_TILE_BEGIN 0
  K_TILE_BEGIN
  vmovdqu ymm11, [g0 + 16]             ; qh: bit j of byte l is value l's fifth bit in sub-block j
%endmacro

; K_NIBBLES j, qs_offset: ymm8 = sub-block j's 4-bit quants; ymm9 = its scale words.
%macro K_NIBBLES 2
  vmovdqu ymm8, [g0 + %2 + 32 * ((%1) / 2)]
  %if (%1) % 2                          ; (AVX2 shifts take no memory operand)
    vpsrlw ymm8, ymm8, 4
  %endif
  vpand ymm8, ymm8, [rel low_nibble]
  vpshufb ymm9, ymm12, [rel scale_word_%[%1]]
%endmacro

%macro Q4K_RUN 1
  K_NIBBLES %1, 16
%endmacro

%macro Q5K_RUN 1
  K_NIBBLES %1, 48
  FIFTH_BIT %1, 8, 11, 10
%endmacro

; K_MINS (after KQ_BLOCK_END, ymm1 = the tokens' x.d): the 8 tokens' mins terms at once, lane t
; for token t: m = fma(dmin * x_t.d, float(mins . bsums_t), m), the matvec's scalar operations
; on the same exact integer.
%macro K_MINS 0
  %assign km_t 0
  %rep KQ_TOKENS
    %assign km_r 2 + km_t
    vpmaddwd ymm%[km_r], ymm13, [KQ_X%[km_t] + ACTK_BSUMS]
    %assign km_t km_t + 1
  %endrep
  KQ_SUM8 2, 3, 4, 5, 6, 7, 8, 9        ; token t's mins . bsums in lane t
  vcvtdq2ps ymm2, ymm2
  vbroadcastss ymm3, xmm15
  vmulps ymm3, ymm3, ymm1               ; dmin * x_t.d
  vfmadd213ps ymm2, ymm3, [rsp + KQ_MINS]
  vmovups [rsp + KQ_MINS], ymm2
%endmacro

%macro Q4K_BLOCK 0
  KQ_BLOCK K_TILE_BEGIN, Q4K_RUN, 0, KQ_NO_FIX, K_MINS
%endmacro

%macro Q5K_BLOCK 0
  KQ_BLOCK Q5K_TILE_BEGIN, Q5K_RUN, 0, KQ_NO_FIX, K_MINS
%endmacro

FUNCTION matmul_q4_k_avx2, 7, 15, 16
  KQUANT_MATMUL 144, KQ_NO_SETUP, Q4K_BLOCK, KQ_STORE_MINUS_MINS

FUNCTION matmul_q5_k_avx2, 7, 15, 16
  KQUANT_MATMUL 176, KQ_NO_SETUP, Q5K_BLOCK, KQ_STORE_MINUS_MINS

; ---- Q6_K: run j = chunk k = j % 4 of half h = j / 4 ---------------------------------------------
; q (0..63) = ql nibble | qh bit pair << 4; value = d * sc * (q - 32), the -32 taken off per token
; as 32 (sc[2i] bsums[2i] + sc[2i+1] bsums[2i+1]) from lane i.

; Q6K_TILE_BEGIN: ymm12 = the 16 signed scales as words, xmm14 = float(d).
%macro Q6K_TILE_BEGIN 0
  vpmovsxbw ymm12, [g0 + 192]
  movzx g8d, word [g0 + 208]
  vmovd xmm14, g8d
  vcvtph2ps xmm14, xmm14
%endmacro

%macro Q6K_RUN 1
  %assign %%h (%1) / 4
  %assign %%k (%1) % 4
  %if %%k == 0                          ; ymm13 = this half's 8 scale words, in both lanes
    %if %%h == 0
      vpermq ymm13, ymm12, 0x44
    %else
      vpermq ymm13, ymm12, 0xee
    %endif
  %endif
  vmovdqu ymm10, [g0 + 128 + 32 * %%h]  ; the two high bits, moved to 4..5
  %if %%k == 0
    vpsllw ymm10, ymm10, 4
  %elif %%k == 1
    vpsllw ymm10, ymm10, 2
  %elif %%k == 3
    vpsrlw ymm10, ymm10, 2
  %endif
  vpand ymm10, ymm10, [rel bits_45]
  vmovdqu ymm8, [g0 + 64 * %%h + 32 * (%%k % 2)]  ; the low nibble
  %if %%k >= 2
    vpsrlw ymm8, ymm8, 4
  %endif
  vpand ymm8, ymm8, [rel low_nibble]
  vpor ymm8, ymm8, ymm10
  vpshufb ymm9, ymm13, [rel scale_pair_%[%%k]]
%endmacro

; Q6K_FIX: every token's sums -= 32 (sc[2i] bsums[2i] + sc[2i+1] bsums[2i+1]) in lane i.
%macro Q6K_FIX 0
  %assign q6_t 0
  %rep KQ_TOKENS
    vpmaddwd ymm10, ymm12, [KQ_X%[q6_t] + ACTK_BSUMS]
    vpslld ymm10, ymm10, 5
    vpsubd ymm%[q6_t], ymm%[q6_t], ymm10
    %assign q6_t q6_t + 1
  %endrep
%endmacro

%macro Q6K_BLOCK 0
  KQ_BLOCK Q6K_TILE_BEGIN, Q6K_RUN, 0, Q6K_FIX, KQ_NO_FIX
%endmacro

FUNCTION matmul_q6_k_avx2, 7, 15, 16
  KQUANT_MATMUL 210, KQ_NO_SETUP, Q6K_BLOCK, KQ_STORE_ACC

; ---- IQ4_XS: codebook weights (signed), |w| x sign(w)-moved activations ----------------------------
; Run p of qs (32 bytes) holds sub-block 2p (bytes 0..15: low nibbles are values 0..15, high
; nibbles 16..31) and sub-block 2p + 1 (bytes 16..31).

%macro IQ4_SETUP 0
  vmovdqa ymm15, [rel iq4_values]
%endmacro

; IQ4_TILE_BEGIN: ymm12 = signed scale words, xmm14 = float(d).
%macro IQ4_TILE_BEGIN 0
  IQ4_SCALE_WORDS 12, 9, 10
  movzx g8d, word [g0]
  vmovd xmm14, g8d
  vcvtph2ps xmm14, xmm14
%endmacro

; IQ4_RUN j: ymm13 = sub-block j's int8 weights, ymm8 = |w|, ymm9 = its scale words; for even j
; ymm11 keeps sub-block j + 1's indices.
%macro IQ4_RUN 1
  %if (%1) % 2 == 0
    vmovdqu ymm11, [g0 + 8 + 16 * (%1)]
    vpsrlw ymm10, ymm11, 4
    vpand ymm11, ymm11, [rel low_nibble]
    vpand ymm10, ymm10, [rel low_nibble]
    vperm2i128 ymm8, ymm11, ymm10, 0x20
    vperm2i128 ymm11, ymm11, ymm10, 0x31
    vpshufb ymm13, ymm15, ymm8
  %else
    vpshufb ymm13, ymm15, ymm11
  %endif
  vpabsb ymm8, ymm13
  vpshufb ymm9, ymm12, [rel scale_word_%[%1]]
%endmacro

%macro IQ4_BLOCK 0
  KQ_BLOCK IQ4_TILE_BEGIN, IQ4_RUN, 1, KQ_NO_FIX, KQ_NO_FIX
%endmacro

FUNCTION matmul_iq4_xs_avx2, 7, 15, 16
  KQUANT_MATMUL 136, IQ4_SETUP, IQ4_BLOCK, KQ_STORE_ACC
