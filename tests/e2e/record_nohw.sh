#!/bin/bash
# tests/e2e/record_nohw.sh - hardware-only recording where the trace unit
# is absent, and the hardware path against a fake sysfs tree.
#
#   nohw_<unit>     hwt record -e <unit> --no-emulate -- true, on a machine
#                   without that PMU (checked against /sys): exit 2 at once,
#                   one line naming the missing PMU and pointing to
#                   --emulate, no output file, the program never ran
#                   (SKIP where the PMU exists)
#   fake_pt_open    HWT_SYSFS_ROOT with an intel_pt description (type 77):
#                   the hardware path reaches perf_event_open, which this
#                   kernel refuses (no PMU of that type): exit 2 and one
#                   line naming intel_pt (SKIP where PMU type 77 exists)
#   bad_terms       an unknown term: exit 2 naming the term and the known ones
#   non_x86_elf     an AArch64 ELF under intel_pt: exit 2 before it runs
set -u
. "$(dirname "$0")/lib.bash"
HWT=$PWD/$B/hwt
SYS=/sys/bus/event_source/devices

for u in intel_pt intel_bts arm_spe cs_etm; do
	pmu=$u
	[ $u = arm_spe ] && pmu=arm_spe_0
	if [ -e "$SYS/$pmu" ]; then
		skip nohw_$u "$pmu is present on this machine"
		continue
	fi
	rm -f "$T/out.data" "$T/ran"
	"$HWT" record -e $u --no-emulate -o "$T/out.data" -- touch "$T/ran" 2>"$T/err"
	rc=$?
	if [ $rc -ne 2 ]; then
		fail nohw_$u "exit $rc, want 2: $(cat "$T/err")"
	elif [ "$(wc -l <"$T/err")" -ne 1 ]; then
		fail nohw_$u "want one line, got: $(cat "$T/err")"
	elif ! grep -q "$pmu" "$T/err" || ! grep -q -- '--emulate' "$T/err"; then
		fail nohw_$u "message lacks '$pmu' or '--emulate': $(cat "$T/err")"
	elif [ -e "$T/out.data" ] || [ -e "$T/ran" ]; then
		fail nohw_$u "output created or program ran"
	else
		pass nohw_$u
	fi
done

F=$T/sys
mkdir -p $F/intel_pt/format $F/intel_pt/caps
echo 77 >$F/intel_pt/type
echo 2 >$F/intel_pt/nr_addr_filters
for kv in pt=config:0 cyc=config:1 mtc=config:9 tsc=config:10 noretcomp=config:11 \
	branch=config:13 mtc_period=config:14-17 cyc_thresh=config:19-22 psb_period=config:24-27; do
	echo "${kv#*=}" >"$F/intel_pt/format/${kv%%=*}"
done
echo 1 >$F/intel_pt/caps/psb_cyc
echo 1 >$F/intel_pt/caps/mtc

if [ "$(cat $SYS/*/type 2>/dev/null | grep -cx 77)" -ne 0 ]; then
	skip fake_pt_open "a PMU of type 77 exists here"
else
	HWT_SYSFS_ROOT=$F "$HWT" record -e intel_pt/cyc/u --no-emulate -o "$T/f.data" -- touch "$T/ran" 2>"$T/err"
	rc=$?
	if [ $rc -eq 2 ] && [ "$(wc -l <"$T/err")" -eq 1 ] && grep -q intel_pt "$T/err" && [ ! -e "$T/ran" ]; then
		pass fake_pt_open
	else
		fail fake_pt_open "rc $rc: $(cat "$T/err")"
	fi
fi

HWT_SYSFS_ROOT=$F "$HWT" record -e intel_pt/tsc,bogus_term/u --no-emulate -o "$T/f.data" -- true 2>"$T/err"
rc=$?
if [ $rc -eq 2 ] && grep -q bogus_term "$T/err" && grep -q mtc_period "$T/err"; then
	pass bad_terms
else
	fail bad_terms "rc $rc: $(cat "$T/err")"
fi

# non_x86_elf: an ELF for another machine (a copy of /bin/true with
# e_machine set to AArch64, 183): exit 2 before anything runs, for intel_pt
# whether it is hardware or emulated
cp /bin/true "$T/arm_prog"
printf '\xb7\x00' | dd of="$T/arm_prog" bs=1 seek=18 conv=notrunc status=none
chmod +x "$T/arm_prog"
"$HWT" record -e intel_pt -o "$T/arm.data" -- "$T/arm_prog" 2>"$T/err"
rc=$?
if [ $rc -eq 2 ] && [ "$(wc -l <"$T/err")" -eq 1 ] && grep -q 'not an x86-64 program' "$T/err" &&
	[ ! -e "$T/arm.data" ]; then
	pass non_x86_elf
else
	fail non_x86_elf "rc $rc: $(cat "$T/err")"
fi
