; probe_avx2.asm — measurement kernels for benchmarks (not in the KernelTable): the streaming-read
; ceiling that matvec is judged against, and an FMA throughput loop for the FP32 peak.
; Twins: kernels::ref::read_sum_f32 and kernels::ref::fma_loop (reference.h).

%include "abi.inc"

; void magnetar_read_sum_avx2(const float* p, int64_t n, float* out)
; out[0..8) = lane sums of p[0..n) (p[i] lands in lane i % 8, summed in 4 accumulators
; over i % 32 / 8, then folded). n: a multiple of 64. The plainest possible streaming read.
FUNCTION read_sum_avx2, 3, 4, 4
  vxorps xmm0, xmm0, xmm0
  vxorps xmm1, xmm1, xmm1
  vxorps xmm2, xmm2, xmm2
  vxorps xmm3, xmm3, xmm3
  xor g3, g3
  test g1, g1
  jz .fold
  align 16
.loop:
  vaddps ymm0, ymm0, [g0 + g3 * 4]
  vaddps ymm1, ymm1, [g0 + g3 * 4 + 32]
  vaddps ymm2, ymm2, [g0 + g3 * 4 + 64]
  vaddps ymm3, ymm3, [g0 + g3 * 4 + 96]
  vaddps ymm0, ymm0, [g0 + g3 * 4 + 128]
  vaddps ymm1, ymm1, [g0 + g3 * 4 + 160]
  vaddps ymm2, ymm2, [g0 + g3 * 4 + 192]
  vaddps ymm3, ymm3, [g0 + g3 * 4 + 224]
  add g3, 64
  cmp g3, g1
  jb .loop
.fold:
  vaddps ymm0, ymm0, ymm1
  vaddps ymm2, ymm2, ymm3
  vaddps ymm0, ymm0, ymm2
  vmovups [g2], ymm0
  RET

; void magnetar_fma_loop_avx2(int64_t iterations, const float* coefficients /*[2]: m, a*/,
;                             float* out /*[8]*/)
; Twelve independent chains acc <- acc * m + a (acc starts at 1.0 + chain / 16), eight lanes each,
; `iterations` steps; out = lane-wise sum of the twelve chains in chain order.
; Work: iterations * 12 * 8 FMAs = iterations * 192 FLOPs.
FUNCTION fma_loop_avx2, 3, 4, 15
  vbroadcastss ymm12, [g1]
  vbroadcastss ymm13, [g1 + 4]
  lea g3, [chain_init]
  %assign c 0
  %rep 12
    vbroadcastss ymm%[c], [g3 + c * 4]
    %assign c c + 1
  %endrep
  test g0, g0
  jz .sum
  align 16
.loop:
  %assign c 0
  %rep 12
    vfmadd213ps ymm%[c], ymm12, ymm13
    %assign c c + 1
  %endrep
  dec g0
  jnz .loop
.sum:
  %assign c 1
  %rep 11
    vaddps ymm0, ymm0, ymm%[c]
    %assign c c + 1
  %endrep
  vmovups [g2], ymm0
  RET

RODATA
chain_init: dd 1.0, 1.0625, 1.125, 1.1875, 1.25, 1.3125, 1.375, 1.4375, 1.5, 1.5625, 1.625, 1.6875
