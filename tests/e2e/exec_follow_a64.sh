#!/bin/bash
# tests/e2e/exec_follow_a64.sh - the emulated aarch64 units follow exec()
# (emu/exec.c through emu/aarch64/): programs an aarch64 program starts
# with execve (a shell's fork + exec, env's exec, #! scripts) are traced in
# the same thread's stream, found under the sysroot (-L) as qemu opens
# files (tests/arm64/fetch.sh: Debian's arm64 dash, coreutils, ...), and
# through the system calls themselves (tests/arm64/progs/execer.c).  For
# each cs_etm recording (with --truth):
#   - the programs' stdout and exit status equal an untraced run's (plain
#     qemu-aarch64 -L, whose own execve runs the host's programs: the
#     commands print the same with both);
#   - hwt script --branches --format tsv equals the truth per thread;
#   - perf script --itrace=be (OpenCSD) reports no decode error and equals
#     the truth per thread, branches into the signal trampoline (no file
#     maps it) aside.  perf 6.1 decodes per-thread cs_etm without
#     timestamps at the thread's EXIT with the maps it has then: the code a
#     thread ran before its last exec() is read from the new program's
#     files (the same addresses), so for such a thread perf is compared
#     from the new program's first branch on (its dynamic loader's entry,
#     at the address of the thread's last MMAP2 of the loader);
#   - every program has its COMM exec record and hwt info lists each one.
# --no-follow-exec keeps the old behaviour (one warning, the shell alone
# traced); --follow-exec=GLOB follows only the matching programs.  arm_spe:
# the samples of an exec()ed program carry its pid/tid, resolve to its
# files, and perf and hwt script equal the truth (tests/e2e/spe_check.py).
set -u
. "$(dirname "$0")/lib.bash"
HWT=$(realpath -m "$B/hwt")
NAME=exec_follow_a64

require $NAME qemu-aarch64 perf aarch64-linux-gnu-gcc readelf python3
require_built $NAME "$HWT" "$B/hwt-etm-plugin.so"
if ! ldd "$(command -v perf)" | grep -q opencsd; then
	skip $NAME "perf is not linked with OpenCSD (no cs_etm decoding)"
	exit 0
fi
ROOT=$(tests/arm64/fetch.sh 2>"$T/fetch.err")
if [ -z "$ROOT" ] || [ ! -d "$ROOT" ]; then
	skip $NAME "no arm64 program cache: $(head -c 200 "$T/fetch.err")"
	exit 0
fi
if [ ! -L "$ROOT/bin" ]; then
	skip $NAME "the arm64 sysroot $ROOT has no merged /usr (rerun tests/arm64/fetch.sh)"
	exit 0
fi
export HWT_SYSROOT=$ROOT LC_ALL=C
LDSO=$(realpath "$ROOT/lib/ld-linux-aarch64.so.1")
LDENT=$(readelf -h "$LDSO" | awk '/Entry point/ { print $4 }')
mkdir -p "$T/w"
W=$T/w
seq 1 40 >"$W/n.txt"
printf 'b\na\nc\n' >"$W/abc.txt"
# a #! script that runs several programs (its interpreter: the sysroot's
# /bin/sh, dash)
cat >"$W/five.sh" <<'EOF'
#!/bin/sh
echo start "$#" "$1"
seq 1 5 | tr '\n' ' '
echo
expr 6 '*' 7
basename /a/b/c.txt .txt
env -i PATH=/usr/bin:/bin A=1 printenv A
exit 4
EOF
chmod +x "$W/five.sh"

# the lines of FILE whose target lies in a file mapping of DIR/perf.data
mapped() {
	awk -F'\t' 'NR == FNR { lo[NR] = strtonum($1); hi[NR] = lo[NR] + strtonum($2); n = NR; next }
		NF == 3 { t = strtonum($3); for (i = 1; i <= n; i++) if (t >= lo[i] && t < hi[i]) { print; next } }' \
		<(awk '{ print $2 "\t" $3 }' "$1/maps") "$2"
}

# from_exec DIR FILE: per thread, the branches from the thread's last
# program on: from its loader's first branch (the call within 20 bytes of
# its entry, at the thread's last MMAP2 of the loader) when the thread
# has one, else all of them
from_exec() {
	awk -F'\t' -v ent="$LDENT" -v ld="$LDSO" '
		NR == FNR { if ($4 == ld) e[$1] = strtonum($2) + strtonum(ent); next }
		{ n[$1]++; l[$1, n[$1]] = $0; f = strtonum($2)
		  if (($1 in e) && f >= e[$1] && f < e[$1] + 20) cut[$1] = n[$1] }
		END { for (t in n) { s = (t in e) ? cut[t] : 1; if (!s) { print t "\tno-entry"; continue }
			for (i = s; i <= n[t]; i++) print l[t, i] } }' "$1/maps" "$2" | sort -s -k1,1n
}

