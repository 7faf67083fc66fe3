#!/bin/bash
# hwt script must not depend on where a recording's AUX data is split into
# AUXTRACE chunks (hwt record and perf cut it wherever the ring was drained).
# One raw stream of the emulated unit (psb_period=0: a PSB every 2 KiB) is
# packed by script_mkdata.c as many threads of one process, each thread's
# copy split differently, and every thread's branches (block decoder:
# --format tsv; instruction decoder: the text format, which reads time)
# must be the unit's ground truth (--truth, async rows left out):
#   - split_psb: one thread per offset d in -64..64, split at every PSB + d
#     (a PSB, its PSB+ and its FUP cut anywhere; chunk padding within them);
#   - split_random: chunks of random sizes, up to 3000 and up to 40 bytes.
# SPLIT_SEED picks other random chunkings (default: fixed, so a failure
# repeats).
set -u
H=$HWT_BUILD/hwt
PLUGIN=$HWT_BUILD/hwt-pt-plugin.so
. "$(dirname "$0")/lib.bash"
W=$T
[ -n "${SCRIPT_KEEP:-}" ] && trap - EXIT
TO="timeout 300"

if ! command -v qemu-x86_64 >/dev/null || [ ! -f "$PLUGIN" ]; then
	echo "SKIP script_split: no qemu-x86_64 or no $PLUGIN"
	exit 0
fi
# shellcheck disable=SC2086
if ! hwt_cc "$W/mkdata" tests/e2e/script_mkdata.c 2>"$W/cc.err"; then
	echo "FAIL script_split: script_mkdata does not build: $(head -c 300 "$W/cc.err")"
	exit 0
fi

# record NAME CMD...: the plugin's raw stream $W/NAME.raw.TID and truth
record() {
	local name=$1
	shift
	qemu-x86_64 -plugin "$PLUGIN,raw=$W/$name.raw,truth=$W/$name.truth,psb_period=0" "$@" \
		>/dev/null 2>"$W/$name.qemu.err" || return 1
	set -- "$W/$name".raw.[0-9]*
	[ $# = 1 ] && [ -s "$1" ] || return 1
	grep -v 'async' "$W/$name.truth" | cut -f2-3 >"$W/$name.t"
}

srt() { LC_ALL=C sort -s -t"$(printf '\t')" -k1,1; }

# check NAME WHAT THREADS...: decode $W/NAME.split.data (threads "TID
# label", in file order), compare every thread's branches with the truth
check() {
	local name=$1 what=$2 fmt bad=0 first="" t
	shift 2
	# each thread's rows in order, the threads by tid (a thread's last
	# region comes at the end of the file)
	for t in "$@"; do
		sed "s/^/${t%% *}\t/" "$W/$name.t"
	done | srt >"$W/exp"
	for fmt in tsv text; do
		if [ $fmt = tsv ]; then
			$TO "$H" script -i "$W/$name.split.data" --branches --format tsv >"$W/out" 2>"$W/err"
		else
			$TO "$H" script -i "$W/$name.split.data" --branches >"$W/out" 2>"$W/err"
		fi
		if [ $? -ge 124 ] || grep -q 'Sanitizer\|runtime error' "$W/err"; then
			echo "FAIL script_${what}_$name: hwt script crashed or hung: $(head -c 300 "$W/err")"
			return
		fi
		# tid, from, to (gap lines, mangled, make a difference)
		if [ $fmt = tsv ]; then
			grep -v 'async' "$W/out" | cut -f1-3 | srt >"$W/got"
		else # "  tid time kind from (sym) => to (sym)"
			grep -v ' async ' "$W/out" | tr -s ' ' '\t' | cut -f2,5,8 | srt >"$W/got"
		fi
		cmp -s "$W/exp" "$W/got" && continue
		local tids
		tids=$(diff "$W/exp" "$W/got" | awk '/^[<>]/ { print $2 + 0 }' | sort -u)
		bad=$((bad + $(echo "$tids" | wc -l)))
		if [ -z "$first" ]; then
			for t in "$@"; do [ "${t%% *}" = "$(echo "$tids" | head -1)" ] && break; done
			first="$fmt, ${t#* }: $(diff <(grep "^${t%% *}"$'\t' "$W/exp") <(grep "^ *${t%% *}[^0-9]" "$W/got") | head -3 | tr '\n\t' '  ')"
		fi
	done
	if [ $bad = 0 ]; then
		echo "PASS script_${what}_$name ($# chunkings, tsv and text)"
	else
		echo "FAIL script_${what}_$name: $bad of $(($# * 2)) decodes differ from the truth; first: $first"
	fi
}

seq 1 300 >"$W/input.txt"
RANDOM=${SPLIT_SEED:-4242}
for name in true sha; do
	case $name in
	true) cmd="/bin/true" ;;
	sha) cmd="/usr/bin/sha256sum $W/input.txt" ;;
	esac
	# shellcheck disable=SC2086
	if ! record $name $cmd; then
		echo "FAIL script_split_$name: recording failed: $(head -c 200 "$W/$name.qemu.err")"
		continue
	fi
	raw=$(ls "$W/$name".raw.[0-9]*)
	pid=${raw##*.}
	size=$(stat -c %s "$raw")
	# PSB offsets (16 bytes 02 82 ...), from the packet dump
	mapfile -t psbs < <("$H" dump --no-sync --no-pad --no-timing "$raw" |
		awk '$2 == "psb" { print $1 }' | while read -r o; do echo $((16#$o)); done)
	if [ ${#psbs[@]} -lt 2 ]; then
		echo "FAIL script_split_$name: the stream holds ${#psbs[@]} PSBs, want 2 or more"
		continue
	fi
	args=() threads=()
	if [ $name = true ]; then # every offset near every PSB
		for ((d = -64; d <= 64; d++)); do
			sp=""
			for p in "${psbs[@]}"; do
				((p + d > 0 && p + d < size)) && sp="$sp,$((p + d))"
			done
			tid=$((200000 + d))
			args+=("$tid/$pid:$raw:${sp#,}")
			threads+=("$tid PSB$( ((d < 0)) || echo +)$d")
		done
		what=split_psb
	else # random chunk sizes
		for ((k = 0; k < 8; k++)); do
			max=$((k < 6 ? 3000 : 40))
			sp="" o=0
			while :; do
				o=$((o + 1 + RANDOM % max))
				((o < size)) || break
				sp="$sp,$o"
			done
			tid=$((300000 + k))
			args+=("$tid/$pid:$raw:${sp#,}")
			threads+=("$tid chunks of 1..$max bytes, at ${sp:1:60}...")
		done
		what=split_random
	fi
	if ! "$W/mkdata" "$W/$name.split.data" "$W/$name.raw.maps" 65536 "${args[@]}" 2>"$W/mk.err"; then
		echo "FAIL script_${what}_$name: script_mkdata failed: $(head -c 200 "$W/mk.err")"
		continue
	fi
	check $name $what "${threads[@]}"
done
