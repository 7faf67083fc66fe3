/* tests/unit/test_a64.c - the A64 classifier and disassembler (hwt/a64.h)
 * against encodings worked out by hand from the Arm ARM (DDI 0487,
 * "A64 instruction set encoding"), independent of Capstone: class, size,
 * direct target (imm scaled by 4 from the instruction's address),
 * mnemonic. */
#include <string.h>

#include "hwt/a64.h"
#include "hwt/error.h"
#include "hwt/x86.h"
#include "t.h"

struct enc {
	uint32_t word;
	uint64_t ip;
	int iclass;
	int direct;
	uint64_t target;
	const char *mnemonic;
};

static const struct enc encs[] = {
    /* B imm26: 000101 imm26 */
    {0x14000004u, 0x1000, HWT_INSN_JMP, 1, 0x1010, "b"},
    {0x17ffffffu, 0x1000, HWT_INSN_JMP, 1, 0x0ffc, "b"},
    /* BL imm26: 100101 imm26 */
    {0x94000010u, 0x400000, HWT_INSN_CALL, 1, 0x400040, "bl"},
    {0x97fffffeu, 0x2000, HWT_INSN_CALL, 1, 0x1ff8, "bl"},
    /* B.cond: 01010100 imm19 0 cond (EQ 0, NE 1, GT c) */
    {0x54000040u, 0x3000, HWT_INSN_JCC, 1, 0x3008, "b.eq"},
    {0x54ffffe1u, 0x3000, HWT_INSN_JCC, 1, 0x2ffc, "b.ne"},
    {0x5400008cu, 0x3000, HWT_INSN_JCC, 1, 0x3010, "b.gt"},
    /* CBZ/CBNZ: sf 011010 op imm19 Rt */
    {0xb4000040u, 0x5000, HWT_INSN_JCC, 1, 0x5008, "cbz"},
    {0x35ffffe1u, 0x5000, HWT_INSN_JCC, 1, 0x4ffc, "cbnz"},
    /* TBZ/TBNZ: b5 011011 op b40 imm14 Rt */
    {0x36000040u, 0x6000, HWT_INSN_JCC, 1, 0x6008, "tbz"},
    {0x37080060u, 0x6000, HWT_INSN_JCC, 1, 0x600c, "tbnz"},
    /* BR Xn: 1101011 0000 11111 000000 Rn 00000 */
    {0xd61f0200u, 0x7000, HWT_INSN_JMP_IND, 0, 0, "br"},
    /* BLR Xn */
    {0xd63f0100u, 0x7000, HWT_INSN_CALL_IND, 0, 0, "blr"},
    /* RET (X30), RET X1 */
    {0xd65f03c0u, 0x7000, HWT_INSN_RET, 0, 0, "ret"},
    {0xd65f0020u, 0x7000, HWT_INSN_RET, 0, 0, "ret"},
    /* ERET */
    {0xd69f03e0u, 0x7000, HWT_INSN_FAR_RET, 0, 0, "eret"},
    /* exception generation: 11010100 opc imm16 op2 LL */
    {0xd4000001u, 0x8000, HWT_INSN_SYSCALL, 0, 0, "svc"},
    {0xd4000002u, 0x8000, HWT_INSN_INT, 0, 0, "hvc"},
    {0xd4200000u, 0x8000, HWT_INSN_INT, 0, 0, "brk"},
    /* no control transfer: NOP, ADD X0, X1, #1, LDR X0, [X1] */
    {0xd503201fu, 0x9000, HWT_INSN_OTHER, 0, 0, "nop"},
    {0x91000420u, 0x9000, HWT_INSN_OTHER, 0, 0, "add"},
    {0xf9400020u, 0x9000, HWT_INSN_OTHER, 0, 0, "ldr"},
};

static void le32(uint8_t *b, uint32_t w)
{
	for (int i = 0; i < 4; i++)
		b[i] = (uint8_t)(w >> (8 * i));
}

static void t_classes(void)
{
	for (size_t i = 0; i < sizeof(encs) / sizeof(encs[0]); i++) {
		const struct enc *e = &encs[i];
		uint8_t b[4];
		le32(b, e->word);
		struct hwt_a64_insn in;
		int r = hwt_a64_decode(b, 4, e->ip, &in);
		CHECKF(r == 0, "%08x: decode %d", e->word, r);
		CHECKF(in.size == 4, "%08x: size %u", e->word, in.size);
		CHECKF(in.iclass == e->iclass, "%08x: class %s, want %s", e->word,
		       hwt_insn_class_name(in.iclass), hwt_insn_class_name(e->iclass));
		CHECKF(!!(in.flags & HWT_INSN_F_DIRECT) == e->direct, "%08x: direct flag", e->word);
		if (e->direct)
			CHECKF(in.target == e->target, "%08x: target %#llx, want %#llx", e->word,
			       (unsigned long long)in.target, (unsigned long long)e->target);
		CHECK(!memcmp(in.raw, b, 4));
	}
}

static void t_disasm(void)
{
	for (size_t i = 0; i < sizeof(encs) / sizeof(encs[0]); i++) {
		const struct enc *e = &encs[i];
		uint8_t b[4];
		le32(b, e->word);
		char text[128];
		CHECK(hwt_a64_disasm(b, 4, e->ip, text, sizeof(text)) == 0);
		size_t n = strlen(e->mnemonic);
		CHECKF(!strncmp(text, e->mnemonic, n) && (text[n] == ' ' || !text[n]),
		       "%08x: '%s', want mnemonic %s", e->word, text, e->mnemonic);
	}
	/* a direct branch's text names its absolute target */
	uint8_t b[4];
	le32(b, 0x94000010u);
	char text[128];
	hwt_a64_disasm(b, 4, 0x400000, text, sizeof(text));
	CHECKF(strstr(text, "0x400040") != NULL, "'%s' lacks 0x400040", text);
}

static void t_short(void)
{
	uint8_t b[4] = {0xc0, 0x03, 0x5f, 0xd6};
	struct hwt_a64_insn in;
	CHECK(hwt_a64_decode(b, 3, 0, &in) == HWT_ERR_NOMAP);
	char text[16];
	CHECK(hwt_a64_disasm(b, 2, 0, text, sizeof(text)) == HWT_ERR_NOMAP);
	CHECK(!strcmp(text, "(bad)"));
}

int main(void)
{
	RUN(t_classes);
	RUN(t_disasm);
	RUN(t_short);
	return t_done();
}
