#!/bin/bash
# tests/e2e/exec_follow.sh - the emulated units follow exec() (emu/exec.c):
# programs that a traced program starts with execve (fork + exec, vfork /
# posix_spawn, #! scripts, a statically linked program) are traced in the
# same thread's stream.  For each recording (with --truth):
#   - the program's stdout and exit status equal an untraced run's;
#   - perf script --itrace=be reports no decode error and exactly the
#     truth's branches per thread (perf is the oracle);
#   - hwt script --branches --format tsv equals the truth;
#   - every program exec() started has its COMM exec record (perf script
#     --show-task-events) and hwt info lists each one in its thread's line
#     ("env -> printenv" for a thread that exec()ed two programs).
# intel_pt and the BTS format (fmt=bts).  --no-follow-exec keeps the old
# behaviour: one warning, only the first program traced.
set -u
. "$(dirname "$0")/lib.bash"
HWT=$(realpath -m "$B/hwt")

if ! command -v qemu-x86_64 >/dev/null; then
	skip exec_follow "qemu-x86_64 not installed (apt install qemu-user)"
	exit 0
fi
if ! command -v perf >/dev/null; then
	skip exec_follow "perf not installed (apt install linux-perf)"
	exit 0
fi
if [ ! -x "$HWT" ] || [ ! -f "$B/hwt-pt-plugin.so" ]; then
	fail exec_follow "$B/hwt or $B/hwt-pt-plugin.so not built"
	exit 0
fi
export LC_ALL=C
mkdir -p "$T/w"
W=$T/w

# a bash script that runs five different programs
cat >"$W/five.sh" <<'EOF'
#!/bin/bash
echo start
seq 1 5 | tr '\n' ' '
echo
expr 6 '*' 7
basename /a/b/c.txt .txt
uname -s
EOF
chmod +x "$W/five.sh"
# a C program built by make: one gcc that compiles and links (make -> gcc
# -> cc1, as, collect2 -> ld: each cc1 is 6 M branches, which perf, hwt
# and sort all go through)
# (no #include: cc1 stays short under the emulator)
cat >"$W/a.c" <<'EOF'
int printf(const char *, ...);
static int f(int x) { return x * 7; }
int main(void) { printf("%d\n", f(6)); return 0; }
EOF
printf 'prog: a.c\n\tgcc -O1 -o prog a.c\n' >"$W/Makefile"
# a statically linked program
printf '#include <stdio.h>\nint main(int c, char **v) { printf("static %%d %%s\\n", c, v[1]); return 3; }\n' >"$W/st.c"
HAVE_STATIC=0
gcc -static -O1 -o "$W/st" "$W/st.c" 2>/dev/null && HAVE_STATIC=1

hwt_branches() {
	"$HWT" script -i "$1/perf.data" --branches --format tsv 2>"$1/hs.err" |
		awk -F'\t' '$4 != "async"' | cut -f1-3
}
perf_branches() {
	awk '$3 == "=>" && $2 != "0" && $4 != "0" { print $1 "\t0x" $2 "\t0x" $4 }' "$1"
}

