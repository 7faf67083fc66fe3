/* tests/unit/test_x86.c - x86 classification against the Intel SDM's
 * encodings (lengths, classes, direct targets written out by hand from
 * the opcode tables, not produced by running hwt). */
#include <string.h>

#include "hwt/error.h"
#include "hwt/x86.h"
#include "t.h"

struct xcase {
	const char *name;
	int mode;
	uint8_t bytes[15];
	int n;
	int size, iclass, flags;
	uint64_t target; /* for direct branches, ip = 0x1000 */
};

static const struct xcase cases[] = {
    {"nop", 64, {0x90}, 1, 1, HWT_INSN_OTHER, 0, 0},
    {"mov rax,[rbx]", 64, {0x48, 0x8b, 0x03}, 3, 3, HWT_INSN_OTHER, 0, 0},
    {"je rel8", 64, {0x74, 0x05}, 2, 2, HWT_INSN_JCC, HWT_INSN_F_DIRECT, 0x1007},
    {"jle rel8 back", 64, {0x7e, 0xf4}, 2, 2, HWT_INSN_JCC, HWT_INSN_F_DIRECT, 0xff6},
    {"jne rel32", 64, {0x0f, 0x85, 0x10, 0, 0, 0}, 6, 6, HWT_INSN_JCC, HWT_INSN_F_DIRECT, 0x1016},
    {"jrcxz", 64, {0xe3, 0x02}, 2, 2, HWT_INSN_JCC, HWT_INSN_F_DIRECT, 0x1004},
    {"loop", 64, {0xe2, 0xfe}, 2, 2, HWT_INSN_JCC, HWT_INSN_F_DIRECT, 0x1000},
    {"jmp rel8", 64, {0xeb, 0xff}, 2, 2, HWT_INSN_JMP, HWT_INSN_F_DIRECT, 0x1001},
    {"jmp rel32", 64, {0xe9, 0xf6, 0, 0, 0}, 5, 5, HWT_INSN_JMP, HWT_INSN_F_DIRECT, 0x10fb},
    {"call rel32",
     64,
     {0xe8, 0xfc, 0xff, 0xff, 0xff},
     5,
     5,
     HWT_INSN_CALL,
     HWT_INSN_F_DIRECT,
     0x1001},
    {"call rax", 64, {0xff, 0xd0}, 2, 2, HWT_INSN_CALL_IND, 0, 0},
    {"jmp rax", 64, {0xff, 0xe0}, 2, 2, HWT_INSN_JMP_IND, 0, 0},
    {"jmp [rip+0]", 64, {0xff, 0x25, 0, 0, 0, 0}, 6, 6, HWT_INSN_JMP_IND, 0, 0},
    {"ret", 64, {0xc3}, 1, 1, HWT_INSN_RET, 0, 0},
    {"ret imm16", 64, {0xc2, 0x08, 0x00}, 3, 3, HWT_INSN_RET, 0, 0},
    {"lret", 64, {0xcb}, 1, 1, HWT_INSN_FAR_RET, 0, 0},
    {"iretq", 64, {0x48, 0xcf}, 2, 2, HWT_INSN_FAR_RET, HWT_INSN_F_IRET, 0},
    {"call far [rax]", 64, {0xff, 0x18}, 2, 2, HWT_INSN_FAR_CALL, 0, 0},
    {"jmp far [rax]", 64, {0xff, 0x28}, 2, 2, HWT_INSN_FAR_JMP, 0, 0},
    {"jmp far ptr16:32", 32, {0xea, 0, 0x20, 0, 0, 0x10, 0}, 7, 7, HWT_INSN_FAR_JMP, 0, 0},
    {"syscall", 64, {0x0f, 0x05}, 2, 2, HWT_INSN_SYSCALL, 0, 0},
    {"sysenter", 64, {0x0f, 0x34}, 2, 2, HWT_INSN_SYSCALL, 0, 0},
    {"sysret", 64, {0x0f, 0x07}, 2, 2, HWT_INSN_SYSRET, 0, 0},
    {"sysexit", 64, {0x0f, 0x35}, 2, 2, HWT_INSN_SYSRET, 0, 0},
    {"int 0x80", 64, {0xcd, 0x80}, 2, 2, HWT_INSN_INT, 0, 0},
    {"int3", 64, {0xcc}, 1, 1, HWT_INSN_INT, 0, 0},
    {"into", 32, {0xce}, 1, 1, HWT_INSN_INT, 0, 0},
    {"vmcall", 64, {0x0f, 0x01, 0xc1}, 3, 3, HWT_INSN_VMCALL, 0, 0},
    {"vmresume", 64, {0x0f, 0x01, 0xc3}, 3, 3, HWT_INSN_VMCALL, HWT_INSN_F_VMENTRY, 0},
    {"vmlaunch", 64, {0x0f, 0x01, 0xc2}, 3, 3, HWT_INSN_VMCALL, HWT_INSN_F_VMENTRY, 0},
    {"ptwrite r32", 64, {0xf3, 0x0f, 0xae, 0xe0}, 4, 4, HWT_INSN_PTWRITE, 0, 0},
    {"ptwrite r64", 64, {0xf3, 0x48, 0x0f, 0xae, 0xe0}, 5, 5, HWT_INSN_PTWRITE, 0, 0},
    {"mov cr3,rax", 64, {0x0f, 0x22, 0xd8}, 3, 3, HWT_INSN_OTHER, HWT_INSN_F_MOV_CR3, 0},
    {"mov cr0,rax", 64, {0x0f, 0x22, 0xc0}, 3, 3, HWT_INSN_OTHER, 0, 0},
    {"eretu", 64, {0xf3, 0x0f, 0x01, 0xca}, 4, 4, HWT_INSN_FAR_RET, HWT_INSN_F_ERET, 0},
    {"erets", 64, {0xf2, 0x0f, 0x01, 0xca}, 4, 4, HWT_INSN_FAR_RET, HWT_INSN_F_ERET, 0},
    {"uiret", 64, {0xf3, 0x0f, 0x01, 0xec}, 4, 4, HWT_INSN_FAR_RET, HWT_INSN_F_UIRET, 0},
    {"call rel32 (32-bit)",
     32,
     {0xe8, 0x10, 0, 0, 0},
     5,
     5,
     HWT_INSN_CALL,
     HWT_INSN_F_DIRECT,
     0x1015},
    {"call rel16 (16-bit)", 16, {0xe8, 0xf0, 0xef}, 3, 3, HWT_INSN_CALL, HWT_INSN_F_DIRECT, 0xfff3},
    {"jmp rel32 wraps (32-bit)",
     32,
     {0xe9, 0x00, 0xe0, 0xff, 0xff},
     5,
     5,
     HWT_INSN_JMP,
     HWT_INSN_F_DIRECT,
     0xfffff005},
    {"jmpabs",
     64,
     {0xd5, 0x00, 0xa1, 0x0d, 0x10, 0, 0, 0, 0, 0, 0},
     11,
     11,
     HWT_INSN_JMP_IND,
     0,
     0},
    {"mov eax,imm32 (16-bit, 66)", 16, {0x66, 0xb8, 1, 2, 3, 4}, 6, 6, HWT_INSN_OTHER, 0, 0},
};

