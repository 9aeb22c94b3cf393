#!/usr/bin/env python3
"""Prototype of the root-cause / critical-path spec (rootcause-spec.md).

Sequential simulation of all ranks with generators; used only to check the
spec against testdata/traces/*/expected/scout.csv.  Usage:
    rcsim.py TRACE_DIR [metric-prefix...]
"""
import re, subprocess, sys, collections, math

INF = float('inf')
DBG = collections.Counter()


# ----------------------------------------------------------------- parsing
def parse(tdir):
    anchor = tdir + '/traces.otf2'
    g = subprocess.run(['otf2-print', '-G', anchor], capture_output=True, text=True).stdout
    tps = off = None
    groups, comms = {}, {}
    for ln in g.splitlines():
        m = re.match(r'CLOCK_PROPERTIES\s+Ticks per Seconds: (\d+), Global Offset: (\d+)', ln)
        if m:
            tps, off = int(m.group(1)), int(m.group(2))
        m = re.match(r'GROUP\s+(\d+)\s+.*Type: (\w+),.*?(\d+) Members(.*)', ln)
        if m:
            gid, typ, rest = int(m.group(1)), m.group(2), m.group(4)
            if typ in ('COMM_GROUP', 'COMM_SELF'):
                groups[gid] = [int(x) for x in re.findall(r'(?:: |, )(\d+) \(', rest)]
        m = re.match(r'COMM\s+(\d+)\s+Name: .*?, Group: .*?<(\d+)>', ln)
        if m:
            comms[int(m.group(1))] = int(m.group(2))
    commranks = {c: groups.get(gr, []) for c, gr in comms.items()}
    out = subprocess.run(['otf2-print', anchor], capture_output=True, text=True).stdout
    evs = collections.defaultdict(list)
    for ln in out.splitlines():
        p = ln.split(None, 3)
        if len(p) < 3 or not p[1].isdigit() or not p[2].isdigit():
            continue
        typ, loc, ts = p[0], int(p[1]), int(p[2])
        rest = p[3] if len(p) > 3 else ''
        t = float(ts - off) / tps
        e = {'type': typ, 't': t}
        if typ in ('ENTER', 'LEAVE'):
            e['region'] = re.match(r'Region: "(.*?)"', rest).group(1)
        elif typ == 'PROGRAM_BEGIN':
            e['type'], e['region'] = 'ENTER', 'patternsuite'
        elif typ == 'PROGRAM_END':
            e['type'], e['region'] = 'LEAVE', 'patternsuite'
        elif typ in ('MPI_SEND', 'MPI_ISEND', 'MPI_RECV', 'MPI_IRECV'):
            m = re.search(r'(?:Receiver|Sender): (\d+) .*Communicator: .*?<(\d+)>, Tag: (\d+)', rest)
            e['peer'], e['comm'], e['tag'] = int(m.group(1)), int(m.group(2)), int(m.group(3))
            m = re.search(r'Request: (\d+)', rest)
            if m:
                e['req'] = int(m.group(1))
        elif typ in ('MPI_ISEND_COMPLETE', 'MPI_IRECV_REQUEST'):
            e['req'] = int(re.search(r'Request: (\d+)', rest).group(1))
        elif typ == 'MPI_COLLECTIVE_END':
            m = re.search(r'Operation: (\w+), Communicator: .*?<(\d+)>, Root: (\w+)[^,]*(?:,[^,]*>\))?, Sent: (\d+), Received: (\d+)', rest)
            e['op'], e['comm'] = m.group(1), int(m.group(2))
            e['root'] = int(m.group(3)) if m.group(3).isdigit() else None
            e['sent'], e['recvd'] = int(m.group(4)), int(m.group(5))
        elif typ == 'MPI_COLLECTIVE_BEGIN':
            pass
        else:
            e['type'] = 'OTHER'
        evs[loc].append(e)
    return evs, commranks


KIND = {'MPI_SEND': 'SEND', 'MPI_ISEND': 'SENDREQ', 'MPI_ISEND_COMPLETE': 'SENDCMP',
        'MPI_RECV': 'RECV', 'MPI_IRECV': 'RECVCMP', 'MPI_IRECV_REQUEST': 'RECVREQ',
        'MPI_COLLECTIVE_BEGIN': 'CBEGIN', 'MPI_COLLECTIVE_END': 'CEND',
        'ENTER': 'ENTER', 'LEAVE': 'LEAVE', 'OTHER': 'OTHER'}


class Trace:
    """One rank's events with navigation (enter/leave/callpath/request links)."""

    def __init__(self, rank, raw, cpids):
        self.rank = rank
        self.ev = []
        stack, pend_s, pend_r = [], {}, {}
        for i, r in enumerate(raw):
            e = dict(r)
            e['kind'] = KIND[r['type']]
            e['i'] = i
            if e['kind'] == 'ENTER':
                path = (stack[-1]['cp'] if stack else ()) + (e['region'],)
                e['cp'] = path
                stack.append(e)
            elif e['kind'] == 'LEAVE':
                en = stack.pop()
                e['cp'] = en['cp']
                e['enter'] = en['i']
                en['leave'] = i
            else:
                e['enter'] = stack[-1]['i'] if stack else None
                e['cp'] = stack[-1]['cp'] if stack else ()
            if e['kind'] == 'SENDREQ':
                pend_s[e['req']] = i
            elif e['kind'] == 'SENDCMP':
                j = pend_s.pop(e['req'])
                self.ev[j]['completion'] = i
                e['request'] = j
            elif e['kind'] == 'RECVREQ':
                pend_r[e['req']] = i
            elif e['kind'] == 'RECVCMP':
                j = pend_r.pop(e['req'])
                self.ev[j]['completion'] = i
                e['request'] = j
            if e['kind'] == 'CBEGIN':
                self._cbegin = i
            if e['kind'] == 'CEND':
                e['begin'] = self._cbegin
            self.ev.append(e)
        for e in self.ev:
            if e['kind'] not in ('ENTER', 'LEAVE') and e['enter'] is not None:
                e['leave'] = self.ev[e['enter']]['leave']
            if e['cp'] not in cpids:
                cpids[e['cp']] = len(cpids)
            e['cpid'] = cpids[e['cp']]

    # navigation helpers (PEARL semantics)
    def t(self, i): return self.ev[i]['t']
    def enterptr(self, i): return self.ev[i]['i'] if self.ev[i]['kind'] == 'ENTER' else self.ev[i]['enter']
    def leaveptr(self, i): return self.ev[i]['i'] if self.ev[i]['kind'] == 'LEAVE' else self.ev[i]['leave']
    def completion(self, i): return self.ev[i].get('completion', i)
    def request(self, i): return self.ev[i].get('request', i)
    def region(self, i): return self.ev[self.enterptr(i)]['region']
    def cpid(self, i): return self.ev[i]['cpid']


