; matvec_avx512.asm — the decode hot spot on AVX-512 (F + BW + VL): the F16 matrix–vector
; product with 512-bit conversions and FMAs, half the instructions per weight byte of the AVX2
; version, which lets one core keep more of the memory stream in flight. Chosen at run time only
; where cpu_features says AVX-512 is usable; twin: kernels::ref::matvec_f16.
; Uses zmm16..31 (volatile in both ABIs) plus xmm0..xmm5 for the final reduction.

%include "abi.inc"

%ifndef MATVEC512_PREFETCH
  %define MATVEC512_PREFETCH 0
%endif

; void magnetar_matvec_f16_avx512(const uint16_t* w, int64_t ldw, const float* x, float* y,
;                                 int64_t rows, int64_t cols)
; cols: a positive multiple of 32. rows >= 0. No alignment needed.
; Per step: 4 rows x 32 columns, two x loads feed 8 FMAs into 8 independent accumulators.
FUNCTION matvec_f16_avx512, 6, 10, 6
  add g1, g1                   ; ldw in bytes
  cmp g4, 4
  jb .row_tail
.pass4:
  lea g7, [g0 + g1]
  lea g8, [g0 + g1 * 2]
  lea g9, [g7 + g1 * 2]
  vpxord zmm16, zmm16, zmm16
  vpxord zmm17, zmm17, zmm17
  vpxord zmm18, zmm18, zmm18
  vpxord zmm19, zmm19, zmm19
  vpxord zmm20, zmm20, zmm20
  vpxord zmm21, zmm21, zmm21
  vpxord zmm22, zmm22, zmm22
  vpxord zmm23, zmm23, zmm23
  xor g6, g6
  align 16
.cols4:
%if MATVEC512_PREFETCH > 0
  prefetcht0 [g0 + g6 * 2 + MATVEC512_PREFETCH]
  prefetcht0 [g7 + g6 * 2 + MATVEC512_PREFETCH]
  prefetcht0 [g8 + g6 * 2 + MATVEC512_PREFETCH]
  prefetcht0 [g9 + g6 * 2 + MATVEC512_PREFETCH]
%endif
  vmovups zmm24, [g2 + g6 * 4]
  vmovups zmm25, [g2 + g6 * 4 + 64]
  vcvtph2ps zmm26, [g0 + g6 * 2]
  vcvtph2ps zmm27, [g0 + g6 * 2 + 32]
  vfmadd231ps zmm16, zmm26, zmm24
  vfmadd231ps zmm17, zmm27, zmm25
  vcvtph2ps zmm28, [g7 + g6 * 2]
  vcvtph2ps zmm29, [g7 + g6 * 2 + 32]
  vfmadd231ps zmm18, zmm28, zmm24
  vfmadd231ps zmm19, zmm29, zmm25
  vcvtph2ps zmm26, [g8 + g6 * 2]
  vcvtph2ps zmm27, [g8 + g6 * 2 + 32]
  vfmadd231ps zmm20, zmm26, zmm24
  vfmadd231ps zmm21, zmm27, zmm25
  vcvtph2ps zmm28, [g9 + g6 * 2]
  vcvtph2ps zmm29, [g9 + g6 * 2 + 32]
  vfmadd231ps zmm22, zmm28, zmm24
  vfmadd231ps zmm23, zmm29, zmm25
  add g6, 32
  cmp g6, g5
  jb .cols4
  ; fold: row r = acc(2r) + acc(2r+1), 16 lanes -> 8 lanes -> the AVX2 4-row reduction
  vaddps zmm16, zmm16, zmm17
  vaddps zmm18, zmm18, zmm19
  vaddps zmm20, zmm20, zmm21
  vaddps zmm22, zmm22, zmm23
  vextractf64x4 ymm24, zmm16, 1
  vextractf64x4 ymm25, zmm18, 1
  vextractf64x4 ymm26, zmm20, 1
  vextractf64x4 ymm27, zmm22, 1
  vaddps ymm0, ymm16, ymm24
  vaddps ymm2, ymm18, ymm25
  vaddps ymm4, ymm20, ymm26
  vaddps ymm5, ymm22, ymm27
  vhaddps ymm0, ymm0, ymm2
  vhaddps ymm4, ymm4, ymm5
  vhaddps ymm0, ymm0, ymm4
  vextractf128 xmm1, ymm0, 1
  vaddps xmm0, xmm0, xmm1
  vmovups [g3], xmm0
  add g3, 16
  lea g0, [g9 + g1]
  sub g4, 4
  cmp g4, 4
  jae .pass4
.row_tail:
  test g4, g4
  jz .done
.pass1:
  vpxord zmm16, zmm16, zmm16
  vpxord zmm17, zmm17, zmm17
  xor g6, g6
.cols1:
  vcvtph2ps zmm26, [g0 + g6 * 2]
  vcvtph2ps zmm27, [g0 + g6 * 2 + 32]
  vfmadd231ps zmm16, zmm26, [g2 + g6 * 4]
  vfmadd231ps zmm17, zmm27, [g2 + g6 * 4 + 64]
  add g6, 32
  cmp g6, g5
  jb .cols1
  vaddps zmm16, zmm16, zmm17
  vextractf64x4 ymm24, zmm16, 1
  vaddps ymm0, ymm16, ymm24
  vextractf128 xmm1, ymm0, 1
  vaddps xmm0, xmm0, xmm1
  vmovhlps xmm1, xmm0, xmm0
  vaddps xmm0, xmm0, xmm1
  vmovshdup xmm1, xmm0
  vaddss xmm0, xmm0, xmm1
  vmovss [g3], xmm0
  add g3, 4
  add g0, g1
  dec g4
  jnz .pass1
.done:
  RET