# check NAME EVENT NCOMM CMD...: NCOMM is the least number of COMM exec
# records after the first program's (programs exec() started)
check() {
	local name=$1 ev=$2 ncomm=$3
	shift 3
	local d=$T/$name
	mkdir -p "$d"
	if [ -f "$W/Makefile" ]; then rm -f "$W/prog"; fi
	(cd "$W" && "$@" >"$d/ref.out" 2>/dev/null)
	local ref_rc=$?
	if [ -f "$W/Makefile" ]; then rm -f "$W/prog"; fi
	(cd "$W" && "$HWT" record -e "$ev" --emulate --truth "$d/truth" -o "$d/perf.data" -- "$@" \
		>"$d/out" 2>"$d/err")
	same_run "$name" "$d" "$ref_rc" $? || return
	if grep -q "untraced\|not traced" "$d/err"; then
		fail "$name" "a program was not followed: $(grep -m1 'untraced\|not traced' "$d/err")"
		return
	fi
	perf script -i "$d/perf.data" --itrace=be -F tid,ip,addr >"$d/ps" 2>"$d/ps.err"
	if [ $? != 0 ] || grep -q "instruction trace error" "$d/ps" "$d/ps.err"; then
		fail "$name" "perf: $(grep -m1 'instruction trace error' "$d/ps" "$d/ps.err") $(head -c 200 "$d/ps.err")"
		return
	fi
	perf_branches "$d/ps" | sort -s -k1,1n >"$d/p"
	awk -F'\t' 'NF == 3' "$d/truth" | sort -s -k1,1n >"$d/t"
	local threads
	threads=$(cut -f1 "$d/t" | sort -u | wc -l)
	if [ ! -s "$d/t" ]; then
		fail "$name" "empty truth"
	elif ! cmp -s "$d/p" "$d/t"; then
		fail "$name" "perf's branches differ from the truth ($(wc -l <"$d/p") vs $(wc -l <"$d/t")): $(diff "$d/p" "$d/t" | head -3 | tr '\n' ' ')"
	else
		pass "$name ($(wc -l <"$d/t") branches, $threads thread(s))"
	fi
	hwt_branches "$d" | sort -s -k1,1n >"$d/h"
	if ! cmp -s "$d/h" "$d/t"; then
		fail "${name}_script" "hwt script's branches differ from the truth ($(wc -l <"$d/h") vs $(wc -l <"$d/t")): $(diff "$d/h" "$d/t" | head -3 | tr '\n' ' ') $(head -c 200 "$d/hs.err")"
	else
		pass "${name}_script ($(wc -l <"$d/h") branches, as the truth)"
	fi
	# every exec: a COMM exec record; hwt info names each thread's program
	comm_check "${name}_comm" "$d" "$ncomm"
	rm -rf "$d"
}

DEF='intel_pt//u'
check exec_sh_pipe "$DEF" 3 sh -c 'ls / | sort | wc -l'
check exec_bash_script "$DEF" 5 ./five.sh
check exec_env_xargs "$DEF" 4 sh -c 'env -i PATH=/usr/bin:/bin A=1 printenv A; printf "a\nb\n" | xargs echo x'
if [ $HAVE_STATIC = 1 ]; then
	check exec_static "$DEF" 1 sh -c './st one; echo "st=$?"'
else
	skip exec_static "gcc -static failed (libc6-dev static libraries missing?)"
fi
check exec_bts_sh_pipe intel_bts//u 3 sh -c 'ls / | sort | wc -l'
if [ "${HWT_SAN:-0}" = 1 ]; then
	# 12 million branches through the sanitizer build's hwt take most of
	# make check's time; the plain build runs this case, the others run here
	skip exec_make_gcc "runs in the plain build only (12M branches: too slow under ASan)"
elif command -v make >/dev/null && command -v gcc >/dev/null; then
	# make -> gcc (posix_spawn) -> cc1, as, collect2 -> ld
	check exec_make_gcc "$DEF" 5 make -s
else
	skip exec_make_gcc "make or gcc missing"
fi

# --no-follow-exec: the old behaviour (one warning; the exec()ed programs
# run untraced: only the shell's process has a COMM exec record)
nofollow() {
	local name=exec_no_follow d=$T/exec_no_follow
	mkdir -p "$d"
	(cd "$W" && sh -c 'ls / | sort | wc -l' >"$d/ref.out" 2>/dev/null)
	(cd "$W" && "$HWT" record --emulate --no-follow-exec --truth "$d/truth" -o "$d/perf.data" \
		-- sh -c 'ls / | sort | wc -l' >"$d/out" 2>"$d/err")
	local rc=$?
	local warn comms
	warn=$(grep -c "calls exec(); the new program is not traced" "$d/err")
	comms=$(perf script -i "$d/perf.data" --show-task-events --no-itrace 2>/dev/null |
		grep -c 'PERF_RECORD_COMM exec:')
	if [ $rc != 0 ] || ! cmp -s "$d/out" "$d/ref.out"; then
		fail $name "exit status $rc or output differs from the untraced run"
	elif [ "$warn" != 1 ] || [ "$comms" != 1 ]; then
		fail $name "$warn warnings (want 1), $comms COMM exec records (want 1)"
	else
		pass "$name (1 warning, 1 program traced)"
	fi
}
nofollow