def is_mpi(r): return r.startswith('MPI_')
def wait_multi(r): return r in ('MPI_Waitall', 'MPI_Waitsome')
def wait_single(r): return r in ('MPI_Wait', 'MPI_Waitany')
def block_send(r): return r in ('MPI_Send', 'MPI_Ssend')
def testx(r): return r.startswith('MPI_Test')


COLLCLASS = {'BARRIER': 'BAR', 'BCAST': '12N', 'SCATTER': '12N', 'SCATTERV': '12N',
             'GATHER': 'N21', 'GATHERV': 'N21', 'REDUCE': 'N21',
             'ALLGATHER': 'N2N', 'ALLGATHERV': 'N2N', 'ALLTOALL': 'N2N', 'ALLREDUCE': 'N2N',
             'REDUCE_SCATTER': 'N2N', 'REDUCE_SCATTER_BLOCK': 'N2N', 'SCAN': 'SCAN', 'EXSCAN': 'SCAN'}


# ----------------------------------------------------------------- scheduler
class Sched:
    """Runs one generator per rank. Ops yielded:
       ('send', key, payload)                         never blocks
       ('recv', key)                                  -> payload (FIFO per key)
       ('coll', key, members, myrank, value, fn)      -> fn(dict rank->value)[myrank]
    """

    def run(self, gens):
        queues = collections.defaultdict(collections.deque)
        colls = {}
        state = {r: ('start', None) for r in gens}
        waiting = {}
        active = dict(gens)
        progress = True
        while active and progress:
            progress = False
            for r in list(active):
                g = active[r]
                send_val = None
                if r in waiting:
                    w = waiting[r]
                    if w[0] == 'recv':
                        if not queues[w[1]]:
                            continue
                        send_val = queues[w[1]].popleft()
                    else:
                        key = w[1]
                        c = colls[key]
                        if 'res' not in c:
                            continue
                        send_val = c['res'][w[2]]
                    del waiting[r]
                while True:
                    try:
                        op = g.send(send_val)
                    except StopIteration:
                        del active[r]
                        progress = True
                        break
                    progress = True
                    send_val = None
                    if op[0] == 'send':
                        queues[op[1]].append(op[2])
                        continue
                    if op[0] == 'recv':
                        if queues[op[1]]:
                            send_val = queues[op[1]].popleft()
                            continue
                        waiting[r] = op
                        break
                    if op[0] == 'coll':
                        _, key, members, me, val, fn = op
                        c = colls.setdefault(key, {'vals': {}})
                        c['vals'][me] = val
                        if len(c['vals']) == len(members):
                            c['res'] = fn(c['vals'])
                            send_val = c['res'][me]
                            continue
                        waiting[r] = ('coll', key, me)
                        break
        if active:
            raise RuntimeError('deadlock: %s' % {r: waiting.get(r) for r in active})


def maxloc(vals):   # vals: rank -> (time, rank); ties: smallest rank
    best = None
    for v in vals.values():
        if best is None or v[0] > best[0] or (v[0] == best[0] and v[1] < best[1]):
            best = v
    return best


def minloc(vals):
    best = None
    for v in vals.values():
        if best is None or v[0] < best[0] or (v[0] == best[0] and v[1] < best[1]):
            best = v
    return best


# ----------------------------------------------------------------- analysis
class SP:
    __slots__ = ('wait', 'compl', 'total', 'ranks')

    def __init__(self, wait, compl, total, ranks):
        self.wait, self.compl, self.total, self.ranks = wait, compl, total, ranks


