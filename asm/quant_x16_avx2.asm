; Q8_0 / Q4_0 decode and prefill over x16 tiles (engine/kernels/quant.h, "The x16 tile layout")
; with AVX2 (no VNNI): the fallback of asm/quant_x16_avx512vnni.asm, same contract and twins
; (matmul_q8_0_x16_ref, matmul_q4_0_x16_ref in engine/kernels/quant_tiles.cpp), bit for bit.
;
; A YMM register holds one 32-byte half of a run: elements 4k..4k+3 of 8 rows. Per half and
; token, vpmaddubsw against the token's dword k broadcast, then vpmaddwd with ones, gives each of
; the 8 rows its int32 block dot in its own lane — no horizontal sums.
;   Q8_0: the stored q + 128 is turned back into q (XOR 0x80); u8 |q| times sign(q) * x keeps
;         vpmaddubsw's pair sums within int16 (q and x lie in [-127, 127]).
;   Q4_0: nibble times x is at most 15 * 127 per product, so the int16 sums of all eight
;         products of a row's dword pairs fit (8 * 2 * 1905 < 32768) and are widened once; the
;         "- 8 * sum(x)" comes off the int32 dot exactly.
; Then, as the twin: y += float(dot) * (d_w * d_x), each operation rounded on its own, in block
; order. Tokens go in groups of 4, then 1, each group one pass over the tile; a single token
; walks two chunks of tiles at once (two long streams).

%include "quant_x16.inc"

RODATA
align 32
x16a_sign_bytes: times 32 db 0x80
x16a_low_nibble: times 32 db 0x0f
x16a_ones16:     times 16 dw 1