static void t_cases(void)
{
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct xcase *c = &cases[i];
		struct hwt_x86_insn in;
		int err = hwt_x86_decode(c->bytes, (size_t)c->n, 0x1000, c->mode, &in);
		CHECKF(err == 0, "%s: error %d", c->name, err);
		if (err)
			continue;
		CHECKF(in.size == c->size, "%s: size %u, want %d", c->name, in.size, c->size);
		CHECKF(in.iclass == c->iclass, "%s: class %s, want %s", c->name,
		       hwt_insn_class_name(in.iclass), hwt_insn_class_name(c->iclass));
		CHECKF((in.flags & c->flags) == c->flags, "%s: flags %x, want %x", c->name,
		       in.flags, c->flags);
		if (c->flags & HWT_INSN_F_DIRECT)
			CHECKF(in.target == c->target, "%s: target %llx, want %llx", c->name,
			       (unsigned long long)in.target, (unsigned long long)c->target);
		CHECK(in.ip == 0x1000 && in.mode == c->mode);
		CHECK(!memcmp(in.raw, c->bytes, in.size));
	}
}

static void t_truncated(void)
{
	static const uint8_t call[] = {0xe8, 0x00, 0x00, 0x00, 0x00};
	struct hwt_x86_insn in;
	for (size_t n = 1; n < sizeof(call); n++)
		CHECK_EQ(hwt_x86_decode(call, n, 0, 64, &in), HWT_ERR_NOMAP);
	CHECK_EQ(hwt_x86_decode(call, sizeof(call), 0, 64, &in), 0);
}

static void t_invalid(void)
{
	static const uint8_t ud[] = {0x06}; /* push es: invalid in 64-bit mode */
	static const uint8_t lock_nop[] = {0xf0, 0x90};
	struct hwt_x86_insn in;
	CHECK_EQ(hwt_x86_decode(ud, sizeof(ud), 0, 64, &in), HWT_ERR_BAD_INSN);
	CHECK_EQ(hwt_x86_decode(ud, sizeof(ud), 0, 32, &in), 0);
	CHECK_EQ(hwt_x86_decode(lock_nop, sizeof(lock_nop), 0, 64, &in), HWT_ERR_BAD_INSN);
	CHECK_EQ(hwt_x86_decode(ud, sizeof(ud), 0, 8, &in), HWT_ERR_INVALID);
}

static void t_props(void)
{
	CHECK(hwt_insn_is_indirect(HWT_INSN_RET));
	CHECK(hwt_insn_is_indirect(HWT_INSN_SYSCALL));
	CHECK(!hwt_insn_is_indirect(HWT_INSN_JCC));
	CHECK(!hwt_insn_is_indirect(HWT_INSN_CALL));
	CHECK(hwt_insn_is_far(HWT_INSN_INT));
	CHECK(!hwt_insn_is_far(HWT_INSN_RET));
	CHECK(!hwt_insn_is_branch(HWT_INSN_PTWRITE));
	CHECK(!strcmp(hwt_insn_class_name(HWT_INSN_JCC), "jcc"));
}

int main(void)
{
	RUN(t_cases);
	RUN(t_truncated);
	RUN(t_invalid);
	RUN(t_props);
	return t_done();
}
