#!/usr/bin/env python3
"""tests/e2e/spe_check.py - compare the samples of an emulated SPE recording
with the emulator's truth (the operations the unit sampled, as it saw them).

  spe_check.py perf TRUTH PERF_SCRIPT_OUTPUT
      PERF_SCRIPT_OUTPUT: perf script --itrace=i1ifmtb -F tid,ip,addr,event,weight
      perf 6.1 synthesizes, per SPE record, one sample per event it knows
      (l1d-miss, l1d-access, llc-miss, llc-access, tlb-miss, tlb-access,
      branch-miss) and last one "instructions" sample: a record is the run of
      samples up to its "instructions" one.  Expected from a truth line:
      ip = pc; addr = the data address of a load/store (0 otherwise), the
      branch target for branch-miss; weight = total latency; the event
      samples from the truth's event bits.
  spe_check.py hwt TRUTH HWT_SCRIPT_TSV
      HWT_SCRIPT_TSV: tid, pc, op, addr, total, issue, xlat, events per line.
  spe_check.py script TRUTH HWT_SCRIPT_TSV
      hwt script --format tsv: tid ip addr weight data_src op ...; expected:
      ip = pc, addr = data address or branch target, weight = total latency,
      data_src = perf's union perf_mem_data_src for SPE events on CPUs
      without a data source packet (linux/perf_event.h: op load/store, level
      L3 when an LLC event is set else L1, hit/miss, TLB walker hit/miss),
      op = load, store, branch or other.
  spe_check.py model TRUTH LO HI MIN_FRACTION BIT [clear]
      of the truth's loads with addresses in [LO, HI): the fraction with event
      bit BIT set (clear: not set) must be >= MIN_FRACTION.
Prints "ok N records, T threads" or the first difference; exit 0 / 1.
"""
import re
import sys
from collections import defaultdict

EV_NAMES = [(3, "l1d-miss"), (2, "l1d-access"), (9, "llc-miss"), (8, "llc-access"),
            (5, "tlb-miss"), (4, "tlb-access"), (7, "branch-miss")]


def truth(path, keep_filtered=False):
    recs = defaultdict(list)
    for line in open(path):
        f = line.rstrip("\n").split("\t")
        if len(f) < 9:
            continue
        if len(f) > 9 and f[9] == "filtered" and not keep_filtered:
            continue
        recs[int(f[0])].append({
            "pc": int(f[2], 0), "op": f[3], "addr": int(f[4], 0), "tot": int(f[5], 0),
            "issue": int(f[6], 0), "xlat": int(f[7], 0), "ev": int(f[8], 0)})
    return recs


def expect_perf(r):
    out = []
    data = r["addr"] if r["op"] in ("ld", "st") else 0
    for bit, name in EV_NAMES:
        if r["ev"] >> bit & 1:
            addr = r["addr"] if name == "branch-miss" else data
            out.append((name, r["pc"], addr, r["tot"]))
    out.append(("instructions", r["pc"], data, r["tot"]))
    return out


LINE = re.compile(r"^\s*(\d+)\s+([\w-]+):\s+([0-9a-f]+)\s+(\d+)\s+([0-9a-f]+)")


def perf(path):
    recs = defaultdict(list)
    cur = defaultdict(list)
    for line in open(path, errors="replace"):
        m = LINE.match(line)
        if not m:
            continue
        tid, ev = int(m.group(1)), m.group(2)
        cur[tid].append((ev, int(m.group(5), 16), int(m.group(3), 16), int(m.group(4))))
        if ev == "instructions":
            recs[tid].append(cur[tid])
            cur[tid] = []
    return recs


def compare(t, got, exp_of):
    if set(t) != set(got):
        return "threads differ: truth %s, decoded %s" % (sorted(t), sorted(got))
    n = 0
    for tid in t:
        if len(t[tid]) != len(got[tid]):
            return "tid %d: %d records in the truth, %d decoded" % (tid, len(t[tid]), len(got[tid]))
        for i, (a, b) in enumerate(zip(t[tid], got[tid])):
            e = exp_of(a)
            if e != b:
                return "tid %d record %d: expected %s, got %s" % (tid, i, e, b)
            n += 1
    if not n:
        return "no records"
    return "ok %d records, %d threads" % (n, len(t))


def hwt(path):
    recs = defaultdict(list)
    for line in open(path):
        f = line.rstrip("\n").split("\t")
        if len(f) < 8:
            continue
        recs[int(f[0])].append((int(f[1], 16), f[2], int(f[3], 16), int(f[4]), int(f[5]),
                                int(f[6]), int(f[7], 16)))
    return recs


def expect_hwt(r):
    return (r["pc"], r["op"], r["addr"], r["tot"], r["issue"], r["xlat"], r["ev"])


def data_src(r):
    if r["op"] not in ("ld", "st"):
        return 0
    ev = r["ev"]
    v = 0x02 if r["op"] == "ld" else 0x04
    if ev & 0x300:
        lvl = 0x40 | (0x04 if ev & 0x200 else 0x02)
    elif ev & 0x0c:
        lvl = 0x08 | (0x04 if ev & 0x08 else 0x02)
    else:
        lvl = 0
    if ev & 0x400:
        lvl |= 0x800
    tlb = 0
    if ev & 0x30:
        tlb = 0x20 | (0x04 if ev & 0x20 else 0x02)
    return v | lvl << 5 | tlb << 26


def script(path):
    recs = defaultdict(list)
    for line in open(path):
        f = line.rstrip("\n").split("\t")
        if len(f) < 6 or not f[0].isdigit():
            continue
        recs[int(f[0])].append((int(f[1], 16), int(f[2], 16), int(f[3]), int(f[4], 16), f[5]))
    return recs


OPS = {"ld": "load", "st": "store", "b": "branch", "bcond": "branch", "bind": "branch"}


def expect_script(r):
    return (r["pc"], r["addr"], r["tot"], data_src(r), OPS.get(r["op"], "other"))


def main():
    mode = sys.argv[1]
    if mode == "model":
        t = truth(sys.argv[2], keep_filtered=True)
        lo, hi, frac, bit = int(sys.argv[3], 0), int(sys.argv[4], 0), float(sys.argv[5]), int(sys.argv[6])
        want = 0 if len(sys.argv) > 7 and sys.argv[7] == "clear" else 1
        n = k = 0
        for recs in t.values():
            for r in recs:
                if r["op"] == "ld" and lo <= r["addr"] < hi:
                    n += 1
                    k += (r["ev"] >> bit & 1) == want
        ok = n > 0 and k >= frac * n
        print("%s %d of %d loads (%.1f%%)" % ("ok" if ok else "too few:", k, n, 100.0 * k / max(n, 1)))
        return 0 if ok else 1
    t = truth(sys.argv[2])
    if mode == "perf":
        msg = compare(t, perf(sys.argv[3]), expect_perf)
    elif mode == "script":
        msg = compare(t, script(sys.argv[3]), expect_script)
    else:
        msg = compare(t, hwt(sys.argv[3]), expect_hwt)
    print(msg)
    return 0 if msg.startswith("ok") else 1


sys.exit(main())
