#!/usr/bin/env python3
"""Scratch re-computation of hybrid root-cause quantities from otf2-print output.

Only what is needed to check the spec: time-map cache per location, OpenMP
fork/join/barrier data, MPI collective waits, delay_ompidle and
delay_ompbarrier (short-term), local time profiles.
"""
import re, subprocess, sys, collections

def load(tracedir):
    defs = subprocess.run(['otf2-print', '-G', tracedir + '/traces.otf2'], capture_output=True, text=True).stdout
    m = re.search(r'Ticks per Seconds: (\d+), Global Offset: (\d+)', defs)
    rate, off = int(m.group(1)), int(m.group(2))
    locinfo = {}
    for mm in re.finditer(r'^LOCATION\s+(\d+)\s+Name: "([^"]*)".*Group: "MPI Rank (\d+)"', defs, re.M):
        lid, name, rank = int(mm.group(1)), mm.group(2), int(mm.group(3))
        th = 0 if name.startswith('Master') else int(name.split()[-1])
        locinfo[lid] = (rank, th)
    out = subprocess.run(['otf2-print', tracedir + '/traces.otf2'], capture_output=True, text=True).stdout
    evs = collections.defaultdict(list)
    for line in out.splitlines():
        p = line.split(None, 3)
        if len(p) < 3 or not p[1].isdigit():
            continue
        typ, loc, ts = p[0], int(p[1]), int(p[2])
        attrs = p[3] if len(p) > 3 else ''
        r = re.search(r'Region: "([^"]*)"', attrs)
        evs[locinfo[loc]].append(dict(type=typ, t=(ts - off) / rate, ticks=ts, region=r.group(1) if r else None, attrs=attrs))
    return evs

def is_par(r): return r is not None and r.startswith('!$omp parallel')
def is_bar(r): return r is not None and (r.startswith('!$omp barrier') or r.startswith('!$omp implicit barrier'))

class Loc:
    pass

lsmatch = {}
collmatch = {}

