#!/usr/bin/env python3
"""Backward (bwc) delay-cost replay for the hybrid traces, incl. long-term costs.

Scratch verification only: 2 ranks, blocking send/recv, MPI_Barrier and
MPI_Allreduce as the only delay-relevant MPI collectives.
"""
import sys, collections
src = open(__import__('os').path.join(__import__('os').path.dirname(__file__), 'rcsim.py')).read().replace("if __name__ == '__main__':", 'if False:')
exec(src)

LT = ['LS', 'LR', 'BARRIER', 'N2N', '12N', 'N21', 'OMPBARRIER', 'OMPIDLE']
LTNAME = {'LS': 'delay_latesender_longterm', 'LR': 'delay_latereceiver_longterm',
          'BARRIER': 'delay_barrier_longterm', 'N2N': 'delay_n2n_longterm',
          '12N': 'delay_12n_longterm', 'N21': 'delay_n21_longterm',
          'OMPBARRIER': 'delay_ompbarrier_longterm', 'OMPIDLE': 'delay_ompidle_longterm'}
# which long-term types take part as an input scale at each kind of delay
INPUTS_MPI = LT                                   # PRE_DELAY_BARRIER/N2N/...: every LT pattern
INPUTS_OMPBAR = [x for x in LT if x != 'OMPBARRIER']  # PRE_DELAY_OMP_BARRIER: not the ompbarrier LT one


