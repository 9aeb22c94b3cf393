#!/usr/bin/env python3
"""Independent CUBE4 (.cubex) reader: prints a report's values as canonical CSV.

Usage: cubexcheck.py FILE.cubex > out.csv

Standard library only (tarfile, xml.etree, struct), and deliberately
sharing no code with the Go package: it is the cross-check for the Go
writer and reader. Output: "metric,callpath,rank,value", one row per
non-zero value, call-path exclusive (INCLUSIVE metrics: stored value minus
the sum of the children's stored values) and metric inclusive (the stored
values), rank "r" or "r.t" for thread t > 0, rows sorted by metric, call
path and rank.
"""

import csv
import re
import struct
import sys
import tarfile
import xml.etree.ElementTree as ET

DBL_MAX = sys.float_info.max

# dtype -> struct format character
DTYPES = {
    "DOUBLE": "d", "FLOAT": "d", "MINDOUBLE": "d", "MAXDOUBLE": "d",
    "INT64": "q", "INTEGER": "q", "SIGNED INTEGER": "q",
    "UINT64": "Q", "UNSIGNED INTEGER": "Q",
    "INT32": "i", "INT": "i", "SIGNED INT": "i",
    "UINT32": "I", "UNSIGNED INT": "I",
    "INT16": "h", "SHORT INT": "h", "SIGNED SHORT INT": "h",
    "UINT16": "H", "UNSIGNED SHORT INT": "H",
    "INT8": "b", "UINT8": "B", "CHAR": "B",
}
DATA_TYPES = ("EXCLUSIVE", "INCLUSIVE", "SIMPLE")


def fail(msg):
    sys.exit("cubexcheck: " + msg)


def read_members(path):
    # ignore_zeros: CubeW pads a member whose size is a multiple of 512
    # with one extra zero block, which plain tarfile takes as the end.
    members = {}
    with tarfile.open(path, "r:", ignore_zeros=True) as tf:
        for info in tf:
            if info.isfile():
                members[info.name] = tf.extractfile(info).read()
    return members


def quote_bare_attrs(text):
    # CubeW writes <cubepl rowwise=false> and <cubeplaggr cubeplaggrtype=plus>.
    def fix(m):
        return re.sub(r'(\s[\w:]+)=([^"\s>]+)', r'\1="\2"', m.group(0))
    return re.sub(r"<cubepl\w*\s[^>]*>", fix, text)


def child_text(elem, tag, default=""):
    c = elem.find(tag)
    if c is None:
        return default
    return c.text or ""


def parse_anchor(data):
    root = ET.fromstring(quote_bare_attrs(data.decode("utf-8")))
    if root.tag != "cube":
        fail("root element is <%s>, want <cube>" % root.tag)

    metrics = []  # (member prefix, uniq_name, type, dtype), document order
    # iterative pre-order walks: call trees can be deeper than Python's
    # recursion limit
    stack = list(reversed(root.find("metrics").findall("metric")))
    while stack:
        m = stack.pop()
        mid = str(int(m.get("id", m.get("Id"))))
        if m.get("viztype") == "GHOST":
            mid = "ghost_" + mid
        metrics.append((mid, child_text(m, "uniq_name"),
                        m.get("type", "EXCLUSIVE"), child_text(m, "dtype", "DOUBLE")))
        stack.extend(reversed(m.findall("metric")))

    program = root.find("program")
    regions = {}
    for r in program.findall("region"):
        regions[int(r.get("id", r.get("Id")))] = child_text(r, "name")

    # cnode trees: roots in document order, children in document order
    children = {}  # id -> [child ids]
    names = {}     # id -> call path
    roots = []
    stack = [(c, None) for c in reversed(program.findall("cnode"))]
    while stack:
        c, parent = stack.pop()
        cid = int(c.get("id", c.get("Id")))
        name = regions[int(c.get("calleeId"))]
        children[cid] = []
        if parent is None:
            names[cid] = name
            roots.append(cid)
        else:
            names[cid] = names[parent] + "/" + name
            children[parent].append(cid)
        stack.extend((k, cid) for k in reversed(c.findall("cnode")))

    # locations: id -> rank label
    labels = {}
    for lg in root.iter("locationgroup"):
        grank = int(child_text(lg, "rank"))
        for loc in lg.findall("location"):
            t = int(child_text(loc, "rank"))
            labels[int(loc.get("Id", loc.get("id")))] = str(grank) if t == 0 else "%d.%d" % (grank, t)
    return metrics, roots, children, names, labels