def analyse(tracedir):
    evs = load(tracedir)
    lsmatch.clear(); collmatch.clear()
    ranks = sorted({r for r, t in evs})
    nthreads = {r: len([1 for (rr, t) in evs if rr == r]) for r in ranks}
    L = {}
    # --- pass 1: call paths, per-location structural info
    for key, el in evs.items():
        lo = Loc(); lo.key = key; lo.ev = el; L[key] = lo
        lo.cp = [None] * len(el)      # callpath of event (ENTER/LEAVE: region's callpath; other: current)
        lo.forks = []                 # indices of parallel ENTERs
        lo.pleaves = []
        lo.bars = []                  # (enter idx, leave idx) per barrier
        lo.joins = []                 # THREAD_JOIN idx (master)
        lo.tforks = []                # THREAD_FORK idx (master)
    for r in ranks:
        m = L[(r, 0)]
        stack = []
        forkstacks = []
        for i, e in enumerate(m.ev):
            if e['type'] == 'PROGRAM_BEGIN':
                stack.append('ompsuite'); m.cp[i] = '/'.join(stack)
            elif e['type'] == 'ENTER':
                stack.append(e['region']); m.cp[i] = '/'.join(stack)
                if is_par(e['region']): forkstacks.append(list(stack[:-1]))
            elif e['type'] in ('LEAVE', 'PROGRAM_END'):
                m.cp[i] = '/'.join(stack); stack.pop()
            else:
                m.cp[i] = '/'.join(stack)
        for t in range(1, nthreads[r]):
            w = L[(r, t)]; stack = []; k = 0
            for i, e in enumerate(w.ev):
                if e['type'] == 'ENTER':
                    if not stack and is_par(e['region']):
                        stack = list(forkstacks[k]); k += 1
                    stack.append(e['region']); w.cp[i] = '/'.join(stack)
                elif e['type'] == 'LEAVE':
                    w.cp[i] = '/'.join(stack); stack.pop()
                    if is_par(e['region']): stack = []
                else:
                    w.cp[i] = '/'.join(stack) if stack else None
    for lo in L.values():
        benter = None
        for i, e in enumerate(lo.ev):
            if e['type'] == 'ENTER' and is_par(e['region']): lo.forks.append(i)
            if e['type'] == 'LEAVE' and is_par(e['region']): lo.pleaves.append(i)
            if e['type'] == 'ENTER' and is_bar(e['region']): benter = i
            if e['type'] == 'LEAVE' and is_bar(e['region']): lo.bars.append((benter, i))
            if e['type'] == 'THREAD_JOIN': lo.joins.append(i)
            if e['type'] == 'THREAD_FORK': lo.tforks.append(i)
    # --- OpenMP team data (main replay)
    spinfo = {k: {} for k in L}      # event idx -> dict(wait,total,completion)
    ompsp = {k: set() for k in L}
    forktime = {k: {} for k in L}; jointime = {k: {} for k in L}
    barinfo = {}                     # (rank, region#, barrier#) -> list per thread
    for r in ranks:
        T = nthreads[r]; m = L[(r, 0)]
        for k in range(len(m.forks)):
            fk = m.ev[m.tforks[k]]['t']; jn = m.ev[m.joins[k]]['t']
            enters = [L[(r, t)].ev[L[(r, t)].forks[k]]['t'] for t in range(T)]
            for t in range(T):
                lo = L[(r, t)]; fi = lo.forks[k]
                ft = max(0.0, enters[t] - fk); forktime[(r, t)][fi] = ft
                spinfo[(r, t)][fi] = dict(wait=0.0, total=ft, completion=max(0.0, enters[t] - min(enters)))
                ompsp[(r, t)].add(fi)
                li = lo.pleaves[k]
                jointime[(r, t)][li] = max(0.0, jn - lo.ev[li]['t'])
        # barriers: group per parallel region instance by order
        for k in range(len(m.forks)):
            lists = []
            for t in range(T):
                lo = L[(r, t)]; a, b = lo.forks[k], lo.pleaves[k]
                lists.append([(x, y) for (x, y) in lo.bars if a < x < b])
            nb = len(lists[0]); assert all(len(x) == nb for x in lists)
            for j in range(nb):
                ents = [L[(r, t)].ev[lists[t][j][0]]['t'] for t in range(T)]
                latest = max(ents)
                lt = ents.index(latest)
                for t in range(T):
                    x, y = lists[t][j]; lo = L[(r, t)]
                    w = latest - ents[t]
                    spinfo[(r, t)][y] = dict(wait=w if w > 0 else 0.0, total=lo.ev[y]['t'] - lo.ev[x]['t'], completion=0.0)
                    ompsp[(r, t)].add(y)
                barinfo[(r, k, j)] = dict(leaves=[lists[t][j][1] for t in range(T)], enters=ents, latest=lt)
    # --- MPI collectives (master only): wait = latest enter - my enter
    coll = collections.defaultdict(list)
    for r in ranks:
        m = L[(r, 0)]; n = 0; ent = None
        for i, e in enumerate(m.ev):
            if e['type'] == 'ENTER' and e['region'].startswith('MPI_'): ent = i
            if e['type'] == 'MPI_COLLECTIVE_END':
                coll[n].append((r, ent, i)); n += 1
    for n, lst in coll.items():
        ents = [L[(r, 0)].ev[ei]['t'] for (r, ei, ci) in lst]
        reg = L[(lst[0][0], 0)].ev[lst[0][1]]['region']
        lat = max(range(len(lst)), key=lambda q: (ents[q], -q))
        for (r, ei, ci) in lst:
            collmatch[(r, ci)] = (reg, lst[lat][0], lst[lat][2], ents[lst.index((r, ei, ci))])
        for (r, ei, ci) in lst:
            m = L[(r, 0)]
            if reg == 'MPI_Init_thread':
                # synchpoint is the LEAVE of MPI_Init with wait 0
                li = next(j for j in range(ci, len(m.ev)) if m.ev[j]['type'] == 'LEAVE')
                spinfo[(r, 0)][li] = dict(wait=0.0, total=0, completion=0)
                continue
            w = max(ents) - m.ev[ei]['t']
            if reg == 'MPI_Finalize':
                li = next(j for j in range(ci, len(m.ev)) if m.ev[j]['type'] == 'LEAVE')
                spinfo[(r, 0)][li] = dict(wait=max(w, 0.0), total=0, completion=0)
            else:
                spinfo[(r, 0)][ci] = dict(wait=max(w, 0.0), total=0, completion=0)
    # --- MPI point-to-point Late Sender (blocking send/recv only)
    sends = collections.defaultdict(list)

    for r in ranks:
        m = L[(r, 0)]; ent = None
        for i, e in enumerate(m.ev):
            if e['type'] == 'ENTER': ent = i
            if e['type'] == 'MPI_SEND':
                dst = int(re.search(r'Receiver: (\d+)', e['attrs']).group(1))
                tag = re.search(r'Tag: (\d+)', e['attrs']).group(1)
                sends[(r, dst, tag)].append((ent, i))
    for r in ranks:
        m = L[(r, 0)]; ent = None
        for i, e in enumerate(m.ev):
            if e['type'] == 'ENTER': ent = i
            if e['type'] == 'MPI_RECV':
                src = int(re.search(r'Sender: (\d+)', e['attrs']).group(1))
                tag = re.search(r'Tag: (\d+)', e['attrs']).group(1)
                sent, si = sends[(src, r, tag)].pop(0)
                w = L[(src, 0)].ev[sent]['t'] - m.ev[ent]['t']
                if w > 0:
                    spinfo[(r, 0)][i] = dict(wait=w, total=0, completion=0)
                    spinfo[(src, 0)][si] = dict(wait=0.0, total=0, completion=0)
                    lsmatch[(r, i)] = (src, si)
    # --- fws: time-map cache
    for key, lo in L.items():
        r, th = key
        cache = []           # list of (cp, time)
        idx = {}
        tmap = collections.defaultdict(float)
        last = 0.0
        stack = []
        def save(i):
            for c, v in tmap.items(): cache.append((c, v))
            idx[i] = len(cache); tmap.clear()
        for i, e in enumerate(lo.ev):
            typ = e['type']; t = e['t']
            if typ in ('ENTER', 'PROGRAM_BEGIN'):
                parent = stack[-1] if stack else None
                if parent is not None: tmap[parent] += t - last
                last = t
                stack.append(lo.cp[i])
                if typ == 'ENTER' and is_par(e['region']):
                    ft = forktime[key][i]
                    pcp = lo.cp[i].rsplit('/', 1)[0]
                    tmap[pcp] -= ft
                    if th > 0: tmap.clear()
                    save(i)
                    tmap[lo.cp[i]] += ft
            elif typ in ('LEAVE', 'PROGRAM_END'):
                if i in spinfo[key]: save(i)
                if typ == 'LEAVE' and is_par(e['region']):
                    jt = jointime[key][i]
                    tmap[lo.cp[i].rsplit('/', 1)[0]] -= jt
                    tmap[lo.cp[i]] += jt
                tmap[stack[-1]] += t - last; last = t
                stack.pop()
            elif typ in ('MPI_COLLECTIVE_END', 'MPI_RECV', 'MPI_SEND'):
                if i in spinfo[key]: save(i)
            elif typ == 'THREAD_JOIN':
                tmap[lo.cp[i]] += t - last; last = t
                save(i)
        if th > 0: tmap.clear()
        for c, v in tmap.items(): cache.append((c, v))
        lo.cache, lo.idx = cache, idx
    return L, spinfo, ompsp, barinfo, nthreads, ranks