def run(d):
    L, spinfo, ompsp, barinfo, nth, ranks = analyse(d)
    lab = lambda r, t: f'{r}' if t == 0 else f'{r}.{t}'
    sev = collections.defaultdict(lambda: collections.defaultdict(float))
    cost = {k: {x: collections.defaultdict(float) for x in LT} for k in L}
    pw_ind = {}
    # MPI synchpoints with the ranks they synchronise with
    mpisp = {k: {} for k in L}
    allr = set(ranks)
    for (r, i), (src_, si) in lsmatch.items():
        mpisp[(r, 0)][i] = {src_}
        mpisp[(src_, 0)][si] = {r}
    for (r, ci), (reg, lr, lci, ent) in collmatch.items():
        m = L[(r, 0)]
        if reg in ('MPI_Init_thread', 'MPI_Finalize'):
            li = next(j for j in range(ci, len(m.ev)) if m.ev[j]['type'] == 'LEAVE')
            mpisp[(r, 0)][li] = allr
        else:
            mpisp[(r, 0)][ci] = allr
    # totals/completions for MPI synchpoints (needed for pruning)
    for r in ranks:
        m = L[(r, 0)]
        ents = {}
        for i, e in enumerate(m.ev):
            pass
    fill_mpi_spi(L, spinfo, ranks)

    def prev_mpi(key, ev, rank):
        c = [i for i, rs in mpisp[key].items() if i < ev and rank in rs]
        return max(c) if c else None

    def addcosts(key, x, sps, scale):
        if not scale > 0:
            return
        for i, v in sps.items():
            if v['wait'] > 0:
                cost[key][x][i] += scale * v['wait']

    def mpi_delay_map(key, ev, rank):
        lo = L[key]
        ps = prev_mpi(key, ev, rank)
        sps = sps_between(spinfo[key], ps, ev)
        wm, ws = waitmap(lo, sps)
        m, s = prune(lo, runtimes(lo, ps, ev), wm, ps, spinfo[key].get(ps, dict(total=0, completion=0)) if ps is not None else None)
        return ps, sps, wm, ws, m, s

    # ---- PREPARE: idle delay of the last serial section (masters)
    def omp_idle(r, f):
        key = (r, 0); m = L[key]; T = nth[r]
        ps = prev_omp(ompsp[key], f if f is not None else 10**9)
        j = ps
        if j is not None:
            while m.ev[j]['type'] != 'THREAD_JOIN': j += 1
        sps = sps_between(spinfo[key], ps, f)
        wm, ws = waitmap(m, sps)
        dd = diff(runtimes(m, j, f), wm)
        scale = (T - 1) if sum(dd.values()) + ws > 0 else 0.0
        for c, v in dd.items():
            sev['delay_ompidle'][(c, lab(r, 0))] += scale * v
        if ws > 0:
            addcosts(key, 'OMPIDLE', sps, scale)

    for r in ranks:
        omp_idle(r, None)

    # ---- group handlers
    def omp_barrier(bkey):
        bi = barinfo[bkey]; r = bkey[0]; T = nth[r]
        maps, pws, spss = [], [], []
        for t in range(T):
            key = (r, t); lo = L[key]; lv = bi['leaves'][t]
            ps = prev_omp(ompsp[key], lv)
            sps = sps_between(spinfo[key], ps, lv)
            wm, ws = waitmap(lo, sps)
            mp, _ = prune(lo, runtimes(lo, ps, lv), wm, ps, spinfo[key][ps] if ps is not None else None)
            maps.append(mp); pws.append(ws); spss.append(sps)
        lt = bi['latest']; lmap = maps[lt]; prop = pws[lt]
        inputs = {}
        for t in range(T):
            key = (r, t); lv = bi['leaves'][t]
            inp = {x: cost[key][x].get(lv, 0.0) for x in INPUTS_OMPBAR}
            inp['WAIT'] = bi['enters'][lt] - bi['enters'][t]
            inputs[t] = inp
        delay = {k: collections.defaultdict(float) for k in inputs[0]}
        sums = {k: 0.0 for k in inputs[0]}
        for t in range(T):
            dm = diff(lmap, maps[t]); ds = sum(dm.values())
            for k, g in inputs[t].items():
                sc = g / (ds + prop) if ds + prop > 0 else 0.0
                for c, v in dm.items():
                    delay[k][c] += sc * v
                sums[k] += sc
        key = (r, lt); L_ = lab(r, lt)
        if sum(delay['WAIT'].values()) > 0:
            for c, v in delay['WAIT'].items(): sev['delay_ompbarrier'][(c, L_)] += v
        for x in INPUTS_OMPBAR:
            if sum(delay[x].values()) > 0:
                for c, v in delay[x].items(): sev[LTNAME[x]][(c, L_)] += v
            addcosts(key, x, spss[lt], sums[x])
        addcosts(key, 'OMPBARRIER', spss[lt], sums['WAIT'])

    def fork(fkey):
        r, k = fkey
        omp_idle(r, L[(r, 0)].forks[k])

    def collective(n):
        lst = coll[n]
        reg = lst[0][0]
        if reg not in ('MPI_Barrier', 'MPI_Allreduce'):
            return
        own = 'BARRIER' if reg == 'MPI_Barrier' else 'N2N'
        short = 'delay_barrier' if reg == 'MPI_Barrier' else 'delay_n2n'
        root = lst[0][2]
        rkey = (root, 0)
        ev_of = {r: ci for (_, r, ci, _) in [(a, b, c, dd) for (a, b, c, dd) in lst]}
        other = [r for r in ranks if r != root]
        rev = ev_of[root]
        # root's group interval: back to the last synchpoint with all others
        c_ = [i for i, rs in mpisp[rkey].items() if i < rev and all(o in rs for o in other)]
        ps = max(c_) if c_ else None
        sps = sps_between(spinfo[rkey], ps, rev)
        wm, ws = waitmap(L[rkey], sps)
        gmap, _ = prune(L[rkey], runtimes(L[rkey], ps, rev), wm, ps, spinfo[rkey][ps] if ps is not None else None)
        propwait = ws
        delay = {}
        sums = {}
        for r in ranks:
            key = (r, 0); ev = ev_of[r]
            local = {} if r == root else mpi_delay_map(key, ev, root)[4]
            dm = {c: max(v - local.get(c, 0.0), 0.0) for c, v in gmap.items()}
            ds = sum(dm.values())
            inp = {x: cost[key][x].get(ev, 0.0) for x in INPUTS_MPI}
            inp['WAIT'] = max(spinfo[key][ev]['wait'], 0.0)
            for k, g in inp.items():
                sc = g / (ds + propwait) if ds + propwait > 0 else ds
                delay.setdefault(k, collections.defaultdict(float))
                for c, v in dm.items(): delay[k][c] += v * sc
                sums[k] = sums.get(k, 0.0) + sc
        L_ = lab(root, 0)
        if sum(delay['WAIT'].values()) > 0:
            for c, v in delay['WAIT'].items(): sev[short][(c, L_)] += v
        for x in INPUTS_MPI:
            if sum(delay[x].values()) > 0:
                for c, v in delay[x].items(): sev[LTNAME[x]][(c, L_)] += v
            addcosts(rkey, x, sps, sums[x])
        addcosts(rkey, own, sps, sums['WAIT'])

    msgs = {}
    def pre_recv(r, i):
        key = (r, 0)
        if (r, i) not in lsmatch:
            return
        srcr, si = lsmatch[(r, i)]
        w = spinfo[key][i]['wait']
        tm = mpi_delay_map(key, i, srcr)[4] if w > 0 else {}
        msgs[(srcr, si)] = dict(rwait=w, tmap=tm, rcost={x: cost[key][x].get(i, 0.0) for x in LT}, recv=(r, i))

    def post_send(r, i):
        key = (r, 0)
        msg = msgs[(r, i)]
        if msg['rwait'] <= 0:
            return
        dst = msg['recv'][0]
        ps, sps, wm, ws, m, s = mpi_delay_map(key, i, dst)
        dd = diff(m, msg['tmap']); dsum = sum(dd.values())
        if dsum + ws <= 0:
            return
        scale = min(msg['rwait'] / (dsum + ws), 1.0)
        L_ = lab(r, 0)
        for c, v in dd.items(): sev['delay_latesender'][(c, L_)] += scale * v
        for x in LT:
            sc = msg['rcost'][x] / (dsum + ws)
            if x == 'LS':
                if sc > 0:
                    for c, v in dd.items(): sev[LTNAME[x]][(c, L_)] += sc * v
                addcosts(key, x, sps, scale + sc)
            elif sc > 0:
                for c, v in dd.items(): sev[LTNAME[x]][(c, L_)] += sc * v
                addcosts(key, x, sps, sc)
        if ws > 0:
            pw_ind[msg['recv']] = pw_ind.get(msg['recv'], 0.0) + scale * ws

    # ---- scheduler
    coll = {}
    for (r, ci), (reg, lr, lci, ent) in collmatch.items():
        pass
    # group collectives by order of COLLECTIVE_END per rank
    per = collections.defaultdict(list)
    for (r, ci), v in sorted(collmatch.items()):
        per[r].append((ci, v))
    for r in ranks:
        for n, (ci, v) in enumerate(per[r]):
            coll.setdefault(n, [v[0], {}, v[1]])
            coll[n][1][r] = ci
    coll = {n: [(v[0], rr, ci, v[2]) for rr, ci in v[1].items()] for n, v in coll.items()}
    coll = {n: lst for n, lst in coll.items()}
    # convert to (reg, rank, ci, root) tuples usable above
    coll2 = {}
    for n, lst in coll.items():
        reg = lst[0][0]; root = lst[0][3]
        coll2[n] = [(reg, r, ci, root) for (reg_, r, ci, _) in lst]
    # collective() expects lst[0][0]=reg, lst[0][2]=root, ev_of from (_, r, ci, _)
    coll.clear()
    for n, lst in coll2.items():
        coll[n] = [(x[0], x[1], x[2], x[3]) for x in lst]
    def collective_wrap(n):
        lst = coll[n]
        reg, root = lst[0][0], lst[0][3]
        global_ = [(reg, r, ci, root) for (_, r, ci, _) in lst]
        coll[n] = [(reg, r, ci, root) for (_, r, ci, _) in lst]
        # adapt to collective(): lst[0][2] must be root and ev_of built from (a,b,c,d)->b:c
        saved = coll[n]
        coll[n] = [(reg, r, ci, root) for (_, r, ci, _) in saved]
        collective_impl(n)
    def collective_impl(n):
        lst = coll[n]
        reg, root = lst[0][0], lst[0][3]
        fake = [(reg, r, ci, root) for (_, r, ci, _) in lst]
        # reuse collective() with the expected layout
        coll[n] = [(reg, None, root, None)] + fake
        collective_fixed(n, reg, root, {r: ci for (_, r, ci, _) in fake})
        coll[n] = fake
    def collective_fixed(n, reg, root, ev_of):
        if reg not in ('MPI_Barrier', 'MPI_Allreduce'):
            return
        own = 'BARRIER' if reg == 'MPI_Barrier' else 'N2N'
        short = 'delay_barrier' if reg == 'MPI_Barrier' else 'delay_n2n'
        rkey = (root, 0); rev = ev_of[root]
        other = [r for r in ranks if r != root]
        c_ = [i for i, rs in mpisp[rkey].items() if i < rev and all(o in rs for o in other)]
        ps = max(c_) if c_ else None
        sps = sps_between(spinfo[rkey], ps, rev)
        wm, ws = waitmap(L[rkey], sps)
        gmap, _ = prune(L[rkey], runtimes(L[rkey], ps, rev), wm, ps, spinfo[rkey][ps] if ps is not None else None)
        propwait = ws
        delay, sums = {}, {}
        for r in ranks:
            key = (r, 0); ev = ev_of[r]
            local = {} if r == root else mpi_delay_map(key, ev, root)[4]
            dm = {c: max(v - local.get(c, 0.0), 0.0) for c, v in gmap.items()}
            ds = sum(dm.values())
            inp = {x: cost[key][x].get(ev, 0.0) for x in INPUTS_MPI}
            inp['WAIT'] = max(spinfo[key][ev]['wait'], 0.0)
            for k, g in inp.items():
                sc = g / (ds + propwait) if ds + propwait > 0 else ds
                delay.setdefault(k, collections.defaultdict(float))
                for c, v in dm.items(): delay[k][c] += v * sc
                sums[k] = sums.get(k, 0.0) + sc
        L_ = lab(root, 0)
        if sum(delay['WAIT'].values()) > 0:
            for c, v in delay['WAIT'].items(): sev[short][(c, L_)] += v
        for x in INPUTS_MPI:
            if sum(delay[x].values()) > 0:
                for c, v in delay[x].items(): sev[LTNAME[x]][(c, L_)] += v
            addcosts(rkey, x, sps, sums[x])
        addcosts(rkey, own, sps, sums['WAIT'])

    # index lookups
    bar_of = {}
    for bkey, bi in barinfo.items():
        for t, lv in enumerate(bi['leaves']): bar_of[(bkey[0], t, lv)] = bkey
    fork_of = {}
    for r in ranks:
        for t in range(nth[r]):
            for k, f in enumerate(L[(r, t)].forks): fork_of[(r, t, f)] = (r, k)
    coll_of = {}
    for n, lst in coll.items():
        for (_, r, ci, _) in lst: coll_of[(r, ci)] = n
    groups = {}
    for bkey, bi in barinfo.items(): groups[('bar', bkey)] = {(bkey[0], t) for t in range(nth[bkey[0]])}
    for r in ranks:
        for k in range(len(L[(r, 0)].forks)): groups[('fork', (r, k))] = {(r, t) for t in range(nth[r])}
    for n in coll: groups[('coll', n)] = {(r, 0) for r in ranks}
    arrived = collections.defaultdict(set); done = set()
    pos = {k: len(L[k].ev) - 1 for k in L}
    while any(p >= 0 for p in pos.values()):
        progress = False
        for key in L:
            r, t = key
            while pos[key] >= 0:
                i = pos[key]; e = L[key].ev[i]
                g = None
                if (r, t, i) in bar_of: g = ('bar', bar_of[(r, t, i)])
                elif (r, t, i) in fork_of: g = ('fork', fork_of[(r, t, i)])
                elif t == 0 and (r, i) in coll_of: g = ('coll', coll_of[(r, i)])
                if g is not None:
                    if g not in done:
                        arrived[g].add(key)
                        if arrived[g] != groups[g]:
                            break
                        done.add(g)
                        if g[0] == 'bar': omp_barrier(g[1])
                        elif g[0] == 'fork': fork(g[1])
                        else:
                            n = g[1]; lst = coll[n]
                            collective_fixed(n, lst[0][0], lst[0][3], {rr: ci for (_, rr, ci, _) in lst})
                    pos[key] -= 1; progress = True
                    continue
                if t == 0 and e['type'] == 'MPI_RECV':
                    pre_recv(r, i)
                elif t == 0 and e['type'] == 'MPI_SEND' and (r, i) in {v: 1 for v in lsmatch.values()}:
                    if (r, i) not in msgs:
                        break
                    post_send(r, i)
                pos[key] -= 1; progress = True
        assert progress, pos
    # fwc: indirect late sender at the receive
    for (r, i), v in pw_ind.items():
        if v > 0:
            sev['mpi_wait_indirect_latesender'][(L[(r, 0)].cp[i], lab(r, 0))] += v
    return sev


