#!/bin/bash
# bench/bench_flow.sh BUILD - the flow-decode benchmark (scripts/bench.sh).
#
# Records gzip (Debian's /usr/bin/gzip -6, fixed input: seq 1 1600000,
# 11.7 MB) under the emulated Intel PT unit into a perf.data of >= 100 MB
# of trace, cached in BUILD/bench-cache/ (with "hwt record --emulate" when
# it works, else the plugin's raw stream packed by tests/e2e/script_mkdata.c),
# and a small recording of the same program (seq 1 60000; always the
# plugin's raw stream packed by script_mkdata, a file perf script decodes)
# for perf script.
# Then times, in CPU seconds (user+sys; steady on a busy machine):
#   hwt     hwt's batch decoder (taken branches, path cache on) over the
#           AUXTRACE data and mapped files (bench/bench_hwt_batch.c, decode
#           loop only); the block decoder's time (bench/bench_hwt_flow.c)
#           is given in the parenthesis
#   libipt  pt_blk_* over the same data and files, the same loop
#           (bench/bench_flow.c, decode loop only)
#   script  hwt script --branches --format tsv > /dev/null (whole command:
#           reading the file, decoding, printing every taken branch; with
#           --no-batch, block by block, in the parenthesis)
#   perf    perf script --itrace=b -F tid,ip,addr > /dev/null on the small
#           recording (perf is too slow for the big one), MB/s of its trace
#   dec -jN the recording decoder with a consumer that counts branches
#           (bench/bench_hwt_dec.c) on 1 and N threads, wall time, best of 3
#   ceiling N copies of the recording decoder at -j1 at once, the longest
#           one's wall time (best of 3): N * (dec -j1) / that is the
#           speedup that perfectly independent work reaches on this machine
#           now (on a VM whose CPUs share a physical core or memory
#           bandwidth with each other or with other guests, well below N)
#   script -jN  the same command on N threads (N: the online CPUs), wall
#           time; both also give their peak RSS (/usr/bin/time), and so
#           do runs on a recording of twice the input and on the small one
# and prints:
#   flow-decode: hwt X MB/s, libipt-blk Y MB/s, perf-script Z MB/s, ratio-vs-libipt R1, ratio-vs-perf R2 (...)
#   script-tsv: hwt A MB/s, perf-script Z MB/s, ratio A/Z (...)
#   flow-parallel: -j1 S1 s, -jN SN s, speedup S1/SN on N cores (...: the
#           ceiling; the same for the whole hwt script command)
#   script-rss: -j1 M1 MB, -jN MN MB (the same on a recording of twice
#           the input, ~233 MB of trace, and the difference, which shows
#           the peak does not grow with the trace; the small trace at -j1)
#   script-fmt: tsv T ns, ..., insn I ns per line: the formatters of
#           hwt script alone (bench/bench_hwt_fmt: lines of branches taken
#           from the small recording, formatted into the output buffer)
#   report: hwt report -j1 (hot functions: every instruction counted for
#           its function, in instruction ranges) R s, --no-batch (one
#           callback per instruction) RN s, speedup RN/R; CPU time
# where flow-decode's parenthesis says FAIL if the two decoders disagree
# on the number of instructions.
set -u
B=${1:?usage: bench/bench_flow.sh BUILD}
H=$B/hwt
PLUGIN=$B/hwt-pt-plugin.so
BF=$B/bench/bench_flow
C=$B/bench-cache
GZ=/usr/bin/gzip
mkdir -p "$C" || exit 1
for f in "$H" "$BF" "$PLUGIN" "$GZ"; do
	[ -e "$f" ] || { echo "flow-decode: SKIP ($f missing)"; exit 0; }
done
command -v qemu-x86_64 >/dev/null || { echo "flow-decode: SKIP (no qemu-x86_64)"; exit 0; }

mkdata=$C/script_mkdata
if [ ! -x "$mkdata" ]; then
	cc -std=c11 -D_GNU_SOURCE -O2 -Iinclude -o "$mkdata" tests/e2e/script_mkdata.c "$B/libhwt.a" \
		-lelf -ldw -lZydis -lpthread || { echo "flow-decode: FAIL (script_mkdata does not build)"; exit 1; }
fi

