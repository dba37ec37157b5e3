; vecops_avx2.asm — per-token vector ops on AVX2 + FMA: RMSNorm, softmax, SiLU·up, GELU(tanh)·up,
; rotate-half RoPE. Any n: the last n % 8 elements go through vmaskmovps (masked lanes are never
; touched, so nothing outside [0, n) is read or written). Contracts in asm/README.md.

%include "abi.inc"
%include "reduce.inc"

%macro CONST8 2
  align 32
  %1: times 8 dd %2
%endmacro

RODATA
tail_mask:  times 8 dd -1        ; [tail_mask + 32 - 4t] = a mask with the first t lanes set
            times 8 dd 0
CONST8 c_one, 1.0
CONST8 c_neg_inf, 0xff800000
CONST8 c_exp_hi, 88.3762626647949
CONST8 c_exp_lo, -87.33654475
CONST8 c_log2e, 1.44269504088896341
CONST8 c_ln2_hi, 0.693359375
CONST8 c_ln2_lo, -2.12194440e-4
CONST8 c_exp_p0, 1.9875691500e-4
CONST8 c_exp_p1, 1.3981999507e-3
CONST8 c_exp_p2, 8.3334519073e-3
CONST8 c_exp_p3, 4.1665795894e-2
CONST8 c_exp_p4, 1.6666665459e-1
CONST8 c_exp_p5, 5.0000001201e-1
CONST8 c_i127, 127
; gelu_tanh(g) = g * sigmoid(2u), u = sqrt(2/pi) (g + 0.044715 g^3); exp argument -2u = g (a + b g^2)
CONST8 c_gelu_a, -1.5957691216057308     ; -2 sqrt(2/pi)
CONST8 c_gelu_b, -0.07135481627159018    ; -2 sqrt(2/pi) 0.044715

; %1 <- mask with the first t lanes set, t = %2 (1..7, clobbered), %3 scratch GPR.
%macro LOAD_TAIL_MASK 3
  neg %2
  lea %3, [tail_mask]
  vmovdqu %1, [%3 + 32 + %2 * 4]
%endmacro

; %1 <- exp(%1) for every lane (Cephes expf: range reduction by ln 2 in two parts, degree-5
; polynomial, 2^n via the exponent field; <= 2 ulps on [-87.3, 88.3]). Lanes below -87.34
; (including -inf) give +0; larger inputs are clamped to 88.37. Clobbers %2, %3, %4.
%macro EXP_PS 4
  vcmpltps %4, %1, [c_exp_lo]
  vminps %1, %1, [c_exp_hi]
  vmaxps %1, %1, [c_exp_lo]
  vmulps %2, %1, [c_log2e]
  vroundps %2, %2, 0
  vfnmadd231ps %1, %2, [c_ln2_hi]
  vfnmadd231ps %1, %2, [c_ln2_lo]
  vmovaps %3, [c_exp_p0]
  vfmadd213ps %3, %1, [c_exp_p1]
  vfmadd213ps %3, %1, [c_exp_p2]
  vfmadd213ps %3, %1, [c_exp_p3]
  vfmadd213ps %3, %1, [c_exp_p4]
  vfmadd213ps %3, %1, [c_exp_p5]
  vfmadd213ps %3, %1, [c_one]      ; y r + 1
  vfmadd213ps %3, %1, [c_one]      ; (y r + 1) r + 1 = y r^2 + r + 1
  vcvtps2dq %2, %2
  vpaddd %2, %2, [c_i127]
  vpslld %2, %2, 23
  vmulps %1, %3, %2
  vandnps %1, %4, %1
%endmacro

; ---------------------------------------------------------------------------------------------
; void magnetar_rmsnorm_avx2(float* out, const float* x, const float* weight, int64_t n,
;                            const float* eps)
; out[i] = (x[i] * s) * weight[i], s = 1 / sqrt(sum(x^2) / n + eps). n >= 1, any; out may be x.
FUNCTION rmsnorm_avx2, 5, 8, 6
  vxorps xmm0, xmm0, xmm0
  vxorps xmm1, xmm1, xmm1
  vxorps xmm2, xmm2, xmm2
  vxorps xmm3, xmm3, xmm3
  xor g5, g5
  mov g6, g3
  and g6, -32
  jz .ss8
