#!/usr/bin/env python3
"""tests/e2e/views_check.py - checkers for tests/e2e/views_*.sh, each an
independent reading of hwt's output files compared with hwt script's text:

  perfetto FILE CALLS   decode the protobuf wire format (written here from
                        Perfetto's schema: Trace.packet = 1; TracePacket
                        timestamp = 8, track_event = 11, track_descriptor =
                        60; TrackEvent type = 9, track_uuid = 11, name = 23;
                        TrackDescriptor uuid = 1, process = 3, thread = 4;
                        ThreadDescriptor pid = 1, tid = 2, thread_name = 5),
                        check every event's track is described, begins and
                        ends nest per track in time order, and the slices
                        per thread and name equal the calls in CALLS
                        (hwt script --calls --no-time)
  chrome FILE CALLS     the same for Chrome JSON
  lcov FILE INSN        per line (DA) the highest per-instruction count of
                        the line in INSN (hwt script --insn --srcline
                        --no-time), 0 only for lines INSN never has; FNDA =
                        count of the function's +0x0 row
  drcov FILE INSN       every block starts at an executed instruction and
                        every executed instruction of a file is in a block
  genhtml HTML INSN SRC the per-line counts genhtml shows for SRC equal
                        those computed from INSN
  flame FILE TOTAL      sum of data-self + data-pruned == TOTAL
  chrome_filters FILE MIN DEPTH START END   slices >= MIN ns, nesting <=
                        DEPTH, times in [START, END]
Prints nothing and exits 0 when all is well, else one line why, exit 1.
"""
import collections
import json
import os
import re
import struct
import sys
import xml.etree.ElementTree as ET


def fail(why):
    print(why)
    sys.exit(1)


def varint(b, i):
    v = shift = 0
    while True:
        if i >= len(b):
            raise ValueError("varint runs past the end")
        c = b[i]
        i += 1
        v |= (c & 0x7F) << shift
        shift += 7
        if not c & 0x80:
            return v, i
        if shift > 63:
            raise ValueError("varint too long")


def fields(b):
    """(field, wiretype, value) of one message; value: int or bytes."""
    i, out = 0, []
    while i < len(b):
        key, i = varint(b, i)
        f, wt = key >> 3, key & 7
        if f == 0:
            raise ValueError("field number 0")
        if wt == 0:
            v, i = varint(b, i)
        elif wt == 1:
            v, i = struct.unpack_from("<Q", b, i)[0], i + 8
        elif wt == 2:
            n, i = varint(b, i)
            if i + n > len(b):
                raise ValueError("length-delimited field runs past the end")
            v, i = b[i:i + n], i + n
        elif wt == 5:
            v, i = struct.unpack_from("<I", b, i)[0], i + 4
        else:
            raise ValueError("wire type %d" % wt)
        out.append((f, wt, v))
    return out


def one(fs, f, default=None):
    for k, _, v in fs:
        if k == f:
            return v
    return default


def calls_of(path):
    """(tid, name) -> number of calls, from hwt script --calls --no-time."""
    c = collections.Counter()
    for line in open(path, errors="replace"):
        p = line.split()
        if len(p) >= 6 and p[1] == "call" and p[3] == "=>":
            name = p[5]
            name = re.sub(r"\+0x[0-9a-f]+$", "", name)
            c[(int(p[0]), name)] += 1
    return c


def check_slices(events, calls, what):
    """events: per track (tid) list of (ts, kind, name) in file order."""
    got = collections.Counter()
    for tid, evs in events.items():
        stack, last = [], -1
        for ts, kind, name in evs:
            if ts < last:
                fail("%s: tid %d goes back in time (%d after %d)" % (what, tid, ts, last))
            last = ts
            if kind == "B":
                stack.append(name)
            elif kind == "E":
                if not stack:
                    fail("%s: tid %d: an end without a begin at %d" % (what, tid, ts))
                got[(tid, stack.pop())] += 1
        if stack:
            fail("%s: tid %d: %d slices never end" % (what, tid, len(stack)))
    # unknown callees: hwt script prints [unknown], the timeline "[unknown] 0x.."
    got2 = collections.Counter()
    for (tid, name), n in got.items():
        got2[(tid, "[unknown]" if name.startswith("[unknown]") else name)] += n
    if got2 != calls:
        diff = (got2 - calls) + (calls - got2)
        fail("%s: slices differ from hwt script --calls (%d vs %d); e.g. %s" %
             (what, sum(got2.values()), sum(calls.values()), list(diff.items())[:3]))
    return sum(got2.values())