class Rank:
    def __init__(self, tr, nranks, commranks):
        self.tr, self.n, self.commranks = tr, nranks, commranks
        self.me = tr.rank
        self.sp = {}                  # event index -> SP
        self.sev = collections.defaultdict(lambda: collections.defaultdict(float))
        self.collinfo = {}
        self.cseq = collections.Counter()
        self.initEnd = self.finEnd = None

    def grank(self, comm, local): return self.commranks[comm][local]
    def lrank(self, comm, glob): return self.commranks[comm].index(glob)

    def coll(self, comm, val, fn, tag):
        self.cseq[(tag, comm)] += 1
        members = self.commranks[comm]
        key = (tag, comm, self.cseq[(tag, comm)])
        return ('coll', key, members, self.lrank(comm, self.me), val, fn)

    def add(self, metric, cpid, v):
        self.sev[metric][cpid] += v

    def addsp(self, i, sp):
        if i not in self.sp:
            self.sp[i] = sp

    # ---------------------------------------------------------- main replay
    def main(self):
        tr = self.tr
        max_idle, ls_recv, ls_leave_send = 0.0, None, None
        self.ls_set = set()
        for e in tr.ev:
            i, k = e['i'], e['kind']
            if k == 'LEAVE':
                r = e['region']
                if self.initEnd is None and r in ('MPI_Init', 'MPI_Init_thread'):
                    self.initEnd = i
                elif self.finEnd is None and r == 'MPI_Finalize':
                    self.finEnd = i
                if i in (self.initEnd, self.finEnd):
                    my = (tr.t(tr.enterptr(i)), self.me)
                    W = self.commranks[1]
                    latest = yield self.coll(1, my, lambda v: {r_: maxloc(v) for r_ in v}, 'init')
                    ee = yield self.coll(1, (e['t'], self.me), lambda v: {r_: minloc(v) for r_ in v}, 'init')
                    E = e['t']
                    lb = min(latest[0], E)
                    eet = max(ee[0], lb)
                    compl = max(0.0, E - eet)
                    idle = 0.0 if i == self.initEnd else max(0.0, lb - my[0])
                    self.collinfo[i] = dict(my=my, latest=latest)
                    self.addsp(i, SP(idle, compl, E - tr.t(tr.enterptr(i)), set(range(self.n))))
                # multi-wait LS at leave
                if max_idle > 0 and wait_multi(tr.region(i)):
                    self.add('mpi_latesender', e['cpid'], max_idle)
                    compl = max(0.0, e['t'] - ls_leave_send) if e['t'] > ls_leave_send else 0.0
                    src = self.grank(tr.ev[ls_recv]['comm'], tr.ev[ls_recv]['peer'])
                    self.addsp(ls_recv, SP(max_idle, compl, tr.t(tr.leaveptr(ls_recv)) - tr.t(tr.enterptr(ls_recv)), {src}))
                max_idle = 0.0
            elif k in ('SEND', 'SENDREQ'):
                if not is_mpi(tr.region(i)):
                    continue
                dst = self.grank(e['comm'], e['peer'])
                payload = dict(t=e['t'], enter=tr.t(tr.enterptr(i)), leave=tr.t(tr.leaveptr(i)))
                yield ('send', ('main', e['comm'], self.me, dst, e['tag']), payload)
            elif k in ('RECV', 'RECVCMP'):
                if not is_mpi(tr.region(i)):
                    continue
                src = self.grank(e['comm'], e['peer'])
                s = yield ('recv', ('main', e['comm'], src, self.me, e['tag']))
                reg = tr.region(i)
                if testx(reg):
                    continue
                lr = tr.t(tr.leaveptr(i))
                mt = min(s['enter'], lr)
                idle = mt - tr.t(tr.enterptr(i))
                if idle > 0:
                    if wait_multi(reg):
                        if idle > max_idle:
                            max_idle, ls_recv, ls_leave_send = idle, i, s['leave']
                            self.ls_set.add(tr.enterptr(i))
                    else:
                        self.add('mpi_latesender', e['cpid'], idle)
                        compl = lr - s['leave'] if lr > s['leave'] else 0.0
                        self.addsp(i, SP(idle, compl, lr - tr.t(tr.enterptr(i)), {src}))
            elif k == 'CEND':
                yield from self.main_coll(e)

    def main_coll(self, e):
        tr, i = self.tr, e['i']
        cls = COLLCLASS.get(e['op'])
        comm = e['comm']
        if cls is None or len(self.commranks[comm]) == 1:
            return
        me_l = self.lrank(comm, self.me)
        my = (tr.t(e['begin']), me_l)
        E = e['t']
        allmax = lambda v: {r_: maxloc(v) for r_ in v}
        allmin = lambda v: {r_: minloc(v) for r_ in v}
        bcast = lambda root: (lambda v: {r_: v[root] for r_ in v})
        ci = dict(my=my)
        sync, idle, compl = False, 0.0, 0.0
        sent, recvd = e['sent'], e['recvd']
        ranks = None
        if cls == 'BAR':
            latest = yield self.coll(comm, my, allmax, 'c')
            ee = yield self.coll(comm, (E, me_l), allmin, 'c')
            sync = True
            lb = min(latest[0], E); idle = max(0.0, lb - my[0]); compl = max(0.0, E - max(ee[0], lb))
            ci['latest'] = latest
            ranks = set(self.commranks[comm])
            self.add('mpi_barrier_wait', e['cpid'], idle) if idle > 0 else None
        elif cls == 'N2N':
            if sent == 0 and recvd == 0:
                return
            latest = yield self.coll(comm, my, allmax, 'c')
            ee = yield self.coll(comm, (E, me_l), allmin, 'c')
            if ee[0] > latest[0]:
                sync = True
            else:
                latest = yield self.coll(comm, (my[0] if sent else -INF, me_l), allmax, 'c')
                sync = (recvd > 0 and my[0] < latest[0]) or (sent > 0 and me_l == latest[1])
                ee = yield self.coll(comm, (E if sync else INF, me_l), allmin, 'c')
            if sync:
                lb = min(latest[0], E); idle = max(0.0, lb - my[0]); compl = max(0.0, E - max(ee[0], lb))
            ci['latest'] = latest
            bits = yield self.coll(comm, sync, lambda v: {r_: {k_ for k_, x in v.items() if x} for r_ in v}, 'c')
            ranks = {self.grank(comm, x) for x in bits}
        elif cls == '12N':
            rs = yield self.coll(comm, sent, bcast(e['root']), 'c')
            if rs == 0:
                return
            root = yield self.coll(comm, my, bcast(e['root']), 'c')
            waits = recvd > 0 and my[0] < root[0]
            ee = yield self.coll(comm, (E if waits else INF, me_l), allmin, 'c')
            sync = waits or (root[1] == me_l and ee[0] < INF)
            if sync:
                rb = min(root[0], E); idle = max(0.0, rb - my[0]); compl = max(0.0, E - max(ee[0], rb))
            ci['root'] = root
            bits = yield self.coll(comm, sync and me_l != root[1], lambda v: {r_: {k_ for k_, x in v.items() if x} for r_ in v}, 'c')
            if me_l == root[1]:
                ranks = {self.grank(comm, x) for x in bits}
            else:
                ranks = {self.grank(comm, root[1])}
        elif cls == 'N21':
            rr = yield self.coll(comm, recvd, bcast(e['root']), 'c')
            if rr == 0:
                return
            root = yield self.coll(comm, my, bcast(e['root']), 'c')
            latest = yield self.coll(comm, (my[0] if sent else -INF, me_l), allmax, 'c')
            sync = root[0] < latest[0] and (me_l == root[1] or me_l == latest[1])
            ee = yield self.coll(comm, (E if sync else INF, me_l), allmin, 'c')
            if sync:
                lb = min(latest[0], E); idle = max(0.0, lb - my[0]); compl = max(0.0, E - max(ee[0], lb))
            ci['root'], ci['latest'] = root, latest
            ranks = {self.grank(comm, latest[1] if me_l == root[1] else root[1])}
        elif cls == 'SCAN':
            if sent == 0 and recvd == 0:
                return
            # MPI_Scan(MAXLOC); not a synchpoint in the reference
            ci['scan'] = True
        ci['cls'] = cls
        self.collinfo[i] = ci
        if sync and cls != 'SCAN':
            en, lv = tr.enterptr(i), tr.leaveptr(i)
            self.addsp(i, SP(idle, compl, tr.t(lv) - tr.t(en), ranks))

    # ---------------------------------------------------------- bws
    def bws(self):
        tr = self.tr
        mw = {}   # multiwait: enter idx -> [count, maxevent, maxidle, maxcmpl]
        for e in reversed(tr.ev):
            i, k = e['i'], e['kind']
            if k == 'SENDCMP':
                en = tr.enterptr(i)
                if wait_multi(tr.region(i)) and en not in self.ls_set:
                    if en in mw:
                        mw[en][0] += 1
                    else:
                        mw[en] = [1, None, 0.0, 0.0]
            if k in ('RECV', 'RECVCMP'):
                if not is_mpi(tr.region(i)):
                    continue
                sp = self.sp.get(i)
                rq = tr.request(i)
                payload = dict(lsflag=(sp is not None and sp.wait > 0), leave_sync=tr.t(tr.leaveptr(i)),
                               enter_rq=tr.t(tr.enterptr(rq)), leave_rq=tr.t(tr.leaveptr(rq)))
                src = self.grank(e['comm'], e['peer'])
                yield ('send', ('bws', e['comm'], self.me, src, e['tag']), payload)
            elif k in ('SEND', 'SENDREQ'):
                if not is_mpi(tr.region(i)):
                    continue
                dst = self.grank(e['comm'], e['peer'])
                r = yield ('recv', ('bws', e['comm'], dst, self.me, e['tag']))
                if r['lsflag']:
                    ls, ll = tr.t(tr.leaveptr(i)), r['leave_sync']
                    self.addsp(i, SP(0.0, ls - ll if ls > ll else 0.0, ls - tr.t(tr.enterptr(i)), {dst}))
                c = tr.completion(i)
                ens, lvs = tr.t(tr.enterptr(c)), tr.t(tr.leaveptr(c))
                idle = 0.0 if lvs <= r['enter_rq'] else r['enter_rq'] - ens
                cmpl = 0.0
                if idle > 0:
                    cmpl = 0.0 if lvs > r['leave_rq'] else lvs - r['leave_rq']
                reg = tr.region(c)
                if block_send(reg) or wait_single(reg):
                    if idle > 0:
                        self.add('mpi_latereceiver', tr.cpid(tr.enterptr(c)), idle)
                        self.lr_sp(i, idle, cmpl)
                elif wait_multi(reg):
                    en = tr.enterptr(c)
                    if en not in mw:
                        continue
                    m = mw[en]
                    if idle > m[2]:
                        m[2], m[3], m[1] = idle, cmpl, i
                    m[0] -= 1
                    if m[0] == 0:
                        if m[2] > 0:
                            self.add('mpi_latereceiver', tr.cpid(en), m[2])
                            self.lr_sp(m[1], m[2], m[3])
                        del mw[en]

    def lr_sp(self, send, idle, cmpl):
        tr = self.tr
        c = tr.completion(send)
        e = tr.ev[send]
        self.addsp(c, SP(idle, cmpl, tr.t(tr.leaveptr(c)) - tr.t(tr.enterptr(c)), {self.grank(e['comm'], e['peer'])}))

    # ---------------------------------------------------------- fws
    def fws(self):
        tr = self.tr
        self.cache = []       # list of (cpid, time)
        self.cidx = {}        # synchpoint event -> index into cache
        tmap = {}
        last = 0.0

        def save(i):
            for k_ in sorted(tmap):
                self.cache.append((k_, tmap[k_]))
            self.cidx[i] = len(self.cache)
            tmap.clear()

        for e in tr.ev:
            i, k = e['i'], e['kind']
            if k == 'ENTER':
                if len(e['cp']) > 1:
                    pid = self.cpids[e['cp'][:-1]]
                    tmap[pid] = tmap.get(pid, 0.0) + (e['t'] - last)
                last = e['t']
            elif k in ('SEND', 'SENDREQ'):
                if is_mpi(tr.region(i)):
                    c = tr.completion(i)
                    sp = self.sp.get(c)
                    dst = self.grank(e['comm'], e['peer'])
                    yield ('send', ('fws', e['comm'], self.me, dst, e['tag']),
                           dict(lrflag=(sp is not None and sp.wait > 0), leave_cmp=tr.t(tr.leaveptr(c))))
                if i in self.sp:
                    save(i)
            elif k in ('RECV', 'RECVCMP'):
                if is_mpi(tr.region(i)):
                    src = self.grank(e['comm'], e['peer'])
                    s = yield ('recv', ('fws', e['comm'], src, self.me, e['tag']))
                    if s['lrflag']:
                        rq = tr.request(i)
                        lq = tr.t(tr.leaveptr(rq))
                        self.addsp(rq, SP(0.0, lq - s['leave_cmp'] if lq > s['leave_cmp'] else 0.0,
                                          lq - tr.t(tr.enterptr(rq)), {src}))
                if i in self.sp:
                    save(i)
                if k == 'RECVCMP':
                    rq = tr.request(i)
                    if rq not in self.sp:
                        self.cidx.pop(rq, None)
            elif k == 'SENDCMP':
                if i in self.sp:
                    save(i)
            elif k == 'CEND':
                if i in self.sp:
                    save(i)
            elif k == 'RECVREQ':
                save(i)
            elif k == 'LEAVE':
                if i in (self.initEnd, self.finEnd) and i in self.sp:
                    save(i)
                tmap[e['cpid']] = tmap.get(e['cpid'], 0.0) + (e['t'] - last)
                last = e['t']
        for k_ in sorted(tmap):
            self.cache.append((k_, tmap[k_]))

    # helpers on synchpoints / tmaps
    def spkeys(self):
        return sorted(self.sp)

    def runtimes(self, frm, to):
        b = self.cidx[frm] if frm is not None else 0
        en = self.cidx[to] if to is not None else len(self.cache)
        m = {}
        for cp, t in self.cache[b:en]:
            m[cp] = m.get(cp, 0.0) + t
        return m

    def prev_sp(self, i, rank):
        for j in sorted((x for x in self.sp if x < i), reverse=True):
            if rank in self.sp[j].ranks:
                return j
        raise RuntimeError('no prev sp')

    def between(self, frm, to):
        return [j for j in sorted(self.sp) if (frm is None or j > frm) and (to is None or j < to)]

    def waitmap(self, sps):
        m, s = {}, 0.0
        for j in sps:
            w = self.sp[j].wait
            if w > 0:
                cp = self.tr.cpid(j)
                m[cp] = m.get(cp, 0.0) + w
                s += w
        return m, s

    @staticmethod
    def diff(l, r):
        m, s = {}, 0.0
        for k_ in sorted(l):
            d = l[k_] - r.get(k_, 0.0)
            if d > 0.0:
                m[k_] = d
                s += d
        return m, s

    def prune(self, tmap, wmap, frm):
        m, s = self.diff(tmap, wmap)
        if frm is not None:
            sp = self.sp.get(frm)
            tot, cmpl = (sp.total, sp.compl) if sp else (0.0, 0.0)
            cp = self.tr.cpid(frm)
            x = m.get(cp, 0.0)
            m[cp] = max(x - tot + cmpl, 0.0)
            s -= min(tot - cmpl, x)
        return m, s

    def delay_tmap(self, i, rank):
        p = self.prev_sp(i, rank)
        w, _ = self.waitmap(self.between(p, i))
        m, _ = self.prune(self.runtimes(p, i), w, p)
        return m

    def sp_times(self, frm, to):
        w, ws = self.waitmap(self.between(frm, to))
        m, _ = self.prune(self.runtimes(frm, to), w, frm)
        return m, ws

    def group_prev(self, i, comm, rank):
        remaining = set(self.commranks[comm]) - {rank}
        spmap = {}
        last = None
        for j in sorted((x for x in self.sp if x < i), reverse=True):
            if not remaining:
                break
            last = j
            rs = self.sp[j].ranks
            if rs >= remaining:
                remaining = set()
            else:
                for x in remaining & rs:
                    spmap[self.lrank(comm, x)] = j
                remaining -= rs
        assert not remaining
        return last, spmap

    # ---------------------------------------------------------- bwc
    TYPES = ('LS', 'LR', 'BAR', 'N2N', '12N', 'N21')

    def bwc(self):
        tr = self.tr
        self.oncp, self.endev = False, None
        self.cpsev = collections.defaultdict(float)
        self.cost = {t: collections.defaultdict(float) for t in self.TYPES}
        self.pw_ind_ls, self.pw_ind_lr, self.pw_prop = {}, {}, {}
        LT = {'LS': 'delay_latesender_longterm', 'LR': 'delay_latereceiver_longterm',
              'BAR': 'delay_barrier_longterm', 'N2N': 'delay_n2n_longterm',
              '12N': 'delay_12n_longterm', 'N21': 'delay_n21_longterm'}
        ST = {'BAR': 'delay_barrier', 'N2N': 'delay_n2n', '12N': 'delay_12n', 'N21': 'delay_n21'}
        self.LT = LT

        def update_path(frm):
            tm = self.runtimes(frm, self.endev)
            for cp in sorted(tm):
                self.cpsev[cp] += tm[cp]
            sp = self.sp.get(frm)
            w = sp.wait if sp else 0.0
            cp = tr.cpid(frm)
            self.cpsev[cp] -= min(w, tm.get(cp, 0.0))

        for e in reversed(tr.ev):
            i, k = e['i'], e['kind']
            if k == 'LEAVE':
                if i == self.finEnd:
                    ci = self.collinfo[i]
                    if ci['my'][1] == ci['latest'][1]:
                        self.oncp, self.endev = True, i
                elif i == self.initEnd:
                    if self.oncp:
                        update_path(i)
            if k in ('SEND', 'SENDREQ') and is_mpi(tr.region(i)):
                dst = self.grank(e['comm'], e['peer'])
                r = yield ('recv', ('bwc', e['comm'], dst, self.me, e['tag']))
                if i in self.sp:
                    # critical path
                    if r['cp']:
                        self.oncp, self.endev = True, i
                    rwait = r['wait']
                    if rwait > 0:
                        p = self.prev_sp(i, dst)
                        props = self.between(p, i)
                        wm, ws = self.waitmap(props)
                        lm, _ = self.prune(self.runtimes(p, i), wm, p)
                        dm, ds = self.diff(lm, r['tmap'])
                        self.p2p_delay('LS', i, rwait, dm, ds, ws, props, r['rcost'])
            if k in ('SEND', 'SENDCMP') and i in self.sp and self.sp[i].wait > 0:
                # LR send completion: PRE_INV_SENDCMP
                flag = False
                if self.oncp:
                    update_path(i)
                    flag, self.oncp = True, False
                rq = tr.request(i)
                dst = self.grank(tr.ev[rq]['comm'], tr.ev[rq]['peer'])
                tm = self.delay_tmap(i, dst)
                payload = dict(cp=flag, wait=self.sp[i].wait, tmap=tm,
                               rcost={t: self.cost[t].get(i, 0.0) for t in self.TYPES})
                yield ('send', ('bwcinv', tr.ev[rq]['comm'], self.me, dst, tr.ev[rq]['tag']), payload)
            if k in ('RECV', 'RECVCMP') and is_mpi(tr.region(i)):
                flag = False
                sp = self.sp.get(i)
                if self.oncp and sp is not None and sp.wait > 0:
                    update_path(i)
                    flag, self.oncp = True, False
                wait = sp.wait if sp else 0.0
                src = self.grank(e['comm'], e['peer'])
                tm = self.delay_tmap(i, src) if wait > 0 else {}
                payload = dict(cp=flag, wait=wait, tmap=tm,
                               rcost={t: self.cost[t].get(i, 0.0) for t in self.TYPES})
                yield ('send', ('bwc', e['comm'], self.me, src, e['tag']), payload)
            if k in ('RECV', 'RECVREQ') and i in self.sp and not self.sp[i].wait > 0:
                c = tr.completion(i)
                src = self.grank(tr.ev[c]['comm'], tr.ev[c]['peer'])
                r = yield ('recv', ('bwcinv', tr.ev[c]['comm'], src, self.me, tr.ev[c]['tag']))
                if r['cp']:
                    self.oncp, self.endev = True, i
                rwait = r['wait']
                if rwait > 0:
                    p = self.prev_sp(i, src)
                    props = self.between(p, i)
                    wm, ws = self.waitmap(props)
                    lm, _ = self.prune(self.runtimes(p, i), wm, p)
                    dm, ds = self.diff(lm, r['tmap'])
                    self.p2p_delay('LR', i, rwait, dm, ds, ws, props, r['rcost'])
            if k == 'CEND' and i in self.collinfo:
                ci = self.collinfo[i]
                cls = ci['cls']
                if cls == 'SCAN':
                    continue
                comm = e['comm']
                delayer = ci['root'] if cls == '12N' else ci['latest']
                # critical path
                inflag = 0
                sp = self.sp.get(i)
                if self.oncp and sp is not None and sp.wait > 0:
                    update_path(i)
                    inflag, self.oncp = 1, False
                out = yield self.coll(comm, inflag, lambda v: {r_: max(v.values()) for r_ in v}, 'bwc')
                if out and ci['my'][1] == delayer[1]:
                    self.oncp, self.endev = True, i
                # delay
                yield from self.coll_delay(e, ci, delayer, cls, ST, LT)
        # FINISHED is handled by finish_cp (needs all ranks)

    def p2p_delay(self, typ, i, rwait, dm, ds, ws, props, rcost):
        tr = self.tr
        denom = ds + ws
        scale = min(rwait / denom, 1.0) if denom > 0 else 0.0
        st = 'delay_latesender' if typ == 'LS' else 'delay_latereceiver'
        if ds > 0:
            for cp in dm:
                self.add(st, cp, scale * dm[cp])
        if not denom > 0:
            return
        scale_w = min(rwait / denom, 1.0)
        for t in self.TYPES:
            sc = rcost[t] / denom
            if t == typ:
                if sc > 0:
                    for cp in dm:
                        self.add(self.LT[t], cp, sc * dm[cp])
                self.addcosts(t, props, scale_w + sc)
            else:
                if not sc > 0:
                    continue
                for cp in dm:
                    self.add(self.LT[t], cp, sc * dm[cp])
                self.addcosts(t, props, sc)
        # indirect & propagating
        if ws > 0:
            if typ == 'LS':
                self.pw_ind_ls[i] = self.pw_ind_ls.get(i, 0.0) + scale_w * ws
            else:
                self.pw_ind_lr[i] = self.pw_ind_lr.get(i, 0.0) + scale_w * ws
            if scale_w > 0:
                for j in props:
                    w = self.sp[j].wait
                    if w > 0:
                        self.pw_prop[j] = max(scale_w * w, self.pw_prop.get(j, -INF))

    def addcosts(self, t, props, scale):
        if not scale > 0:
            return
        for j in props:
            w = self.sp[j].wait
            if w > 0:
                self.cost[t][j] += scale * w

    def addcosts_map(self, t, props, scales):
        if not props or not scales:
            return
        keys = sorted(scales)
        scale = scales[keys[0]]
        for j in props:
            if j in scales:
                scale = scales[j]
            w = self.sp[j].wait
            if scale > 0 and w > 0:
                self.cost[t][j] += scale * w

    def coll_delay(self, e, ci, delayer, cls, ST, LT):
        tr, i, comm = self.tr, e['i'], e['comm']
        me_l = ci['my'][1]
        root = delayer[1]
        issp = i in self.sp
        prevSps, group, prevTm, local = {}, ({}, 0.0), {}, {}
        prevsp = None
        props = []
        if issp:
            if me_l == root:
                prevsp, prevSps = self.group_prev(i, comm, self.me)
                props = self.between(prevsp, i)
                group = self.sp_times(prevsp, i)
                for r_, ev_ in prevSps.items():
                    prevTm[r_] = self.sp_times(ev_, i)
                if prevSps:
                    DBG['prevSps'] += 1
                    if prevsp in prevSps.values(): DBG['prevSps_eq_group'] += 1
            else:
                local = self.delay_tmap(i, self.grank(comm, root))
        # transfer
        if me_l == root:
            cpvec = sorted(group[0])
            tvec = [group[0][c] for c in cpvec]
            data = dict(cp=cpvec, t=tvec, pw=group[1],
                        per={r_: (tm[1], [tm[0].get(c, 0.0) for c in cpvec]) for r_, tm in prevTm.items()})
        else:
            data = None
        got = yield self.coll(comm, data, lambda v: {r_: v[root] for r_ in v}, 'bwc')
        cpvec, tvec, pw = got['cp'], list(got['t']), got['pw']
        isprev = me_l in got['per']
        if me_l != root and isprev:
            pw, tvec = got['per'][me_l][0], list(got['per'][me_l][1])
        # local delay
        dsum = 0.0
        if issp:
            for n, c in enumerate(cpvec):
                d = max(tvec[n] - local.get(c, 0.0), 0.0)
                tvec[n] = d
                dsum += d
        else:
            tvec = [0.0] * len(cpvec)
        spi = self.sp.get(i)
        inputs = {t: self.cost[t].get(i, 0.0) for t in self.TYPES}
        inputs['WAIT'] = max(spi.wait if spi else 0.0, 0.0)
        scales = {}
        colld = {}
        for key in sorted(inputs):
            scale = dsum
            if scale + pw > 0:
                scale = inputs[key] / (scale + pw)
            vec = [x * scale for x in tvec]
            summed = yield self.coll(comm, vec, lambda v: {r_: [sum(col) for col in zip(*[v[q] for q in sorted(v)])] if v else [] for r_ in v}, 'bwc')
            if me_l == root and issp:
                colld[key] = ({cpvec[n]: summed[n] for n in range(len(cpvec))}, sum(summed))
            scales[key] = scale
        # CalculateScales: sums over ranks of the scales (root also gets per-prev-rank values)
        sums = yield self.coll(comm, (scales, isprev), lambda v: {r_: v for r_ in v}, 'bwc')
        if me_l != root:
            return
        sumscales = {}
        for key in scales:
            tot = sum(sums[q][0][key] for q in sorted(sums))
            scinc = collections.defaultdict(float)
            for r_, ev_ in sorted(prevSps.items()):
                s = sums[r_][0][key]
                tot -= s
                scinc[ev_] += s
            ss = {prevsp: tot}
            for ev_ in sorted(scinc):
                if ev_ not in ss:
                    ss[ev_] = tot
                tot += scinc[ev_]
            sumscales[key] = ss
        # severities on the delayer
        w = colld.get('WAIT')
        if w and w[1] > 0:
            for c, v in w[0].items():
                self.add(ST[cls], c, v)
        for t in self.TYPES:
            d = colld.get(t)
            if d and d[1] > 0:
                for c, v in d[0].items():
                    self.add(LT[t], c, v)
            self.addcosts_map(t, props, sumscales.get(t, {}))
            if t == cls:
                self.addcosts_map(t, props, sumscales.get('WAIT', {}))

    # ---------------------------------------------------------- fwc
    def fwc(self):
        tr = self.tr
        for e in tr.ev:
            i, k = e['i'], e['kind']
            if k in ('SEND', 'SENDREQ') and is_mpi(tr.region(i)):
                dst = self.grank(e['comm'], e['peer'])
                yield ('send', ('fwc', e['comm'], self.me, dst, e['tag']), self.pw_ind_ls.get(i, 0.0))
            if k in ('RECV', 'RECVCMP') and is_mpi(tr.region(i)):
                src = self.grank(e['comm'], e['peer'])
                pw = yield ('recv', ('fwc', e['comm'], src, self.me, e['tag']))
                if pw > 0.0:
                    self.add('mpi_wait_indirect_latesender', e['cpid'], pw)
            if k in ('SEND', 'SENDCMP') and i in self.sp and self.sp[i].wait > 0:
                rq = tr.request(i)
                dst = self.grank(tr.ev[rq]['comm'], tr.ev[rq]['peer'])
                pw = yield ('recv', ('fwcinv', tr.ev[rq]['comm'], dst, self.me, tr.ev[rq]['tag']))
                if pw > 0.0:
                    self.add('mpi_wait_indirect_latereceiver', e['cpid'], pw)
            if k in ('RECV', 'RECVREQ') and i in self.sp and not self.sp[i].wait > 0:
                c = tr.completion(i)
                src = self.grank(tr.ev[c]['comm'], tr.ev[c]['peer'])
                yield ('send', ('fwcinv', tr.ev[c]['comm'], self.me, src, tr.ev[c]['tag']), self.pw_ind_lr.get(i, 0.0))
            if k in ('RECV', 'RECVCMP') and i in self.pw_prop:
                self.add('mpi_wait_propagating_ls', e['cpid'], self.pw_prop[i])
            if k in ('SEND', 'SENDCMP') and i in self.pw_prop:
                self.add('mpi_wait_propagating_lr', e['cpid'], self.pw_prop[i])


