/* scout.html: the explorer and the charts of a scout report.
 *
 * The data is the JSON in #scout-data (combine/html.go writes it):
 * the call tree in preorder, the metric tree with each metric's
 * call-path exclusive sums over all locations, and per-location rows
 * of metric × call path. Values are metric inclusive (a metric's value
 * contains its sub-metrics') and call-path exclusive, as in the CUBE
 * report and the CSV; inclusive values and a metric's own part are
 * computed here. Arrays of numbers are base64 of little-endian doubles
 * (or 32-bit unsigned integers). The Cartesian topologies list their
 * cells: a rank (or, in a topology of threads, a rank's thread) and its
 * coordinates.
 */
(function () {
  'use strict';

  const $ = (id) => document.getElementById(id);
  const D = JSON.parse($('scout-data').textContent);
  const C = D.callpaths.parent.length;
  const L = D.locations.length;
  const M = D.metrics.length;

  // --- decoding -------------------------------------------------------
  function bytes(s) {
    const bin = atob(s);
    const u = new Uint8Array(bin.length);
    for (let i = 0; i < bin.length; i++) u[i] = bin.charCodeAt(i);
    return new DataView(u.buffer);
  }
  function f64s(s) {
    if (!s) return new Float64Array(0);
    const dv = bytes(s);
    const a = new Float64Array(dv.byteLength / 8);
    for (let i = 0; i < a.length; i++) a[i] = dv.getFloat64(8 * i, true);
    return a;
  }
  function u32s(s) {
    if (!s) return new Uint32Array(0);
    const dv = bytes(s);
    const a = new Uint32Array(dv.byteLength / 4);
    for (let i = 0; i < a.length; i++) a[i] = dv.getUint32(4 * i, true);
    return a;
  }

  // --- the call tree (preorder: a subtree is the range [c, end[c])) ----
  const parent = D.callpaths.parent;
  const names = D.callpaths.name;
  const keyElem = D.callpaths.key || {};
  const synth = new Set(D.callpaths.synth || []);
  const children = Array.from({ length: C }, () => []);
  const roots = [];
  const depth = new Int32Array(C);
  const end = new Int32Array(C);
  const elem = (c) => (keyElem[c] !== undefined ? keyElem[c] : names[c]);
  for (let c = 0; c < C; c++) {
    const p = parent[c];
    if (p < 0) {
      roots.push(c);
    } else {
      children[p].push(c);
      depth[c] = depth[p] + 1;
    }
  }
  for (let c = C - 1; c >= 0; c--) {
    end[c] = Math.max(end[c], c + 1);
    if (parent[c] >= 0) end[parent[c]] = Math.max(end[parent[c]], end[c]);
  }
  // A call path's key (its elements from the root, joined by '/') is
  // made when needed: all keys of a deep tree take the square of its
  // depth.
  function keyOf(c) {
    const parts = [];
    for (; c >= 0; c = parent[c]) parts.push(elem(c));
    return parts.reverse().join('/');
  }
  // byKey finds a call path by its key (elements split at the slashes
  // that the escaping left alone), or undefined.
  function byKey(key) {
    const parts = [];
    let cur = '';
    for (let i = 0; i < key.length; i++) {
      if (key[i] === '\\' && i + 1 < key.length) { cur += key[i] + key[i + 1]; i++; }
      else if (key[i] === '/') { parts.push(cur); cur = ''; }
      else cur += key[i];
    }
    parts.push(cur);
    let level = roots;
    let found;
    for (const p of parts) {
      found = level.find((c) => elem(c) === p);
      if (found === undefined) return undefined;
      level = children[found];
    }
    return found;
  }

  // --- the metric tree ------------------------------------------------
  const metrics = D.metrics;
  const mchildren = Array.from({ length: M }, () => []);
  const mroots = [];
  metrics.forEach((m, i) => (m.parent < 0 ? mroots : mchildren[m.parent]).push(i));
  const byUnique = new Map(metrics.map((m, i) => [m.unique, i]));
  const rootOf = (m) => { while (metrics[m].parent >= 0) m = metrics[m].parent; return m; };
  const exclSums = metrics.map((m) => {
    const a = new Float64Array(C);
    if (!m.sums) return a;
    const v = f64s(m.sums);
    if (m.index) {
      const idx = u32s(m.index);
      for (let i = 0; i < idx.length; i++) a[idx[i]] = v[i];
    } else {
      a.set(v);
    }
    return a;
  });
  const totals = exclSums.map((a) => a.reduce((s, x) => s + x, 0));
  // snap: a metric's own part (its value less its sub-metrics') that is
  // rounding noise of the subtraction is zero.
  const snap = (x, of) => (Math.abs(x) <= 1e-12 * Math.abs(of) ? 0 : x);
  const ownTotal = (m) => snap(mchildren[m].reduce((s, k) => s - totals[k], totals[m]), totals[m]);
  const inclusive = (excl) => {
    const a = Float64Array.from(excl);
    for (let c = C - 1; c >= 0; c--) if (parent[c] >= 0) a[parent[c]] += a[c];
    return a;
  };
  const inclSums = new Map();
  const inclOf = (m) => { if (!inclSums.has(m)) inclSums.set(m, inclusive(exclSums[m])); return inclSums.get(m); };

  // --- per-location rows ----------------------------------------------
  const rows = new Map();
  for (const r of D.rows) rows.set(r.m + ',' + r.c + ',' + (r.i ? 1 : 0), f64s(r.v));
  const zeros = new Float64Array(L);
  const rowCache = new Map();
  // rowOf returns metric m's values by location at call path c (its
  // subtree with incl), or null when the page does not hold them.
  function rowOf(m, c, incl) {
    const k = m + ',' + c + ',' + (incl ? 1 : 0);
    if (rowCache.has(k)) return rowCache.get(k);
    let r = rows.get(k) || null;
    if (!r) {
      const mt = metrics[m];
      if (!incl) {
        if (mt.complete || !mt.stored || (mt.nonneg && exclSums[m][c] === 0)) r = zeros;
      } else if (end[c] === c + 1) {
        r = rowOf(m, c, false);
      } else if (!mt.stored || (mt.nonneg && inclOf(m)[c] === 0)) {
        r = zeros;
      } else {
        r = new Float64Array(L);
        for (let d = c; d < end[c] && r; d++) {
          const x = rowOf(m, d, false);
          if (!x) r = null;
          else for (let l = 0; l < L; l++) r[l] += x[l];
        }
      }
    }
    rowCache.set(k, r);
    return r;
  }
  // ownRow is metric m's own part (its value less its sub-metrics').
  function ownRow(m, c, incl) {
    const r = rowOf(m, c, incl);
    if (!r) return null;
    const out = Float64Array.from(r);
    for (const k of mchildren[m]) {
      const x = rowOf(k, c, incl);
      if (!x) return null;
      for (let l = 0; l < L; l++) out[l] -= x[l];
    }
    for (let l = 0; l < L; l++) out[l] = snap(out[l], r[l]);
    return out;
  }

  // --- formatting -----------------------------------------------------
  function g6(x) {
    if (x === 0) return '0';
    if (!isFinite(x)) return String(x);
    const s = x.toPrecision(6);
    let [mant, exp] = s.split('e');
    if (mant.includes('.')) mant = mant.replace(/0+$/, '').replace(/\.$/, '');
    return exp ? mant + 'e' + exp : mant;
  }
  const fmt = (x, m) => (metrics[m].integer ? String(Math.round(x)) : g6(x));
  const unitOf = (m) => (metrics[m].unit === 'sec' ? 's' : metrics[m].unit);
  function pct(x, base) {
    if (!base) return '';
    const p = (100 * x) / base;
    if (p === 0) return '0%';
    return (Math.abs(p) >= 1 ? p.toFixed(1) : p.toPrecision(2)) + '%';
  }
  function locName(l) {
    const [r, t] = D.locations[l].split('.');
    return t === undefined ? 'rank ' + r : 'rank ' + r + ' thread ' + t;
  }
  function el(tag, attrs, ...kids) {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (k === 'class') e.className = v;
      else if (k === 'text') e.textContent = v;
      else if (k.startsWith('data-') || k.startsWith('aria-') || k === 'role' || k === 'title' || k === 'tabindex') e.setAttribute(k, v);
      else e[k] = v;
    }
    for (const k of kids) if (k !== null && k !== undefined) e.append(k);
    return e;
  }
  // The base of the percentages: the total time for metrics in seconds,
  // else the total of the metric's root.
  const timeIdx = byUnique.has('time') ? byUnique.get('time') : -1;
  const pctBase = (m) => (metrics[m].unit === 'sec' && timeIdx >= 0 ? timeIdx : rootOf(m));

  // --- state ----------------------------------------------------------
  const state = {
    metric: timeIdx >= 0 ? timeIdx : (mroots[0] || 0),
    mopen: new Set(),
    cp: roots.length ? roots[0] : -1,
    open: new Set(),
    sort: 'tree',
    asc: false,
    query: '',
    rankIncl: true,
    commKind: 'bytes',
    row: null, // the values per location that the rank pane shows (null: not in the page)
    topo: 0, // the topology shown
    topoMaster: false, // a rank's value is its master thread's (else its threads' sum)
    topoSel: -1, // the cell clicked
    topoFromMin: false, // colours from the smallest value (else from 0)
  };
  // Open the roots, and chains of single children below them.
  for (const r of roots) {
    for (let c = r; c >= 0 && depth[c] < 4; c = children[c].length === 1 ? children[c][0] : -1) state.open.add(c);
  }
  const isOwn = (m) => state.mopen.has(m) && mchildren[m].length > 0;
  const cpCache = new Map();
  function cpValues(m) {
    const own = isOwn(m);
    const k = m + (own ? 'o' : 't');
    if (!cpCache.has(k)) {
      let excl = exclSums[m];
      if (own) {
        excl = Float64Array.from(excl);
        for (const ch of mchildren[m]) for (let c = 0; c < C; c++) excl[c] -= exclSums[ch][c];
        for (let c = 0; c < C; c++) excl[c] = snap(excl[c], exclSums[m][c]);
      }
      cpCache.set(k, { excl, incl: own ? inclusive(excl) : inclOf(m) });
    }
    return cpCache.get(k);
  }

  // --- the metric tree pane --------------------------------------------
  const mtree = $('metric-tree');
  // empty[m]: metric m and all below it are zero everywhere (hidden
  // unless asked for)
  const empty = new Uint8Array(M);
  for (let m = M - 1; m >= 0; m--) {
    empty[m] = exclSums[m].every((x) => x === 0) && mchildren[m].every((k) => empty[k]) ? 1 : 0;
  }
  const nEmpty = empty.reduce((s, x) => s + x, 0);
  const showEmpty = $('metric-empty');
  if (nEmpty === 0) showEmpty.parentElement.hidden = true;
  else showEmpty.nextSibling.textContent = ' show the ' + nEmpty + ' metrics without values';
  showEmpty.addEventListener('change', renderMetrics);
  function renderMetrics() {
    mtree.textContent = '';
    const add = (m, lvl) => {
      if (empty[m] && !showEmpty.checked && m !== state.metric) return;
      const has = mchildren[m].length > 0;
      const open = state.mopen.has(m);
      const v = isOwn(m) ? ownTotal(m) : totals[m];
      const mt = metrics[m];
      const row = el('div', {
        class: 'mrow' + (m === state.metric ? ' sel' : '') + (v === 0 ? ' zero' : ''),
        role: 'treeitem', tabindex: '0', 'aria-level': String(lvl + 1), 'aria-selected': String(m === state.metric),
        'data-metric': mt.unique, 'data-m': String(m), 'data-value': String(v), title: mt.descr || mt.display,
      },
      el('button', { class: 'tog', disabled: !has, text: open ? '▾' : '▸', 'aria-label': open ? 'collapse' : 'expand' }),
      el('span', { class: 'n', text: mt.display }),
      el('span', { class: 'v', text: fmt(v, m) + ' ' + unitOf(m) }),
      el('span', { class: 'p', text: pct(v, totals[pctBase(m)]) }));
      if (has) row.setAttribute('aria-expanded', String(open));
      row.style.paddingLeft = (0.2 + 1.1 * lvl) + 'em';
      mtree.append(row);
      if (open) for (const k of mchildren[m]) add(k, lvl + 1);
    };
    for (const m of mroots) add(m, 0);
  }
  mtree.addEventListener('click', (ev) => {
    const row = ev.target.closest('.mrow');
    if (!row) return;
    const m = Number(row.dataset.m);
    if (ev.target.closest('button.tog')) {
      if (state.mopen.has(m)) state.mopen.delete(m); else state.mopen.add(m);
    } else {
      state.metric = m;
    }
    renderAll();
  });
  mtree.addEventListener('keydown', (ev) => {
    const row = ev.target.closest('.mrow');
    if (!row || ev.key !== 'Enter') return;
    state.metric = Number(row.dataset.m);
    renderAll();
    const again = mtree.querySelector('.mrow[data-m="' + state.metric + '"]');
    if (again) again.focus();
  });

  // --- the call tree pane ------------------------------------------------
  const cpBody = document.querySelector('#cp-table tbody');
  const search = $('cp-search');
  function sortedKids(list, vals) {
    const out = list.slice();
    const dir = state.asc ? 1 : -1;
    switch (state.sort) {
      case 'name': out.sort((a, b) => dir * names[a].localeCompare(names[b]) || a - b); break;
      case 'incl': out.sort((a, b) => dir * (vals.incl[a] - vals.incl[b]) || a - b); break;
      case 'excl': out.sort((a, b) => dir * (vals.excl[a] - vals.excl[b]) || a - b); break;
    }
    return out;
  }
  function highlight(text, q) {
    const span = el('span', { class: 'nm' });
    if (!q) { span.textContent = text; return span; }
    const low = text.toLowerCase();
    let i = 0;
    for (let j = low.indexOf(q); j >= 0; j = low.indexOf(q, i)) {
      span.append(text.slice(i, j), el('mark', { text: text.slice(j, j + q.length) }));
      i = j + q.length;
    }
    span.append(text.slice(i));
    return span;
  }
  const maxRows = 5000;
  function renderCallTree() {
    const m = state.metric;
    const vals = cpValues(m);
    const base = totals[pctBase(m)];
    $('cp-metric').textContent = '· ' + metrics[m].display + (isOwn(m) ? ' (own part)' : '') + ' [' + unitOf(m) + ']';
    $('cp-pct-h').textContent = '% of ' + metrics[pctBase(m)].display;
    document.querySelectorAll('#cp-table th.sortable').forEach((th) => {
      th.classList.toggle('sorted', th.dataset.sort === state.sort && th.id !== 'cp-pct-h');
      th.classList.toggle('asc', state.asc);
    });
    const q = state.query.trim().toLowerCase();
    let show = null;
    let nmatch = 0;
    if (q) {
      show = new Uint8Array(C);
      // "a/b": a call path whose name has b, its parent's a
      const segs = q.split('/').filter((x) => x !== '');
      for (let c = 0; c < C; c++) {
        let ok = segs.length > 0;
        for (let i = segs.length - 1, d = c; ok && i >= 0; i--, d = parent[d]) {
          ok = d >= 0 && names[d].toLowerCase().includes(segs[i]);
        }
        if (ok) {
          show[c] = 1;
          nmatch++;
        }
      }
      for (let c = C - 1; c >= 0; c--) if (show[c] && parent[c] >= 0) show[parent[c]] = 1;
      $('cp-matches').textContent = nmatch + (nmatch === 1 ? ' match' : ' matches');
    } else {
      $('cp-matches').textContent = '';
    }
    const frag = document.createDocumentFragment();
    let n = 0;
    // depth first, with a stack: a deep tree would overflow the
    // script's own
    const stack = sortedKids(roots, vals).reverse();
    while (stack.length && n < maxRows) {
      const c = stack.pop();
      if (show && !show[c]) continue;
      n++;
      const kids = children[c];
      const open = show ? kids.some((k) => show[k]) : state.open.has(c);
      const tog = el('button', { class: 'tog', disabled: kids.length === 0, text: open ? '▾' : '▸', 'aria-label': open ? 'collapse' : 'expand' });
      const nameCell = el('td', { class: 'name' }, tog, highlight(names[c], q));
      nameCell.style.paddingLeft = (0.3 + 1.1 * depth[c]) + 'em';
      const share = base ? Math.max(0, Math.min(100, (100 * vals.incl[c]) / base)) : 0;
      const pctCell = el('td', { class: 'num pct', text: pct(vals.incl[c], base) });
      pctCell.style.background = 'linear-gradient(to right, var(--bar) ' + share + '%, transparent ' + share + '%)';
      const tr = el('tr', {
        class: (c === state.cp ? 'sel' : '') + (synth.has(c) ? ' synth' : ''),
        'data-cp': String(c), 'data-key': keyOf(c), 'aria-selected': String(c === state.cp),
      },
      nameCell,
      el('td', { class: 'num incl', 'data-value': String(vals.incl[c]), text: fmt(vals.incl[c], m) }),
      el('td', { class: 'num excl', 'data-value': String(vals.excl[c]), text: fmt(vals.excl[c], m) }),
      pctCell);
      if (kids.length) tr.setAttribute('aria-expanded', String(open));
      frag.append(tr);
      if (open) {
        const ks = sortedKids(kids, vals);
        for (let i = ks.length - 1; i >= 0; i--) stack.push(ks[i]);
      }
    }
    if (n >= maxRows) frag.append(el('tr', {}, el('td', { colSpan: 4, class: 'sub', text: 'Only the first ' + maxRows + ' rows are shown: search or collapse nodes to see others.' })));
    cpBody.textContent = '';
    cpBody.append(frag);
  }
  cpBody.addEventListener('click', (ev) => {
    const tr = ev.target.closest('tr[data-cp]');
    if (!tr) return;
    const c = Number(tr.dataset.cp);
    if (ev.target.closest('button.tog')) {
      if (state.open.has(c)) state.open.delete(c); else state.open.add(c);
      if (state.query) {
        // leaving the search: keep the tree opened where it was shown
        state.query = '';
        search.value = '';
        openTo(c);
        state.open.add(c);
      }
      renderCallTree();
      return;
    }
    state.cp = c;
    renderCallTree();
    renderRanks();
  });
  document.querySelectorAll('#cp-table th.sortable').forEach((th) => th.addEventListener('click', () => {
    const s = th.dataset.sort;
    if (state.sort === s) state.asc = !state.asc;
    else { state.sort = s; state.asc = s === 'name'; }
    renderCallTree();
  }));
  search.addEventListener('input', () => { state.query = search.value; renderCallTree(); });
  search.addEventListener('keydown', (ev) => {
    if (ev.key === 'Escape') { search.value = ''; state.query = ''; renderCallTree(); }
  });
  function openTo(c) {
    for (let p = parent[c]; p >= 0; p = parent[p]) state.open.add(p);
  }

  // --- the per-location pane --------------------------------------------
  let rankChart = null;
  // Charts are drawn at twice the screen's resolution at least, so that
  // they print sharply (on paper they are scaled as images).
  const dpr = Math.max(2, window.devicePixelRatio || 1);
  const hasThreads = D.locations.some((l) => l.includes('.'));
  function renderRanks() {
    const m = state.metric;
    const c = state.cp;
    const incl = state.rankIncl;
    const missing = $('rank-missing');
    const ids = ['stat-min', 'stat-min-at', 'stat-mean', 'stat-max', 'stat-max-at', 'stat-imb', 'stat-imb-pct'];
    if (c < 0) {
      state.row = null;
      renderTopo();
      return;
    }
    $('rank-title').textContent = '· ' + metrics[m].display + (isOwn(m) ? ' (own part)' : '') + ' in ' + names[c] + ' (' + (incl ? 'inclusive' : 'exclusive') + ')';
    const r = isOwn(m) ? ownRow(m, c, incl) : rowOf(m, c, incl);
    const table = document.querySelector('#rank-table tbody');
    if (!r || L === 0) {
      missing.hidden = false;
      missing.textContent = 'This page does not hold the values per location of this metric and call path (it keeps the most significant ' +
        D.rows.length + ' of ' + D.rowsTotal + '); scout.cubex has them.';
      ids.forEach((id) => { $(id).textContent = '–'; });
      table.textContent = '';
      if (rankChart) { rankChart.data.datasets[0].data = []; rankChart.update('none'); }
      state.row = null;
      renderTopo();
      return;
    }
    missing.hidden = true;
    let min = Infinity, max = -Infinity, at0 = 0, at1 = 0, sum = 0;
    for (let l = 0; l < L; l++) {
      const x = r[l];
      sum += x;
      if (x < min) { min = x; at0 = l; }
      if (x > max) { max = x; at1 = l; }
    }
    const mean = sum / L;
    const u = ' ' + unitOf(m);
    $('stat-min').textContent = fmt(min, m) + u;
    $('stat-min').dataset.value = String(min);
    $('stat-min-at').textContent = locName(at0);
    $('stat-mean').textContent = g6(mean) + u;
    $('stat-mean').dataset.value = String(mean);
    $('stat-max').textContent = fmt(max, m) + u;
    $('stat-max').dataset.value = String(max);
    $('stat-max-at').textContent = locName(at1);
    $('stat-imb').textContent = g6(max - mean) + u;
    $('stat-imb').dataset.value = String(max - mean);
    $('stat-imb').title = 'max − mean: what the slowest location spends beyond the average';
    $('stat-imb-pct').textContent = mean > 0 ? 'max/mean − 1 = ' + pct(max - mean, mean) : '';
    drawRankChart(r, at1);
    fillRankTable(r);
    state.row = r;
    renderTopo();
  }
  function fillRankTable(r) {
    const details = $('rank-values');
    const table = document.querySelector('#rank-table tbody');
    table.textContent = '';
    if (!details.open || !r) return;
    const m = state.metric;
    const frag = document.createDocumentFragment();
    for (let l = 0; l < L; l++) {
      frag.append(el('tr', { 'data-loc': D.locations[l] },
        el('td', { text: locName(l) }),
        el('td', { class: 'num', 'data-value': String(r[l]), text: fmt(r[l], m) })));
    }
    table.append(frag);
  }
  $('rank-values').addEventListener('toggle', () => {
    const m = state.metric;
    fillRankTable(state.cp >= 0 ? (isOwn(m) ? ownRow(m, state.cp, state.rankIncl) : rowOf(m, state.cp, state.rankIncl)) : null);
  });
  document.querySelectorAll('input[name="rank-kind"]').forEach((inp) => inp.addEventListener('change', () => {
    if (!inp.checked) return;
    state.rankIncl = inp.value === 'incl';
    renderRanks();
  }));
  function drawRankChart(r, maxAt) {
    if (typeof Chart === 'undefined') return;
    const data = Array.from(r);
    const colors = data.map((_, l) => (l === maxAt ? '#c0392b' : '#1f5fbf'));
    if (!rankChart) {
      rankChart = new Chart($('rank-chart'), {
        type: 'bar',
        data: { labels: D.locations, datasets: [{ data, backgroundColor: colors, borderWidth: 0, categoryPercentage: 0.9, barPercentage: 1 }] },
        options: {
          animation: false,
          responsive: true,
          maintainAspectRatio: false,
          devicePixelRatio: dpr,
          plugins: {
            legend: { display: false },
            tooltip: {
              callbacks: {
                title: (items) => locName(items[0].dataIndex),
                label: (it) => fmt(it.raw, state.metric) + ' ' + unitOf(state.metric),
              },
            },
          },
          scales: {
            x: { title: { display: true, text: hasThreads ? 'rank.thread' : 'rank' }, ticks: { autoSkip: true, maxRotation: 0 } },
            y: { beginAtZero: true, title: { display: true, text: unitOf(state.metric) } },
          },
        },
      });
    } else {
      rankChart.data.datasets[0].data = data;
      rankChart.data.datasets[0].backgroundColor = colors;
      rankChart.options.scales.y.title.text = unitOf(state.metric);
      rankChart.update('none');
    }
  }

  // --- the topology view ------------------------------------------------
  // The explorer's selection on each Cartesian topology of the trace:
  // one cell per rank (its threads summed, or its master thread alone)
  // or, in a topology of threads (Score-P's "Process x Thread" of a
  // hybrid trace), per thread. Dimension 0 runs across, dimension 1
  // down; a grid of three (or more) dimensions is drawn as slices, one
  // small grid per position along the others. Cells are SVG rectangles
  // (they print as drawn), coloured linearly from the lightest (0, or
  // the smallest value when it is negative, or when asked for) to the
  // darkest (the largest value).
  const topos = D.topologies || [];
  const locIdx = new Map(D.locations.map((lab, i) => [lab, i]));
  const rankLocs = new Map(); // rank → its locations
  D.locations.forEach((lab, i) => {
    const r = Number(lab.split('.')[0]);
    if (!rankLocs.has(r)) rankLocs.set(r, []);
    rankLocs.get(r).push(i);
  });
  const pageRanks = rankLocs.size;
  // The first topology shown is the program's own (not the measurement
  // system's "Process x Thread"), when it has one.
  state.topo = Math.max(0, topos.findIndex((t) => t.name !== 'Process x Thread'));
  const SVGNS = 'http://www.w3.org/2000/svg';
  function svg(tag, attrs, ...kids) {
    const e = document.createElementNS(SVGNS, tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (k === 'text') e.textContent = v;
      else e.setAttribute(k, v);
    }
    for (const k of kids) if (k) e.append(k);
    return e;
  }
  const ramp = [[255, 250, 228], [253, 219, 140], [246, 160, 72], [221, 92, 42], [168, 32, 32], [96, 8, 24]];
  function colour(t) {
    const x = Math.min(1, Math.max(0, t)) * (ramp.length - 1);
    const i = Math.min(ramp.length - 2, Math.floor(x));
    const f = x - i;
    return 'rgb(' + ramp[i].map((a, k) => Math.round(a + f * (ramp[i + 1][k] - a))).join(',') + ')';
  }
  const noData = '#c9ced6';
  // short: a value in a cell, in at most 6 characters
  function short(v) {
    const s = String(Number(v.toPrecision(3)));
    return s.length <= 6 ? s : v.toExponential(1).replace('e+', 'e');
  }
  const dimName = (t, k) => t.dims[k].name || 'dimension ' + k;
  function topoLabel(t) {
    return (t.name || 'unnamed') + ' (' + t.dims.map((d) => d.size).join(' × ') + ')' + (t.count > 1 ? ', defined ' + t.count + ' times' : '');
  }
  const coordsOf = (t, i) => t.coords.slice(i * t.dims.length, (i + 1) * t.dims.length);
  const cellName = (t, i) => 'rank ' + t.rank[i] + (t.threads ? ' thread ' + t.thread[i] : '');
  const threadName = (l) => 'thread ' + (D.locations[l].split('.')[1] || '0');
  // cellLocs returns the locations whose values make cell i's.
  function cellLocs(t, i) {
    if (t.threads) {
      const l = locIdx.get(t.thread[i] ? t.rank[i] + '.' + t.thread[i] : String(t.rank[i]));
      return l === undefined ? [] : [l];
    }
    if (state.topoMaster) {
      const l = locIdx.get(String(t.rank[i]));
      return l === undefined ? [] : [l];
    }
    return rankLocs.get(t.rank[i]) || [];
  }
  function cellValue(t, i, row) {
    const ls = cellLocs(t, i);
    if (!ls.length) return null;
    let v = 0;
    for (const l of ls) v += row[l];
    return v;
  }
  if (topos.length) {
    const sel = $('topo-select');
    topos.forEach((t, i) => sel.append(el('option', { value: String(i), text: topoLabel(t), selected: i === state.topo })));
    if (topos.length === 1) $('topo-select-box').hidden = true;
    sel.addEventListener('change', () => { state.topo = Number(sel.value); state.topoSel = -1; renderTopo(); });
    document.querySelectorAll('input[name="topo-threads"]').forEach((inp) => inp.addEventListener('change', () => {
      if (!inp.checked) return;
      state.topoMaster = inp.value === 'master';
      renderTopo();
    }));
    document.querySelectorAll('input[name="topo-scale"]').forEach((inp) => inp.addEventListener('change', () => {
      if (!inp.checked) return;
      state.topoFromMin = inp.value === 'min';
      renderTopo();
    }));
    const grids = $('topo-grids');
    const pick = (ev) => {
      const r = ev.target.closest('[data-cell]');
      if (!r) return;
      state.topoSel = Number(r.dataset.cell);
      grids.querySelectorAll('.cell.sel').forEach((x) => x.classList.remove('sel'));
      r.classList.add('sel');
      topoInfo();
    };
    grids.addEventListener('click', pick);
    grids.addEventListener('keydown', (ev) => { if (ev.key === 'Enter' || ev.key === ' ') { ev.preventDefault(); pick(ev); } });
  }
  // topoInfo says the clicked cell's rank, coordinates and value.
  function topoInfo() {
    const info = $('topo-info');
    const t = topos[state.topo];
    const i = state.topoSel;
    const row = state.row;
    info.textContent = '';
    delete info.dataset.rank;
    delete info.dataset.value;
    if (!t || i < 0 || i >= t.rank.length || !row) return;
    const m = state.metric;
    const v = cellValue(t, i, row);
    info.dataset.rank = String(t.rank[i]);
    info.dataset.coords = coordsOf(t, i).join(',');
    let text = cellName(t, i) + ' at (' + coordsOf(t, i).join(', ') + '): ';
    if (v === null) {
      text += 'no values (the report has no location of this rank)';
    } else {
      info.dataset.value = String(v);
      text += fmt(v, m) + ' ' + unitOf(m);
      const ls = cellLocs(t, i);
      if (ls.length > 1) text += ' = ' + ls.map((l) => fmt(row[l], m) + ' (' + threadName(l) + ')').join(' + ');
    }
    info.textContent = text;
  }
  function renderTopo() {
    if (!topos.length) return;
    const t = topos[state.topo];
    const m = state.metric;
    const nd = t.dims.length;
    const row = state.row;
    const grids = $('topo-grids');
    const legend = $('topo-legend');
    const missing = $('topo-missing');
    grids.textContent = '';
    legend.textContent = '';
    $('topo-title').textContent = state.cp >= 0 ? '· ' + metrics[m].display + (isOwn(m) ? ' (own part)' : '') + ' in ' + names[state.cp] + ' (' + (state.rankIncl ? 'inclusive' : 'exclusive') + ')' : '';
    $('topo-threads-box').hidden = t.threads || !hasThreads;
    // The dimensions: which runs across, which down, which makes slices.
    const role = (k) => (k === 0 ? 'across' : k === 1 ? 'down' : 'slices');
    const dimsText = t.dims.map((d, k) => dimName(t, k) + ' (' + d.size + (d.periodic ? ', periodic ↻' : '') + ', ' + role(k) + ')').join(' × ');
    const inTopo = new Set(t.rank);
    let per = t.threads ? 'One cell per thread.' : hasThreads ? (state.topoMaster ? 'One cell per rank: its master thread.' : 'One cell per rank: the sum of its threads.') : 'One cell per rank.';
    if (inTopo.size < pageRanks) per += ' ' + (pageRanks - inTopo.size) + ' of the ' + pageRanks + ' ranks are not in this topology.';
    const dims = $('topo-dims');
    dims.textContent = nd + '-D: ' + dimsText + '. ' + per;
    dims.dataset.dims = t.dims.map((d) => d.size).join('x');
    dims.dataset.periodic = t.dims.map((d) => (d.periodic ? '1' : '0')).join('');
    if (!row) {
      missing.hidden = false;
      missing.textContent = 'This page does not hold the values per location of this metric and call path; scout.cubex has them.';
      topoInfo();
      return;
    }
    missing.hidden = true;
    const n = t.rank.length;
    const vals = new Array(n);
    let lo = Infinity, hi = -Infinity, maxAt = -1;
    for (let i = 0; i < n; i++) {
      const v = cellValue(t, i, row);
      vals[i] = v;
      if (v === null) continue;
      lo = Math.min(lo, v);
      if (v > hi) { hi = v; maxAt = i; }
    }
    if (maxAt < 0) lo = hi = 0;
    if (!state.topoFromMin) lo = Math.min(lo, 0);
    const span = hi - lo;
    const tOf = (v) => (span > 0 ? (v - lo) / span : 0);
    // The slices: every position along dimensions 2, 3, … (row-major).
    const nx = nd > 0 ? t.dims[0].size : 1;
    const ny = nd > 1 ? t.dims[1].size : 1;
    let nz = 1;
    for (let k = 2; k < nd; k++) nz *= t.dims[k].size;
    const bySlice = new Map();
    for (let i = 0; i < n; i++) {
      const co = coordsOf(t, i);
      let z = 0;
      for (let k = 2; k < nd; k++) z = z * t.dims[k].size + co[k];
      if (!bySlice.has(z)) bySlice.set(z, []);
      bySlice.get(z).push(i);
    }
    const maxSlices = 256;
    const sliced = nz > 1;
    const fit = sliced ? 360 : 720;
    const cs = Math.max(sliced ? 4 : 6, Math.min(sliced ? 48 : 64, Math.floor(fit / Math.max(nx, ny, 1))));
    const step = Math.max(1, Math.ceil(16 / cs));
    const mx = 26, my = 16; // room for the coordinates
    const u = ' ' + unitOf(m);
    let empty = false;
    for (let z = 0; z < Math.min(nz, maxSlices); z++) {
      const w = mx + nx * cs + 2, h = my + ny * cs + 2;
      const g = svg('svg', { width: w, height: h, viewBox: '0 0 ' + w + ' ' + h, role: 'group', class: 'topo-grid', 'data-slice': String(z) });
      g.append(svg('rect', { x: mx, y: my, width: nx * cs, height: ny * cs, class: 'vacant' }));
      for (let x = 0; x < nx; x += step) g.append(svg('text', { x: mx + (x + 0.5) * cs, y: my - 4, class: 'axis', 'text-anchor': 'middle', text: String(x) }));
      for (let y = 0; y < ny; y += step) g.append(svg('text', { x: mx - 4, y: my + (y + 0.5) * cs + 4, class: 'axis', 'text-anchor': 'end', text: String(y) }));
      const cells = bySlice.get(z) || [];
      if (cells.length < nx * ny) empty = true;
      for (const i of cells) {
        const co = coordsOf(t, i);
        const x = co[0], y = nd > 1 ? co[1] : 0;
        const v = vals[i];
        const tv = v === null ? 0 : tOf(v);
        const tip = cellName(t, i) + ' (' + co.join(', ') + '): ' + (v === null ? 'no values' : fmt(v, m) + u);
        const attrs = {
          x: mx + x * cs, y: my + y * cs, width: cs, height: cs, class: 'cell' + (i === state.topoSel ? ' sel' : '') + (i === maxAt ? ' max' : ''),
          fill: v === null ? noData : colour(tv), tabindex: '0', role: 'button', 'aria-label': tip,
          'data-cell': String(i), 'data-rank': String(t.rank[i]), 'data-coords': co.join(','), 'data-value': v === null ? '' : String(v),
        };
        if (t.threads) attrs['data-thread'] = String(t.thread[i]);
        g.append(svg('rect', attrs, svg('title', { text: tip })));
        if (cs >= 40) {
          const ink = tv > 0.55 ? '#ffffff' : '#1d2430';
          g.append(svg('text', { x: mx + (x + 0.5) * cs, y: my + y * cs + 14, class: 'in-cell small', 'text-anchor': 'middle', fill: ink, text: t.threads ? t.rank[i] + '.' + t.thread[i] : 'r' + t.rank[i] }));
          if (v !== null) g.append(svg('text', { x: mx + (x + 0.5) * cs, y: my + y * cs + cs / 2 + 10, class: 'in-cell', 'text-anchor': 'middle', fill: ink, text: short(v) }));
        }
      }
      let caption = '';
      if (sliced) {
        const pos = [];
        for (let k = nd - 1, r = z; k >= 2; k--) { pos.unshift(dimName(t, k) + ' = ' + (r % t.dims[k].size)); r = Math.floor(r / t.dims[k].size); }
        caption = pos.join(', ');
      }
      grids.append(el('figure', { class: 'topo-slice' }, g, caption ? el('figcaption', { text: caption }) : null));
    }
    if (nz > maxSlices) grids.append(el('p', { class: 'note', text: 'Only the first ' + maxSlices + ' of the ' + nz + ' slices are drawn.' }));
    // The legend: the colour ramp from the lightest to the darkest.
    const lw = 240;
    const lg = svg('svg', { width: lw + 20, height: 40, viewBox: '0 0 ' + (lw + 20) + ' 40', class: 'topo-ramp' });
    const grad = svg('linearGradient', { id: 'topo-ramp-grad', x1: '0', x2: '1', y1: '0', y2: '0' });
    ramp.forEach((_, k) => grad.append(svg('stop', { offset: String(k / (ramp.length - 1)), 'stop-color': colour(k / (ramp.length - 1)) })));
    lg.append(svg('defs', {}, grad), svg('rect', { x: 10, y: 4, width: lw, height: 14, fill: 'url(#topo-ramp-grad)', stroke: '#9aa1ad', 'stroke-width': 0.5 }),
      svg('text', { x: 10, y: 34, class: 'axis', 'text-anchor': 'start', text: fmt(lo, m) + u }),
      svg('text', { x: 10 + lw, y: 34, class: 'axis', 'text-anchor': 'end', text: fmt(hi, m) + u }));
    legend.append(lg);
    const ltext = el('span', { class: 'sub', text: maxAt >= 0 ? 'largest: ' + cellName(t, maxAt) + ' at (' + coordsOf(t, maxAt).join(', ') + ')' : 'no values' });
    ltext.dataset.lo = String(lo);
    ltext.dataset.hi = String(hi);
    legend.append(ltext);
    if (empty) legend.append(el('span', { class: 'sub swatch-vacant', text: 'no rank at this position' }));
    if (vals.some((v) => v === null)) legend.append(el('span', { class: 'sub swatch-nodata', text: 'no values' }));
    topoInfo();
  }

  function renderAll() {
    if (M === 0 || C === 0 || L === 0) {
      $('explore').querySelector('.panes').replaceWith(el('p', { class: 'note', text: 'This report has no metrics, call paths or locations to show.' }));
      return;
    }
    renderMetrics();
    renderCallTree();
    renderRanks();
  }

  // --- the headline links into the explorer -------------------------------
  document.querySelectorAll('#headline tr[data-metric]').forEach((tr) => tr.addEventListener('click', () => {
    const m = byUnique.get(tr.dataset.metric);
    if (m !== undefined) {
      state.metric = m;
      for (let p = metrics[m].parent; p >= 0; p = metrics[p].parent) state.mopen.add(p);
    }
    const c = byKey(tr.dataset.callpath);
    if (c !== undefined) {
      state.cp = c;
      openTo(c);
    }
    renderAll();
    $('explore').scrollIntoView();
  }));

  // --- point-to-point communication -------------------------------------
  function hsize(n) {
    const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
    let u = 0;
    while (n >= 1024 && u < units.length - 1) { n /= 1024; u++; }
    return (u === 0 ? String(n) : g6(n)) + ' ' + units[u];
  }
  function sizeLabel(k) {
    if (k === 0) return '0 B';
    const lo = 2 ** (k - 1);
    const hi = 2 ** k - 1;
    return lo === hi ? hsize(lo) : hsize(lo) + ' – ' + (hi < 1024 ? hsize(hi) : '<' + hsize(2 * lo));
  }
  function renderComm() {
    const cm = D.comm;
    if (!cm) return;
    const from = u32s(cm.from), to = u32s(cm.to), msgs = f64s(cm.msgs), byts = f64s(cm.bytes);
    const n = Math.ceil(cm.ranks / cm.block);
    const label = (b) => (cm.block === 1 ? String(b) : b * cm.block + '–' + (Math.min(cm.ranks, (b + 1) * cm.block) - 1));
    $('comm-totals').textContent = cm.totalMsgs + ' messages' + (cm.totalSyncs ? ' (' + cm.totalSyncs + ' of 0 bytes)' : '') + ', ' + cm.totalBytes + ' bytes (' + hsize(cm.totalBytes) + ') between ' +
      cm.pairs + ' pairs of ' + cm.ranks + ' ranks' + (cm.block > 1 ? '; the matrix groups the ranks in blocks of ' + cm.block : '') + '.';
    $('comm-totals').dataset.msgs = String(cm.totalMsgs);
    $('comm-totals').dataset.bytes = String(cm.totalBytes);
    const top = document.querySelector('#comm-top tbody');
    for (const p of cm.top) {
      top.append(el('tr', { 'data-from': String(p.from), 'data-to': String(p.to) },
        el('td', { class: 'num', text: String(p.from) }), el('td', { class: 'num', text: String(p.to) }),
        el('td', { class: 'num msgs', text: String(p.msgs) }), el('td', { class: 'num bytes', text: String(p.bytes) })));
    }
    let last = cm.sizes.length - 1;
    while (last > 0 && cm.sizes[last] === 0) last--;
    const sizes = cm.sizes.slice(0, last + 1);
    const stable = document.querySelector('#comm-size-table tbody');
    sizes.forEach((v, k) => stable.append(el('tr', { 'data-bucket': String(k) }, el('td', { text: sizeLabel(k) }), el('td', { class: 'num', text: String(v) }))));
    if (typeof Chart === 'undefined') return;
    new Chart($('comm-hist'), {
      type: 'bar',
      data: { labels: sizes.map((_, k) => sizeLabel(k)), datasets: [{ data: sizes, backgroundColor: '#1f5fbf' }] },
      options: {
        animation: false, responsive: true, maintainAspectRatio: false, devicePixelRatio: dpr,
        plugins: { legend: { display: false }, tooltip: { callbacks: { label: (it) => it.raw + ' messages' } } },
        scales: { x: { title: { display: true, text: 'message size' } }, y: { beginAtZero: true, title: { display: true, text: 'messages' } } },
      },
    });
    const points = () => {
      const v = state.commKind === 'bytes' ? byts : msgs;
      const out = [];
      for (let i = 0; i < from.length; i++) out.push({ x: to[i], y: from[i], v: v[i], i });
      return out;
    };
    const legend = () => {
      $('comm-legend').textContent = 'Colour: ' + (state.commKind === 'bytes' ? 'bytes' : 'messages') +
        ' sent (logarithmic), the darkest ' + (state.commKind === 'bytes' ? vmax + ' bytes' : vmax + ' messages') +
        (cm.block > 1 ? ', from one block of ' + cm.block + ' ranks to another' : '') + '.';
    };
    let vmax = 0;
    const scale = (v) => (vmax > 0 ? Math.log1p(v) / Math.log1p(vmax) : 0);
    const data = points();
    vmax = Math.max(0, ...data.map((p) => p.v));
    legend();
    // one tick per row and column, at most 16 labelled
    const step = Math.max(1, Math.ceil(n / 16));
    const ticks = (axis) => { axis.ticks = []; for (let b = 0; b < n; b += step) axis.ticks.push({ value: b }); };
    const tick = { autoSkip: false, callback: (v) => label(v) };
    const matrix = new Chart($('comm-matrix'), {
      type: 'matrix',
      data: {
        datasets: [{
          data,
          backgroundColor: (ctx) => 'rgba(31,95,191,' + (0.12 + 0.88 * scale(ctx.raw ? ctx.raw.v : 0)).toFixed(3) + ')',
          borderWidth: 0,
          width: ({ chart }) => Math.max(1, (chart.chartArea || {}).width / n - (n > 64 ? 0 : 1)),
          height: ({ chart }) => Math.max(1, (chart.chartArea || {}).height / n - (n > 64 ? 0 : 1)),
        }],
      },
      options: {
        animation: false, responsive: true, maintainAspectRatio: false, devicePixelRatio: dpr,
        plugins: {
          legend: { display: false },
          tooltip: {
            callbacks: {
              title: (items) => 'from ' + label(items[0].raw.y) + ' to ' + label(items[0].raw.x),
              label: (it) => msgs[it.raw.i] + ' messages, ' + byts[it.raw.i] + ' bytes',
            },
          },
        },
        scales: {
          x: { type: 'linear', position: 'top', min: -0.5, max: n - 0.5, offset: false, ticks: tick, afterBuildTicks: ticks, grid: { display: false }, title: { display: true, text: 'receiver' } },
          y: { type: 'linear', reverse: true, min: -0.5, max: n - 0.5, offset: false, ticks: tick, afterBuildTicks: ticks, grid: { display: false }, title: { display: true, text: 'sender' } },
        },
      },
    });
    document.querySelectorAll('input[name="comm-kind"]').forEach((inp) => inp.addEventListener('change', () => {
      if (!inp.checked) return;
      state.commKind = inp.value;
      const d = points();
      vmax = Math.max(0, ...d.map((p) => p.v));
      legend();
      matrix.data.datasets[0].data = d;
      matrix.update('none');
    }));
  }

  // --- time profile ----------------------------------------------------
  const actStyle = {
    computation: ['computation', '#7fb35a'],
    mpi: ['MPI', '#1f5fbf'],
    openmp: ['OpenMP synchronization', '#8e5cb5'],
    waiting: ['waiting', '#d2473f'],
  };
  function renderProfile() {
    const P = D.profile;
    if (!P) return;
    const A = P.activities.length, B = P.bins, W = P.width;
    const totals = f64s(P.totals);
    const dv = bytes(P.shares);
    const share = (row, k, a) => dv.getUint8((row * B + k) * A + a) / 255;
    const sum = new Float64Array(A);
    for (let k = 0; k < B; k++) for (let a = 0; a < A; a++) sum[a] += totals[k * A + a];
    // the activities shown: OpenMP only when some location had it
    const acts = [];
    for (let a = 0; a < A; a++) if (P.activities[a] !== 'openmp' || sum[a] > 0) acts.push(a);
    const all = P.locations * W * B;
    const info = $('profile-info');
    info.textContent = P.locations + ' locations, ' + B + ' bins of ' + g6(W) + ' s (0 to ' + g6(B * W) + ' s). Of the locations\' time: ' +
      acts.map((a) => actStyle[P.activities[a]][0] + ' ' + g6(sum[a]) + ' s (' + pct(sum[a], all) + ')').join(', ') + '.';
    acts.forEach((a) => { info.dataset[P.activities[a]] = String(sum[a]); });
    const labels = Array.from({ length: B }, (_, k) => g6(k * W));
    const stacked = (values) => {
      const ds = acts.map((a) => {
        const [name, color] = actStyle[P.activities[a]];
        return { label: name, data: Array.from({ length: B }, (_, k) => 100 * values(k, a)), backgroundColor: color, barPercentage: 1, categoryPercentage: 1 };
      });
      ds.push({ label: 'outside the traced regions', backgroundColor: '#e3e6ea', barPercentage: 1, categoryPercentage: 1,
        data: Array.from({ length: B }, (_, k) => Math.max(0, 100 - ds.reduce((s, d) => s + d.data[k], 0))) });
      return ds;
    };
    const barOptions = (title) => ({
      animation: false, responsive: true, maintainAspectRatio: false, devicePixelRatio: dpr,
      plugins: {
        legend: { position: 'bottom' },
        tooltip: { callbacks: { title: (items) => g6(items[0].dataIndex * W) + ' – ' + g6((items[0].dataIndex + 1) * W) + ' s', label: (it) => it.dataset.label + ': ' + it.raw.toFixed(1) + '%' } },
      },
      scales: {
        x: { stacked: true, title: { display: true, text: 'time (s), bins of ' + g6(W) + ' s' }, ticks: { maxTicksLimit: 16 } },
        y: { stacked: true, min: 0, max: 100, title: { display: true, text: title } },
      },
    });
    const body = document.querySelector('#profile-table tbody');
    document.querySelector('#profile-table thead').append(el('tr', {}, el('th', { class: 'num', text: 'from (s)' }),
      ...acts.map((a) => el('th', { class: 'num', text: actStyle[P.activities[a]][0] + ' (s)' }))));
    for (let k = 0; k < B; k++) {
      body.append(el('tr', { 'data-bin': String(k) }, el('td', { class: 'num', text: g6(k * W) }),
        ...acts.map((a) => el('td', { class: 'num', text: g6(totals[k * A + a]) }))));
    }
    const rowName = (r) => (P.sizes[r] > 1 ? 'locations ' + P.rows[r] : (P.rows[r].includes('.') ? 'rank ' + P.rows[r].replace('.', ' thread ') : 'rank ' + P.rows[r]));
    let sel = 0;
    let kind = acts.includes(P.activities.indexOf('waiting')) ? P.activities.indexOf('waiting') : acts[0];
    const kinds = $('profile-kinds');
    for (const a of acts) {
      const inp = el('input', { type: 'radio', name: 'profile-kind', value: String(a) });
      inp.checked = a === kind;
      kinds.append(' ', el('label', {}, inp, ' ' + actStyle[P.activities[a]][0]));
    }
    const R = P.rows.length;
    $('profile-map-box').style.height = Math.min(720, Math.max(160, 14 * R + 80)) + 'px';
    const legend = () => {
      $('profile-legend').textContent = 'Colour: the share of ' + actStyle[P.activities[kind]][0] + ' in each bin of each ' + (P.group > 1 ? 'group of ' + P.group + ' locations' : 'location') +
        ', from none (white) to the whole bin; click a row for its activities below.';
    };
    legend();
    $('profile-row-title').textContent = rowName(sel);
    if (typeof Chart === 'undefined') return;
    new Chart($('profile-chart'), { type: 'bar', data: { labels, datasets: stacked((k, a) => totals[k * A + a] / (P.locations * W)) }, options: barOptions('share of all locations\' time (%)') });
    const rowChart = new Chart($('profile-row'), { type: 'bar', data: { labels, datasets: stacked((k, a) => share(sel, k, a)) }, options: barOptions('share of the time (%)') });
    const points = () => {
      const out = [];
      for (let r = 0; r < R; r++) for (let k = 0; k < B; k++) out.push({ x: k + 0.5, y: r, v: share(r, k, kind), k });
      return out;
    };
    const rgb = (hex) => [1, 3, 5].map((i) => parseInt(hex.slice(i, i + 2), 16)).join(',');
    const step = Math.max(1, Math.ceil(R / 24));
    const map = new Chart($('profile-map'), {
      type: 'matrix',
      data: {
        datasets: [{
          data: points(),
          backgroundColor: (ctx) => 'rgba(' + rgb(actStyle[P.activities[kind]][1]) + ',' + (ctx.raw ? ctx.raw.v : 0).toFixed(3) + ')',
          borderWidth: 0,
          width: ({ chart }) => Math.max(1, (chart.chartArea || {}).width / B),
          height: ({ chart }) => Math.max(1, (chart.chartArea || {}).height / R),
        }],
      },
      options: {
        animation: false, responsive: true, maintainAspectRatio: false, devicePixelRatio: dpr,
        onClick: (evt, items) => {
          if (!items.length) return;
          sel = items[0].element.$context.raw.y;
          $('profile-row-title').textContent = rowName(sel);
          rowChart.data.datasets = stacked((k, a) => share(sel, k, a));
          rowChart.update('none');
        },
        plugins: {
          legend: { display: false },
          tooltip: { callbacks: { title: (items) => rowName(items[0].raw.y) + ', ' + g6(items[0].raw.k * W) + ' – ' + g6((items[0].raw.k + 1) * W) + ' s',
            label: (it) => actStyle[P.activities[kind]][0] + ' ' + (100 * it.raw.v).toFixed(1) + '%' } },
        },
        scales: {
          x: { type: 'linear', min: 0, max: B, offset: false, grid: { display: false }, ticks: { maxTicksLimit: 16, callback: (v) => g6(v * W) }, title: { display: true, text: 'time (s)' } },
          y: { type: 'linear', reverse: true, min: -0.5, max: R - 0.5, offset: false, grid: { display: false }, title: { display: true, text: P.group > 1 ? 'locations (groups)' : 'location' },
            afterBuildTicks: (axis) => { axis.ticks = []; for (let r = 0; r < R; r += step) axis.ticks.push({ value: r }); },
            ticks: { autoSkip: false, callback: (v) => P.rows[v] } },
        },
      },
    });
    kinds.querySelectorAll('input').forEach((inp) => inp.addEventListener('change', () => {
      if (!inp.checked) return;
      kind = Number(inp.value);
      legend();
      map.data.datasets[0].data = points();
      map.update('none');
    }));
  }

  try {
    renderAll();
    renderComm();
    renderProfile();
    document.body.dataset.ready = '1';
  } catch (e) {
    document.body.dataset.ready = 'error';
    const p = el('p', { class: 'note', text: 'The explorer failed: ' + e });
    $('explore').prepend(p);
    throw e;
  }
})();
