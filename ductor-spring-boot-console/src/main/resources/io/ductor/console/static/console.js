// Ductor operator console: plain JavaScript, no build step. Reads and writes through the ductor
// actuator endpoint; every text from the server is put into the page as text, never as HTML.
(function () {
  'use strict';
  const body = document.body;
  const ENDPOINT = body.dataset.endpoint;
  const CSRF_HEADER = body.dataset.csrfHeader;
  const CSRF_TOKEN = body.dataset.csrfToken;
  // what stands between this page and the endpoint, found by the server: a property to set
  const ENDPOINT_PROBLEM = body.dataset.endpointProblem;
  const ENDPOINT_NOTICE = body.dataset.endpointNotice;
  const STATUSES = ['pending', 'in_flight', 'reconciling', 'failed', 'needs_decision', 'completed', 'cancelled'];
  const PAGE_SIZE = 50;
  const main = document.getElementById('main');

  function h(tag, attrs, ...children) {
    const el = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (v === null || v === undefined || v === false) continue;
      if (k.startsWith('on')) el.addEventListener(k.substring(2), v);
      else if (k === 'dataset') Object.assign(el.dataset, v);
      else el.setAttribute(k, v === true ? '' : v);
    }
    for (const c of children.flat(Infinity)) {
      if (c === null || c === undefined) continue;
      el.append(c instanceof Node ? c : document.createTextNode(String(c)));
    }
    return el;
  }
  const svg = (tag, attrs) => {
    const el = document.createElementNS('http://www.w3.org/2000/svg', tag);
    for (const [k, v] of Object.entries(attrs || {})) el.setAttribute(k, v);
    return el;
  };
  const status = (s) => { const v = (s || '').toLowerCase(); return h('span', { class: 'status ' + v, dataset: { status: v } }, v); };
  const time = (t) => t ? new Date(t).toLocaleString() : '';
  const link = (hash, text) => h('a', { href: hash }, text);
  const intentLink = (id) => link('#/intent/' + id, String(id));
  const runLink = (id) => id ? link('#/run/' + encodeURIComponent(id), id) : '';
  // Indents JSON as JSON.stringify(value, null, 2) would, from its text: parsing it would turn every
  // number into a double (1234567890.123456789 would show as 1234567890.1234567). Not JSON: as it is.
  function pretty(json) {
    if (json === null || json === undefined) return '';
    try { JSON.parse(json); } catch (e) { return json; }
    let out = '', depth = 0, inString = false, escaped = false;
    const newline = () => '\n' + '  '.repeat(depth);
    for (let i = 0; i < json.length; i++) {
      const c = json[i];
      if (inString) {
        out += c;
        if (escaped) escaped = false;
        else if (c === '\\') escaped = true;
        else if (c === '"') inString = false;
      } else if (c === '"') {
        inString = true;
        out += c;
      } else if (c === '{' || c === '[') {
        let next = i + 1;
        while (next < json.length && ' \t\r\n'.includes(json[next])) next++;
        if (json[next] === (c === '{' ? '}' : ']')) { out += c + json[next]; i = next; }
        else { depth++; out += c + newline(); }
      } else if (c === '}' || c === ']') {
        depth--;
        out += newline() + c;
      } else if (c === ',') {
        out += ',' + newline();
      } else if (c === ':') {
        out += ': ';
      } else if (!' \t\r\n'.includes(c)) {
        out += c;
      }
    }
    return out;
  }
  function age(ms) {
    if (ms === null || ms === undefined) return '–';
    if (ms < 1000) return Math.round(ms) + ' ms';
    const s = Math.round(ms / 1000);
    if (s < 120) return s + ' s';
    if (s < 7200) return Math.round(s / 60) + ' min';
    return Math.round(s / 3600) + ' h';
  }
  function isoDuration(d) { // Jackson writes java.time.Duration as seconds (number) or ISO text
    if (d === null || d === undefined) return null;
    if (typeof d === 'number') return d * 1000;
    const m = /^PT(?:(\d+)H)?(?:(\d+)M)?(?:([\d.]+)S)?$/.exec(d);
    return m ? ((+(m[1] || 0)) * 3600 + (+(m[2] || 0)) * 60 + (+(m[3] || 0))) * 1000 : null;
  }

  async function api(path, options) {
    const init = Object.assign({ headers: { Accept: 'application/json' }, credentials: 'same-origin' }, options || {});
    const list = init.list;
    delete init.list;
    if (init.method === 'POST') {
      init.headers['Content-Type'] = 'application/json';
      if (CSRF_HEADER && CSRF_TOKEN) init.headers[CSRF_HEADER] = CSRF_TOKEN;
    }
    const started = performance.now();
    const response = await fetch(ENDPOINT + path, init);
    document.getElementById('status-line').textContent = (init.method || 'GET') + ' ' + response.status + ' in '
      + Math.round(performance.now() - started) + ' ms';
    const text = await response.text();
    let data = null;
    try { data = text ? JSON.parse(text) : null; } catch (e) { data = { message: text }; }
    if (!response.ok) {
      const error = new Error(response.status + ' ' + ((data && (data.message || data.error)) || response.statusText));
      error.status = response.status;
      // the overview and the lists always answer: a 404 means the endpoint itself is missing
      error.unreachable = list && response.status === 404;
      throw error;
    }
    return data;
  }
  const query = (params) => {
    const q = new URLSearchParams();
    for (const [k, v] of Object.entries(params)) if (v !== null && v !== undefined && v !== '') q.set(k, v);
    const s = q.toString();
    return s ? '?' + s : '';
  };
  const showError = (e) => h('p', { class: 'error', id: 'error', dataset: { status: e.status || '' } }, e.message);
  // a message with the properties it names as code
  function withCode(text) {
    const parts = [];
    let at = 0;
    for (const m of text.matchAll(/(?:management|ductor)\.[\w.\-]+(?:=[\w.,*\-:]*[\w*])?/g)) {
      parts.push(text.substring(at, m.index), h('code', {}, m[0]));
      at = m.index + m[0].length;
    }
    parts.push(text.substring(at));
    return parts;
  }
  function endpointProblem(message) {
    return h('div', { class: 'error problem', id: 'endpoint-problem' },
      h('h2', {}, 'The console cannot reach the ductor endpoint'), h('p', {}, withCode(message)));
  }
  // a list or the overview answered 404: the endpoint is not there, whatever the server found
  const unreachable = (e) => endpointProblem('The ductor actuator endpoint answered ' + e.message + ' at ' + ENDPOINT
    + ': it is not exposed over HTTP on this port. Add ductor to management.endpoints.web.exposure.include '
    + '(management.endpoints.web.exposure.include=health,ductor).');

  // A confirmation with a reason; resolves to the reason, or null when the operator cancels.
  function confirmWithReason(title, text) {
    const dialog = document.getElementById('confirm');
    const reason = document.getElementById('confirm-reason');
    document.getElementById('confirm-title').textContent = title;
    document.getElementById('confirm-text').textContent = text;
    reason.value = '';
    return new Promise((resolve) => {
      const form = document.getElementById('confirm-form');
      const cancel = document.getElementById('confirm-cancel');
      const done = (value) => { form.onsubmit = null; cancel.onclick = null; dialog.close(); resolve(value); };
      form.onsubmit = (ev) => { ev.preventDefault(); if (reason.value.trim()) done(reason.value.trim()); };
      cancel.onclick = () => done(null);
      dialog.showModal();
      reason.focus();
    });
  }

  const ACTIONS = [
    { id: 'retry', label: 'Retry', body: { action: 'retry' }, from: ['failed', 'needs_decision'] },
    { id: 'mark_done', label: 'Mark done', body: { action: 'resolve', resolution: 'mark_done' }, from: ['needs_decision', 'reconciling'] },
    { id: 'mark_failed', label: 'Mark failed', body: { action: 'resolve', resolution: 'mark_failed' }, from: ['needs_decision', 'reconciling'] },
    { id: 'cancel', label: 'Cancel', body: { action: 'cancel' }, from: ['pending', 'reconciling', 'failed', 'needs_decision'] },
  ];

  // ---------------------------------------------------------------- overview
  async function overview() {
    const data = await api('', { list: true });
    const b = data.backlog;
    const card = (label, value, bad, id) => h('div', { class: 'card' + (bad ? ' bad' : ''), dataset: { card: id } },
      h('div', { class: 'value' }, value), h('div', { class: 'label' }, label));
    const filtered = (s) => '#/intents' + query({ status: s });
    const view = h('div', { id: 'overview' },
      h('h2', {}, 'Backlog'),
      h('div', { class: 'cards' },
        h('a', { href: filtered('pending') }, card('pending' + (b.pendingEstimated ? ' (estimate)' : ''), b.pendingIntents, false, 'pending')),
        h('a', { href: filtered('in_flight') }, card('in flight', b.inFlight, false, 'in_flight')),
        h('a', { href: filtered('reconciling') }, card('reconciling', b.reconciling, false, 'reconciling')),
        h('a', { href: filtered('needs_decision') }, card('needs decision', b.needsDecision, b.needsDecision > 0, 'needs_decision')),
        h('a', { href: filtered('failed') }, card('failed', b.failed, b.failed > 0, 'failed')),
        card('oldest due', age(isoDuration(b.oldestDueAge)), false, 'oldest_due'),
        card('pending reservations', b.pendingReservations, false, 'reservations')),
      h('h2', {}, 'Dispatch over the last 15 minutes'), chart(data.throughput || []),
      h('div', { class: 'grid' },
        h('div', {}, h('h2', {}, 'Failed and needs decision by effect'), parkedTable(data.parkedByEffect || [])),
        h('div', {}, h('h2', {}, 'Workers of this instance'), workersTable(data.workers || []),
          h('h2', {}, 'Drainer instances holding leases'), leaseTable(data.leaseOwners || []))));
    return view;
  }
  function chart(minutes) {
    const W = 720, H = 160, P = 28;
    const now = Date.now();
    const start = Math.floor(now / 60000) * 60000 - 14 * 60000;
    const slots = [];
    for (let i = 0; i < 15; i++) slots.push({ t: start + i * 60000, completed: 0, lag: 0 });
    for (const m of minutes) {
      const i = Math.round((new Date(m.minute).getTime() - start) / 60000);
      if (i >= 0 && i < 15) { slots[i].completed = m.completed; slots[i].lag = m.meanLagMs; }
    }
    const maxC = Math.max(1, ...slots.map((s) => s.completed));
    const maxL = Math.max(1, ...slots.map((s) => s.lag));
    const el = svg('svg', { class: 'chart', id: 'throughput-chart', width: W, height: H, viewBox: `0 0 ${W} ${H}`, role: 'img' });
    const bw = (W - 2 * P) / 15;
    let path = '';
    slots.forEach((s, i) => {
      const bh = (H - 2 * P) * s.completed / maxC;
      el.append(svg('rect', { class: 'bar', x: P + i * bw + 2, y: H - P - bh, width: bw - 4, height: bh }));
      const y = H - P - (H - 2 * P) * s.lag / maxL;
      path += (i ? ' L' : 'M') + (P + i * bw + bw / 2) + ' ' + y;
      if (i % 3 === 0) {
        const label = svg('text', { x: P + i * bw, y: H - 8 });
        label.textContent = new Date(s.t).toLocaleTimeString([], { hour: '2-digit', minute: '2-digit' });
        el.append(label);
      }
    });
    el.append(svg('path', { class: 'lag', d: path }));
    const legend = svg('text', { x: P, y: 14 });
    legend.textContent = `bars: completed per minute (max ${maxC}) · line: mean dispatch lag (max ${age(maxL)})`;
    el.append(legend);
    return el;
  }
  function parkedTable(rows) {
    if (!rows.length) return h('p', { class: 'muted', id: 'parked-none' }, 'Nothing failed or waiting for a decision.');
    return h('table', { id: 'parked' }, h('tr', {}, h('th', {}, 'effect'), h('th', {}, 'status'), h('th', {}, 'intents')),
      rows.map((r) => h('tr', { dataset: { effect: r.effect, status: r.status } },
        h('td', {}, link('#/intents' + query({ status: r.status, effect: r.effect }), r.effect)),
        h('td', {}, status(r.status)), h('td', { class: 'num' }, r.intents))));
  }
  function workersTable(rows) {
    return h('table', { id: 'workers' }, h('tr', {}, h('th', {}, 'worker'), h('th', {}, 'running'), h('th', {}, 'rounds'),
      h('th', {}, 'last completed'), h('th', {}, 'last error')),
      rows.map((w) => h('tr', {}, h('td', {}, w.name), h('td', {}, w.running ? 'yes' : 'no'), h('td', { class: 'num' }, w.rounds),
        h('td', {}, time(w.lastCompletedAt)), h('td', {}, w.lastError || ''))));
  }
  function leaseTable(rows) {
    if (!rows.length) return h('p', { class: 'muted' }, 'No intent is in flight.');
    return h('table', { id: 'lease-owners' }, h('tr', {}, h('th', {}, 'instance'), h('th', {}, 'in flight'), h('th', {}, 'leases until')),
      rows.map((o) => h('tr', {}, h('td', {}, o.owner), h('td', { class: 'num' }, o.inFlight),
        h('td', { class: o.expired ? 'error' : '' }, time(o.leaseUntil) + (o.expired ? ' (expired)' : '')))));
  }

  // ---------------------------------------------------------------- intents
  async function intents(params) {
    const filter = { status: params.get('status') || 'all', effect: params.get('effect') || '', key: params.get('key') || '',
      run: params.get('run') || '', from: params.get('from') || '', to: params.get('to') || '' };
    const afterId = params.get('afterId') || '';
    const page = +(params.get('page') || '1');
    const field = (name, label, attrs) => h('label', {}, label, h('input', Object.assign({ name, id: 'filter-' + name, value: filter[name] }, attrs || {})));
    const form = h('form', { class: 'filters', id: 'filters', onsubmit: (ev) => {
      ev.preventDefault();
      const f = new FormData(ev.target);
      const q = {};
      for (const [k, v] of f.entries()) q[k] = v;
      for (const k of ['from', 'to']) if (q[k]) q[k] = new Date(q[k]).toISOString();
      location.hash = '#/intents' + query(q);
    } },
      h('label', {}, 'status', h('select', { name: 'status', id: 'filter-status' },
        ['all'].concat(STATUSES).map((s) => h('option', { value: s, selected: s === filter.status }, s)))),
      field('effect', 'effect'), field('key', 'key'), field('run', 'run'),
      field('from', 'created from', { type: 'datetime-local', value: localInput(filter.from) }),
      field('to', 'created before', { type: 'datetime-local', value: localInput(filter.to) }),
      h('button', { type: 'submit', class: 'primary', id: 'filter-apply' }, 'Filter'));
    const rows = await api('/' + encodeURIComponent(filter.status) + query(Object.assign({}, filter, { status: null, afterId, limit: PAGE_SIZE })));
    const last = rows.length ? rows[rows.length - 1].id : null;
    const base = Object.assign({}, filter);
    const pager = h('div', { class: 'pager', id: 'pager', dataset: { page: page, rows: rows.length, status: filter.status, effect: filter.effect } },
      h('button', { id: 'page-first', disabled: page === 1, onclick: () => { location.hash = '#/intents' + query(base); } }, 'First page'),
      h('span', { id: 'page-number' }, 'page ' + page),
      h('button', { id: 'page-next', disabled: rows.length < PAGE_SIZE,
        onclick: () => { location.hash = '#/intents' + query(Object.assign({}, base, { afterId: last, page: page + 1 })); } }, 'Next page'));
    const table = h('table', { id: 'intents' },
      h('tr', {}, ['id', 'effect', 'key', 'status', 'attempts', 'next attempt', 'run', 'created', 'last error or note'].map((c) => h('th', {}, c))),
      rows.map((i) => h('tr', { dataset: { intentId: i.id, status: i.status.toLowerCase() } },
        h('td', { class: 'num' }, intentLink(i.id)), h('td', {}, i.effectName), h('td', {}, h('code', {}, i.idempotencyKey)),
        h('td', {}, status(i.status), reconcileNote(i)), h('td', { class: 'num' }, i.attempts + ' / ' + i.maxAttempts),
        h('td', {}, time(i.nextAttemptAt)), h('td', {}, runLink(i.runId)), h('td', {}, time(i.createdAt)),
        h('td', {}, (i.lastError || '').substring(0, 120)))));
    const view = h('div', { id: 'intents-page' }, form, bulkActions(filter), pager, table);
    if (!rows.length) view.append(h('p', { class: 'muted', id: 'intents-none' }, 'No intent matches.'));
    return view;
  }
  function reconcileNote(i) {
    if (!i.reconcileRounds) return null;
    return h('span', { class: 'muted', dataset: { reconcile: i.reconcileRounds } },
      ' ' + i.reconcileRounds + (i.reconcileRounds === 1 ? ' round' : ' rounds') + (i.reconcileOutcome ? ', ' + i.reconcileOutcome : ''));
  }
  function localInput(iso) {
    if (!iso) return '';
    const d = new Date(iso);
    const pad = (n) => String(n).padStart(2, '0');
    return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}T${pad(d.getHours())}:${pad(d.getMinutes())}`;
  }
  function bulkActions(filter) {
    if (!filter.effect || !['failed', 'needs_decision'].includes(filter.status)) {
      return h('p', { class: 'muted' }, 'Filter by one effect and status failed or needs_decision to act on all of them at once.');
    }
    const result = h('div', { id: 'bulk-result' });
    return h('div', { class: 'actions', id: 'bulk-actions' },
      ACTIONS.filter((a) => a.from.includes(filter.status)).map((a) => h('button', { dataset: { bulkAction: a.id }, onclick: async () => {
        const reason = await confirmWithReason(a.label + ' all',
          `${a.label} every ${filter.status} intent of effect "${filter.effect}" (those in that status now; each once)?`);
        if (reason === null) return;
        try {
          const r = await api('', { method: 'POST', body: JSON.stringify(Object.assign({ effect: filter.effect, status: filter.status, reason }, a.body)) });
          result.replaceChildren(h('p', { class: 'notice' }, `${r.moved !== undefined ? r.moved : r.retried} moved, ${r.skipped || 0} skipped`));
        } catch (e) { result.replaceChildren(showError(e)); }
      } }, a.label + ' all')), result);
  }

  // ---------------------------------------------------------------- one intent
  // where a messaging relay's intent sends its message, read from its arguments
  // (ductor.kafka.send: topic, key, payload, headers; ductor.amqp.send: exchange, routing key, headers, body)
  function relayDestination(i) {
    let args;
    try { args = JSON.parse(i.payloadJson); } catch (e) { return ''; }
    if (!Array.isArray(args)) return '';
    if (i.effectName === 'ductor.kafka.send') {
      return 'Kafka topic ' + JSON.stringify(args[0]) + (args[1] !== null && args[1] !== undefined ? ', key ' + JSON.stringify(args[1]) : ', no key');
    }
    if (i.effectName === 'ductor.amqp.send') {
      return 'RabbitMQ exchange ' + (args[0] ? JSON.stringify(args[0]) : '(default)') + ', routing key ' + JSON.stringify(args[1]);
    }
    return '';
  }

  async function intent(id) {
    const data = await api('/intents/' + encodeURIComponent(id));
    const i = data.intent, d = data.details || {};
    const s = i.status.toLowerCase();
    const dl = (pairs) => h('dl', { class: 'fields' }, pairs.map(([k, v, name]) => [h('dt', {}, k), h('dd', { dataset: { field: name || k } }, v === null || v === undefined ? '' : v)]));
    const result = h('div', { id: 'action-result' });
    const actions = h('div', { class: 'actions', id: 'intent-actions' },
      ACTIONS.concat(i.runId ? [{ id: 'compensate', label: 'Compensate run', body: { action: 'resolve', resolution: 'compensate' }, from: ['needs_decision'] }] : [])
        .map((a) => h('button', { dataset: { action: a.id }, disabled: !a.from.includes(s), onclick: async () => {
          const reason = await confirmWithReason(a.label, `${a.label}: intent ${i.id} of effect "${i.effectName}" (key ${i.idempotencyKey}), now ${s}?`);
          if (reason === null) return;
          try {
            await api('/' + i.id, { method: 'POST', body: JSON.stringify(Object.assign({ reason }, a.body)) });
            await render();
            document.getElementById('action-result').replaceChildren(h('p', { class: 'notice', id: 'action-done' }, a.label + ': done'));
          } catch (e) { result.replaceChildren(showError(e)); }
        } }, a.label)));
    return h('div', { id: 'intent-page', dataset: { intentId: i.id, status: s } },
      h('h2', {}, `Intent ${i.id} · ${i.effectName} `, status(i.status)),
      actions, result,
      h('div', { class: 'grid' },
        dl([['key', h('code', {}, i.idempotencyKey), 'key'], ['status', status(i.status), 'status'], ['receiver', i.receiver],
          ['attempts', i.attempts + ' of ' + i.maxAttempts, 'attempts'], ['next attempt', time(i.nextAttemptAt)],
          ['attempt started', time(d.attemptStartedAt)], ['lease', i.leaseOwner ? i.leaseOwner + ' until ' + time(i.leaseExpiresAt) : '', 'lease'],
          ['ordering key', i.orderingKey, 'ordering_key'], ['alarm', i.alarmName ? i.alarmName + (d.supersededAt ? ' (superseded ' + time(d.supersededAt) + ')' : '') : '', 'alarm'],
          ['run', runLink(i.runId), 'run'], ['compensation of', d.compensationOf ? intentLink(d.compensationOf) : ''],
          ['reconciler', i.reconcileRounds || s === 'reconciling'
            ? i.reconcileRounds + (i.reconcileRounds === 1 ? ' round' : ' rounds')
              + (i.reconcileOutcome ? ', last outcome ' + i.reconcileOutcome : '')
              + (s === 'reconciling' ? ', next round ' + time(i.nextAttemptAt) : '') : '', 'reconcile'],
          ['trace', d.traceId ? h('code', {}, d.traceId) : '', 'trace'],
          ['destination', relayDestination(i), 'destination'], ['receipt', d.receipt, 'receipt'],
          ['created', time(i.createdAt)], ['updated', time(i.updatedAt)], ['finished', time(i.finishedAt)]]),
        h('div', {},
          h('h2', {}, 'Last error or note'), h('pre', { id: 'last-error' }, i.lastError || '–'),
          h('h2', {}, 'Decision'), dl([['reason', d.decisionReason, 'decision_reason'], ['by', d.decidedBy, 'decided_by'], ['at', time(d.decidedAt), 'decided_at']]))),
      h('h2', {}, 'Arguments'), h('pre', { id: 'arguments' }, pretty(i.payloadJson)));
  }

  // ---------------------------------------------------------------- runs
  async function runs(params) {
    const type = params.get('type') || '', st = params.get('status') || '', after = params.get('after') || '';
    const form = h('form', { class: 'filters', id: 'run-search', onsubmit: (ev) => {
      ev.preventDefault();
      const f = new FormData(ev.target);
      if (f.get('id')) location.hash = '#/run/' + encodeURIComponent(f.get('id'));
      else location.hash = '#/runs' + query({ type: f.get('type'), status: f.get('status') });
    } },
      h('label', {}, 'run id', h('input', { name: 'id', id: 'run-id' })),
      h('label', {}, 'or type', h('input', { name: 'type', id: 'run-type', value: type })),
      h('label', {}, 'state', h('select', { name: 'status', id: 'run-status' }, ['', 'active', 'completed', 'failed'].map((s) => h('option', { value: s, selected: s === st }, s || 'any')))),
      h('button', { type: 'submit', class: 'primary' }, 'Find'));
    const view = h('div', { id: 'runs-page' }, form);
    if (type) {
      const rows = await api('/run-types/' + encodeURIComponent(type) + query({ status: st, after, limit: PAGE_SIZE }));
      view.append(h('table', { id: 'runs' }, h('tr', {}, ['run', 'type', 'state', 'compensation', 'ticks', 'updated', 'failure'].map((c) => h('th', {}, c))),
        rows.map((r) => h('tr', { dataset: { runId: r.id } }, h('td', {}, runLink(r.id)), h('td', {}, r.type), h('td', {}, status(r.status)),
          h('td', {}, r.compensation || ''), h('td', { class: 'num' }, r.lastTransitionSeq), h('td', {}, time(r.updatedAt)), h('td', {}, r.failureReason || '')))));
      if (rows.length === PAGE_SIZE) {
        view.append(h('div', { class: 'pager' }, h('button', { id: 'runs-next', onclick: () => { location.hash = '#/runs' + query({ type, status: st, after: rows[rows.length - 1].id }); } }, 'Next page')));
      }
    }
    return view;
  }
  async function run(id) {
    const data = await api('/runs/' + encodeURIComponent(id));
    const r = data.run;
    if (!r) return h('p', { class: 'error', id: 'error' }, 'No run with id ' + id);
    return h('div', { id: 'run-page', dataset: { runId: r.id, status: r.status } },
      h('h2', {}, `Run ${r.id} · ${r.type} `, status(r.status)),
      h('div', { class: 'grid' },
        h('dl', { class: 'fields' }, [['version', r.recordVersion], ['ticks', r.lastTransitionSeq], ['compensation', r.compensation || ''],
          ['failure', r.failureReason || ''], ['created', time(r.createdAt)], ['updated', time(r.updatedAt)], ['ended', time(r.endedAt)]]
          .map(([k, v]) => [h('dt', {}, k), h('dd', {}, v)])),
        h('div', {}, h('h2', {}, 'State'), h('pre', { id: 'run-state' }, pretty(r.state)))),
      h('h2', {}, 'Transitions'),
      h('table', { id: 'transitions' }, h('tr', {}, ['seq', 'stamp', 'status after', 'version', 'committed', 'input'].map((c) => h('th', {}, c))),
        r.transitions.map((t) => h('tr', {}, h('td', { class: 'num' }, t.seq), h('td', {}, h('code', {}, t.stamp)), h('td', {}, status(t.runStatus)),
          h('td', { class: 'num' }, t.recordVersion), h('td', {}, time(t.createdAt)), h('td', {}, h('code', {}, (t.input || '').substring(0, 160)))))),
      h('h2', {}, 'Effects its ticks recorded'),
      h('table', { id: 'run-effects' }, h('tr', {}, ['id', 'effect', 'key', 'status', 'attempts'].map((c) => h('th', {}, c))),
        r.effects.map((i) => h('tr', {}, h('td', { class: 'num' }, intentLink(i.id)), h('td', {}, i.effectName), h('td', {}, h('code', {}, i.idempotencyKey)),
          h('td', {}, status(i.status)), h('td', { class: 'num' }, i.attempts)))),
      compensations(r, data));
  }
  // the chain in the order its compensations run: what each undoes, and how far its undo got
  function compensations(r, data) {
    const links = data.links || [];
    if (!links.length) return h('p', { class: 'muted', id: 'compensations-none' }, 'Its ticks registered no compensation.');
    const state = (data.compensation || 'NONE').toLowerCase();
    const done = links.filter((l) => l.compensation && ['completed', 'cancelled'].includes(l.compensation.status.toLowerCase())).length;
    const explain = { none: r.status === 'failed' ? 'nothing was undone' : 'they run if the run fails',
      compensating: `undoing: ${done} of ${links.length} finished`, compensated: 'every step undone' }[state] || state;
    const intentCell = (i) => [intentLink(i.id), ' ', status(i.status)];
    return [h('h2', {}, 'Compensation chain ', h('span', { class: 'status ' + state, id: 'compensation-state', dataset: { state } }, state)),
      h('p', { class: 'muted' }, links.length + (links.length === 1 ? ' compensation' : ' compensations') + ', latest tick first: ' + explain),
      h('table', { id: 'compensations' }, h('tr', {}, ['tick', 'undoes', 'its status', 'compensating effect', 'compensation'].map((c) => h('th', {}, c))),
        links.map((l) => h('tr', { dataset: { originalKey: l.originalKey, compensation: l.compensation ? l.compensation.status.toLowerCase() : 'none' } },
          h('td', { class: 'num' }, l.seq), h('td', {}, h('code', {}, l.originalKey)),
          h('td', {}, l.original ? intentCell(l.original) : h('span', { class: 'muted' }, 'purged')),
          h('td', {}, l.effectName),
          h('td', {}, l.compensation ? intentCell(l.compensation)
            : h('span', { class: 'muted' }, r.status === 'failed' ? 'not recorded (the step never ran)' : 'recorded if the run fails')))))];
  }

  // ---------------------------------------------------------------- alarms
  const ALARM_ACTIONS = {
    pause: { label: 'Pause', text: (a) => `Pause recurring alarm "${a.name}"? It records no occurrence until it is resumed.` },
    resume: { label: 'Resume', text: (a) => `Resume recurring alarm "${a.name}"? It starts with its first occurrence after now; the occurrences of the pause are not made up.` },
  };
  function schedule(a) {
    if (a.cron) return [h('code', {}, a.cron), ' ', a.zone];
    const ms = isoDuration(a.every);
    if (ms === null) return 'every ' + a.every;
    for (const [unit, size] of [['d', 86400000], ['h', 3600000], ['min', 60000], ['s', 1000]]) {
      if (ms % size === 0) return 'every ' + (ms / size) + ' ' + unit;
    }
    return 'every ' + ms + ' ms';
  }
  function occurrence(id, key, st, at) {
    if (!key) return '–';
    return [id ? intentLink(id) : h('code', {}, key), ' ', st === 'purged' ? h('span', { class: 'muted' }, 'purged') : status(st),
      at ? [' ', h('span', { class: 'muted' }, time(at))] : null];
  }
  async function alarms(params) {
    const prefix = params.get('prefix') || '', ra = params.get('ra') || '', oa = params.get('oa') || '';
    const form = h('form', { class: 'filters', id: 'alarm-search', onsubmit: (ev) => {
      ev.preventDefault();
      location.hash = '#/alarms' + query({ prefix: new FormData(ev.target).get('prefix') });
    } },
      h('label', {}, 'name starts with', h('input', { name: 'prefix', id: 'alarm-prefix', value: prefix })),
      h('button', { type: 'submit', class: 'primary' }, 'Find'));
    const [recurring, oneShot] = await Promise.all([
      api('/alarms/recurring' + query({ prefix, after: ra, limit: PAGE_SIZE }), { list: true }),
      api('/alarms/one-shot' + query({ prefix, after: oa, limit: PAGE_SIZE }), { list: true })]);
    const result = h('div', { id: 'action-result' });
    const act = (a, verb) => async () => {
      const reason = await confirmWithReason(ALARM_ACTIONS[verb].label + ' alarm', ALARM_ACTIONS[verb].text(a));
      if (reason === null) return;
      try {
        await api('/alarms/' + verb, { method: 'POST', body: JSON.stringify({ name: a.name, reason }) });
        await render();
        document.getElementById('action-result').replaceChildren(h('p', { class: 'notice', id: 'action-done' }, ALARM_ACTIONS[verb].label + ': done'));
      } catch (e) { result.replaceChildren(showError(e)); }
    };
    const pager = (rows, param, other, id) => h('div', { class: 'pager' },
      h('button', { id: id + '-first', disabled: !(param === 'ra' ? ra : oa),
        onclick: () => { location.hash = '#/alarms' + query({ prefix, [other]: params.get(other) }); } }, 'First page'),
      h('button', { id: id + '-next', disabled: rows.length < PAGE_SIZE,
        onclick: () => { location.hash = '#/alarms' + query({ prefix, [other]: params.get(other), [param]: rows[rows.length - 1].name }); } }, 'Next page'));
    return h('div', { id: 'alarms-page' }, form, result,
      h('h2', {}, 'Recurring alarms'),
      recurring.length ? h('table', { id: 'recurring-alarms' },
        h('tr', {}, ['name', 'effect', 'schedule', 'next occurrence', 'last occurrence', 'last pause or resume', ''].map((c) => h('th', {}, c))),
        recurring.map((a) => h('tr', { dataset: { alarm: a.name, paused: String(a.paused) } },
          h('td', {}, h('code', {}, a.name)), h('td', {}, a.effect), h('td', {}, schedule(a)),
          h('td', { dataset: { field: 'next' } }, a.paused ? h('span', { class: 'status paused' }, 'paused') : time(a.nextAt)),
          h('td', { dataset: { field: 'last' } }, occurrence(a.lastIntentId, a.lastKey, a.lastOutcome, a.lastOccurrenceAt)),
          h('td', { dataset: { field: 'decision' } }, a.decidedBy ? [a.decidedBy, ' ', h('span', { class: 'muted' }, time(a.decidedAt)), ': ', a.decisionReason] : ''),
          h('td', {}, h('button', { dataset: { alarmAction: a.paused ? 'resume' : 'pause' }, onclick: act(a, a.paused ? 'resume' : 'pause') },
            a.paused ? 'Resume' : 'Pause'))))) : h('p', { class: 'muted', id: 'recurring-none' }, prefix ? 'No recurring alarm starts with this.' : 'No recurring alarm is declared.'),
      recurring.length || ra ? pager(recurring, 'ra', 'oa', 'recurring') : null,
      h('h2', {}, 'One-shot alarms'),
      h('p', { class: 'muted' }, 'Named alarms scheduled with scheduleAlarm: each has at most one pending occurrence; cancel one from its intent\'s page.'),
      oneShot.length ? h('table', { id: 'one-shot-alarms' },
        h('tr', {}, ['name', 'effect', 'next occurrence', 'last occurrence', 'last error or note'].map((c) => h('th', {}, c))),
        oneShot.map((a) => h('tr', { dataset: { oneShot: a.name } },
          h('td', {}, h('code', {}, a.name)), h('td', {}, a.effect),
          h('td', { dataset: { field: 'next' } }, a.nextKey ? [intentLink(a.nextIntentId), ' due ', time(a.nextAt)] : '–'),
          h('td', { dataset: { field: 'last' } }, occurrence(a.lastIntentId, a.lastKey, a.lastStatus, a.lastAt)),
          h('td', {}, (a.lastError || '').substring(0, 120))))) : h('p', { class: 'muted', id: 'one-shot-none' }, 'No one-shot alarm' + (prefix ? ' starts with this.' : ' was scheduled.')),
      oneShot.length || oa ? pager(oneShot, 'oa', 'ra', 'one-shot') : null);
  }

  // ---------------------------------------------------------------- concurrency slots
  async function slots() {
    const effects = await api('/slots', { list: true });
    if (!effects.length) return h('div', { id: 'slots-page' }, h('p', { class: 'muted', id: 'slots-none' }, 'No effect has a concurrency limit (maxConcurrency).'));
    return h('div', { id: 'slots-page' }, effects.map((e) => {
      const held = new Map(e.holders.map((x) => [x.slot, x]));
      const cells = [];
      for (let n = 1; n <= e.limit; n++) cells.push(h('span', { class: 'slot' + (held.has(n) ? ' held' : ''), title: 'slot ' + n }, String(n)));
      return h('section', { class: 'slot-effect', dataset: { effect: e.effect, inUse: e.inUse, limit: e.limit } },
        h('h2', {}, e.effect + ' ', h('span', { class: 'muted', dataset: { field: 'use' } }, `${e.inUse} of ${e.limit} slots in use`)),
        h('div', { class: 'slots' }, cells),
        e.holders.length ? h('table', { class: 'holders' },
          h('tr', {}, ['slot', 'intent', 'key', 'attempt', 'instance', 'lease until', 'running for'].map((c) => h('th', {}, c))),
          e.holders.map((x) => h('tr', { dataset: { slot: x.slot } }, h('td', { class: 'num' }, x.slot), h('td', { class: 'num' }, intentLink(x.intentId)),
            h('td', {}, h('code', {}, x.key)), h('td', { class: 'num' }, x.attempt), h('td', {}, x.leaseOwner), h('td', {}, time(x.leaseExpiresAt)),
            h('td', {}, x.attemptStartedAt ? age(Date.now() - new Date(x.attemptStartedAt).getTime()) : ''))))
          : h('p', { class: 'muted' }, 'No attempt holds a slot.'));
    }));
  }

  // ---------------------------------------------------------------- idempotency keys
  function bodySummary(k) {
    if (k.responseBodySize === null || k.responseBodySize === undefined) return '';
    return k.responseBodySize + ' bytes' + (k.responseContentType ? ' of ' + k.responseContentType : '')
      + (k.responseBodyEncoding === 'base64' ? ', binary' : '')
      + (k.responseBodyTruncated ? ' (the first ' + (k.responseBodyEncoding === 'base64' ? atob(k.responseBodyStart).length
        : new TextEncoder().encode(k.responseBodyStart).length) + ' shown)' : '');
  }
  async function keys(params) {
    const tenant = params.get('tenant') || '', pool = params.get('pool') || '', key = params.get('key') || '';
    const form = h('form', { class: 'filters', id: 'key-search', onsubmit: (ev) => {
      ev.preventDefault();
      const f = new FormData(ev.target);
      location.hash = '#/keys' + query({ tenant: f.get('tenant'), pool: f.get('pool'), key: f.get('key') });
    } },
      h('label', {}, 'tenant', h('input', { name: 'tenant', id: 'key-tenant', value: tenant })),
      h('label', {}, 'pool', h('input', { name: 'pool', id: 'key-pool', value: pool, placeholder: 'http' })),
      h('label', {}, 'key', h('input', { name: 'key', id: 'key-key', value: key, required: true })),
      h('button', { type: 'submit', class: 'primary' }, 'Look up'));
    const view = h('div', { id: 'keys-page' }, form);
    if (key) {
      try {
        // the query form: a key may hold any visible character (a '/' too) and 255 of them
        const k = await api('/keys' + query({ key, tenant, pool }));
        view.append(h('div', {}, h('dl', { class: 'fields', id: 'key-record', dataset: { status: k.status, key: k.key } },
          [['status', status(k.status)], ['decision', k.decisionId || ''], ['expires', time(k.expiresAt) + (k.expired ? ' (expired)' : '')],
            ['waiters', k.hasWaiters ? 'yes' : 'no'], ['response status', k.responseStatus || ''], ['response headers', k.responseHeaders || ''],
            ['response body', bodySummary(k)], ['created', time(k.createdAt)], ['updated', time(k.updatedAt)]]
            .map(([a, b]) => [h('dt', {}, a), h('dd', {}, b)])),
          k.responseBodyStart ? [h('h2', {}, k.responseBodyEncoding === 'base64' ? 'Stored response (binary, as base64)' : 'Stored response'),
            h('pre', { id: 'key-body', dataset: { encoding: k.responseBodyEncoding } },
              k.responseBodyEncoding === 'base64' || k.responseBodyTruncated ? k.responseBodyStart : pretty(k.responseBodyStart))] : null));
      } catch (e) {
        view.append(e.status === 404 ? h('p', { class: 'muted', id: 'key-none' }, 'No record for this key.') : showError(e));
      }
    }
    return view;
  }

  // ---------------------------------------------------------------- routing
  async function render() {
    const hash = location.hash || '#/overview';
    const [path, search] = hash.substring(1).split('?');
    const params = new URLSearchParams(search || '');
    const parts = path.split('/').filter(Boolean);
    const page = parts[0] || 'overview';
    for (const a of document.querySelectorAll('nav a')) {
      a.classList.toggle('active', a.dataset.page === page || (a.dataset.page === 'intents' && page === 'intent') || (a.dataset.page === 'runs' && page === 'run'));
    }
    let view;
    if (ENDPOINT_PROBLEM) {
      main.replaceChildren(endpointProblem(ENDPOINT_PROBLEM));
      main.dataset.page = page;
      main.dataset.rendered = String(Date.now());
      return;
    }
    try {
      switch (page) {
        case 'intents': view = await intents(params); break;
        case 'intent': view = await intent(decodeURIComponent(parts[1])); break;
        case 'runs': view = await runs(params); break;
        case 'run': view = await run(decodeURIComponent(parts.slice(1).join('/'))); break;
        case 'keys': view = await keys(params); break;
        case 'alarms': view = await alarms(params); break;
        case 'slots': view = await slots(); break;
        default: view = await overview();
      }
    } catch (e) {
      view = e.unreachable ? unreachable(e) : showError(e);
    }
    main.replaceChildren(view);
    main.dataset.page = page;
    main.dataset.rendered = String(Date.now());
  }
  if (ENDPOINT_NOTICE) main.before(h('div', { class: 'warning', id: 'endpoint-notice' }, withCode(ENDPOINT_NOTICE)));
  window.addEventListener('hashchange', render);
  render();
})();