def fill_mpi_spi(L, spinfo, ranks):
    """total/completion of MPI synchpoints (collectives, Init/Finalize, LS recv/send)."""
    # collectives
    per = collections.defaultdict(list)
    for (r, ci), v in sorted(collmatch.items()):
        per[r].append(ci)
    n = len(per[ranks[0]])
    for k in range(n):
        info = {}
        for r in ranks:
            m = L[(r, 0)]; ci = per[r][k]
            ei = max(j for j in range(ci) if m.ev[j]['type'] == 'ENTER')
            li = next(j for j in range(ci, len(m.ev)) if m.ev[j]['type'] == 'LEAVE')
            info[r] = (m, ei, ci, li)
        reg = info[ranks[0]][0].ev[info[ranks[0]][1]]['region']
        if reg in ('MPI_Init_thread', 'MPI_Finalize'):
            begins = {r: info[r][0].ev[info[r][1]]['t'] for r in ranks}
            ends = {r: info[r][0].ev[info[r][3]]['t'] for r in ranks}
            for r in ranks:
                m, ei, ci, li = info[r]
                latest = min(max(begins.values()), ends[r])
                ee = max(min(ends.values()), latest)
                sp = spinfo[(r, 0)][li]
                sp['total'] = ends[r] - begins[r]
                sp['completion'] = max(0.0, ends[r] - ee)
        else:
            begins = {r: info[r][0].ev[info[r][1]]['t'] for r in ranks}
            ends = {r: info[r][0].ev[info[r][2]]['t'] for r in ranks}
            for r in ranks:
                m, ei, ci, li = info[r]
                latest = min(max(begins.values()), ends[r])
                ee = max(min(ends.values()), latest)
                sp = spinfo[(r, 0)].setdefault(ci, dict(wait=0.0))
                sp['total'] = m.ev[li]['t'] - m.ev[ei]['t']
                sp['completion'] = max(0.0, ends[r] - ee)
    # LS pairs
    for (r, i), (s, si) in lsmatch.items():
        rm, sm = L[(r, 0)], L[(s, 0)]
        rei = max(j for j in range(i) if rm.ev[j]['type'] == 'ENTER'); rli = next(j for j in range(i, len(rm.ev)) if rm.ev[j]['type'] == 'LEAVE')
        sei = max(j for j in range(si) if sm.ev[j]['type'] == 'ENTER'); sli = next(j for j in range(si, len(sm.ev)) if sm.ev[j]['type'] == 'LEAVE')
        spinfo[(r, 0)][i]['total'] = rm.ev[rli]['t'] - rm.ev[rei]['t']
        spinfo[(r, 0)][i]['completion'] = max(0.0, rm.ev[rli]['t'] - sm.ev[sli]['t'])
        spinfo[(s, 0)][si]['total'] = sm.ev[sli]['t'] - sm.ev[sei]['t']
        spinfo[(s, 0)][si]['completion'] = max(0.0, sm.ev[sli]['t'] - rm.ev[rli]['t'])


if __name__ == '__main__':
    names = ['delay_latesender', 'delay_latesender_longterm', 'delay_barrier', 'delay_barrier_longterm',
             'delay_n2n', 'delay_n2n_longterm', 'delay_ompbarrier', 'delay_ompbarrier_longterm',
             'delay_ompidle', 'delay_ompidle_longterm', 'mpi_wait_indirect_latesender']
    for d in sys.argv[1:]:
        print('==', d)
        sev = run(d)
        for nm in names:
            compare_tol(sev[nm], d, nm)
