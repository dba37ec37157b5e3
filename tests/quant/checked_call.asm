; Checked-call trampoline for the quant kernel tests (a small stand-in until tests/kernels'
; shared one is on main). Calls fn with six integer/pointer arguments after seeding every
; callee-saved register (and xmm6-xmm15 on Win64) with known values, and returns a bit mask of
; those the callee failed to preserve (0 = all preserved).
;   uint64_t magnetar_quant_checked_call(const void* fn, const uint64_t* args /* [6] */);
; Bits: 0 rbx, 1 rbp, 2 r12, 3 r13, 4 r14, 5 r15, 6 rsi, 7 rdi, 8 + i: xmm(6 + i).
; As the ABI checker this file, and only it besides the ABI layer, names ABI registers.

%include "quant_abi_tmp.inc"

QRODATA
align 16
gpr_seeds: dq 0x5eed00000000b0b1, 0x5eed00000000b0b2, 0x1234567890abcdef, 0x0fedcba987654321
           dq 0xdeadbeefcafef00d, 0x0123456789abcdef, 0x7777666655554444, 0x1111222233334444
xmm_seeds: times 10 dq 0x9e3779b97f4a7c15, 0xc2b2ae3d27d4eb4f

%macro CHECK_GPR 2   ; reg, bit
  cmp %1, [rel gpr_seeds + 8*%2]
  je %%ok
  or rax, 1 << %2
%%ok:
%endmacro

%macro CHECK_XMM 1   ; i: xmm(6 + i)
  %assign %%r %1 + 6
  pcmpeqb xmm%[%%r], [rel xmm_seeds + 16*%1]
  pmovmskb r10d, xmm%[%%r]
  cmp r10d, 0xffff
  je %%ok
  bts rax, 8 + %1
%%ok:
%endmacro

section .text
global magnetar_quant_checked_call
magnetar_quant_checked_call:
  push rbx
  push rbp
  push r12
  push r13
  push r14
  push r15
%ifdef QABI_WIN64
  push rdi
  push rsi
  sub rsp, 168
  %assign i 0
  %rep 10
    %assign r i + 6
    movdqu [rsp + 16*i], xmm%[r]
    %assign i i + 1
  %endrep
  mov rax, rcx                ; fn
  mov r11, rdx                ; args
  %assign i 0
  %rep 10
    %assign r i + 6
    movdqu xmm%[r], [rel xmm_seeds + 16*i]
    %assign i i + 1
  %endrep
  mov rsi, [rel gpr_seeds + 8*6]
  mov rdi, [rel gpr_seeds + 8*7]
%else
  mov rax, rdi
  mov r11, rsi
%endif
  mov rbx, [rel gpr_seeds + 8*0]
  mov rbp, [rel gpr_seeds + 8*1]
  mov r12, [rel gpr_seeds + 8*2]
  mov r13, [rel gpr_seeds + 8*3]
  mov r14, [rel gpr_seeds + 8*4]
  mov r15, [rel gpr_seeds + 8*5]
%ifdef QABI_WIN64
  sub rsp, 48                 ; shadow space + arguments 5 and 6; keeps rsp 16-byte aligned
  mov r10, [r11 + 32]
  mov [rsp + 32], r10
  mov r10, [r11 + 40]
  mov [rsp + 40], r10
  mov rcx, [r11]
  mov rdx, [r11 + 8]
  mov r8, [r11 + 16]
  mov r9, [r11 + 24]
  call rax
  add rsp, 48
%else
  sub rsp, 8                  ; 16-byte alignment at the call
  mov rdi, [r11]
  mov rsi, [r11 + 8]
  mov rdx, [r11 + 16]
  mov rcx, [r11 + 24]
  mov r8, [r11 + 32]
  mov r9, [r11 + 40]
  call rax
  add rsp, 8
%endif
  xor eax, eax
  CHECK_GPR rbx, 0
  CHECK_GPR rbp, 1
  CHECK_GPR r12, 2
  CHECK_GPR r13, 3
  CHECK_GPR r14, 4
  CHECK_GPR r15, 5
%ifdef QABI_WIN64
  CHECK_GPR rsi, 6
  CHECK_GPR rdi, 7
  %assign i 0
  %rep 10
    CHECK_XMM i
    %assign i i + 1
  %endrep
  %assign i 0
  %rep 10
    %assign r i + 6
    movdqu xmm%[r], [rsp + 16*i]
    %assign i i + 1
  %endrep
  add rsp, 168
  pop rsi
  pop rdi
%endif
  pop r15
  pop r14
  pop r13
  pop r12
  pop rbp
  pop rbx
  ret

; Deliberately breaks the ABI (rbx, r15, and xmm15 on Win64) so the tests can prove the
; trampoline notices. Only ever called through magnetar_quant_checked_call.
global magnetar_quant_test_clobber
magnetar_quant_test_clobber:
  xor ebx, ebx
  not r15
%ifdef QABI_WIN64
  pxor xmm15, xmm15
%endif
  ret
