; K-quant prefill on a transposed 8-row tile, AVX2 + FMA + F16C: Q4_K, Q5_K, Q6_K, Q2_K, Q3_K on
; GGUF's row-major blocks (any alignment). Contract and twins: engine/kernels/kquant_tile.h; the
; skeleton, tile layout and numerics: asm/kquant_tile.inc; the types' UNPACKs and int16 bounds:
; asm/kquant_tile_unpack.inc. The passes are the skeleton's KT_PASS (YMM, 8 rows per register).

%include "kquant_tile_unpack.inc"

FUNCTION matmul_q4_k_tile_avx2, 7, 15, 16
  KTILE_MATMUL 144, Q4K_UNPACK, 8, 8, 1

FUNCTION matmul_q5_k_tile_avx2, 7, 15, 16
  KTILE_MATMUL 176, Q5K_UNPACK, 4, 8, 1

FUNCTION matmul_q6_k_tile_avx2, 7, 15, 16
  KTILE_MATMUL 210, Q6K_UNPACK, 2, 4, 2

FUNCTION matmul_q2_k_tile_avx2, 7, 15, 16
  KTILE_MATMUL 84, Q2K_UNPACK, 4, 4, 1

FUNCTION matmul_q3_k_tile_avx2, 7, 15, 16
  KTILE_MATMUL 110, Q3K_UNPACK, 4, 4, 4
