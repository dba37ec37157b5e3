; checked_call.asm — the checkasm-style trampoline: calls a kernel with every callee-saved register
; (general and, on Win64, xmm6..15) set to random values, and reports which ones the kernel failed
; to restore. Knows nothing about a particular ABI: it uses abi.inc's g<i> map and ABI_* numbers.

%include "abi.inc"

%assign MAX_ARGS 10
%assign OUT_AREA ABI_STACK_ARGS - 8 + 8 * (MAX_ARGS - ABI_REG_ARGS)  ; outgoing stack arguments
%assign LOC_FN OUT_AREA
%assign LOC_SEEDS OUT_AREA + 8
%assign FRAME OUT_AREA + 16
%if (FRAME % 16) != 8                 ; entry rsp % 16 == 8 and the prologue keeps it there
  %assign FRAME FRAME + 8
%endif
%assign SEED_XMM 128                  ; seeds: 16 GPR slots (by g index), then 16 xmm slots

; The body lives in a macro only so that it can use macro-local labels and counters.
%macro CHECKED_CALL_BODY 0
  sub rsp, FRAME
  mov [rsp + LOC_FN], g0
  mov [rsp + LOC_SEEDS], g2
  mov g6, g1                          ; args (g6 is never an argument register)
  %assign %%i ABI_REG_ARGS
  %rep MAX_ARGS - ABI_REG_ARGS
    mov g5, [g6 + %%i * 8]
    mov [rsp + ABI_STACK_ARGS - 8 + (%%i - ABI_REG_ARGS) * 8], g5
    %assign %%i %%i + 1
  %endrep
  %assign %%j ABI_FIRST_SAVED
  %rep 15 - ABI_FIRST_SAVED
    mov g%[%%j], [g2 + %%j * 8]
    %assign %%j %%j + 1
  %endrep
  %assign %%x ABI_FIRST_SAVED_XMM
  %rep 16 - ABI_FIRST_SAVED_XMM
    vmovdqu xmm%[%%x], [g2 + SEED_XMM + %%x * 16]
    %assign %%x %%x + 1
  %endrep
  %assign %%i 0
  %rep ABI_REG_ARGS
    mov g%[%%i], [g6 + %%i * 8]
    %assign %%i %%i + 1
  %endrep
  call [rsp + LOC_FN]
  mov g5, [rsp + LOC_SEEDS]
  xor g6, g6
  %assign %%j ABI_FIRST_SAVED
  %rep 15 - ABI_FIRST_SAVED
    cmp g%[%%j], [g5 + %%j * 8]
    je %%gpr_ok %+ %%j
    bts g6, %%j
  %%gpr_ok %+ %%j:
    %assign %%j %%j + 1
  %endrep
  %assign %%x ABI_FIRST_SAVED_XMM
  %rep 16 - ABI_FIRST_SAVED_XMM
    vmovq g4, xmm%[%%x]
    cmp g4, [g5 + SEED_XMM + %%x * 16]
    jne %%xmm_bad %+ %%x
    vpextrq g4, xmm%[%%x], 1
    cmp g4, [g5 + SEED_XMM + %%x * 16 + 8]
    je %%xmm_ok %+ %%x
  %%xmm_bad %+ %%x:
    bts g6, 16 + %%x
  %%xmm_ok %+ %%x:
    %assign %%x %%x + 1
  %endrep
  add rsp, FRAME
%endmacro

; uint64_t magnetar_checked_call(const void* fn, const int64_t* args /*[10]*/,
;                                const uint64_t* seeds /*[16 + 32]*/)
; Returns a bitmask: bit i = callee-saved g<i> changed, bit 16 + x = callee-saved xmm<x> changed.
FUNCTION checked_call, 3, 15, 16
  %if (FN_PUSHED * 8 + FN_XMM_BYTES) % 16 != 0
    %error "checked_call: the prologue must keep rsp % 16 == 8"
  %endif
  CHECKED_CALL_BODY
  RET

; Deliberately broken kernels, so the tests can prove the trampoline catches them.
; void magnetar_test_clobber_gpr(void): overwrites g9 (callee-saved everywhere) without saving it.
FUNCTION test_clobber_gpr, 0, 0, 0
  xor g9, g9
  not g9
  RET

; void magnetar_test_clobber_xmm(void): overwrites xmm6..15 without declaring them (wrong on Win64;
; harmless on System V, where no vector register is callee-saved).
FUNCTION test_clobber_xmm, 0, 0, 0
  vpcmpeqd ymm6, ymm6, ymm6
  vpcmpeqd ymm15, ymm15, ymm15
  RET
