; matvec_avx2.asm — decode-time kernels on AVX2 + FMA + F16C: matrix–vector products (F16 and
; F32 weights), dot product, F16 -> F32 widening. The C++ wrappers in
; engine/kernels/asm_table.cpp call these for the bulk and handle tails; contracts per symbol in
; asm/README.md.

%include "abi.inc"
%include "reduce.inc"

; Distance (bytes) at which each weight stream is prefetched with prefetchnta. Non-temporal
; prefetch keeps the streamed weights from evicting x from L1 (x is reused by every pass); see
; asm/README.md for the measurements behind 256.
%ifndef MATVEC_PREFETCH
  %define MATVEC_PREFETCH 256
%endif

; Stores xmm%1's four lanes to [%2], [%2 + g4], [%2 + 2 g4], [%2 + 3 g4]; %3 scratch GPR.
%macro STORE4_STRIDED 3
  vmovss [%2], xmm%1
  vextractps [%2 + g4], xmm%1, 1
  vextractps [%2 + g4 * 2], xmm%1, 2
  lea %3, [%2 + g4 * 2]
  vextractps [%3 + g4], xmm%1, 3
%endmacro

%macro LOADW 4 ; element size, dst, base, byte offset: 8 weights at column index g6 -> FP32
  %if %1 == 2
    vcvtph2ps %2, [%3 + g6 * 2 + %4]
  %else
    vmovups %2, [%3 + g6 * 4 + %4]
  %endif
%endmacro

; The matvec body: R long sequential weight streams instead of R adjacent rows.
; With Q = rows / R, pass i computes rows i, Q + i, ..., (R-1)Q + i, so each of the R streams
; walks Q consecutive rows front to back — the hardware prefetcher sees R long streams rather
; than R fresh 4 KiB pieces per pass — while every x load still feeds R rows. The last rows % R
; rows follow one at a time.
;   %1 = element size of w (2: F16, 4: F32), %2 = R (4 or 8).
;   Registers: g0 stream 0, g7.. streams 1..R-1, g1 ldw bytes, g2 x, g3 y, g4 y stream stride
;   (Q * 4 bytes), g5 cols, g6 column index, g14 / g10 scratch. Stack: [rsp] passes left,
;   [rsp + 8] tail rows.
;   R = 4: 16 columns per step, 2 accumulators per row (ymm0..7).
;   R = 8: 16 columns per step, 1 accumulator per row (ymm0..7), two FMAs per row per step.
%macro MATVEC_STREAMS 2
  %if %2 == 4
    %define ROWS_SHIFT 2
    %define SCRATCH g10
    %define LAST_STREAM g9
  %else
    %define ROWS_SHIFT 3
    %define SCRATCH g14
    %define LAST_STREAM g13
  %endif
  imul g1, g1, %1               ; ldw in bytes
  sub rsp, 16
  mov g6, g4
  shr g6, ROWS_SHIFT            ; Q
  mov [rsp], g6
  and g4, %2 - 1
  mov [rsp + 8], g4
  test g6, g6
  jz %%row_tail
  lea g4, [g6 * 4]              ; y stride between streams
  imul g6, g1                   ; w stride between streams
  lea g7, [g0 + g6]
  lea g8, [g7 + g6]
  lea g9, [g8 + g6]
  %if %2 == 8
    lea g10, [g9 + g6]
    lea g11, [g10 + g6]
    lea g12, [g11 + g6]
    lea g13, [g12 + g6]
  %endif
%%pass:
  %assign %%a 0
  %rep 8
    vxorps xmm%[%%a], xmm%[%%a], xmm%[%%a]
    %assign %%a %%a + 1
  %endrep
  xor g6, g6
  align 16
%%cols:
  %if MATVEC_PREFETCH > 0
    prefetchnta [g0 + g6 * %1 + MATVEC_PREFETCH]
    prefetchnta [g7 + g6 * %1 + MATVEC_PREFETCH]
    prefetchnta [g8 + g6 * %1 + MATVEC_PREFETCH]
    prefetchnta [g9 + g6 * %1 + MATVEC_PREFETCH]
    %if %2 == 8
      prefetchnta [g10 + g6 * %1 + MATVEC_PREFETCH]
      prefetchnta [g11 + g6 * %1 + MATVEC_PREFETCH]
      prefetchnta [g12 + g6 * %1 + MATVEC_PREFETCH]
      prefetchnta [g13 + g6 * %1 + MATVEC_PREFETCH]
    %endif
  %endif
  vmovups ymm8, [g2 + g6 * 4]
  vmovups ymm9, [g2 + g6 * 4 + 32]
  %if %2 == 4
    %assign %%r 0
    %rep 4
      %if %%r == 0
        %define ROWPTR g0
      %elif %%r == 1
        %define ROWPTR g7
      %elif %%r == 2
        %define ROWPTR g8
      %else
        %define ROWPTR g9
      %endif
      %assign %%lo 2 * %%r
      %assign %%hi 2 * %%r + 1
      LOADW %1, ymm10, ROWPTR, 0
      LOADW %1, ymm11, ROWPTR, 8 * %1
      vfmadd231ps ymm%[%%lo], ymm10, ymm8
      vfmadd231ps ymm%[%%hi], ymm11, ymm9
      %assign %%r %%r + 1
    %endrep
  %else
    %assign %%r 0
    %rep 8
      %if %%r == 0
        %define ROWPTR g0
      %elif %%r == 1
        %define ROWPTR g7
      %elif %%r == 2
        %define ROWPTR g8
      %elif %%r == 3
        %define ROWPTR g9
      %elif %%r == 4
        %define ROWPTR g10
      %elif %%r == 5
        %define ROWPTR g11
      %elif %%r == 6
        %define ROWPTR g12
      %else
        %define ROWPTR g13
      %endif
      %assign %%t 10 + (%%r & 1) * 2
      %assign %%u %%t + 1
      LOADW %1, ymm%[%%t], ROWPTR, 0
      LOADW %1, ymm%[%%u], ROWPTR, 8 * %1
      vfmadd231ps ymm%[%%r], ymm%[%%t], ymm8
      vfmadd231ps ymm%[%%r], ymm%[%%u], ymm9
      %assign %%r %%r + 1
    %endrep
  %endif
  add g6, 16
  cmp g6, g5
  jb %%cols
  %if %2 == 4
    vaddps ymm0, ymm0, ymm1
    vaddps ymm2, ymm2, ymm3
    vaddps ymm4, ymm4, ymm5
    vaddps ymm6, ymm6, ymm7
    REDUCE4 0, 2, 4, 6, 1
    STORE4_STRIDED 0, g3, SCRATCH
  %else
    REDUCE4 0, 1, 2, 3, 8
    REDUCE4 4, 5, 6, 7, 9
    STORE4_STRIDED 0, g3, SCRATCH
    lea SCRATCH, [g3 + g4 * 4]
    STORE4_STRIDED 4, SCRATCH, SCRATCH
  %endif
  add g3, 4
  add g0, g1
  add g7, g1
  add g8, g1
  add g9, g1
  %if %2 == 8
    add g10, g1
    add g11, g1
    add g12, g1
    add g13, g1
  %endif
  dec qword [rsp]
  jnz %%pass
  ; the tail rows follow the last stream, their outputs follow its outputs
  mov g0, LAST_STREAM
  imul g4, g4, %2 - 1
  add g3, g4