; Registers through a call: the general-purpose ones as asm/quant_x16.inc says (one-token
; decode: g12 / g8 = the second stream's offset / y offset);
;   ymm8..15 = FP32 sums: half h, token t in ymm(8 + 4h + t)   ymm0..3 = int sums of tokens 0..3
;   ymm4..7 = scratch

; X16A_HALF type (8 or 4), half (0 or 1), tokens (4 or 1), block pointer, first accumulator:
; the block's int32 dots of rows 8h..8h+7 with each token (ymm0..), then their scaled sums added
; to the FP32 accumulators (token t: ymm<first + t>).
%macro X16A_HALF 5
  %assign t 0
  %rep %3
    vpxor ymm%[t], ymm%[t], ymm%[t]
    %assign t t + 1
  %endrep
  %if %1 == 8
    %assign k 0
    %rep 8
      vmovdqu ymm5, [%4 + 32 + 64 * k + 32 * %2]
      vpxor ymm5, ymm5, [rel x16a_sign_bytes]      ; q
      vpabsb ymm4, ymm5                            ; |q|
      %assign t 0
      %rep %3
        X16_TOKEN_ADDR t
        vpbroadcastd ymm7, [X16_T + ACT_QS + 4 * k]
        vpsignb ymm7, ymm7, ymm5                   ; x * sign(q)
        vpmaddubsw ymm7, ymm4, ymm7
        vpmaddwd ymm7, ymm7, [rel x16a_ones16]
        vpaddd ymm%[t], ymm%[t], ymm7
        %assign t t + 1
      %endrep
      %assign k k + 1
    %endrep
  %else
    %assign m 0
    %rep 4
      vmovdqu ymm5, [%4 + 32 + 64 * m + 32 * %2]
      vpand ymm4, ymm5, [rel x16a_low_nibble]      ; elements 4m..4m+3
      vpsrlw ymm5, ymm5, 4
      vpand ymm5, ymm5, [rel x16a_low_nibble]      ; elements 16+4m..16+4m+3
      %assign t 0
      %rep %3
        X16_TOKEN_ADDR t
        vpbroadcastd ymm7, [X16_T + ACT_QS + 4 * m]
        vpmaddubsw ymm7, ymm4, ymm7
        vpbroadcastd ymm6, [X16_T + ACT_QS + 16 + 4 * m]
        vpmaddubsw ymm6, ymm5, ymm6
        vpaddw ymm7, ymm7, ymm6
        vpaddw ymm%[t], ymm%[t], ymm7              ; int16: 16 products of at most 1905
        %assign t t + 1
      %endrep
      %assign m m + 1
    %endrep
    %assign t 0
    %rep %3
      X16_TOKEN_ADDR t
      vpmaddwd ymm%[t], ymm%[t], [rel x16a_ones16]
      vpbroadcastd ymm6, [X16_T + ACT_SUM]
      vpslld ymm6, ymm6, 3
      vpsubd ymm%[t], ymm%[t], ymm6                ; - 8 * sum(x)
      %assign t t + 1
    %endrep
  %endif
  vcvtph2ps ymm4, [%4 + 16 * %2]                   ; d_w of the 8 rows
  %assign t 0
  %rep %3
    X16_TOKEN_ADDR t
    %assign acc %5 + t
    vcvtdq2ps ymm%[t], ymm%[t]
    vbroadcastss ymm5, [X16_T + ACT_D]
    vmulps ymm5, ymm5, ymm4                        ; d_w * d_x
    vmulps ymm%[t], ymm%[t], ymm5
    vaddps ymm%[acc], ymm%[acc], ymm%[t]
    %assign t t + 1
  %endrep
%endmacro

; X16A_PASS type, block_bytes, tokens (4 or 1): one pass over the tile for the group's tokens
%macro X16A_PASS 3
  mov g9, g0
  mov g11, g10
  mov g5, g4
  %assign t 0
  %rep %3
    %assign acc0 8 + t
    %assign acc1 12 + t
    vxorps ymm%[acc0], ymm%[acc0], ymm%[acc0]
    vxorps ymm%[acc1], ymm%[acc1], ymm%[acc1]
    %assign t t + 1
  %endrep
%%block:
  X16A_HALF %1, 0, %3, g9, 8
  X16A_HALF %1, 1, %3, g9, 12
  add g9, %2
  add g11, ACT_BLOCK
  dec g5
  jnz %%block
  mov g5, g14
  %assign t 0
  %rep %3
    %assign acc0 8 + t
    %assign acc1 12 + t
    vmovups [g5], ymm%[acc0]
    vmovups [g5 + 32], ymm%[acc1]
    %if t + 1 < %3
      add g5, g6
    %endif
    %assign t t + 1
  %endrep
%endmacro

; X16A_DECODE type, block_bytes: one token over two tiles g12 bytes apart (two sequential
; streams, as the VNNI kernel): tile i's halves sum in ymm(8 + 2i), ymm(9 + 2i), its 16 outputs
; go to g14 + i x g8 (g5..g8 are free on the one-token path). Leaves g9 at the end of tile 0.
%macro X16A_DECODE 2
  mov g9, g0
  mov g11, g10
  mov g5, g4
  vxorps ymm8, ymm8, ymm8
  vxorps ymm9, ymm9, ymm9
  vxorps ymm10, ymm10, ymm10
  vxorps ymm11, ymm11, ymm11
%%block:
  X16A_HALF %1, 0, 1, g9, 8
  X16A_HALF %1, 1, 1, g9, 9
  X16A_HALF %1, 0, 1, g9 + g12, 10
  X16A_HALF %1, 1, 1, g9 + g12, 11
  add g9, %2
  add g11, ACT_BLOCK
  dec g5
  jnz %%block
  vmovups [g14], ymm8
  vmovups [g14 + 32], ymm9
  vmovups [g14 + g8], ymm10
  vmovups [g14 + g8 + 32], ymm11
%endmacro

FUNCTION matmul_q8_0_x16_avx2, 7, 15, 16
  X16_TILE_LOOP 8, X16_Q8_BLOCK, X16A_PASS, 4, X16A_DECODE, X16_NO_SETUP

FUNCTION matmul_q4_0_x16_avx2, 7, 15, 16
  X16_TILE_LOOP 4, X16_Q4_BLOCK, X16A_PASS, 4, X16A_DECODE, X16_NO_SETUP
