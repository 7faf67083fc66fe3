#!/bin/bash
# tests/e2e/list.sh - `hwt list`.
#
#   list_real      every unit is listed; intel_pt is "present" exactly when
#                  /sys/bus/event_source/devices/intel_pt exists (the
#                  oracle), else "not present" with the reason and --emulate
#   list_fake_pt   with HWT_SYSFS_ROOT describing an intel_pt PMU: present,
#                  its type and nr_addr_filters, its formats and caps
set -u
. "$(dirname "$0")/lib.bash"
HWT=$PWD/$B/hwt

out=$("$HWT" list 2>&1)
rc=$?
ok=1
for u in intel_pt intel_bts arm_spe cs_etm dummy; do
	grep -q "^$u" <<<"$out" || ok=0
done
if [ -e /sys/bus/event_source/devices/intel_pt ]; then
	grep -q '^intel_pt: present' <<<"$out" || ok=0
else
	grep -q '^intel_pt: not present (no /sys/bus/event_source/devices/intel_pt: .*--emulate' <<<"$out" || ok=0
fi
if [ $rc -eq 0 ] && [ $ok = 1 ]; then
	pass list_real
else
	fail list_real "rc $rc: $out"
fi

F=$T/sys
mkdir -p $F/intel_pt/format $F/intel_pt/caps
echo 8 >$F/intel_pt/type
echo 2 >$F/intel_pt/nr_addr_filters
echo config:10 >$F/intel_pt/format/tsc
echo config:14-17 >$F/intel_pt/format/mtc_period
echo 1 >$F/intel_pt/caps/mtc
echo 249 >$F/intel_pt/caps/mtc_periods
out=$(HWT_SYSFS_ROOT=$F "$HWT" list 2>&1)
if grep -q '^intel_pt: present (type 8, nr_addr_filters 2)' <<<"$out" &&
	grep -q 'formats: mtc_period=config:14-17 tsc=config:10' <<<"$out" &&
	grep -q 'caps: mtc=1 mtc_periods=0x249' <<<"$out" &&
	grep -q "^intel_bts: not present (no $F/intel_bts" <<<"$out"; then
	pass list_fake_pt
else
	fail list_fake_pt "$out"
fi