def finish_cp(ranks, ncp):
    lcp = {r: [0.0] * ncp for r in ranks}
    for r, R in ranks.items():
        for cp, v in R.cpsev.items():
            lcp[r][cp] = v
    gcp = [sum(lcp[r][c] for r in sorted(ranks)) for c in range(ncp)]
    lt = {}
    for r, R in ranks.items():
        l = [0.0] * ncp
        tm = R.runtimes(None, None)
        wm, _ = R.waitmap(sorted(R.sp))
        for cp in sorted(tm):
            l[cp] += tm[cp]
            if cp in wm:
                l[cp] -= min(tm[cp], wm[cp])
        lt[r] = l
    for r, R in ranks.items():
        for c in range(ncp):
            R.sev['critical_path'][c] = lcp[r][c] if lcp[r][c] != 0 else 0.0
            if gcp[c] > 0:
                R.sev['critical_path_activities'][c] = min(gcp[c], lt[r][c])
            if lt[r][c] - gcp[c] > 0:
                R.sev['non_critical_path_activities'][c] = lt[r][c] - gcp[c]
    # imbalance impact
    gimb = [0.0] * ncp
    for r in sorted(ranks):
        gl = sum(gcp); ll = sum(lt[r])
        exc = [max(gcp[c] - lt[r][c], 0.0) for c in range(ncp)]
        ae = sum(exc)
        if ae == 0: DBG['imb_nan'] += 1
        f = (gl - ll) / ae if ae != 0 else ((gl - ll) * INF if gl != ll else float('nan'))
        for c in range(ncp):
            gimb[c] += exc[c] * f
    phr = [0.0] * ncp
    for r in sorted(ranks):
        gl = sum(gcp); lp = 0.0
        hr = list(gcp)
        for c in range(ncp):
            if lt[r][c] > 0.0:
                lp += lt[r][c] + (hr[c] - min(lt[r][c], hr[c]))
                hr[c] = 0.0
        lh = sum(hr)
        if lh == 0: DBG['ipi_nan'] += 1
        f = (gl - lp) / lh if lh != 0 else ((gl - lp) * INF if gl != lp else float('nan'))
        for c in range(ncp):
            phr[c] += hr[c] * f
    for r, R in ranks.items():
        for c in range(ncp):
            if lcp[r][c] > 0:
                v = (lcp[r][c] / gcp[c]) * gimb[c]
                if v > 0:
                    R.sev['critical_imbalance_impact'][c] = v
                v = (lcp[r][c] / gcp[c]) * phr[c]
                if v > 0.0:
                    R.sev['inter_partition_imbalance'][c] += v