def perfetto(path, calls_path):
    data = open(path, "rb").read()
    tracks, events, threads = {}, collections.defaultdict(list), {}
    npackets = 0
    try:
        for f, wt, pkt in fields(data):
            if f != 1 or wt != 2:
                fail("perfetto: top-level field %d is not Trace.packet" % f)
            npackets += 1
            p = fields(pkt)
            td, te = one(p, 60), one(p, 11)
            if td is not None:
                d = fields(td)
                uuid = one(d, 1)
                th = one(d, 4)
                if th is not None:
                    t = fields(th)
                    tracks[uuid] = one(t, 2)
                    threads[one(t, 2)] = (one(t, 1), (one(t, 5) or b"").decode())
                elif one(d, 3) is not None:
                    tracks[uuid] = None
            if te is not None:
                e = fields(te)
                ts = one(p, 8)
                uuid = one(e, 11)
                if uuid not in tracks:
                    fail("perfetto: event on track %s before its descriptor" % uuid)
                if ts is None:
                    fail("perfetto: track event without a timestamp")
                typ = one(e, 9)
                name = one(e, 23)
                kind = {1: "B", 2: "E", 3: "i"}.get(typ)
                if kind is None:
                    fail("perfetto: track event of type %s" % typ)
                events[tracks[uuid]].append((ts, kind, name.decode() if name else None))
    except ValueError as e:
        fail("perfetto: malformed protobuf: %s" % e)
    n = check_slices(events, calls_of(calls_path), "perfetto")
    if len(threads) < 2:
        fail("perfetto: %d thread tracks, expected a multi-threaded recording" % len(threads))
    print("perfetto: %d packets, %d threads, %d slices" % (npackets, len(threads), n),
          file=sys.stderr)


def chrome(path, calls_path):
    try:
        d = json.load(open(path))
    except ValueError as e:
        fail("chrome: not JSON: %s" % e)
    events, named = collections.defaultdict(list), set()
    for e in d["traceEvents"]:
        if e["ph"] == "M":
            if e["name"] == "thread_name":
                named.add(e["tid"])
            continue
        ts = round(float(e["ts"]) * 1000)
        events[e["tid"]].append((ts, e["ph"], e.get("name")))
    missing = set(events) - named
    if missing:
        fail("chrome: threads without a name: %s" % sorted(missing))
    instants = collections.Counter(n for evs in events.values() for _, k, n in evs if k == "i")
    for want in ("exec", "syscall"):
        if not instants[want]:
            fail("chrome: no '%s' instant event (have %s)" % (want, dict(instants)))
    n = check_slices(events, calls_of(calls_path), "chrome")
    print("chrome: %d threads, %d slices" % (len(events), n), file=sys.stderr)


def insn_rows(path):
    """ip -> count, ip -> src, ip -> sym+off, from --insn --srcline --no-time."""
    cnt, src, sym = collections.Counter(), {}, {}
    for line in open(path, errors="replace"):
        p = line.split()
        if len(p) >= 3 and p[1].startswith("0x"):
            ip = int(p[1], 16)
            cnt[ip] += 1
            sym[ip] = p[2]
            if len(p) >= 4:
                src[ip] = p[3]
    return cnt, src, sym


def lcov(path, insn_path):
    cnt, src, sym = insn_rows(insn_path)
    want = {}
    for ip, s in src.items():
        f, _, l = s.rpartition(":")
        k = (os.path.normpath(f), int(l))
        want[k] = max(want.get(k, 0), cnt[ip])
    got, fnda, sf = {}, {}, None
    for line in open(path):
        line = line.rstrip("\n")
        if line.startswith("SF:"):
            sf = line[3:]
        elif line.startswith("DA:"):
            l, c = line[3:].split(",")[:2]
            got[(sf, int(l))] = int(c)
        elif line.startswith("FNDA:"):
            c, name = line[5:].split(",", 1)
            fnda[(sf, name)] = int(c)
    # lines never executed come with 0 (from the line tables)
    zeros = [k for k, c in got.items() if c == 0]
    for k in zeros:
        if k in want:
            fail("lcov: line %s:%d has 0, --insn has %d" % (k[0], k[1], want[k]))
        del got[k]
    if got != want:
        diff = set(got.items()) ^ set(want.items())
        fail("lcov: %d lines vs %d from --insn --srcline; e.g. %s" %
             (len(got), len(want), sorted(diff)[:3]))
    # a function's entry row names its file: (file, name) -> count
    entry = collections.Counter()
    for ip, s in sym.items():
        if s.endswith("+0x0") and ip in src:
            entry[(os.path.normpath(src[ip].rpartition(":")[0]), s[:-4])] += cnt[ip]
    for (f, name), c in fnda.items():
        if entry.get((f, name), 0) != c:
            fail("lcov: FNDA %s in %s = %d, --insn has %d rows at %s+0x0" %
                 (name, f, c, entry.get((f, name), 0), name))
    print("lcov: %d lines, %d functions" % (len(got), len(fnda)), file=sys.stderr)