# check NAME NCOMM CMD...: NCOMM is the least number of COMM exec records
# after the first program's
check() {
	local name=$1 ncomm=$2 lost
	shift 2
	local d=$T/$name
	mkdir -p "$d"
	local prog=$1
	[ -x "$ROOT/usr/bin/$prog" ] && prog=$ROOT/usr/bin/$prog
	(cd "$W" && qemu-aarch64 -L "$ROOT" "$prog" "${@:2}" >"$d/ref.out" 2>/dev/null)
	local ref_rc=$?
	(cd "$W" && "$HWT" record -e cs_etm --emulate --truth "$d/truth" -o "$d/perf.data" -- "$@" \
		>"$d/out" 2>"$d/err")
	same_run "$name" "$d" "$ref_rc" $? || return
	if grep -q "untraced\|not traced" "$d/err"; then
		fail "$name" "a program was not followed: $(grep -m1 'untraced\|not traced' "$d/err")"
		return
	fi
	if [ -n "${NOT_IN_ERR:-}" ] && grep -q "$NOT_IN_ERR" "$d/err"; then
		fail "$name" "stderr: $(grep -m1 "$NOT_IN_ERR" "$d/err")"
		return
	fi
	awk -F'\t' 'NF == 3' "$d/truth" | sort -s -k1,1n >"$d/t"
	if [ ! -s "$d/t" ]; then
		fail "$name" "empty truth"
		return
	fi
	# hwt's decoder: the whole truth
	"$HWT" script -i "$d/perf.data" --branches --format tsv 2>"$d/hs.err" |
		awk -F'\t' 'NF == 4 && $4 != "async"' | cut -f1-3 | sort -s -k1,1n >"$d/h"
	if ! cmp -s "$d/h" "$d/t"; then
		fail "${name}_script" "hwt script's branches differ from the truth ($(wc -l <"$d/h") vs $(wc -l <"$d/t")): $(diff "$d/h" "$d/t" | head -3 | tr '\n' ' ') $(head -c 200 "$d/hs.err")"
	else
		pass "${name}_script ($(wc -l <"$d/h") branches, $(cut -f1 "$d/t" | sort -u | wc -l) threads, as the truth)"
	fi
	# perf: no error; per thread from its last program on, as the truth
	perf script -i "$d/perf.data" --itrace=be -F tid,ip,addr >"$d/ps" 2>"$d/ps.err"
	if [ $? != 0 ] || grep -qi "error\|Couldn't find" "$d/ps" "$d/ps.err"; then
		fail "$name" "perf: $(grep -i -m1 "error\|Couldn't find" "$d/ps" "$d/ps.err") $(head -c 200 "$d/ps.err")"
		return
	fi
	perf script -i "$d/perf.data" --show-mmap-events --no-itrace 2>/dev/null |
		sed -n 's|.*PERF_RECORD_MMAP2 [0-9]*/\([0-9]*\): \[\(0x[0-9a-f]*\)(\(0x[0-9a-f]*\)).* \(/[^ ]*\)$|\1\t\2\t\3\t\4|p' >"$d/maps"
	etm_perf_branches "$d/ps" | sort -s -k1,1n >"$d/p"
	mapped "$d" "$d/t" >"$d/tm"
	from_exec "$d" "$d/p" >"$d/pe"
	from_exec "$d" "$d/tm" >"$d/te"
	local nexec
	nexec=$(cut -f1 "$d/maps" | sort -u | wc -l)
	if grep -q 'no-entry' "$d/pe" "$d/te"; then
		fail "$name" "no branch from the loader's entry in: $(grep -h 'no-entry' "$d/pe" "$d/te" | head -2 | tr '\n' ' ')"
	elif ! lost=$(etm_perf_cmp "$d/pe" "$d/te"); then
		fail "$name" "perf's branches differ from the truth ($(grep -vc '	0x0$' "$d/pe") vs $(wc -l <"$d/te")): $lost"
	else
		pass "$name ($(wc -l <"$d/te") branches = perf's$([ "$lost" != 0 ] && echo ", $lost lost by perf at an AUX buffer's end"), $nexec threads with a program loaded)"
	fi
	# every exec: a COMM exec record; hwt info names each thread's program
	comm_check "${name}_comm" "$d" "$ncomm"
	[ "${KEEP:-}" ] || rm -rf "$d"
}

check exec_a64_sh_pipe 4 sh -c 'ls | sort -r | wc -l; sort abc.txt | tr a-z A-Z; tail -n 3 n.txt'
check exec_a64_script 7 sh -c './five.sh one two; echo "five=$?"'
# the system calls themselves: execveat (a directory fd, a #! script) in a
# forked child, then execve; plain qemu 7.2 has no execveat (the program
# falls back to execve there, and says so: not when traced)
printf '#!/bin/sh\necho "script $0 $1"\nexit 5\n' >"$W/s.sh"
chmod +x "$W/s.sh"
NOT_IN_ERR="execve instead" check exec_a64_raw_syscalls 2 \
	"$(dirname "$ROOT")/progs/execer" "$W" s.sh /bin/expr 6 '*' 7