%%row_tail:
  mov g4, [rsp + 8]
  test g4, g4
  jz %%done
%%pass1:
  vxorps xmm0, xmm0, xmm0
  vxorps xmm2, xmm2, xmm2
  xor g6, g6
%%cols1:
  LOADW %1, ymm10, g0, 0
  LOADW %1, ymm11, g0, 8 * %1
  vfmadd231ps ymm0, ymm10, [g2 + g6 * 4]
  vfmadd231ps ymm2, ymm11, [g2 + g6 * 4 + 32]
  add g6, 16
  cmp g6, g5
  jb %%cols1
  vaddps ymm0, ymm0, ymm2
  HSUM_YMM0
  vmovss [g3], xmm0
  add g3, 4
  add g0, g1
  dec g4
  jnz %%pass1
%%done:
  add rsp, 16
  %undef ROWS_SHIFT
  %undef SCRATCH
  %undef LAST_STREAM
%endmacro

; void magnetar_matvec_f16_avx2(const uint16_t* w, int64_t ldw, const float* x, float* y,
;                               int64_t rows, int64_t cols)
; cols: a positive multiple of 16. rows >= 0. No alignment needed. 4 streams: best while x
; (cols * 4 bytes) and four rows' worth of streamed lines fit in L1 together.
FUNCTION matvec_f16_avx2, 6, 11, 12
  MATVEC_STREAMS 2, 4
  RET

; void magnetar_matvec_f16_x8_avx2(...)  same contract; 8 streams, each x load feeds 8 rows:
; better once x no longer fits in L1 beside the streams (large cols).
FUNCTION matvec_f16_x8_avx2, 6, 15, 14
  MATVEC_STREAMS 2, 8
  RET

; void magnetar_matvec_f32_avx2(const float* w, int64_t ldw, const float* x, float* y,
;                               int64_t rows, int64_t cols)
; cols: a positive multiple of 16. rows >= 0. No alignment needed.
FUNCTION matvec_f32_avx2, 6, 11, 12
  MATVEC_STREAMS 4, 4
  RET

; void magnetar_dot_f32_avx2(const float* a, const float* b, int64_t n, float* out)
; n: a multiple of 32 (0 allowed: *out = 0). Four accumulators x 8 lanes.
FUNCTION dot_f32_avx2, 4, 5, 4
  vxorps xmm0, xmm0, xmm0
  vxorps xmm1, xmm1, xmm1
  vxorps xmm2, xmm2, xmm2
  vxorps xmm3, xmm3, xmm3
  xor g4, g4
  test g2, g2
  jz .sum
.loop:
  vmovups ymm1, [g0 + g4 * 4]
  vfmadd231ps ymm0, ymm1, [g1 + g4 * 4]
  vmovups ymm1, [g0 + g4 * 4 + 32]
  vfmadd231ps ymm2, ymm1, [g1 + g4 * 4 + 32]
  vmovups ymm1, [g0 + g4 * 4 + 64]
  vfmadd231ps ymm3, ymm1, [g1 + g4 * 4 + 64]
  vmovups ymm1, [g0 + g4 * 4 + 96]
  vfmadd231ps ymm0, ymm1, [g1 + g4 * 4 + 96]
  add g4, 32
  cmp g4, g2
  jb .loop
.sum:
  vaddps ymm0, ymm0, ymm2
  vaddps ymm0, ymm0, ymm3
  HSUM_YMM0
  vmovss [g3], xmm0
  RET

; void magnetar_f16_to_f32_avx2(const uint16_t* src, float* dst, int64_t n)
; n: a multiple of 16. Exact (F16C widening).
FUNCTION f16_to_f32_avx2, 3, 4, 2
  xor g3, g3
  test g2, g2
  jz .done
.loop:
  vcvtph2ps ymm0, [g0 + g3 * 2]
  vcvtph2ps ymm1, [g0 + g3 * 2 + 16]
  vmovups [g1 + g3 * 4], ymm0
  vmovups [g1 + g3 * 4 + 32], ymm1
  add g3, 16
  cmp g3, g2
  jb .loop
.done:
  RET