def runtimes(lo, a, b):
    s = lo.idx[a] if a is not None else 0
    e = lo.idx[b] if b is not None else len(lo.cache)
    m = collections.defaultdict(float)
    for c, v in lo.cache[s:e]: m[c] += v
    return m

def sps_between(spi, a, b):
    return {i: v for i, v in spi.items() if (a is None or i > a) and (b is None or i < b)}

def waitmap(lo, sps):
    m = collections.defaultdict(float); s = 0.0
    for i, v in sps.items():
        if v['wait'] > 0:
            m[lo.cp[i]] += v['wait']; s += v['wait']
    return m, s

def diff(a, b):
    d = {}
    for c, v in a.items():
        x = v - b.get(c, 0.0)
        if x > 0: d[c] = x
    return d

def prune(lo, tm, wm, frm, spi):
    m = diff(tm, wm); s = sum(m.values())
    if frm is not None:
        c = lo.cp[frm]; v = m.get(c, 0.0)
        m[c] = max(v - spi['total'] + spi['completion'], 0.0)
        s -= min(spi['total'] - spi['completion'], v)
    return m, s

def prev_omp(ompsp, i):
    c = [x for x in ompsp if x < i]
    return max(c) if c else None

def ompidle(L, spinfo, ompsp, nthreads, ranks):
    sev = collections.defaultdict(float)
    for r in ranks:
        m = L[(r, 0)]; key = (r, 0); T = nthreads[r]
        for f in m.forks + [None]:
            ps = prev_omp(ompsp[key], f if f is not None else 10**9)
            j = ps
            if j is not None:
                while m.ev[j]['type'] != 'THREAD_JOIN': j += 1
            sps = sps_between(spinfo[key], ps, f)
            wm, ws = waitmap(m, sps)
            d = diff(runtimes(m, j, f), wm)
            if sum(d.values()) + ws > 0:
                for c, v in d.items(): sev[(c, str(r))] += (T - 1) * v
    return sev