def run(tdir):
    raw, commranks = parse(tdir)
    cpids = {}
    trs = {r: Trace(r, raw[r], cpids) for r in sorted(raw)}
    n = len(trs)
    ranks = {r: Rank(trs[r], n, commranks) for r in trs}
    for R in ranks.values():
        R.cpids = cpids
    S = Sched()
    for stage in ('main', 'bws', 'fws', 'bwc', 'fwc'):
        S.run({r: getattr(R, stage)() for r, R in ranks.items()})
    finish_cp(ranks, len(cpids))
    names = {v: '/'.join(k) for k, v in cpids.items()}
    return ranks, names


def load_expected(tdir):
    exp = {}
    for ln in open(tdir + '/expected/scout.csv').read().splitlines()[1:]:
        m, cp, r, v = ln.rsplit(',', 3)[0].split(',', 1)[0], None, None, None
        parts = ln.split(',')
        m, v, r = parts[0], float(parts[-1]), int(parts[-2])
        cp = ','.join(parts[1:-2])
        exp[(m, cp, r)] = v
    return exp


METRICS = ['critical_path', 'critical_path_activities', 'non_critical_path_activities',
           'critical_imbalance_impact', 'inter_partition_imbalance',
           'delay_latesender', 'delay_latesender_longterm', 'delay_latereceiver', 'delay_latereceiver_longterm',
           'delay_barrier', 'delay_barrier_longterm', 'delay_n2n', 'delay_n2n_longterm',
           'delay_12n', 'delay_12n_longterm', 'delay_n21', 'delay_n21_longterm',
           'mpi_wait_indirect_latesender', 'mpi_wait_indirect_latereceiver',
           'mpi_wait_propagating_ls', 'mpi_wait_propagating_lr', 'mpi_latesender', 'mpi_latereceiver']

if __name__ == '__main__':
    tdir = sys.argv[1]
    want = sys.argv[2:] or METRICS
    ranks, names = run(tdir)
    got = {}
    for r, R in ranks.items():
        for m, d in R.sev.items():
            for c, v in d.items():
                if v != 0.0 and not (isinstance(v, float) and math.isnan(v)):
                    got[(m, names[c], r)] = v
    exp = load_expected(tdir)
    bad = 0
    keys = sorted(set(k for k in list(got) + list(exp) if k[0] in want))
    for k in keys:
        g, x = got.get(k, 0.0), exp.get(k, 0.0)
        ok = abs(g - x) <= 1e-9 * abs(x) + 1e-13
        if not ok:
            bad += 1
        if not ok or '-v' in sys.argv:
            print('%-4s %-32s %-55s %d got=%.17g exp=%.17g' % ('OK' if ok else 'BAD', k[0], k[1], k[2], g, x))
    print('%s: %d mismatches of %d %s' % (tdir, bad, len(keys), dict(DBG)))