def genhtml(html, insn_path, src):
    """the counts genhtml shows for src's lines == the highest count per
    line from --insn --srcline"""
    cnt, srcs, _ = insn_rows(insn_path)
    want = {}
    for ip, s in srcs.items():
        f, _, l = s.rpartition(":")
        if os.path.normpath(f) == src:
            want[int(l)] = max(want.get(int(l), 0), cnt[ip])
    got = {}
    pat = re.compile(r'<span class="lineNum">\s*(\d+) </span>.*?'
                     r'<span class="lineCov">\s*(\d+) :')
    for line in open(html, errors="replace"):
        m = pat.search(line)
        if m:
            got[int(m.group(1))] = int(m.group(2))
    if not want or got != want:
        fail("genhtml: %s shows %d counted lines, --insn --srcline has %d; e.g. %s" %
             (html, len(got), len(want), sorted(set(got.items()) ^ set(want.items()))[:3]))
    print("genhtml: %d lines of %s" % (len(got), src), file=sys.stderr)


def drcov(path, insn_path, maps_path):
    cnt, _, _ = insn_rows(insn_path)
    data = open(path, "rb").read()
    head, sep, rest = data.partition(b"BB Table: ")
    if not sep:
        fail("drcov: no BB Table")
    lines = head.decode().splitlines()
    if lines[0] != "DRCOV VERSION: 2" or not lines[2].startswith("Module Table: version 2"):
        fail("drcov: bad header %r" % lines[:3])
    mods = {}
    for l in lines[4:]:
        p = [x.strip() for x in l.split(",", 6)]
        mods[int(p[0])] = (int(p[1], 16), int(p[2], 16), p[6])
    nl, _, bbs = rest.partition(b"\n")
    n = int(nl.split()[0])
    if len(bbs) != 8 * n:
        fail("drcov: %d bytes of blocks for %d bbs" % (len(bbs), n))
    covered = set()
    for i in range(n):
        off, size, mod = struct.unpack_from("<IHH", bbs, 8 * i)
        if mod not in mods:
            fail("drcov: block of unknown module %d" % mod)
        start = mods[mod][0] + off
        if start not in cnt:
            fail("drcov: block at 0x%x is not an executed instruction" % start)
        covered.update(range(start, start + size))
    # executed instructions inside the modules' files must be covered
    for ip in cnt:
        inmod = any(b <= ip < e for b, e, _ in mods.values())
        if inmod and ip not in covered:
            fail("drcov: executed 0x%x is in no block" % ip)
    print("drcov: %d modules, %d blocks" % (len(mods), n), file=sys.stderr)


def flame(path, total):
    try:
        root = ET.parse(path).getroot()
    except ET.ParseError as e:
        fail("flame: not well-formed XML: %s" % e)
    s = 0
    nf = 0
    for g in root.iter("{http://www.w3.org/2000/svg}g"):
        if g.get("class") == "f":
            nf += 1
            s += int(g.get("data-self")) + int(g.get("data-pruned"))
    if s != int(total):
        fail("flame: frames sum to %d, hwt report says %s" % (s, total))
    print("flame: %d frames, %d instructions" % (nf, s), file=sys.stderr)


if __name__ == "__main__":
    cmd = sys.argv[1]
    if cmd == "perfetto":
        perfetto(sys.argv[2], sys.argv[3])
    elif cmd == "chrome":
        chrome(sys.argv[2], sys.argv[3])
    elif cmd == "lcov":
        lcov(sys.argv[2], sys.argv[3])
    elif cmd == "genhtml":
        genhtml(sys.argv[2], sys.argv[3], sys.argv[4])
    elif cmd == "drcov":
        drcov(sys.argv[2], sys.argv[3], None)
    elif cmd == "flame":
        flame(sys.argv[2], sys.argv[3])
    elif cmd != "chrome_filters":
        fail("unknown check " + cmd)


def chrome_filters(path, min_ns, depth, start, end):
    """every slice lasts >= min_ns, nests at most depth deep, lies in
    [start, end] (ns; end 0: none)"""
    d = json.load(open(path))
    stacks = collections.defaultdict(list)
    n = 0
    for e in d["traceEvents"]:
        if e["ph"] not in "BE":
            continue
        ts = round(float(e["ts"]) * 1000)
        if ts < start or (end and ts > end):
            fail("filters: event at %d outside [%d, %d]" % (ts, start, end))
        st = stacks[e["tid"]]
        if e["ph"] == "B":
            st.append(ts)
            if depth and len(st) > depth:
                fail("filters: nesting %d deeper than %d" % (len(st), depth))
        else:
            b = st.pop()
            n += 1
            if ts - b < min_ns:
                fail("filters: a slice of %d ns, shorter than %d" % (ts - b, min_ns))
    if not n:
        fail("filters: no slices left")
    print("filters: %d slices" % n, file=sys.stderr)


if __name__ == "__main__" and sys.argv[1] == "chrome_filters":
    chrome_filters(sys.argv[2], *[int(x) for x in sys.argv[3:7]])