def ompbarrier(L, spinfo, ompsp, barinfo, nthreads):
    sev = collections.defaultdict(float)
    for (r, k, j), bi in barinfo.items():
        T = nthreads[r]
        maps = []; pw = []
        for t in range(T):
            lo = L[(r, t)]; key = (r, t); lv = bi['leaves'][t]
            ps = prev_omp(ompsp[key], lv)
            sps = sps_between(spinfo[key], ps, lv)
            wm, ws = waitmap(lo, sps)
            mp, _ = prune(lo, runtimes(lo, ps, lv), wm, ps, spinfo[key][ps] if ps is not None else dict(total=0, completion=0))
            maps.append(mp); pw.append(ws)
        lt = bi['latest']; lmap = maps[lt]; prop = pw[lt]
        for t in range(T):
            dm = diff(lmap, maps[t]); ds = sum(dm.values())
            w = bi['enters'][lt] - bi['enters'][t]
            sc = w / (ds + prop) if ds + prop > 0 else 0.0
            for c, v in dm.items():
                sev[(c, f'{r}' if lt == 0 else f'{r}.{lt}')] += sc * v
    return sev

def compare(sev, tracedir, metric):
    exp = {}
    for line in open(tracedir + '/expected/scout.csv'):
        p = line.rstrip('\n').rsplit(',', 3)
        if len(p) == 4 and p[0] == metric:
            exp[(p[1], p[2])] = float(p[3])
    keys = sorted(set(exp) | {k for k, v in sev.items() if abs(v) > 0})
    bad = 0
    for k in keys:
        a, b = sev.get(k, 0.0), exp.get(k, 0.0)
        ok = abs(a - b) <= 1e-9 * max(abs(b), 1e-300) or abs(a - b) < 1e-15
        if not ok: bad += 1
        print(f"{'OK ' if ok else 'BAD'} {metric} {k[0]} @{k[1]}: got {a!r} exp {b!r}")
    print(f'{metric}: {len(keys)} cells, {bad} mismatches')

if __name__ == '__main__':
    d = sys.argv[1]
    L, spinfo, ompsp, barinfo, nth, ranks = analyse(d)
    compare(ompidle(L, spinfo, ompsp, nth, ranks), d, 'delay_ompidle')
    compare(ompbarrier(L, spinfo, ompsp, barinfo, nth), d, 'delay_ompbarrier')