# --no-follow-exec: one warning, the shell's process alone has a COMM exec
# record; --follow-exec=GLOB: the others run untraced, without a warning
limits() {
	local name=$1 want=$2
	shift 2
	local d=$T/$name
	mkdir -p "$d"
	(cd "$W" && qemu-aarch64 -L "$ROOT" "$ROOT/bin/sh" -c 'sort -r n.txt | wc -l' \
		>"$d/ref.out" 2>/dev/null)
	(cd "$W" && "$HWT" record -e cs_etm --emulate "$@" -o "$d/perf.data" \
		-- sh -c 'sort -r n.txt | wc -l' >"$d/out" 2>"$d/err")
	local rc=$? warn comms
	warn=$(grep -c "calls exec(); the new program is not traced\|untraced" "$d/err")
	comms=$(perf script -i "$d/perf.data" --show-task-events --no-itrace 2>/dev/null |
		awk '/PERF_RECORD_COMM exec:/ { sub(/:[0-9]+\/[0-9]+$/, "", $NF); printf "%s ", $NF }')
	if [ $rc != 0 ] || ! cmp -s "$d/out" "$d/ref.out"; then
		fail "$name" "exit status $rc or output differs from the untraced run"
	elif [ "$warn:$comms" != "$want" ]; then
		fail "$name" "warnings:COMMs '$warn:$comms', want '$want'"
	else
		pass "$name ($warn warning(s), traced: $comms)"
	fi
	rm -rf "$d"
}
limits exec_a64_no_follow "1:sh " --no-follow-exec
limits exec_a64_follow_glob "0:sh wc " --follow-exec='*/wc'

# arm_spe through an exec: spe_check.py against the truth, and the samples
# of the exec()ed sort carry its pid/tid and its files after its COMM
spe() {
	local name=exec_a64_spe d=$T/exec_a64_spe
	mkdir -p "$d"
	(cd "$W" && qemu-aarch64 -L "$ROOT" "$ROOT/bin/sh" -c 'sort -rn n.txt | tail -n 2' \
		>"$d/ref.out" 2>/dev/null)
	(cd "$W" && "$HWT" record -e arm_spe/period=256/ --emulate --truth "$d/truth" \
		-o "$d/perf.data" -- sh -c 'sort -rn n.txt | tail -n 2' >"$d/out" 2>"$d/err")
	local rc=$? pm hm
	if [ $rc != 0 ] || ! cmp -s "$d/out" "$d/ref.out" || grep -q "untraced\|not traced" "$d/err"; then
		fail $name "exit status $rc, output differs or untraced: $(grep -v '^\[' "$d/err" | head -2)"
		return
	fi
	perf script -i "$d/perf.data" --itrace=i1ifmtb -F tid,ip,addr,event,weight >"$d/ps" 2>/dev/null
	"$HWT" script --format tsv "$d/perf.data" >"$d/st" 2>/dev/null
	pm=$(python3 tests/e2e/spe_check.py perf "$d/truth" "$d/ps")
	hm=$(python3 tests/e2e/spe_check.py script "$d/truth" "$d/st")
	if [[ "$pm" != ok* ]] || [[ "$hm" != ok* ]]; then
		fail $name "perf: $pm; hwt script: $hm"
		return
	fi
	# sort's process: its COMM exec time; its samples after it
	local ct tid bad nsort
	read -r tid ct < <(perf script --ns -i "$d/perf.data" --show-task-events --no-itrace 2>/dev/null |
		awk '/PERF_RECORD_COMM exec: sort:/ { split($NF, a, /[:\/]/); t = $4; sub(/:$/, "", t); print a[3], t; exit }')
	perf script --ns -i "$d/perf.data" --itrace=i1i -F pid,tid,time,ip,dso 2>/dev/null |
		awk -v tid="${tid:-x}" -v ct="${ct:-0}" '{ split($1, a, "/"); if (a[2] != tid) next
			t = $2; sub(/:$/, "", t); if (t + 0 < ct + 0) next
			print a[1], $NF }' >"$d/sort"
	nsort=$(grep -c "/usr/bin/sort)$" "$d/sort")
	bad=$(awk -v tid="${tid:-x}" -v ld="($LDSO)" -v libc="($(dirname "$LDSO")/libc.so.6)" \
		'$1 != tid || ($2 !~ /\/usr\/bin\/sort\)$/ && $2 != ld && $2 != libc)' "$d/sort" | head -2)
	if [ -z "$tid" ] || [ "$nsort" = 0 ] || [ -n "$bad" ]; then
		fail $name "sort (tid ${tid:-none}): $nsort samples in its binary; foreign: ${bad:-none}"
	else
		pass "$name (${pm#ok }; sort: $(wc -l <"$d/sort") samples after its exec, $nsort in its binary)"
	fi
	rm -rf "$d"
}
spe
