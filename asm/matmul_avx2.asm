; matmul_avx2.asm — matrix products on AVX2 + FMA + F16C. For prefill, the weight matrix is processed in
; panels of 16 rows x kc columns: a panel is widened to FP32 and transposed ONCE into a small
; L1-resident buffer (panel[k*16 + r]), then a 16-row x 6-token register tile streams through
; it: per column k, two panel loads and six broadcasts of x feed twelve FMAs into twelve
; independent accumulators. The C++ driver (engine/kernels/asm_table.cpp) walks panels and
; column blocks and handles row / column tails. For a few tokens, no panel: "Few tokens" below.
; Contracts in asm/README.md.

%include "abi.inc"

; 8x8 transpose of ymm0..ymm7 (rows) into columns, stored as panel[(k + j) * 16 + half * 8]
; at %1 (the address of column k's row-group `half`); clobbers ymm0..ymm15.
%macro TRANSPOSE8_STORE 1
  vunpcklps ymm8, ymm0, ymm1
  vunpckhps ymm9, ymm0, ymm1
  vunpcklps ymm10, ymm2, ymm3
  vunpckhps ymm11, ymm2, ymm3
  vunpcklps ymm12, ymm4, ymm5
  vunpckhps ymm13, ymm4, ymm5
  vunpcklps ymm14, ymm6, ymm7
  vunpckhps ymm15, ymm6, ymm7
  vshufps ymm0, ymm8, ymm10, 0x44
  vshufps ymm1, ymm8, ymm10, 0xee
  vshufps ymm2, ymm9, ymm11, 0x44
  vshufps ymm3, ymm9, ymm11, 0xee
  vshufps ymm4, ymm12, ymm14, 0x44
  vshufps ymm5, ymm12, ymm14, 0xee
  vshufps ymm6, ymm13, ymm15, 0x44
  vshufps ymm7, ymm13, ymm15, 0xee
  vperm2f128 ymm8, ymm0, ymm4, 0x20
  vperm2f128 ymm9, ymm1, ymm5, 0x20
  vperm2f128 ymm10, ymm2, ymm6, 0x20
  vperm2f128 ymm11, ymm3, ymm7, 0x20
  vperm2f128 ymm12, ymm0, ymm4, 0x31
  vperm2f128 ymm13, ymm1, ymm5, 0x31
  vperm2f128 ymm14, ymm2, ymm6, 0x31
  vperm2f128 ymm15, ymm3, ymm7, 0x31
  vmovups [%1 + 0 * 64], ymm8
  vmovups [%1 + 1 * 64], ymm9
  vmovups [%1 + 2 * 64], ymm10
  vmovups [%1 + 3 * 64], ymm11
  vmovups [%1 + 4 * 64], ymm12
  vmovups [%1 + 5 * 64], ymm13
  vmovups [%1 + 6 * 64], ymm14
  vmovups [%1 + 7 * 64], ymm15
%endmacro

; Packs 16 rows x kc columns (kc a multiple of 8) into panel[k * 16 + r].
;   %1 = element size (2: F16 widened with vcvtph2ps, 4: F32). g0 w, g1 ldw (elements), g2 panel,
;   g3 kc. Uses g4 column offset (bytes of w), g5 row-group base, g6 3*ldw bytes, g7 panel cursor,
;   g8 row-group base + 4 rows.
%macro PACK_PANEL16 1
  imul g1, g1, %1             ; ldw in bytes
  lea g6, [g1 + g1 * 2]
  imul g3, g3, %1             ; kc in bytes of w
  xor g4, g4
  mov g7, g2
  test g3, g3
  jz %%done
%%cols8:
  %assign %%half 0
  %rep 2
    %if %%half == 0
      lea g5, [g0 + g4]
    %else
      lea g5, [g0 + g4]
      lea g5, [g5 + g1 * 8]
    %endif
    lea g8, [g5 + g1 * 4]
    %if %1 == 2
      vcvtph2ps ymm0, [g5]
      vcvtph2ps ymm1, [g5 + g1]
      vcvtph2ps ymm2, [g5 + g1 * 2]
      vcvtph2ps ymm3, [g5 + g6]
      vcvtph2ps ymm4, [g8]
      vcvtph2ps ymm5, [g8 + g1]
      vcvtph2ps ymm6, [g8 + g1 * 2]
      vcvtph2ps ymm7, [g8 + g6]
    %else
      vmovups ymm0, [g5]
      vmovups ymm1, [g5 + g1]
      vmovups ymm2, [g5 + g1 * 2]
      vmovups ymm3, [g5 + g6]
      vmovups ymm4, [g8]
      vmovups ymm5, [g8 + g1]
      vmovups ymm6, [g8 + g1 * 2]
      vmovups ymm7, [g8 + g6]
    %endif
    TRANSPOSE8_STORE g7 + %%half * 32
    %assign %%half %%half + 1
  %endrep
  add g7, 8 * 64
  add g4, 8 * %1
  cmp g4, g3
  jb %%cols8
%%done:
%endmacro

; void magnetar_pack_f16_panel16_avx2(const uint16_t* w, int64_t ldw, float* panel, int64_t kc)
; panel[k * 16 + r] = w[r * ldw + k] for r < 16, k < kc; kc a multiple of 8. No alignment needed.
FUNCTION pack_f16_panel16_avx2, 4, 9, 16
  PACK_PANEL16 2
  RET

; void magnetar_pack_f32_panel16_avx2(const float* w, int64_t ldw, float* panel, int64_t kc)
FUNCTION pack_f32_panel16_avx2, 4, 9, 16
  PACK_PANEL16 4
  RET

; One column step of a T-token tile: %1 = T (1..6), %2 = unroll slot u (column k + u).
; Registers: g8 panel cursor, g9 x of token 0 (at column k), g10 x of token 3, g3 ldx bytes.
; Accumulators: ymm(2t) rows 0-7, ymm(2t+1) rows 8-15 of token t.
%macro KSTEP 2
  vmovups ymm12, [g8 + %2 * 64]
  vmovups ymm13, [g8 + %2 * 64 + 32]
  %assign %%t 0
  %rep %1
    %assign %%lo 2 * %%t
    %assign %%hi 2 * %%t + 1
    %assign %%b 14 + (%%t & 1)
    %if %%t == 0
      vbroadcastss ymm%[%%b], [g9 + %2 * 4]
    %elif %%t == 1
      vbroadcastss ymm%[%%b], [g9 + g3 + %2 * 4]
    %elif %%t == 2
      vbroadcastss ymm%[%%b], [g9 + g3 * 2 + %2 * 4]
    %elif %%t == 3
      vbroadcastss ymm%[%%b], [g10 + %2 * 4]
    %elif %%t == 4
      vbroadcastss ymm%[%%b], [g10 + g3 + %2 * 4]
    %else
      vbroadcastss ymm%[%%b], [g10 + g3 * 2 + %2 * 4]
    %endif
    vfmadd231ps ymm%[%%lo], ymm12, ymm%[%%b]
    vfmadd231ps ymm%[%%hi], ymm13, ymm%[%%b]
    %assign %%t %%t + 1
  %endrep
%endmacro

; A tile of %1 tokens: y[t, 0..16] (+)= sum_k panel[k, 0..16] * x[t, k].
; In: g0 panel, g1 kc, g2 x (token 0 of the tile), g3 ldx bytes, g4 y (token 0), g5 ldy bytes,
; g7 accumulate flag. Uses g8..g12.
%macro TILE 1
  %assign %%a 0
  %rep 2 * %1
    vxorps xmm%[%%a], xmm%[%%a], xmm%[%%a]
    %assign %%a %%a + 1
  %endrep
  mov g8, g0
  mov g9, g2
  lea g10, [g2 + g3 * 2]
  add g10, g3
  mov g11, g1
  cmp g11, 4
  jb %%k1
  align 16
%%k4:
  KSTEP %1, 0
  KSTEP %1, 1
  KSTEP %1, 2
  KSTEP %1, 3
  add g8, 4 * 64
  add g9, 16
  add g10, 16
  sub g11, 4
  cmp g11, 4
  jae %%k4
%%k1:
  test g11, g11
  jz %%store
%%k1_loop:
  KSTEP %1, 0
  add g8, 64
  add g9, 4
  add g10, 4
  dec g11
  jnz %%k1_loop
%%store:
  mov g12, g4
  %assign %%t 0
  %rep %1
    %assign %%lo 2 * %%t
    %assign %%hi 2 * %%t + 1
    test g7, g7
    jz %%plain %+ %%t
    vaddps ymm%[%%lo], ymm%[%%lo], [g12]
    vaddps ymm%[%%hi], ymm%[%%hi], [g12 + 32]
  %%plain %+ %%t:
    vmovups [g12], ymm%[%%lo]
    vmovups [g12 + 32], ymm%[%%hi]
    add g12, g5
    %assign %%t %%t + 1
  %endrep
%endmacro

; void magnetar_matmul_panel16_avx2(const float* panel, int64_t kc, const float* x, int64_t ldx,
;                                   float* y, int64_t ldy, int64_t n_tokens, int64_t accumulate)
; For t < n_tokens, r < 16: y[t*ldy + r] = (accumulate ? y[t*ldy + r] : 0)
;                                          + sum_{k < kc} panel[k*16 + r] * x[t*ldx + k]
; (one FMA chain per output over k, in order). kc >= 1; n_tokens >= 0. No alignment needed.
FUNCTION matmul_panel16_avx2, 8, 13, 16
  shl g3, 2
  shl g5, 2
.tiles6:
  cmp g6, 6
  jb .tail
  TILE 6
  lea g2, [g2 + g3 * 2]
  lea g2, [g2 + g3 * 4]
  lea g4, [g4 + g5 * 2]
  lea g4, [g4 + g5 * 4]
  sub g6, 6
  jmp .tiles6
.tail:
  cmp g6, 1
  je .t1
  cmp g6, 2
  je .t2
  cmp g6, 3
  je .t3
  cmp g6, 4
  je .t4
  cmp g6, 5
  je .t5
  jmp .done
.t1:
  TILE 1
  jmp .done
.t2:
  TILE 2
  jmp .done
.t3:
  TILE 3
  jmp .done
.t4:
  TILE 4
  jmp .done
.t5:
  TILE 5
.done:
  RET

; ---- Few tokens: no panel ------------------------------------------------------------------------
; A product of 1..4 tokens reads each weight row once, straight from w: packing a panel costs a
; pass over it that only a few tokens would share (decode attention: a token's few query heads
; against a head's keys and value blocks). Rows go in pairs, one sequential stream, two loads of
; w per eight columns serving 2 x T FMAs; each output's eight lanes are summed at the end.

; ROWS_STEP element size, T, u: column step g12 + 8u of the row pair (w rows at g0 and g11; x of
; tokens 0..3 at g2, g13, g14, g10) into accumulator set u. Set 0: ymm(t) row 0, ymm(4 + t) row 1
; of token t; set 1 (T <= 2 only: twice the independent FMA chains), ymm(2 + t) and ymm(6 + t).
%macro ROWS_STEP 3
  %if %1 == 2
    vcvtph2ps ymm8, [g0 + g12 * 2 + 16 * %3]
    vcvtph2ps ymm9, [g11 + g12 * 2 + 16 * %3]
  %else
    vmovups ymm8, [g0 + g12 * 4 + 32 * %3]
    vmovups ymm9, [g11 + g12 * 4 + 32 * %3]
  %endif
  %assign %%t 0
  %rep %2
    %if %%t == 0
      vmovups ymm10, [g2 + g12 * 4 + 32 * %3]
    %elif %%t == 1
      vmovups ymm10, [g13 + g12 * 4 + 32 * %3]
    %elif %%t == 2
      vmovups ymm10, [g14 + g12 * 4 + 32 * %3]
    %else
      vmovups ymm10, [g10 + g12 * 4 + 32 * %3]
    %endif
    %assign %%r0 %%t + 2 * %3
    %assign %%r1 4 + %%t + 2 * %3
    vfmadd231ps ymm%[%%r0], ymm8, ymm10
    vfmadd231ps ymm%[%%r1], ymm9, ymm10
    %assign %%t %%t + 1
  %endrep
%endmacro

; ROWS_STORE T, single: the pair's sums to y, added to y's values when g9 (accumulate) is set;
; single: only row 0 is real (the odd last row, computed twice), so only its outputs are written.
; Tokens t, t + 1 together: reduce.inc's REDUCE4 pattern gives [y(t, r0), y(t, r1), y(t + 1, r0),
; y(t + 1, r1)].
%macro ROWS_STORE 2
  %assign %%t 0
  %rep (%1 + 1) / 2
    %assign %%a %%t
    %assign %%b 4 + %%t
    %if %%t + 1 < %1
      %assign %%c %%t + 1
      %assign %%d 5 + %%t
      vhaddps ymm%[%%a], ymm%[%%a], ymm%[%%b]
      vhaddps ymm%[%%c], ymm%[%%c], ymm%[%%d]
      vhaddps ymm%[%%a], ymm%[%%a], ymm%[%%c]
      vextractf128 xmm11, ymm%[%%a], 1
      vaddps xmm%[%%a], xmm%[%%a], xmm11
    %else                                        ; a last odd token: [y(t, r0), y(t, r1)] twice
      vhaddps ymm%[%%a], ymm%[%%a], ymm%[%%b]
      vextractf128 xmm11, ymm%[%%a], 1
      vaddps xmm%[%%a], xmm%[%%a], xmm11
      vhaddps xmm%[%%a], xmm%[%%a], xmm%[%%a]
    %endif
    %if %%t == 0                                 ; g8 = token t's outputs of the pair
      mov g8, g4
    %else
      lea g8, [g4 + g5 * 2]
    %endif
    %if %%t + 1 < %1
      lea g12, [g8 + g5]                         ; token t + 1
    %endif
    test g9, g9
    jz %%plain %+ %%t
    %if %2
      vmovss xmm11, [g8]
      %if %%t + 1 < %1
        vinsertps xmm11, xmm11, [g12], 0x20      ; into lane 2
      %endif
    %else
      vmovsd xmm11, [g8]
      %if %%t + 1 < %1
        vmovhps xmm11, xmm11, [g12]
      %endif
    %endif
    vaddps xmm%[%%a], xmm%[%%a], xmm11
  %%plain %+ %%t:
    %if %2
      vmovss [g8], xmm%[%%a]
      %if %%t + 1 < %1
        vextractps [g12], xmm%[%%a], 2
      %endif
    %else
      vmovlps [g8], xmm%[%%a]
      %if %%t + 1 < %1
        vmovhps [g12], xmm%[%%a]
      %endif
    %endif
    %assign %%t %%t + 2
  %endrep
%endmacro

; ROWS_PASS element size, T, single: one row pair (single: the row at g0 twice) through all
; g7 columns, then its outputs.
%macro ROWS_PASS 3
  %assign %%a 0
  %rep 8
    vxorps xmm%[%%a], xmm%[%%a], xmm%[%%a]
    %assign %%a %%a + 1
  %endrep
  %if %3
    mov g11, g0
  %else
    lea g11, [g0 + g1]
  %endif
  xor g12, g12
  %if %2 <= 2                                    ; 16 columns per iteration, two sets
    mov g8, g7
    and g8, -16
    jz %%tail8
    align 16
  %%cols2:
    ROWS_STEP %1, %2, 0
    ROWS_STEP %1, %2, 1
    add g12, 16
    cmp g12, g8
    jb %%cols2
  %%tail8:
    cmp g12, g7
    jae %%fold
    ROWS_STEP %1, %2, 0
  %%fold:
    %assign %%t 0
    %rep %2
      %assign %%s %%t + 2
      %assign %%r %%t + 4
      %assign %%q %%t + 6
      vaddps ymm%[%%t], ymm%[%%t], ymm%[%%s]
      vaddps ymm%[%%r], ymm%[%%r], ymm%[%%q]
      %assign %%t %%t + 1
    %endrep
  %else
    align 16
  %%cols:
    ROWS_STEP %1, %2, 0
    add g12, 8
    cmp g12, g7
    jb %%cols
  %endif
  ROWS_STORE %2, %3
%endmacro

; ROWS_BODY element size, T: every row of the call for T tokens.
%macro ROWS_BODY 2
%%pairs:
  cmp g6, 2
  jb %%last
  ROWS_PASS %1, %2, 0
  lea g0, [g0 + g1 * 2]
  add g4, 8
  sub g6, 2
  jmp %%pairs
%%last:
  test g6, g6
  jz %%done
  ROWS_PASS %1, %2, 1
%%done:
%endmacro

; ROWS_KERNEL element size: the function body. In: g0 w, g1 ldw, g2 x, g3 ldx, g4 y, g5 ldy,
; g6 rows, g7 cols, g8 n_tokens, g9 accumulate (strides in elements).
%macro ROWS_KERNEL 1
  imul g1, g1, %1                  ; ldw in bytes
  shl g3, 2                        ; ldx in bytes
  shl g5, 2                        ; ldy in bytes
  lea g13, [g2 + g3]               ; x of token 1
  lea g14, [g2 + g3 * 2]           ; x of token 2
  lea g10, [g14 + g3]              ; x of token 3
  cmp g8, 2
  jb .t1
  je .t2
  cmp g8, 3
  je .t3
  ROWS_BODY %1, 4
  jmp .done
.t3:
  ROWS_BODY %1, 3
  jmp .done
.t2:
  ROWS_BODY %1, 2
  jmp .done
.t1:
  ROWS_BODY %1, 1
.done:
%endmacro

; void magnetar_matmul_rows_f32_avx2(const float* w, int64_t ldw, const float* x, int64_t ldx,
;                                    float* y, int64_t ldy, int64_t rows, int64_t cols,
;                                    int64_t n_tokens, int64_t accumulate)
; For t < n_tokens, r < rows: y[t*ldy + r] = (accumulate ? y[t*ldy + r] : 0) + w_r . x_t, each dot
; in eight lanes over k (in order) summed at the end. cols % 8 == 0, cols > 0; 1 <= n_tokens <= 4;
; rows >= 0. No alignment needed. _f16: w in FP16 (widened exactly), the same contract.
FUNCTION matmul_rows_f32_avx2, 10, 15, 12
  ROWS_KERNEL 4
  RET

FUNCTION matmul_rows_f16_avx2, 10, 15, 12
  ROWS_KERNEL 2
  RET