.ss32:
  vmovups ymm4, [g1 + g5 * 4]
  vfmadd231ps ymm0, ymm4, ymm4
  vmovups ymm4, [g1 + g5 * 4 + 32]
  vfmadd231ps ymm1, ymm4, ymm4
  vmovups ymm4, [g1 + g5 * 4 + 64]
  vfmadd231ps ymm2, ymm4, ymm4
  vmovups ymm4, [g1 + g5 * 4 + 96]
  vfmadd231ps ymm3, ymm4, ymm4
  add g5, 32
  cmp g5, g6
  jb .ss32
.ss8:
  mov g6, g3
  and g6, -8
  cmp g5, g6
  jae .ss_tail
.ss8_loop:
  vmovups ymm4, [g1 + g5 * 4]
  vfmadd231ps ymm0, ymm4, ymm4
  add g5, 8
  cmp g5, g6
  jb .ss8_loop
.ss_tail:
  mov g6, g3
  sub g6, g5
  jz .scale
  LOAD_TAIL_MASK ymm5, g6, g7
  vmaskmovps ymm4, ymm5, [g1 + g5 * 4]
  vfmadd231ps ymm1, ymm4, ymm4
.scale:
  vaddps ymm0, ymm0, ymm1
  vaddps ymm2, ymm2, ymm3
  vaddps ymm0, ymm0, ymm2
  HSUM_YMM0
  vcvtsi2ss xmm1, xmm1, g3
  vdivss xmm0, xmm0, xmm1
  vaddss xmm0, xmm0, [g4]
  vsqrtss xmm0, xmm0, xmm0
  vmovss xmm1, [c_one]
  vdivss xmm0, xmm1, xmm0
  vbroadcastss ymm0, xmm0
  xor g5, g5
  mov g6, g3
  and g6, -8
  jz .out_tail
.out8:
  vmulps ymm1, ymm0, [g1 + g5 * 4]
  vmulps ymm1, ymm1, [g2 + g5 * 4]
  vmovups [g0 + g5 * 4], ymm1
  add g5, 8
  cmp g5, g6
  jb .out8
.out_tail:
  mov g6, g3
  sub g6, g5
  jz .done
  LOAD_TAIL_MASK ymm5, g6, g7
  vmaskmovps ymm1, ymm5, [g1 + g5 * 4]
  vmaskmovps ymm2, ymm5, [g2 + g5 * 4]
  vmulps ymm1, ymm0, ymm1
  vmulps ymm1, ymm1, ymm2
  vmaskmovps [g0 + g5 * 4], ymm5, ymm1
.done:
  RET

; ---------------------------------------------------------------------------------------------
; void magnetar_softmax_avx2(float* x, int64_t n)
; x <- exp(x - max) / sum. n >= 1, any; at least one element finite.
FUNCTION softmax_avx2, 2, 5, 16
  vmovaps ymm0, [c_neg_inf]
  vmovaps ymm1, ymm0
  xor g2, g2
  mov g3, g1
  and g3, -16
  jz .max8
.max16:
  vmaxps ymm0, ymm0, [g0 + g2 * 4]
  vmaxps ymm1, ymm1, [g0 + g2 * 4 + 32]
  add g2, 16
  cmp g2, g3
  jb .max16
.max8:
  mov g3, g1
  and g3, -8
  cmp g2, g3
  jae .max_tail
  vmaxps ymm0, ymm0, [g0 + g2 * 4]
  add g2, 8
.max_tail:
  mov g3, g1
  sub g3, g2
  jz .max_reduce
  LOAD_TAIL_MASK ymm13, g3, g4
  vmaskmovps ymm2, ymm13, [g0 + g2 * 4]
  vblendvps ymm2, ymm0, ymm2, ymm13       ; masked-out lanes keep the running max
  vmaxps ymm1, ymm1, ymm2