def critical_path(L, spinfo, ompsp, barinfo, nthreads, ranks):
    """Backward walk of the critical path; returns lcp[(loc label)][cp]."""
    lab = lambda r, t: f'{r}' if t == 0 else f'{r}.{t}'
    lcp = collections.defaultdict(lambda: collections.defaultdict(float))
    # transition tables
    bar_of = {}    # (r,t,leave idx) -> barinfo key
    for key, bi in barinfo.items():
        r = key[0]
        for t, lv in enumerate(bi['leaves']): bar_of[(r, t, lv)] = key
    fork_of = {}   # (r,t,enter idx) -> k
    for r in ranks:
        for t in range(nthreads[r]):
            for k, f in enumerate(L[(r, t)].forks): fork_of[(r, t, f)] = k
    def update(r, t, frm, end):
        lo = L[(r, t)]
        tm = runtimes(lo, frm, end)
        for c, v in tm.items(): lcp[lab(r, t)][c] += v
        w = spinfo[(r, t)].get(frm, {}).get('wait', 0.0)
        c = lo.cp[frm]
        lcp[lab(r, t)][c] -= min(w, tm.get(c, 0.0))
    # start: latest ENTER of MPI_Finalize, ties -> lowest rank
    fin = []
    for r in ranks:
        m = L[(r, 0)]
        ei = max(i for i, e in enumerate(m.ev) if e['type'] == 'ENTER' and e['region'] == 'MPI_Finalize')
        li = next(j for j in range(ei, len(m.ev)) if m.ev[j]['type'] == 'LEAVE')
        fin.append((m.ev[ei]['t'], -r, r, li))
    _, _, r, end = max(fin)
    todo = [(r, 0, end)]
    trail = []
    while todo:
        r, t, end = todo.pop()
        lo = L[(r, t)]
        i = end - 1
        while i >= 0:
            e = lo.ev[i]
            if (r, t, i) in bar_of:
                bi = barinfo[bar_of[(r, t, i)]]
                update(r, t, i, end)
                takers = [tt for tt in range(nthreads[r]) if spinfo[(r, tt)][bi['leaves'][tt]]['wait'] <= 0]
                assert len(takers) == 1, takers
                trail.append(('ompbarrier', r, t, '->', takers))
                for tt in takers: todo.append((r, tt, bi['leaves'][tt]))
                break
            if (r, t, i) in fork_of:
                update(r, t, i, end)
                k = fork_of[(r, t, i)]
                trail.append(('fork', r, t))
                todo.append((r, 0, L[(r, 0)].forks[k]))
                break
            if t == 0 and (r, i) in lsmatch and spinfo[(r, 0)][i]['wait'] > 0:
                update(r, t, i, end)
                src, si = lsmatch[(r, i)]
                trail.append(('LS', r, '->', src))
                todo.append((src, 0, si))
                break
            if t == 0 and (r, i) in collmatch and spinfo[(r, 0)].get(i, {}).get('wait', 0) > 0:
                reg, lr, lci, _ = collmatch[(r, i)]
                update(r, t, i, end)
                trail.append(('coll', reg, r, '->', lr))
                todo.append((lr, 0, lci))
                break
            if t == 0 and e['type'] == 'LEAVE' and e['region'] == 'MPI_Init_thread':
                update(r, t, i, end)
                trail.append(('init', r))
                break
            i -= 1
    return lcp, trail

def fdiv(a, b):
    if b != 0: return a / b
    if a == 0 or a != a: return float('nan')
    return float('inf') if a > 0 else float('-inf')

def fmul(a, b):
    try:
        return a * b
    except Exception:
        return float('nan')