# make NAME LINES: gzip of "seq 1 LINES" recorded into $C/NAME.data
make_rec() {
	local name=$1 lines=$2 how=${3:-any}
	[ -s "$C/$name.data" ] && return 0
	seq 1 "$lines" >"$C/$name.in"
	if [ "$how" = any ] && "$H" record --emulate -m 64M -o "$C/$name.data" -- "$GZ" -c -6 "$C/$name.in" \
		>/dev/null 2>"$C/$name.err" && "$BF" time "$C/$name.data" 2>/dev/null |
		awk '$2 > 0 { ok = 1 } END { exit !ok }'; then
		echo hwt-record >"$C/$name.how"
		return 0
	fi
	rm -f "$C/$name.raw".*
	qemu-x86_64 -plugin "$PLUGIN,raw=$C/$name.raw" "$GZ" -c -6 "$C/$name.in" >/dev/null 2>"$C/$name.err" ||
		return 1
	local f args=()
	for f in "$C/$name".raw.[0-9]*; do args+=("${f##*.}:$f"); done
	"$mkdata" "$C/$name.data" "$C/$name.raw.maps" 4194304 "${args[@]}" || return 1
	rm -f "$C/$name".raw.[0-9]*
	echo plugin-raw >"$C/$name.how"
}
make_rec flow 1600000 || { echo "flow-decode: FAIL (recording failed: $(tail -n 1 "$C/flow.err"))"; exit 1; }
make_rec flow-small 60000 raw || { echo "flow-decode: FAIL (small recording failed)"; exit 1; }
# twice the input of "flow" (~233 MB of trace): script-rss only
make_rec flow-2x 3200000 || { echo "flow-decode: FAIL (2x recording failed: $(tail -n 1 "$C/flow-2x.err"))"; exit 1; }

cpu() { # CMD...: CPU seconds of CMD (stdout discarded)
	local TIMEFORMAT='%U %S' t
	t=$({ time "$@" >/dev/null 2>/dev/null; } 2>&1 | tail -n 1)
	awk -v t="$t" 'BEGIN { split(t, a, " "); printf "%.3f", a[1] + a[2] }'
}

HF=$B/bench/bench_hwt_flow
HB=$B/bench/bench_hwt_batch
[ -x "$HF" ] || { echo "flow-decode: SKIP ($HF missing)"; exit 0; }
[ -x "$HB" ] || { echo "flow-decode: SKIP ($HB missing)"; exit 0; }
read -r _ bytes libipt_s _ libipt_insns <<<"$("$BF" time "$C/flow.data")"
read -r _ _ blk_s _ blk_insns <<<"$("$HF" "$C/flow.data")"
read -r _ _ hwt_s _ hwt_insns <<<"$("$HB" time "$C/flow.data")"
read -r _ sbytes _ <<<"$("$BF" time "$C/flow-small.data")"
script_s=$(cpu "$H" script -i "$C/flow.data" --branches --format tsv --no-progress -j1)
script_nb_s=$(cpu "$H" script -i "$C/flow.data" --branches --format tsv --no-progress -j1 --no-batch)
# wall seconds and peak RSS (KB) of CMD...: "WALL RSS"
wall_rss() {
	/usr/bin/time -f '%e %M' -o "$C/time.out" "$@" >/dev/null 2>/dev/null
	tail -n 1 "$C/time.out"
}
NCPU=$(nproc 2>/dev/null || echo 1)
read -r par1_s rss1 <<<"$(wall_rss "$H" script -i "$C/flow.data" --branches --format tsv --no-progress -j1)"
read -r parn_s rssn <<<"$(wall_rss "$H" script -i "$C/flow.data" --branches --format tsv --no-progress -j"$NCPU")"
HD=$B/bench/bench_hwt_dec
# best of 3 (the wall time of a VM's CPUs moves by 10% between runs)
best3() {
	for _ in 1 2 3; do "$@"; done | awk 'NR == 1 || $1 < m { m = $1 } END { print m }'
}
dec_wall() {
	"$HD" "$C/flow.data" "$1" | awk '{ print $4 }'
}
# N copies at -j1 at once: the longest one's wall time
ceil_wall() {
	local k pids=()
	for ((k = 0; k < NCPU; k++)); do
		"$HD" "$C/flow.data" 1 >"$C/ceil.$k" &
		pids+=($!)
	done
	wait "${pids[@]}"
	awk '$4 > m { m = $4 } END { print m + 0 }' "$C"/ceil.*
	rm -f "$C"/ceil.*
}
dec1_s=$(best3 dec_wall 1)
decn_s=$(best3 dec_wall "$NCPU")
ceil_s=$(best3 ceil_wall)
read -r _ rss_small <<<"$(wall_rss "$H" script -i "$C/flow-small.data" --branches --format tsv --no-progress -j1)"
read -r _ rss2x1 <<<"$(wall_rss "$H" script -i "$C/flow-2x.data" --branches --format tsv --no-progress -j1)"
read -r _ rss2xn <<<"$(wall_rss "$H" script -i "$C/flow-2x.data" --branches --format tsv --no-progress -j"$NCPU")"
fsize=$(stat -c %s "$C/flow.data" "$C/flow-2x.data" "$C/flow-small.data")
perf_s=SKIP
if command -v perf >/dev/null &&
	[ "$(perf script --itrace=b -F tid,ip,addr -i "$C/flow-small.data" 2>/dev/null | head -n 100 | wc -l)" = 100 ]; then
	perf_s=$(cpu perf script --itrace=b -F tid,ip,addr -i "$C/flow-small.data")