.max_reduce:
  vmaxps ymm0, ymm0, ymm1
  vextractf128 xmm1, ymm0, 1
  vmaxps xmm0, xmm0, xmm1
  vmovhlps xmm1, xmm0, xmm0
  vmaxps xmm0, xmm0, xmm1
  vmovshdup xmm1, xmm0
  vmaxss xmm0, xmm0, xmm1
  vbroadcastss ymm15, xmm0                ; max
  vxorps xmm14, xmm14, xmm14              ; sum (two accumulators)
  vxorps xmm12, xmm12, xmm12
  xor g2, g2
  mov g3, g1
  and g3, -16
  jz .exp8
.exp16:
  vmovups ymm0, [g0 + g2 * 4]
  vmovups ymm4, [g0 + g2 * 4 + 32]
  vsubps ymm0, ymm0, ymm15
  vsubps ymm4, ymm4, ymm15
  EXP_PS ymm0, ymm1, ymm2, ymm3
  EXP_PS ymm4, ymm5, ymm6, ymm7
  vmovups [g0 + g2 * 4], ymm0
  vmovups [g0 + g2 * 4 + 32], ymm4
  vaddps ymm14, ymm14, ymm0
  vaddps ymm12, ymm12, ymm4
  add g2, 16
  cmp g2, g3
  jb .exp16
.exp8:
  mov g3, g1
  and g3, -8
  cmp g2, g3
  jae .exp_tail
  vmovups ymm0, [g0 + g2 * 4]
  vsubps ymm0, ymm0, ymm15
  EXP_PS ymm0, ymm1, ymm2, ymm3
  vmovups [g0 + g2 * 4], ymm0
  vaddps ymm14, ymm14, ymm0
  add g2, 8
.exp_tail:
  mov g3, g1
  sub g3, g2
  jz .sum
  ; ymm13 still holds the tail mask (same tail as the max pass)
  vmaskmovps ymm0, ymm13, [g0 + g2 * 4]
  vsubps ymm0, ymm0, ymm15
  EXP_PS ymm0, ymm1, ymm2, ymm3
  vandps ymm0, ymm0, ymm13
  vmaskmovps [g0 + g2 * 4], ymm13, ymm0
  vaddps ymm12, ymm12, ymm0
.sum:
  vaddps ymm0, ymm14, ymm12
  HSUM_YMM0
  vmovss xmm1, [c_one]
  vdivss xmm0, xmm1, xmm0
  vbroadcastss ymm0, xmm0
  xor g2, g2
  mov g3, g1
  and g3, -8
  jz .scale_tail
.scale8:
  vmulps ymm1, ymm0, [g0 + g2 * 4]
  vmovups [g0 + g2 * 4], ymm1
  add g2, 8
  cmp g2, g3
  jb .scale8
.scale_tail:
  mov g3, g1
  sub g3, g2
  jz .done
  vmaskmovps ymm1, ymm13, [g0 + g2 * 4]
  vmulps ymm1, ymm0, ymm1
  vmaskmovps [g0 + g2 * 4], ymm13, ymm1
.done:
  RET

; ---------------------------------------------------------------------------------------------
; Gated activations: gate[i] <- act(gate[i]) * up[i] with act(g) = g * sigmoid(z(g)):
;   SiLU: z = g;  GELU(tanh): z = 2 sqrt(2/pi) (g + 0.044715 g^3).
; %1 = 0 for SiLU, 1 for GELU. Computes g * up / (1 + exp(-z)).
%macro GATED_BODY 1
  xor g3, g3
  mov g4, g2
  and g4, -8
  jz %%tail
%%loop8:
  vmovups ymm0, [g0 + g3 * 4]
  GATED_ONE %1
  vmovups [g0 + g3 * 4], ymm5
  add g3, 8
  cmp g3, g4
  jb %%loop8
%%tail:
  mov g4, g2
  sub g4, g3
  jz %%done
  LOAD_TAIL_MASK ymm7, g4, g5
  vmaskmovps ymm0, ymm7, [g0 + g3 * 4]
  vmaskmovps ymm6, ymm7, [g1 + g3 * 4]
  GATED_ONE_UP %1, ymm6
  vmaskmovps [g0 + g3 * 4], ymm7, ymm5
