/* tests/e2e/progs/pt_target.S - a tiny static x86-64 program with a known
 * control flow, for the hand-encoded Intel PT test (tests/e2e/perf_data.sh).
 *
 * From pt_start: three calls to pt_f (each a compressed return), a loop
 * branch taken twice then not taken, an indirect jump to pt_tail, and an
 * exit syscall.  As a TNT sequence: 1 1 1 1 1 0 (ret, jnz, ret, jnz, ret,
 * jnz), then TIP(pt_tail), then tracing stops at the syscall. */
	.text
	.globl _start, pt_start, pt_loop, pt_call, pt_jnz, pt_jmp, pt_tail, pt_syscall, pt_f
_start:
pt_start:
	mov $3, %ecx
pt_loop:
pt_call:
	call pt_f
	dec %ecx
pt_jnz:
	jnz pt_loop
	lea pt_tail(%rip), %rax
pt_jmp:
	jmp *%rax
	ud2
pt_tail:
	mov $60, %eax
	xor %edi, %edi
pt_syscall:
	syscall
pt_f:
	ret
	.section .note.GNU-stack,"",@progbits
