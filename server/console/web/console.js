// ParqDB console: plain JavaScript, no framework, no build step. Every
// request goes to the server that served this file, through the HTTP API
// documented in /openapi.yaml and docs/serve.md. The token, when the server
// asks for one, is kept in this tab's sessionStorage only.
'use strict';

(function () {
  const TOKEN_KEY = 'parqdb.token';
  const API = '../'; // the console lives at /console/, the API at /
  const main = document.getElementById('main');
  const statusLine = document.getElementById('status');
  const forget = document.getElementById('forget-token');
  let renderSeq = 0;
  let pageTimer = null;

  // ---- DOM helpers ----

  function add(el, children) {
    for (const c of children) {
      if (c === null || c === undefined || c === false) continue;
      if (Array.isArray(c)) add(el, c);
      else el.append(c instanceof Node ? c : document.createTextNode(String(c)));
    }
    return el;
  }

  function setAttrs(el, attrs) {
    for (const [k, v] of Object.entries(attrs || {})) {
      if (v === null || v === undefined || v === false) continue;
      if (k === 'class') el.setAttribute('class', v);
      else if (k.startsWith('on')) el.addEventListener(k.slice(2), v);
      else if (k === 'value' || k === 'checked') el[k] = v;
      else el.setAttribute(k, v === true ? '' : String(v));
    }
    return el;
  }

  // fill replaces el's children (null and false children are left out,
  // where replaceChildren would write them as text).
  function fill(el, ...children) {
    el.replaceChildren();
    return add(el, children);
  }

  function h(tag, attrs, ...children) {
    return add(setAttrs(document.createElement(tag), attrs), children);
  }

  function s(tag, attrs, ...children) {
    return add(setAttrs(document.createElementNS('http://www.w3.org/2000/svg', tag), attrs), children);
  }

  function table(headers, rows, opts) {
    const head = h('tr', null, headers.map((c) => h('th', { scope: 'col', class: c.num ? 'num' : null }, c.label || c)));
    return h('div', { class: 'scroll', tabindex: '0', role: 'region', 'aria-label': (opts && opts.label) || 'table' },
      h('table', { id: opts && opts.id }, h('thead', null, head), h('tbody', null, rows)));
  }

  function announce(text) { statusLine.textContent = text; }

  function enc(name) { return encodeURIComponent(name); }

  // ---- formatting ----

  function fmtInt(n) { return Number(n).toLocaleString('en-US'); }

  function fmtBytes(n) {
    if (!isFinite(n)) return '—';
    const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
    let i = 0;
    while (Math.abs(n) >= 1024 && i < units.length - 1) { n /= 1024; i++; }
    return (i === 0 ? String(Math.round(n)) : n.toFixed(n < 10 ? 2 : 1)) + ' ' + units[i];
  }

  function fmtMS(sec) {
    if (!isFinite(sec)) return '—';
    const ms = sec * 1000;
    return (ms < 10 ? ms.toFixed(2) : ms < 100 ? ms.toFixed(1) : ms.toFixed(0)) + ' ms';
  }

  function fmtPct(x) { return isFinite(x) ? (x * 100).toFixed(1) + ' %' : '—'; }

  function fmtTime(ms) {
    const d = new Date(ms);
    return h('time', { datetime: d.toISOString(), title: d.toISOString() }, d.toLocaleString());
  }

  // cell formats one answer value: text as is, numbers as JSON has them,
  // long vectors shortened (the full value in the title).
  function cell(v) {
    if (v === null) return h('span', { class: 'muted' }, 'null');
    if (Array.isArray(v)) {
      const full = JSON.stringify(v);
      if (v.length > 6 && v.every((x) => typeof x === 'number')) {
        return h('span', { class: 'mono', title: full }, '[' + v.slice(0, 4).map((x) => x.toPrecision(4)).join(', ') + ', … ] (' + v.length + ' values)');
      }
      return h('span', { class: 'mono' }, full);
    }
    if (typeof v === 'object') {
      if (Object.keys(v).length === 1 && typeof v.base64 === 'string') return h('span', { class: 'mono', title: 'binary, base64' }, 'base64:' + v.base64);
      return h('span', { class: 'mono' }, JSON.stringify(v));
    }
    return String(v);
  }

  // ---- API ----

  class APIError extends Error {
    constructor(status, code, message) {
      super(message);
      this.status = status;
      this.code = code;
    }
  }

  function token() { return sessionStorage.getItem(TOKEN_KEY); }

  async function api(path, opts) {
    opts = opts || {};
    const headers = Object.assign({}, opts.headers);
    const tok = token();
    if (tok) headers.Authorization = 'Bearer ' + tok;
    let body;
    if (opts.json !== undefined) {
      headers['Content-Type'] = 'application/json';
      body = JSON.stringify(opts.json);
    }
    const resp = await fetch(API + path, {
      method: opts.method || (body ? 'POST' : 'GET'), headers, body, cache: 'no-store', credentials: 'omit',
    });
    if (!resp.ok) {
      let code = 'http_' + resp.status;
      let message = resp.statusText;
      try {
        const e = (await resp.json()).error;
        if (e) { code = e.code; message = e.message; }
      } catch (_) { /* not JSON: keep the status */ }
      throw new APIError(resp.status, code, message);
    }
    const data = opts.text ? await resp.text() : await resp.json();
    return { resp, data };
  }

  // mapLimit runs fn over items, at most n at once, results in order.
  async function mapLimit(items, n, fn) {
    const out = new Array(items.length);
    let next = 0;
    async function worker() {
      while (next < items.length) {
        const i = next++;
        out[i] = await fn(items[i]);
      }
    }
    await Promise.all(Array.from({ length: Math.min(n, items.length) }, worker));
    return out;
  }

  // ---- Prometheus text format ----

  function parseMetrics(text) {
    const m = new Map();
    const line = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)/;
    const label = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g;
    for (const l of text.split('\n')) {
      if (l === '' || l[0] === '#') continue;
      const g = line.exec(l);
      if (!g) continue;
      const labels = {};
      if (g[2]) for (const x of g[2].matchAll(label)) labels[x[1]] = x[2].replace(/\\(.)/g, (_, c) => (c === 'n' ? '\n' : c));
      const raw = g[3];
      const value = raw === '+Inf' ? Infinity : raw === '-Inf' ? -Infinity : Number(raw);
      if (!m.has(g[1])) m.set(g[1], []);
      m.get(g[1]).push({ labels, value });
    }
    return m;
  }

  function series(m, name, match) {
    return (m.get(name) || []).filter((x) => !match || Object.entries(match).every(([k, v]) => x.labels[k] === v));
  }

  function total(m, name, match) { return series(m, name, match).reduce((a, x) => a + x.value, 0); }

  // quantile estimates a quantile from cumulative histogram buckets as
  // Prometheus' histogram_quantile does (linear within a bucket).
  function quantile(q, buckets) {
    const b = buckets.map((x) => ({ le: Number(x.labels.le === '+Inf' ? Infinity : x.labels.le), n: x.value })).sort((a, c) => a.le - c.le);
    if (b.length === 0) return NaN;
    const count = b[b.length - 1].n;
    if (count === 0) return NaN;
    const rank = q * count;
    let prevLe = 0;
    let prevN = 0;
    for (const x of b) {
      if (x.n >= rank) {
        if (x.le === Infinity) return prevLe;
        return prevLe + (x.le - prevLe) * (x.n === prevN ? 0 : (rank - prevN) / (x.n - prevN));
      }
      prevLe = x.le;
      prevN = x.n;
    }
    return prevLe;
  }

  async function fetchMetrics() {
    const { data } = await api('metrics', { text: true });
    return { at: performance.now(), m: parseMetrics(data) };
  }

  // ---- pages ----

  function heading(text, crumbs) {
    document.title = text + ' · ParqDB console';
    return [crumbs ? h('p', { class: 'crumbs' }, crumbs) : null, h('h1', { tabindex: '-1' }, text)];
  }

  function errorBox(e) {
    return h('p', { class: 'alert', role: 'alert' }, e instanceof APIError ? [h('b', null, e.code), ' (' + e.status + '): ' + e.message] : String(e));
  }

  function staleBadge(d) {
    return d.stale ? h('span', { class: 'badge warn', title: d.stale_reason || '' }, 'stale') : h('span', { class: 'badge ok' }, 'fresh');
  }

  async function pageIndexList() {
    const { data } = await api('v1/indexes');
    const names = data.indexes.map((x) => x.name);
    const descs = await mapLimit(names, 4, (n) => api('v1/indexes/' + enc(n)).then((r) => ({ d: r.data }), (err) => ({ err })));
    for (const x of descs) if (x.err && x.err.status === 401) throw x.err;
    const rows = names.map((n, i) => {
      const x = descs[i];
      const link = h('a', { href: '#/indexes/' + enc(n) }, n);
      if (x.err) return h('tr', null, h('th', { scope: 'row' }, link), h('td', { colspan: '8', class: 'error' }, x.err.code + ': ' + x.err.message));
      const d = x.d;
      return h('tr', null,
        h('th', { scope: 'row' }, link),
        h('td', { class: 'num' }, fmtInt(d.indexed_rows)),
        h('td', { class: 'num' }, d.dimension),
        h('td', null, d.metric),
        h('td', null, d.encoding),
        h('td', { class: 'num' }, d.current_snapshot_id),
        h('td', null, staleBadge(d)),
        h('td', { class: 'wrap' }, h('span', { class: 'muted' }, d.source.provider + ': '), h('span', { class: 'mono' }, d.source.location)),
        h('td', null, h('a', { href: '#/search/' + enc(n) }, 'Search')));
    });
    const cols = ['Name', { label: 'Rows', num: true }, { label: 'Dimension', num: true }, 'Metric', 'Encoding', { label: 'Snapshot', num: true }, 'State', 'Source', ''];
    return h('section', null, heading('Indexes'),
      names.length === 0
        ? h('p', { class: 'muted' }, 'The catalog has no index yet: create one with parqdb index create.')
        : [h('p', { class: 'muted' }, names.length + (names.length === 1 ? ' index' : ' indexes') + ' in the catalog.'),
          table(cols, rows, { id: 'index-list', label: 'Indexes' })]);
  }

  async function pageIndex(name) {
    const { data: d } = await api('v1/indexes/' + enc(name));
    const facts = [
      ['Rows', fmtInt(d.indexed_rows)], ['Dimension', d.dimension], ['Metric', d.metric], ['Lists (nlist)', d.nlist],
      ['Encoding', d.encoding], ['Vector field', d.vector_field], ['Key fields', d.key_fields.join(', ')],
      ['Columns', d.columns.join(', ')], ['Source', d.source.provider + ': ' + d.source.location],
      ['Snapshot', d.current_snapshot_id], ['Index UUID', h('span', { class: 'mono' }, d.index_uuid)],
      ['Metadata', h('span', { class: 'mono' }, d.metadata_location)],
    ];
    if (d.vectors_file) facts.push(['Vectors file', d.vectors_file.error ? h('span', { class: 'error' }, d.vectors_file.error) : fmtBytes(d.vectors_file.size_bytes)]);
    facts.push(['State', [staleBadge(d), d.stale ? ' ' + d.stale_reason : '']]);
    const snaps = (d.snapshots || []).slice().sort((a, b) => b.snapshot_id - a.snapshot_id).map((sn) =>
      h('tr', { class: sn.snapshot_id === d.current_snapshot_id ? 'current' : null },
        h('td', { class: 'num' }, sn.snapshot_id, sn.snapshot_id === d.current_snapshot_id ? h('span', { class: 'visually-hidden' }, ' (current)') : null),
        h('td', null, sn.operation || h('span', { class: 'muted' }, 'not recorded')),
        h('td', null, fmtTime(sn.timestamp_ms)),
        h('td', { class: 'num' }, fmtInt(sn.indexed_rows)),
        h('td', null, sn.snapshot_id === d.current_snapshot_id ? h('span', { class: 'badge ok' }, 'current') : '')));
    const calib = h('div', { id: 'calibration', 'aria-busy': 'true' }, h('p', { class: 'muted' }, 'Loading the calibration (computed once per snapshot, on first use)…'));
    const caches = h('div', { id: 'caches', 'aria-busy': 'true' }, h('p', { class: 'muted' }, 'Loading /metrics…'));
    loadCalibration(name, calib);
    loadCaches(name, caches);
    return h('section', null,
      heading(d.name, [h('a', { href: '#/' }, 'Indexes'), ' / ', d.name]),
      h('p', null, h('a', { href: '#/search/' + enc(d.name) }, 'Search this index →')),
      h('div', { class: 'grid' },
        h('div', { class: 'panel' }, h('h2', null, 'Metadata'), h('dl', { class: 'facts' }, facts.map(([k, v]) => [h('dt', null, k), h('dd', null, v)]))),
        h('div', { class: 'panel' }, h('h2', null, 'Cache hit rates'), caches)),
      h('h2', null, 'Snapshots'),
      table([{ label: 'Snapshot', num: true }, 'Operation', 'Committed', { label: 'Rows', num: true }, ''], snaps, { id: 'snapshots', label: 'Snapshots' }),
      h('h2', null, 'Recall against cost'),
      calib);
  }

  async function loadCalibration(name, box) {
    try {
      const { data: c } = await api('v1/indexes/' + enc(name) + '/calibration');
      fill(box,
        h('p', { class: 'muted' }, 'Measured recall@' + c.k + ' over ' + c.queries + ' rows of snapshot ' + c.snapshot_id +
          ' (' + c.encoding + ', ' + c.nlist + ' lists). Cost is the mean work per query in LVQ8 distances.' +
          (c.stored ? '' : ' Not stored: ' + c.store_error)),
        calibrationChart(c),
        h('h2', null, 'Recall settings'),
        h('p', { class: 'muted' }, 'What a search with "recall": target runs with.'),
        table([{ label: 'Target', num: true }, { label: 'nprobe', num: true }, { label: 'refine', num: true }, { label: 'Calibrated recall', num: true }, { label: 'Cost', num: true }, ''],
          c.picks.map((p) => h('tr', null,
            h('td', { class: 'num' }, p.target), h('td', { class: 'num' }, p.nprobe), h('td', { class: 'num' }, p.refine),
            h('td', { class: 'num' }, p.recall.toFixed(4) + ' ± ' + p.stderr.toFixed(4)), h('td', { class: 'num' }, fmtInt(Math.round(p.cost))),
            h('td', null, !p.met ? h('span', { class: 'badge warn' }, 'not reached') : p.over_limit ? h('span', { class: 'badge bad' }, 'over server limits') : ''))),
          { id: 'recall-picks', label: 'Recall settings' }),
        h('details', null, h('summary', null, 'All ' + c.points.length + ' measured settings'),
          table([{ label: 'nprobe', num: true }, { label: 'refine', num: true }, { label: 'Recall', num: true }, { label: 'Std. error', num: true }, { label: 'Cost', num: true }],
            c.points.map((p) => h('tr', null, h('td', { class: 'num' }, p.nprobe), h('td', { class: 'num' }, p.refine),
              h('td', { class: 'num' }, p.recall.toFixed(4)), h('td', { class: 'num' }, p.stderr.toFixed(4)), h('td', { class: 'num' }, fmtInt(Math.round(p.cost))))),
            { label: 'Calibration points' })));
    } catch (e) {
      if (e instanceof APIError && e.status === 401) return needToken();
      fill(box, h('p', { class: 'muted' }, 'No calibration: '), errorBox(e));
    } finally {
      box.removeAttribute('aria-busy');
    }
  }

  // calibrationChart draws recall against cost (log scale), one line per
  // refine setting, the picked settings ringed.
  function calibrationChart(c) {
    const W = 720, H = 340, L = 56, R = 16, T = 14, B = 44;
    const pts = c.points.filter((p) => p.cost > 0);
    if (pts.length === 0) return h('p', { class: 'muted' }, 'No points to draw.');
    const lx = pts.map((p) => Math.log10(p.cost));
    let x0 = Math.floor(Math.min(...lx) * 2) / 2, x1 = Math.ceil(Math.max(...lx) * 2) / 2;
    if (x1 <= x0) x1 = x0 + 0.5;
    let y0 = Math.floor(Math.min(...pts.map((p) => p.recall)) * 10) / 10;
    if (y0 > 0.9) y0 = 0.9;
    const y1 = 1;
    const X = (cost) => L + (Math.log10(cost) - x0) / (x1 - x0) * (W - L - R);
    const Y = (r) => T + (y1 - r) / (y1 - y0) * (H - T - B);
    const g = [];
    for (let r = y0; r <= y1 + 1e-9; r += (y1 - y0) > 0.3 ? 0.1 : 0.05) {
      const y = Y(r);
      g.push(s('line', { class: 'gridline', x1: L, x2: W - R, y1: y, y2: y }), s('text', { x: L - 6, y: y + 4, 'text-anchor': 'end' }, r.toFixed(2)));
    }
    for (let e = Math.floor(x0); e <= x1; e++) {
      for (const m of [1, 2, 5]) {
        const v = m * Math.pow(10, e);
        const lv = Math.log10(v);
        if (lv < x0 - 1e-9 || lv > x1 + 1e-9) continue;
        const x = X(v);
        g.push(s('line', { class: 'gridline', x1: x, x2: x, y1: T, y2: H - B }), s('text', { x, y: H - B + 16, 'text-anchor': 'middle' }, fmtInt(v)));
      }
    }
    g.push(s('line', { class: 'axis', x1: L, x2: W - R, y1: H - B, y2: H - B }), s('line', { class: 'axis', x1: L, x2: L, y1: T, y2: H - B }));
    g.push(s('text', { x: (L + W - R) / 2, y: H - 6, 'text-anchor': 'middle' }, 'cost per query (LVQ8 distances, log scale)'));
    g.push(s('text', { x: 14, y: (T + H - B) / 2, 'text-anchor': 'middle', transform: 'rotate(-90 14 ' + (T + H - B) / 2 + ')' }, 'recall@' + c.k));
    const refines = [...new Set(pts.map((p) => p.refine))].sort((a, b) => a - b);
    const legend = [];
    refines.forEach((rf, i) => {
      const cls = 's' + (i % 6);
      const line = pts.filter((p) => p.refine === rf).sort((a, b) => a.cost - b.cost);
      g.push(s('polyline', { class: 'series ' + cls, points: line.map((p) => X(p.cost).toFixed(1) + ',' + Y(p.recall).toFixed(1)).join(' ') }));
      for (const p of line) {
        g.push(s('circle', { class: 'series ' + cls, cx: X(p.cost).toFixed(1), cy: Y(p.recall).toFixed(1), r: 3 },
          s('title', null, 'nprobe ' + p.nprobe + ', refine ' + p.refine + ': recall ' + p.recall.toFixed(4) + ' ± ' + p.stderr.toFixed(4) + ', cost ' + fmtInt(Math.round(p.cost)))));
      }
      legend.push(h('li', null, h('span', { class: 'swatch ' + cls }), 'refine ' + rf));
    });
    for (const p of c.picks) {
      if (!(p.cost > 0)) continue;
      const cx = X(p.cost), cy = Y(p.recall);
      g.push(s('circle', { class: 'pick', cx: cx.toFixed(1), cy: cy.toFixed(1), r: 7 }, s('title', null, 'recall target ' + p.target + ': nprobe ' + p.nprobe + ', refine ' + p.refine)),
        s('text', { class: 'pick-label', x: (cx + 10).toFixed(1), y: (cy + 16).toFixed(1) }, String(p.target)));
    }
    legend.push(h('li', null, '○ setting picked for a target'));
    return h('figure', null,
      s('svg', { class: 'chart', id: 'calibration-chart', viewBox: '0 0 ' + W + ' ' + H, preserveAspectRatio: 'xMinYMin meet', role: 'img', 'aria-labelledby': 'chart-title' },
        s('title', { id: 'chart-title' }, 'Calibrated recall@' + c.k + ' against cost for ' + c.points.length + ' settings of nprobe and refine'), g),
      h('ul', { class: 'legend' }, legend));
  }

  async function loadCaches(name, box) {
    try {
      const { m } = await fetchMetrics();
      const caches = series(m, 'parqdb_cache_hit_ratio');
      const rows = caches.map((x) => {
        const c = x.labels.cache;
        return h('tr', null, h('th', { scope: 'row' }, c), h('td', { class: 'num' }, fmtPct(x.value)),
          h('td', { class: 'num' }, fmtInt(total(m, 'parqdb_cache_lookups_total', { cache: c }))),
          h('td', { class: 'num' }, fmtBytes(total(m, 'parqdb_cache_bytes', { cache: c }))));
      });
      const hit = total(m, 'parqdb_postings_cache_queries_total', { result: 'hit' });
      const miss = total(m, 'parqdb_postings_cache_queries_total', { result: 'miss' });
      fill(box,
        h('p', null, 'Queries searched on ', h('b', null, name), ': ', h('b', null, fmtInt(total(m, 'parqdb_search_queries_total', { index: name })))),
        h('p', null, 'Queries whose every list came from the postings cache: ', h('b', null, hit + miss > 0 ? fmtPct(hit / (hit + miss)) : '—'),
          h('span', { class: 'muted' }, ' (' + fmtInt(hit) + ' of ' + fmtInt(hit + miss) + ')')),
        rows.length ? table(['Cache', { label: 'Hit rate', num: true }, { label: 'Lookups', num: true }, { label: 'Held', num: true }], rows, { id: 'cache-rates', label: 'Cache hit rates' })
          : h('p', { class: 'muted' }, 'No cache has been used yet.'),
        h('p', { class: 'hint' }, 'Caches are shared by every index of the server (process-wide figures since start).'));
    } catch (e) {
      if (e instanceof APIError && e.status === 401) return needToken();
      fill(box, errorBox(e));
    } finally {
      box.removeAttribute('aria-busy');
    }
  }

  async function pageSearch(name, params) {
    const { data: d } = await api('v1/indexes/' + enc(name));
    const keyHint = d.key_fields.length === 1 ? 'the value of ' + d.key_fields[0] : 'a JSON array with one value per key field: ' + d.key_fields.join(', ');
    const mode = (v, label, checked) => h('label', { class: 'inline' }, h('input', { type: 'radio', name: 'mode', value: v, checked }), label);
    const tune = (v, label, checked) => h('label', { class: 'inline' }, h('input', { type: 'radio', name: 'tune', value: v, checked }), label);
    const keyIn = h('input', { type: 'text', id: 'key', name: 'key', class: 'wide', autocomplete: 'off', 'aria-describedby': 'key-hint', value: params.get('key') || '' });
    const vecIn = h('textarea', { id: 'vector', name: 'vector', 'aria-describedby': 'vector-hint', rows: '3', placeholder: '[0.1, -0.2, …]' });
    const whereIn = h('input', { type: 'text', id: 'where', name: 'where', class: 'wide mono', autocomplete: 'off', spellcheck: 'false', 'aria-describedby': 'where-hint where-error', value: params.get('where') || '' });
    const whereErr = h('div', { id: 'where-error', class: 'where-error', hidden: true, role: 'alert' });
    const num = (id, value, min, max, step) => h('input', { type: 'number', id, name: id, value, min, max, step: step || '1' });
    const kIn = num('k', params.get('k') || '10', '1', '1000');
    const nprobeIn = num('nprobe', '8', '1', '4096');
    const refineIn = num('refine', '0', '0', '100');
    const recallIn = num('recall', '0.95', '0.01', '1', '0.01');
    const colBoxes = d.columns.map((c) => h('label', { class: 'inline' }, h('input', { type: 'checkbox', name: 'column', value: c, checked: c !== d.vector_field }), c));
    const button = h('button', { type: 'submit', id: 'run' }, 'Search');
    const out = h('section', { id: 'results', 'aria-live': 'polite' });
    const form = h('form', { class: 'search', id: 'search-form', novalidate: true },
      h('fieldset', { class: 'wide' }, h('legend', null, 'Query'),
        h('div', { class: 'row', role: 'radiogroup', 'aria-label': 'Query by' }, mode('key', 'Near the row with key', true), mode('vector', 'Pasted vector', false)),
        h('div', { id: 'by-key' }, h('label', { class: 'block', for: 'key' }, 'Key', keyIn), h('span', { id: 'key-hint', class: 'hint' }, keyHint)),
        h('div', { id: 'by-vector', hidden: true }, h('label', { class: 'block', for: 'vector' }, 'Vector', vecIn),
          h('span', { id: 'vector-hint', class: 'hint' }, d.dimension + ' numbers: a JSON array, or numbers separated by commas or spaces'))),
      h('fieldset', null, h('legend', null, 'Settings'),
        h('div', { class: 'row', role: 'radiogroup', 'aria-label': 'Choose the effort by' }, tune('manual', 'nprobe and refine', true), tune('recall', 'target recall', false)),
        h('div', { class: 'row' }, h('label', { for: 'k' }, 'k (rows)', kIn),
          h('span', { class: 'row', id: 'manual' }, h('label', { for: 'nprobe' }, 'nprobe (lists)', nprobeIn), h('label', { for: 'refine' }, 'refine (× k)', refineIn)),
          h('span', { class: 'row', id: 'by-recall', hidden: true }, h('label', { for: 'recall' }, 'recall@k', recallIn))),
        h('p', { class: 'hint' }, 'refine re-scores refine × k candidates with exact vectors; a target recall takes nprobe and refine from the index\'s calibration.')),
      h('fieldset', null, h('legend', null, 'Filter'),
        h('label', { class: 'block', for: 'where' }, 'where', whereIn),
        h('p', { id: 'where-hint', class: 'hint' }, 'A predicate over source columns, e.g. rank < 1000 AND word LIKE \'p%\' (the parqdb search --where grammar). Empty: no filter.'),
        whereErr),
      h('div', { class: 'wide row submit' }, h('fieldset', null, h('legend', null, 'Columns'), h('div', { class: 'row' }, colBoxes)), button));

    function sync() {
      const byKey = form.elements.mode.value === 'key';
      form.querySelector('#by-key').hidden = !byKey;
      form.querySelector('#by-vector').hidden = byKey;
      const manual = form.elements.tune.value === 'manual';
      form.querySelector('#manual').hidden = !manual;
      form.querySelector('#by-recall').hidden = manual;
    }
    form.addEventListener('change', sync);

    function clearWhereError() {
      whereErr.hidden = true;
      fill(whereErr);
      whereIn.removeAttribute('aria-invalid');
    }
    whereIn.addEventListener('input', clearWhereError);

    function showWhereError(e) {
      const m = /at position (\d+)/.exec(e.message);
      const text = whereIn.value;
      const parts = [h('b', null, e.code), ': ' + e.message];
      if (m) {
        const pos = Number(m[1]); // 1-based, in characters
        const chars = Array.from(text);
        parts.push(h('pre', { id: 'where-caret', 'aria-hidden': 'true' }, chars.join(''), '\n', ' '.repeat(Math.max(0, pos - 1)), h('span', { class: 'caret' }, '^')));
      }
      fill(whereErr, ...parts);
      whereErr.hidden = false;
      whereIn.setAttribute('aria-invalid', 'true');
      whereIn.focus();
      if (m) {
        // select the offending character (positions count characters, the input UTF-16 units)
        const start = Array.from(text).slice(0, Number(m[1]) - 1).join('').length;
        whereIn.setSelectionRange(start, Math.min(text.length, start + 1));
      }
    }

    function request() {
      const body = {};
      if (form.elements.mode.value === 'key') {
        const t = keyIn.value.trim();
        body.key = t.startsWith('[') || t.startsWith('{') ? JSON.parse(t) : keyIn.value;
      } else {
        const t = vecIn.value.trim();
        body.vector = t.startsWith('[') ? JSON.parse(t) : t.split(/[\s,]+/).filter(Boolean).map(Number);
      }
      body.k = Number(kIn.value);
      if (form.elements.tune.value === 'recall') body.recall = Number(recallIn.value);
      else { body.nprobe = Number(nprobeIn.value); body.refine = Number(refineIn.value); }
      body.columns = colBoxes.map((l) => l.firstChild).filter((c) => c.checked).map((c) => c.value);
      if (whereIn.value.trim() !== '') body.where = whereIn.value;
      return body;
    }

    form.addEventListener('submit', async (ev) => {
      ev.preventDefault();
      clearWhereError();
      let body;
      try {
        body = request();
      } catch (e) {
        fill(out, h('p', { class: 'alert', role: 'alert' }, 'Not valid JSON: ' + e.message));
        return;
      }
      button.disabled = true;
      out.setAttribute('aria-busy', 'true');
      const t0 = performance.now();
      try {
        const { resp, data } = await api('v1/indexes/' + enc(name) + '/search', { json: body });
        fill(out, ...results(name, d.key_fields, body, resp, data, performance.now() - t0));
        announce(data.results[0].length + ' rows');
      } catch (e) {
        if (e instanceof APIError && e.status === 401) return needToken();
        if (e instanceof APIError && e.code.startsWith('filter_')) {
          fill(out);
          showWhereError(e);
        } else {
          fill(out, errorBox(e), requestDetails(name, body));
        }
      } finally {
        button.disabled = false;
        out.removeAttribute('aria-busy');
        out.dataset.answers = String(Number(out.dataset.answers || 0) + 1); // answers shown so far (tests wait on it)
      }
    });

    setTimeout(() => { sync(); if (params.get('key')) form.requestSubmit(); }, 0);
    return h('section', null,
      heading('Search ' + d.name, [h('a', { href: '#/' }, 'Indexes'), ' / ', h('a', { href: '#/indexes/' + enc(d.name) }, d.name), ' / search']),
      h('p', { class: 'muted' }, fmtInt(d.indexed_rows) + ' rows, ' + d.dimension + ' dimensions, ' + d.metric + ', ' + d.encoding + '.'),
      form, out);
  }

  function requestDetails(name, body) {
    const json = JSON.stringify(body);
    const auth = token() ? " -H 'Authorization: Bearer …'" : '';
    return h('details', null, h('summary', null, 'This request with curl'),
      h('pre', { class: 'request', id: 'request' }, 'curl -s ' + new URL(API + 'v1/indexes/' + enc(name) + '/search', location.href).href +
        " -H 'Content-Type: application/json'" + auth + " -d '" + json.replace(/'/g, "'\\''") + "'"));
  }

  function parseServerTiming(v) {
    const out = {};
    for (const part of (v || '').split(',')) {
      const m = /^\s*([\w-]+)\s*;\s*dur=([\d.]+)/.exec(part);
      if (m) out[m[1]] = Number(m[2]);
    }
    return out;
  }

  function results(name, keyFields, body, resp, data, roundTrip) {
    const rows = data.results[0];
    const cols = data.columns;
    const st = data.stats;
    const timing = parseServerTiming(resp.headers.get('Server-Timing'));
    const serverMS = (timing.admit || 0) + (timing.search || 0) + (timing.encode || 0);
    const stat = (label, v, title) => h('li', { title }, label + ' ', h('b', null, v));
    const stats = [
      stat('snapshot', data.snapshot_id), stat('lists', fmtInt(st.lists), 'posting lists probed'),
      stat('candidates', fmtInt(st.candidates), 'postings rows scored'), stat('refined', fmtInt(st.refined), 're-scored with exact vectors'),
      stat('storage requests', fmtInt(st.requests), 'postings reads not in the cache'), stat('bytes read', fmtBytes(st.bytes_read)),
    ];
    if (st.filter_rows !== undefined) stats.push(stat('filter rows', fmtInt(st.filter_rows), 'rows matching where'));
    if (st.filter_exact_plans) stats.push(stat('plan', 'exact', 'few rows matched: scored exactly'));
    if (st.filter_list_plans) stats.push(stat('plan', 'lists', 'filtered while scanning lists'));
    if (st.filter_widenings) stats.push(stat('widenings', st.filter_widenings));
    stats.push(stat('search', (timing.search || 0).toFixed(2) + ' ms', 'Server-Timing: search and join'));
    stats.push(stat('server', serverMS.toFixed(2) + ' ms', 'Server-Timing: admit ' + timing.admit + ' ms, search ' + timing.search + ' ms, encode ' + timing.encode + ' ms'));
    stats.push(stat('round trip', roundTrip.toFixed(1) + ' ms', 'measured by the browser'));
    const stale = resp.headers.get('ParqDB-Stale');
    const numeric = (c) => c === '_distance' || (rows.length > 0 && typeof rows[0][c] === 'number');
    const trs = rows.map((r, i) => h('tr', null, h('td', { class: 'num' }, i + 1),
      cols.map((c) => h('td', { class: numeric(c) ? 'num' : null, 'data-col': c }, nearLink(c, r[c])))));
    // nearLink links a one-field key to a search near its row.
    function nearLink(c, v) {
      if (keyFields.length !== 1 || c !== keyFields[0] || (typeof v !== 'string' && typeof v !== 'number')) return cell(v);
      return h('a', { href: '#/search/' + enc(name) + '?key=' + encodeURIComponent(String(v)) + '&k=' + body.k, title: 'Search near this row' }, String(v));
    }
    return [
      h('h2', null, rows.length + (rows.length === 1 ? ' row' : ' rows')),
      stale ? h('p', { class: 'note' }, stale) : null,
      h('ul', { class: 'stats', id: 'query-stats', 'aria-label': 'Query statistics' }, stats),
      rows.length ? table([{ label: '#', num: true }].concat(cols.map((c) => (numeric(c) ? { label: c, num: true } : c))), trs, { id: 'result-rows', label: 'Results' })
        : h('p', { class: 'muted' }, 'No row matched.'),
      requestDetails(name, body),
    ];
  }

  async function pageServer(seq) {
    let prev = await fetchMetrics();
    const box = h('div', { id: 'server-metrics' });
    const render = (cur, before) => fill(box, ...serverPanels(cur, before));
    render(prev, null);
    pageTimer = setInterval(async () => {
      if (seq !== renderSeq) return;
      try {
        const cur = await fetchMetrics();
        if (seq !== renderSeq) return;
        render(cur, prev);
        prev = cur;
      } catch (e) {
        if (e instanceof APIError && e.status === 401) return needToken();
        box.prepend(errorBox(e));
      }
    }, 2000);
    return h('section', null, heading('Server'),
      h('p', { class: 'muted' }, 'From /metrics, read every 2 s. Rates are over the last interval; latency percentiles since the server started.'),
      box);
  }

  function serverPanels(cur, before) {
    const m = cur.m;
    const dt = before ? (cur.at - before.at) / 1000 : 0;
    const rate = (name, match, filter) => {
      if (!before) return NaN;
      const sum = (mm) => series(mm, name, match).filter(filter || (() => true)).reduce((a, x) => a + x.value, 0);
      return (sum(m) - sum(before.m)) / dt;
    };
    const notMetrics = (x) => x.labels.route !== '/metrics';
    const fmtRate = (r) => (isFinite(r) ? r.toFixed(r < 10 ? 2 : 1) + ' /s' : 'measuring…');
    const reqRate = rate('parqdb_http_requests_total', null, notMetrics);
    const throughput = h('div', { class: 'panel', id: 'throughput', 'data-ready': before ? 'true' : 'false' }, h('h2', null, 'Throughput'),
      h('dl', { class: 'facts' },
        h('dt', null, 'Search requests'), h('dd', null, fmtRate(rate('parqdb_http_requests_total', { route: '/v1/indexes/{name}/search' }))),
        h('dt', null, 'Query vectors'), h('dd', null, fmtRate(rate('parqdb_search_queries_total'))),
        h('dt', null, 'All API requests'), h('dd', null, fmtRate(reqRate), h('span', { class: 'hint' }, ' (not counting /metrics)')),
        h('dt', null, 'Running / waiting'), h('dd', null, total(m, 'parqdb_search_running') + ' / ' + total(m, 'parqdb_search_waiting')),
        h('dt', null, 'Searches since start'), h('dd', null, fmtInt(total(m, 'parqdb_search_queries_total'))),
        h('dt', null, 'Open snapshots'), h('dd', null, total(m, 'parqdb_open_snapshots'))));

    const routes = [...new Set(series(m, 'parqdb_http_request_duration_seconds_count').map((x) => x.labels.route))].sort();
    const latRows = routes.map((r) => {
      const b = series(m, 'parqdb_http_request_duration_seconds_bucket', { route: r });
      const n = total(m, 'parqdb_http_request_duration_seconds_count', { route: r });
      const sum = total(m, 'parqdb_http_request_duration_seconds_sum', { route: r });
      return h('tr', null, h('th', { scope: 'row', class: 'mono' }, r), h('td', { class: 'num' }, fmtInt(n)),
        h('td', { class: 'num' }, fmtMS(quantile(0.5, b))), h('td', { class: 'num' }, fmtMS(quantile(0.9, b))),
        h('td', { class: 'num' }, fmtMS(quantile(0.99, b))), h('td', { class: 'num' }, fmtMS(n ? sum / n : NaN)));
    });
    const latency = h('div', { class: 'panel' }, h('h2', null, 'Latency'),
      table(['Route', { label: 'Requests', num: true }, { label: 'p50', num: true }, { label: 'p90', num: true }, { label: 'p99', num: true }, { label: 'Mean', num: true }],
        latRows, { id: 'latency', label: 'Latency by route' }),
      h('p', { class: 'hint' }, 'Percentiles are estimated from the histogram buckets, as Prometheus does.'));

    const errs = series(m, 'parqdb_http_requests_total').filter((x) => Number(x.labels.code) >= 400 && x.value > 0)
      .sort((a, b) => b.value - a.value);
    const errRows = errs.map((x) => h('tr', null, h('td', { class: 'mono' }, x.labels.route), h('td', null, x.labels.method),
      h('td', { class: 'num' }, x.labels.code), h('td', { class: 'num' }, fmtInt(x.value))));
    const allReq = total(m, 'parqdb_http_requests_total');
    const errTotal = errs.reduce((a, x) => a + x.value, 0);
    const errors = h('div', { class: 'panel' }, h('h2', null, 'Errors'),
      h('p', null, fmtInt(errTotal) + ' of ' + fmtInt(allReq) + ' requests answered an error (' + fmtPct(allReq ? errTotal / allReq : NaN) + '); ' +
        fmtInt(total(m, 'parqdb_search_rejected_total')) + ' overloaded; ' + fmtInt(total(m, 'parqdb_snapshot_refresh_failures_total')) + ' failed snapshot refreshes.'),
      errRows.length ? table(['Route', 'Method', { label: 'Status', num: true }, { label: 'Count', num: true }], errRows, { id: 'errors', label: 'Errors by route and status' }) : null);

    const limit = total(m, 'parqdb_cache_limit_bytes');
    const used = total(m, 'parqdb_cache_bytes');
    const bar = (frac) => { const sp = h('span'); sp.style.width = Math.min(100, Math.max(0, frac * 100)).toFixed(1) + '%'; return h('div', { class: 'bar', role: 'presentation' }, sp); };
    const cacheRows = series(m, 'parqdb_cache_bytes').map((x) => h('tr', null, h('th', { scope: 'row' }, x.labels.cache),
      h('td', { class: 'num' }, fmtBytes(x.value)), h('td', null, bar(limit ? x.value / limit : 0)),
      h('td', { class: 'num' }, fmtPct(total(m, 'parqdb_cache_hit_ratio', { cache: x.labels.cache })))));
    const memory = h('div', { class: 'panel', id: 'memory' }, h('h2', null, 'Memory'),
      h('dl', { class: 'facts' },
        h('dt', null, 'Caches'), h('dd', null, fmtBytes(used) + ' of ' + fmtBytes(limit) + ' budget (' + fmtPct(limit ? used / limit : NaN) + ')', bar(limit ? used / limit : 0)),
        h('dt', null, 'Resident (RSS)'), h('dd', null, fmtBytes(total(m, 'process_resident_memory_bytes'))),
        h('dt', null, 'Go heap in use'), h('dd', null, fmtBytes(total(m, 'go_memstats_heap_inuse_bytes'))),
        h('dt', null, 'Goroutines'), h('dd', null, fmtInt(total(m, 'go_goroutines')))),
      cacheRows.length ? table(['Cache', { label: 'Held', num: true }, 'Share of budget', { label: 'Hit rate', num: true }], cacheRows, { id: 'cache-memory', label: 'Memory by cache' }) : null);
    return [h('div', { class: 'grid' }, h('div', { class: 'stack' }, throughput, errors), memory), latency];
  }

  function tokenPage() {
    const had = token() !== null;
    sessionStorage.removeItem(TOKEN_KEY);
    forget.hidden = true;
    const input = h('input', { type: 'password', id: 'token', name: 'token', autocomplete: 'off', required: true, 'aria-describedby': 'token-help' + (had ? ' token-error' : '') });
    const form = h('form', { id: 'token-form' },
      h('label', { for: 'token' }, 'Token', input),
      h('div', null, h('button', { type: 'submit' }, 'Continue')));
    form.addEventListener('submit', (ev) => {
      ev.preventDefault();
      if (input.value === '') return;
      sessionStorage.setItem(TOKEN_KEY, input.value);
      route();
    });
    setTimeout(() => input.focus(), 0);
    return h('section', { class: 'token' }, heading('Token required'),
      h('p', { id: 'token-help' }, 'This server requires a token (parqdb serve --token-file). The console keeps it in this tab\'s session storage only, until the tab closes, and sends it as Authorization: Bearer.'),
      had ? h('p', { id: 'token-error', class: 'alert', role: 'alert' }, 'The server did not accept that token.') : null,
      form);
  }

  // needToken replaces the page by the token prompt (an API call of a
  // section answered 401).
  function needToken() {
    renderSeq++;
    clearInterval(pageTimer);
    fill(main, tokenPage());
  }

  // ---- router ----

  function route() {
    clearInterval(pageTimer);
    pageTimer = null;
    const hash = location.hash.replace(/^#/, '') || '/';
    const [path, qs] = hash.split('?');
    const parts = path.split('/').filter(Boolean).map(decodeURIComponent);
    const params = new URLSearchParams(qs || '');
    let page;
    let nav = 'indexes';
    if (parts.length === 0 || (parts[0] === 'indexes' && parts.length === 1)) page = pageIndexList;
    else if (parts[0] === 'indexes' && parts.length === 2) page = () => pageIndex(parts[1]);
    else if (parts[0] === 'search' && parts.length === 2) page = () => pageSearch(parts[1], params);
    else if (parts[0] === 'server' && parts.length === 1) { page = pageServer; nav = 'server'; }
    else page = async () => h('section', null, heading('Not found'), h('p', null, 'No console page ', h('code', null, '#' + hash), '. ', h('a', { href: '#/' }, 'Indexes')));
    for (const a of document.querySelectorAll('[data-nav]')) {
      if (a.dataset.nav === nav) a.setAttribute('aria-current', 'page');
      else a.removeAttribute('aria-current');
    }
    show(page);
  }

  async function show(page) {
    const seq = ++renderSeq;
    main.setAttribute('aria-busy', 'true');
    let node;
    try {
      node = await page(seq);
    } catch (e) {
      if (seq !== renderSeq) return;
      if (e instanceof APIError && e.status === 401) node = tokenPage();
      else node = h('section', null, heading('Error'), errorBox(e));
    }
    if (seq !== renderSeq) return;
    forget.hidden = token() === null;
    fill(main, node);
    main.removeAttribute('aria-busy');
    const h1 = main.querySelector('h1');
    if (h1) h1.focus({ preventScroll: true });
  }

  forget.addEventListener('click', () => {
    sessionStorage.removeItem(TOKEN_KEY);
    route();
  });
  window.addEventListener('hashchange', route);
  route();
})();