%%done:
%endmacro

; ymm5 <- act(ymm0) * up[g3..]; clobbers ymm1..ymm4.
%macro GATED_ONE 1
  vmovups ymm6, [g1 + g3 * 4]
  GATED_ONE_UP %1, ymm6
%endmacro
%macro GATED_ONE_UP 2
  %if %1 == 0
    vxorps ymm1, ymm1, ymm1
    vsubps ymm1, ymm1, ymm0            ; -g
  %else
    vmulps ymm1, ymm0, ymm0
    vmovaps ymm2, [c_gelu_b]
    vfmadd213ps ymm1, ymm2, [c_gelu_a] ; a + b g^2
    vmulps ymm1, ymm1, ymm0            ; -z
  %endif
  EXP_PS ymm1, ymm2, ymm3, ymm4
  vaddps ymm1, ymm1, [c_one]
  vmulps ymm5, ymm0, %2
  vdivps ymm5, ymm5, ymm1
%endmacro

; void magnetar_silu_mul_avx2(float* gate, const float* up, int64_t n)     n >= 0, any
FUNCTION silu_mul_avx2, 3, 6, 8
  GATED_BODY 0
  RET

; void magnetar_gelu_tanh_mul_avx2(float* gate, const float* up, int64_t n)     n >= 0, any
FUNCTION gelu_tanh_mul_avx2, 3, 6, 8
  GATED_BODY 1
  RET

; ---------------------------------------------------------------------------------------------
; void magnetar_rope_avx2(float* x, int64_t n_heads, int64_t head_dim, const float* cos,
;                         const float* sin)
; Rotate-half RoPE on n_heads heads: (a, b) = (x[i], x[i + half]) <- (a c - b s, b c + a s).
; head_dim even, >= 2.
FUNCTION rope_avx2, 5, 10, 8
  mov g5, g2
  shr g5, 1                  ; half
  lea g6, [g5 * 4]           ; half in bytes
  mov g7, g5
  and g7, -8                 ; bulk of half
  mov g8, g5
  sub g8, g7                 ; tail
  jz .heads
  LOAD_TAIL_MASK ymm7, g8, g9
.heads:
  test g1, g1
  jz .done
.head:
  lea g9, [g0 + g6]          ; the second half of this head
  xor g8, g8
  test g7, g7
  jz .tail
.loop8:
  vmovups ymm0, [g0 + g8 * 4]          ; a
  vmovups ymm1, [g9 + g8 * 4]          ; b
  vmovups ymm2, [g3 + g8 * 4]          ; cos
  vmovups ymm3, [g4 + g8 * 4]          ; sin
  vmulps ymm4, ymm1, ymm3              ; b s
  vmulps ymm5, ymm0, ymm3              ; a s
  vfmsub231ps ymm4, ymm0, ymm2         ; a c - b s
  vfmadd231ps ymm5, ymm1, ymm2         ; b c + a s
  vmovups [g0 + g8 * 4], ymm4
  vmovups [g9 + g8 * 4], ymm5
  add g8, 8
  cmp g8, g7
  jb .loop8
.tail:
  cmp g8, g5
  jae .next
  vmaskmovps ymm0, ymm7, [g0 + g8 * 4]
  vmaskmovps ymm1, ymm7, [g9 + g8 * 4]
  vmaskmovps ymm2, ymm7, [g3 + g8 * 4]
  vmaskmovps ymm3, ymm7, [g4 + g8 * 4]
  vmulps ymm4, ymm1, ymm3
  vmulps ymm5, ymm0, ymm3
  vfmsub231ps ymm4, ymm0, ymm2
  vfmadd231ps ymm5, ymm1, ymm2
  vmaskmovps [g0 + g8 * 4], ymm7, ymm4
  vmaskmovps [g9 + g8 * 4], ymm7, ymm5
.next:
  lea g0, [g0 + g6 * 2]
  dec g1
  jnz .head
.done:
  RET