def dfs_order(roots, children):
    out = []
    stack = list(reversed(roots))
    while stack:
        n = stack.pop()
        out.append(n)
        stack.extend(reversed(children[n]))
    return out


def wide_order(roots, children):
    # each root, then for every node all its children before their subtrees
    out = []
    for r in roots:
        out.append(r)
        stack = [r]
        while stack:
            n = stack.pop()
            out.extend(children[n])
            stack.extend(reversed(children[n]))
    return out


def read_metric(members, mid, fmt, nlocs, order):
    index = members.get("%s.index" % mid)
    data = members.get("%s.data" % mid)
    if index is None and data is None:
        return {}
    if index is None or data is None:
        fail("metric %s: data or index member missing" % mid)
    if index[:11] != b"CUBEX.INDEX":
        fail("%s.index: bad marker" % mid)
    if struct.unpack("<I", index[11:15])[0] == 1:
        endian = "<"
    elif struct.unpack(">I", index[11:15])[0] == 1:
        endian = ">"
    else:
        fail("%s.index: bad endianness word" % mid)
    kind = index[17]
    if kind == 3:
        positions = list(range(len(order)))
    elif kind == 1:
        (n,) = struct.unpack(endian + "I", index[18:22])
        positions = list(struct.unpack(endian + "%dI" % n, index[22:22 + 4 * n]))
        if len(index) != 22 + 4 * n:
            fail("%s.index: size mismatch" % mid)
    else:
        fail("%s.index: unknown format %d" % (mid, kind))
    if data[:10] != b"CUBEX.DATA":
        fail("%s.data: bad marker" % mid)
    size = struct.calcsize(fmt)
    if len(data) != 10 + len(positions) * nlocs * size:
        fail("%s.data: %d bytes, want %d" % (mid, len(data), 10 + len(positions) * nlocs * size))
    rows = {}
    rowfmt = endian + "%d%s" % (nlocs, fmt)
    for i, p in enumerate(positions):
        off = 10 + i * nlocs * size
        rows[order[p]] = list(struct.unpack(rowfmt, data[off:off + nlocs * size]))
    return rows


def main():
    if len(sys.argv) != 2:
        fail("usage: cubexcheck.py FILE.cubex")
    members = read_members(sys.argv[1])
    if "anchor.xml" not in members:
        fail("no anchor.xml")
    metrics, roots, children, names, labels = parse_anchor(members["anchor.xml"])
    nlocs = len(labels)
    excl_order = dfs_order(roots, children)
    incl_order = wide_order(roots, children)

    out = []
    for mid, uniq, mtype, dtype in metrics:
        if mtype not in DATA_TYPES:
            continue
        fmt = DTYPES.get(dtype.upper())
        if fmt is None:
            continue
        inclusive = mtype != "EXCLUSIVE"
        rows = read_metric(members, mid, fmt, nlocs, incl_order if inclusive else excl_order)
        empty = 0
        if dtype.upper() == "MINDOUBLE":
            empty = DBL_MAX
        elif dtype.upper() == "MAXDOUBLE":
            empty = -DBL_MAX
        is_int = fmt != "d"
        for c in excl_order:
            own = rows.get(c)
            kids = [rows[k] for k in children[c] if k in rows]
            if own is None and not kids:
                continue
            for loc in range(nlocs):
                v = own[loc] if own is not None else (0 if is_int else 0.0)
                if inclusive:
                    s = 0 if is_int else 0.0
                    for k in kids:
                        s += k[loc]
                    v = v - s
                if v == 0 or v == empty:
                    continue
                out.append((uniq, names[c], labels[loc], v, is_int))

    def rank_key(label):
        r, _, t = label.partition(".")
        return (int(r), int(t) if t else 0)

    out.sort(key=lambda row: (row[0], row[1], rank_key(row[2])))
    w = csv.writer(sys.stdout, lineterminator="\n")
    w.writerow(["metric", "callpath", "rank", "value"])
    for uniq, path, label, v, is_int in out:
        w.writerow([uniq, path, label, str(int(v)) if is_int else repr(float(v))])


if __name__ == "__main__":
    main()
