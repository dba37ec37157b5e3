; K-quant integer matrix–vector kernels, AVX2 + FMA + F16C: Q4_K and Q6_K weights against
; activations quantized to Q8_K-style blocks (ActBlockK = {f32 d; pad to 32; i16 bsums[16];
; i8 qs[256]}: 320 bytes, qs at 64). C++ twins and contracts: engine/kernels/kquants.h
; (matvec_q4_k_ref, matvec_q6_k_ref); block layouts are GGUF's (BlockQ4_K 144 bytes, BlockQ6_K
; 210 bytes, any alignment).
;
; Method (per row, per 256-value super-block): the quants are unpacked to bytes in registers,
; vpmaddubsw multiplies them with the int8 activations into int16 pairs, vpmaddwd weighs the
; pairs with the sub-block scale (broadcast by vpshufb) into 8 int32 lanes. Lane i of a block
; is exact; it is converted to float and added as lane[i] = fma(d_w * d_x, sum_i, lane[i]).
; Q4_K's mins and Q6_K's -32 offset come from the activation's 16-value sums (bsums). At the end
; of a row the 8 lanes are summed in a fixed tree: (l[i] + l[i+4]), then (t[0] + t[2]) and
; (t[1] + t[3]), then their sum — the twin's order, so asm and twin agree bit for bit.

%include "abi.inc"

%define ACTK_D      0
%define ACTK_BSUMS  32
%define ACTK_QS     64
%define ACTK_BYTES  320

RODATA
align 32
low_nibble:  times 32 db 0x0f
bits_45:     times 32 db 0x30
; Q4_K: words of sub-block scale j (0..7) broadcast: mask j picks bytes 2j, 2j+1 everywhere.
%assign j 0
%rep 8
scale_word_%[j]: times 16 db 2 * j, 2 * j + 1
%assign j j + 1
%endrep
; Q6_K: chunk k (0..3) of a half block: low lane takes scale word 2k, high lane word 2k + 1.
%assign k 0
%rep 4
scale_pair_%[k]: times 8 db 4 * k, 4 * k + 1
                 times 8 db 4 * k + 2, 4 * k + 3
%assign k k + 1
%endrep

; Row end: ymm8 (8 float lanes) -> xmm0[0] in the fixed tree above.
%macro HSUM_LANES_YMM8 0
  vextractf128 xmm0, ymm8, 1
  vaddps xmm0, xmm0, xmm8
  vmovhlps xmm1, xmm1, xmm0
  vaddps xmm0, xmm0, xmm1
  vmovshdup xmm1, xmm0
  vaddss xmm0, xmm0, xmm1
%endmacro

; xmm%1 = float(half at [%2]) * activation d at [%3]
%macro SCALE_TIMES_XD 3
  movzx eax, word %2
  vmovd xmm%1, eax
  vcvtph2ps xmm%1, xmm%1
  vmulss xmm%1, xmm%1, %3
%endmacro

; ------------------------------------------------------------------------------------------------
; void magnetar_matvec_q4_k_avx2(const void* w, const ActBlockK* x, float* y, int64_t rows,
;                                int64_t cols)                     cols % 256 == 0, cols > 0
; ------------------------------------------------------------------------------------------------
FUNCTION matvec_q4_k_avx2, 5, 13, 16
  shr g4, 8                            ; super-blocks per row
  test g3, g3
  jle .done
  vmovdqa ymm6, [rel low_nibble]
.row:
  vxorps xmm8, xmm8, xmm8              ; 8 float lanes
  vxorps xmm9, xmm9, xmm9              ; sum of dmin * x.d * (mins . bsums)
  mov g5, g1                           ; activation block
  mov g7, g4