fi
same=ok
[ "$hwt_insns" = "$libipt_insns" ] || same="FAIL: instructions hwt $hwt_insns, libipt $libipt_insns"
[ "$blk_insns" = "$libipt_insns" ] || same="FAIL: instructions hwt block decoder $blk_insns, libipt $libipt_insns"
awk -v b="$bytes" -v sb="$sbytes" -v h="$hwt_s" -v l="$libipt_s" -v k="$blk_s" -v p="$perf_s" -v w="$script_s" -v wn="$script_nb_s" \
	-v same="$same" -v how="$(cat "$C/flow.how")" 'BEGIN {
	mb = b / 1e6; smb = sb / 1e6
	hx = mb / (h > 0 ? h : 1e-9); ly = mb / (l > 0 ? l : 1e-9); wx = mb / (w > 0 ? w : 1e-9)
	if (p == "SKIP") { pz = 0 } else { pz = smb / (p > 0 ? p : 1e-9) }
	printf "flow-decode: hwt %.1f MB/s, libipt-blk %.1f MB/s, perf-script %s MB/s, ratio-vs-libipt %.2f, ratio-vs-perf %s", hx, ly, (pz ? sprintf("%.2f", pz) : "n/a"), hx / ly, (pz ? sprintf("%.1f", hx / pz) : "n/a")
	printf " (hwt block decoder %.1f MB/s; %.0f MB of gzip trace via %s; perf on a %.1f MB recording of the same program; CPU time; instructions %s)\n", mb / (k > 0 ? k : 1e-9), mb, how, smb, same
	printf "script-tsv: hwt %.1f MB/s, perf-script %s MB/s, ratio %s (hwt script --branches --format tsv -j1 > /dev/null, whole command, CPU time; --no-batch %.1f MB/s)\n", wx, (pz ? sprintf("%.2f", pz) : "n/a"), (pz ? sprintf("%.1f", wx / pz) : "n/a"), mb / (wn > 0 ? wn : 1e-9)
}'
awk -v a="$dec1_s" -v b="$decn_s" -v c="$par1_s" -v d="$parn_s" -v n="$NCPU" -v cs="$ceil_s" -v mb="$(awk -v b="$bytes" 'BEGIN { print b / 1e6 }')" 'BEGIN {
	printf "flow-parallel: -j1 %.2f s, -j%d %.2f s, speedup %.2f on %d cores (recording decoder, branches counted, wall time, %.0f MB of trace; ceiling: %d independent -j1 decodes at once took %.2f s, so independent work speeds up %.2f here now; hwt script --branches --format tsv > /dev/null: -j1 %.2f s, -j%d %.2f s, speedup %.2f)\n", a, n, b, a / (b > 0 ? b : 1e-9), n, mb, n, cs, n * a / (cs > 0 ? cs : 1e-9), c, n, d, c / (d > 0 ? d : 1e-9)
}'
awk -v a="$rss1" -v b="$rssn" -v c="$rss_small" -v d="$rss2x1" -v e="$rss2xn" -v n="$NCPU" \
	-v sz="$(echo $fsize)" 'BEGIN {
	split(sz, f, " "); mb = f[1]; mb2 = f[2]; sb = f[3]
	printf "script-rss: -j1 %.1f MB, -j%d %.1f MB (peak RSS of hwt script --branches --format tsv on the %.0f MB file; on the %.0f MB file of twice the input: -j1 %.1f MB (%+.1f), -j%d %.1f MB (%+.1f); on the %.1f MB file: -j1 %.1f MB)\n", a / 1024, n, b / 1024, mb / 1e6, mb2 / 1e6, d / 1024, (d - a) / 1024, n, e / 1024, (e - b) / 1024, sb / 1e6, c / 1024
}'
report_s=$(cpu "$H" report -i "$C/flow.data" --no-progress -j1)
report_nb_s=$(cpu "$H" report -i "$C/flow.data" --no-progress -j1 --no-batch)
awk -v r="$report_s" -v n="$report_nb_s" -v b="$bytes" 'BEGIN {
	printf "report: hwt report -j1 %.2f s (%.1f MB/s), --no-batch %.2f s, speedup %.2f (hot functions, instructions in ranges against one callback per instruction; %.0f MB of trace, CPU time)\n", r, b / 1e6 / (r > 0 ? r : 1e-9), n, n / (r > 0 ? r : 1e-9), b / 1e6
}'
HFMT=$B/bench/bench_hwt_fmt
if [ -x "$HFMT" ]; then
	"$HFMT" "$C/flow-small.data" 2000000 0.5 2>/dev/null | awk '$1 == "fmt" { s = s sprintf("%s%s %.1f", (s ? ", " : ""), $2, $4) }
	END { if (s) printf "script-fmt: %s ns per line (the lib/out formatters alone on 2 M branches of the small recording, into the output buffer; CPU time; bench/bench_hwt_fmt)\n", s }'
fi