def cp_metrics(L, spinfo, lcp, nthreads, ranks):
    lab = lambda r, t: f'{r}' if t == 0 else f'{r}.{t}'
    locs = [(r, t) for r in ranks for t in range(nthreads[r])]
    cps = sorted({c for lo in L.values() for c in lo.cp if c})
    gcp = collections.defaultdict(float)
    for (r, t) in locs:
        for c, v in lcp[lab(r, t)].items(): gcp[c] += v
    lt = {}
    for (r, t) in locs:
        lo = L[(r, t)]
        m = runtimes(lo, None, None)
        wm, _ = waitmap(lo, spinfo[(r, t)])
        for c in list(m):
            if c in wm: m[c] -= min(m[c], wm[c])
        lt[lab(r, t)] = m
    out = collections.defaultdict(dict)
    gsum = sum(gcp.values())
    gimb = collections.defaultdict(float); ghr = collections.defaultdict(float)
    for (r, t) in locs:
        L_ = lab(r, t); l = lt[L_]
        for c in cps:
            if gcp.get(c, 0) > 0:
                out['critical_path_activities'][(c, L_)] = min(gcp[c], l.get(c, 0.0))
            if l.get(c, 0.0) - gcp.get(c, 0.0) > 0:
                out['non_critical_path_activities'][(c, L_)] = l.get(c, 0.0) - gcp.get(c, 0.0)
            if lcp[L_].get(c, 0.0) != 0:
                out['critical_path'][(c, L_)] = lcp[L_][c]
        aggrW = gsum - sum(l.values())
        exc = {c: max(gcp.get(c, 0.0) - l.get(c, 0.0), 0.0) for c in cps}
        sf = fdiv(aggrW, sum(exc.values()))
        for c in cps: gimb[c] += (exc[c] * sf if not (exc[c] == 0 and sf in (float('inf'), float('-inf'))) else float('nan'))
        hr = {c: gcp.get(c, 0.0) for c in cps}; lplen = 0.0
        for c in cps:
            if l.get(c, 0.0) > 0:
                lplen += l[c] + (hr[c] - min(l[c], hr[c])); hr[c] = 0.0
        hrf = fdiv(gsum - lplen, sum(hr.values()))
        for c in cps: ghr[c] += (hr[c] * hrf if not (hr[c] == 0 and hrf in (float('inf'), float('-inf'))) else float('nan'))
    for (r, t) in locs:
        L_ = lab(r, t)
        for c in cps:
            x = lcp[L_].get(c, 0.0)
            if x > 0:
                v = x / gcp[c] * gimb[c]
                if v > 0: out['critical_imbalance_impact'][(c, L_)] = v
                v = x / gcp[c] * ghr[c]
                if v > 0: out['inter_partition_imbalance'][(c, L_)] = v
    return out

def compare_tol(sev, tracedir, metric, tol=1e-9, quiet=False):
    exp = {}
    for line in open(tracedir + '/expected/scout.csv'):
        p = line.rstrip('\n').rsplit(',', 3)
        if len(p) == 4 and p[0] == metric:
            exp[(p[1], p[2])] = float(p[3])
    keys = sorted(set(exp) | {k for k, v in sev.items() if abs(v) > 0})
    bad = 0
    for k in keys:
        a, b = sev.get(k, 0.0), exp.get(k, 0.0)
        ok = abs(a - b) <= tol * max(abs(a), abs(b)) or abs(a - b) < 1e-15
        if not ok:
            bad += 1
            print(f"BAD {metric} {k[0]} @{k[1]}: got {a!r} exp {b!r}")
    print(f'{metric}: {len(keys)} cells, {bad} mismatches')

def main_cp(d):
    L, spinfo, ompsp, barinfo, nth, ranks = analyse(d)
    lcp, trail = critical_path(L, spinfo, ompsp, barinfo, nth, ranks)
    print('trail:', trail)
    out = cp_metrics(L, spinfo, lcp, nth, ranks)
    for mname in ('critical_path', 'critical_path_activities', 'non_critical_path_activities',
                  'critical_imbalance_impact', 'inter_partition_imbalance'):
        compare_tol(out[mname], d, mname)