.block:
  ; 6-bit scales and mins: sc[0..3] = u0 & 0x3f, sc[4..7] = (u2 & 0x0f) | ((u0 >> 6) & 3) << 4,
  ; m[0..3] = u1 & 0x3f, m[4..7] = ((u2 >> 4) & 0x0f) | ((u1 >> 6) & 3) << 4   (bytes of u_i)
  mov g8d, [g0 + 4]                    ; u0
  mov g9d, [g0 + 8]                    ; u1
  mov g10d, [g0 + 12]                  ; u2
  mov g11d, g8d
  shr g11d, 6
  and g11d, 0x03030303
  shl g11d, 4
  mov g12d, g10d
  and g12d, 0x0f0f0f0f
  or g12d, g11d                        ; sc[4..7]
  and g8d, 0x3f3f3f3f                  ; sc[0..3]
  shl g12, 32
  or g12, g8                           ; sc[0..7]
  vmovq xmm10, g12
  mov g11d, g9d
  shr g11d, 6
  and g11d, 0x03030303
  shl g11d, 4
  shr g10d, 4
  and g10d, 0x0f0f0f0f
  or g10d, g11d                        ; m[4..7]
  and g9d, 0x3f3f3f3f                  ; m[0..3]
  shl g10, 32
  or g10, g9                           ; m[0..7]
  vmovq xmm11, g10
  vpmovzxbw xmm10, xmm10               ; 8 scale words
  vpermq ymm10, ymm10, 0x44            ; in both lanes
  vpmovzxbw xmm11, xmm11               ; 8 min words
  ; mins . (bsums[2j] + bsums[2j + 1]) as an exact int32, times dmin * x.d into xmm9
  vmovdqu xmm12, [g5 + ACTK_BSUMS]
  vphaddw xmm12, xmm12, [g5 + ACTK_BSUMS + 16]
  vpmaddwd xmm12, xmm12, xmm11
  vphaddd xmm12, xmm12, xmm12
  vphaddd xmm12, xmm12, xmm12
  vcvtdq2ps xmm12, xmm12
  SCALE_TIMES_XD 13, [g0 + 2], [g5 + ACTK_D]
  vfmadd231ss xmm9, xmm13, xmm12
  ; quants: four 32-byte runs, low nibbles = sub-block 2k, high nibbles = sub-block 2k + 1
  vpxor xmm7, xmm7, xmm7
%assign k 0
%rep 4
%assign lo 2 * k
%assign hi 2 * k + 1
  vmovdqu ymm0, [g0 + 16 + 32 * k]
  vpsrlw ymm1, ymm0, 4
  vpand ymm0, ymm0, ymm6
  vpand ymm1, ymm1, ymm6
  vpmaddubsw ymm0, ymm0, [g5 + ACTK_QS + 64 * k]
  vpmaddubsw ymm1, ymm1, [g5 + ACTK_QS + 64 * k + 32]
  vpshufb ymm2, ymm10, [rel scale_word_%[lo]]
  vpshufb ymm3, ymm10, [rel scale_word_%[hi]]
  vpmaddwd ymm0, ymm0, ymm2
  vpmaddwd ymm1, ymm1, ymm3
  vpaddd ymm7, ymm7, ymm0
  vpaddd ymm7, ymm7, ymm1
%assign k k + 1
%endrep
  vcvtdq2ps ymm7, ymm7
  SCALE_TIMES_XD 13, [g0], [g5 + ACTK_D]
  vbroadcastss ymm13, xmm13
  vfmadd231ps ymm8, ymm13, ymm7
  add g0, 144
  add g5, ACTK_BYTES
  dec g7
  jnz .block
  HSUM_LANES_YMM8
  vsubss xmm0, xmm0, xmm9
  vmovss [g2], xmm0
  add g2, 4
  dec g3
  jnz .row
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
  vxorps xmm8, xmm8, xmm8
  mov g5, g1
  mov g7, g4
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
  vcvtdq2ps ymm7, ymm7
  SCALE_TIMES_XD 13, [g0 + 208], [g5 + ACTK_D]
  vbroadcastss ymm13, xmm13
  vfmadd231ps ymm8, ymm13, ymm7
  add g0, 210
  add g5, ACTK_BYTES
  dec g7
  jnz .block
  HSUM_LANES_YMM8
  vmovss [g2], xmm0
  add g2, 4
  dec g3
  jnz .row
.done:
  RET
