// connecta operator console: plain DOM, no framework, no build step.
//
// Safety rule for this file: server data (approval reasons, tool arguments,
// names, error text) is agent- or user-written, so it only ever reaches the
// page through textContent / Text nodes (see el()). Nothing here assigns
// innerHTML, and the CSP forbids inline script and style anyway.
'use strict';

const TABS = ['connections', 'credentials', 'tokens', 'approvals', 'activity'];
const SESSION_URL = '/ui/api/session';
const POLL_MS = 5000;
// Seeds for the activity filters: the values the store records. Values seen
// in loaded events are added too, so a new kind still becomes selectable.
const OUTCOMES = ['success', 'error', 'timeout', 'cancelled'];
const SOURCES = ['call_tool', 'call_destructive_tool', 'execute_code'];

const state = {
  signedIn: false,
  tab: 'connections',
  pollTimer: null,
  polling: false,
  seq: {}, // per panel: only the newest request may render (no stale overwrite)
  keys: {}, // per panel: last rendered data, to skip no-op re-renders on poll
  activityCursor: null,
  activityFilter: null, // the filter the shown activity rows were loaded with
};

// ---------------------------------------------------------------- helpers

const $ = (sel, root = document) => root.querySelector(sel);
const $$ = (sel, root = document) => Array.from(root.querySelectorAll(sel));

// Invisible characters that hide or reorder text (bidi overrides and
// isolates, marks, C0/C1 controls but newline and tab) are shown as \u{…}:
// an approver must see the text an agent sent, not what it pretends to be.
const HIDDEN = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;
function reveal(text) {
  return text.replace(HIDDEN, (c) => `\\u{${c.codePointAt(0).toString(16)}}`);
}

// Builds an element. Children that are not Nodes become Text nodes, so a
// string is never parsed as markup whatever it contains.
function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k === 'class') node.className = v;
    else if (k === 'dataset') Object.assign(node.dataset, v);
    else if (k.startsWith('on')) node.addEventListener(k.slice(2), v);
    else node.setAttribute(k, v === true ? '' : String(v));
  }
  for (const c of children.flat(Infinity)) {
    if (c === undefined || c === null || c === false) continue;
    node.append(c instanceof Node ? c : reveal(String(c)));
  }
  return node;
}

// Any value as short display text: unknown shapes become compact JSON.
function show(v) {
  if (v === undefined || v === null) return '';
  if (typeof v === 'string') return v;
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  try { return JSON.stringify(v); } catch { return String(v); }
}

const dash = () => el('span', { class: 'muted' }, '—');

const TONES = {
  good: ['ok', 'ready', 'success', 'active', 'allowed-once', 'set', 'authorized'],
  bad: ['down', 'error', 'revoked', 'rejected', 'refused', 'denied', 'unavailable', 'not set', 'failed', 'not authorized', 'unreadable'],
  warn: ['starting', 'pending', 'stale', 'degraded', 'timeout', 'expired', 'cancelled', 'consent required'],
};

function badge(text) {
  const t = show(text);
  const tone = Object.keys(TONES).find((k) => TONES[k].includes(t)) || 'neutral';
  return el('span', { class: `badge ${tone}` }, t);
}

function relative(ms) {
  const diff = ms - Date.now();
  const s = Math.abs(diff) / 1000;
  if (s < 1) return 'now';
  let t;
  if (s < 60) t = `${Math.round(s)} s`;
  else if (s < 3600) t = `${Math.round(s / 60)} min`;
  else if (s < 2 * 86400) t = `${Math.round(s / 3600)} h`;
  else t = `${Math.round(s / 86400)} d`;
  return diff > 0 ? `in ${t}` : `${t} ago`;
}

// A relative time that the 1 s ticker keeps current; ISO time on hover.
function timeEl(ms) {
  if (typeof ms !== 'number' || !Number.isFinite(ms)) return dash();
  let iso = '';
  try { iso = new Date(ms).toISOString(); } catch { return dash(); }
  return el('time', { datetime: iso, title: iso, dataset: { ms: String(ms) } }, relative(ms));
}

function tick() {
  for (const t of $$('time[data-ms]')) t.textContent = relative(Number(t.dataset.ms));
}

function duration(ms) {
  if (typeof ms !== 'number') return '';
  const s = Math.floor(ms / 1000);
  if (s < 60) return `${s} s`;
  if (s < 3600) return `${Math.floor(s / 60)} min`;
  if (s < 86400) return `${Math.floor(s / 3600)} h ${Math.floor((s % 3600) / 60)} min`;
  return `${Math.floor(s / 86400)} d ${Math.floor((s % 86400) / 3600)} h`;
}

let flashTimer = null;
function flash(message, kind = 'ok') {
  const box = $('#flash');
  clearTimeout(flashTimer);
  box.textContent = message;
  box.className = kind;
  box.hidden = false;
  // Successes fade; errors stay until replaced or clicked away.
  if (kind === 'ok') flashTimer = setTimeout(() => { box.hidden = true; }, 8000);
}

function report(err) {
  if (err && err.expired) return; // the sign-in form already says why
  flash(err && err.message ? err.message : String(err), 'error');
}

// ---------------------------------------------------------------- API

class ApiError extends Error {
  constructor(status, message, expired = false) {
    super(message);
    this.status = status;
    this.expired = expired;
  }
}

async function api(method, url, body) {
  const init = { method, credentials: 'same-origin', headers: { 'content-type': 'application/json' } };
  if (body !== undefined) init.body = JSON.stringify(body);
  let res;
  try {
    res = await fetch(url, init);
  } catch (e) {
    throw new ApiError(0, `Cannot reach the gateway (${e.message})`);
  }
  const text = await res.text();
  let data = null;
  if (text) {
    try { data = JSON.parse(text); } catch { data = null; }
  }
  if (!res.ok) {
    const msg = data && typeof data.error === 'string' ? data.error : `${res.status} ${res.statusText}`.trim();
    // 401 anywhere but the sign-in attempt itself means the session ended.
    if (res.status === 401 && !(method === 'POST' && url === SESSION_URL)) {
      showSignIn();
      flash('Your session has ended; sign in again.', 'error');
      throw new ApiError(401, msg, true);
    }
    throw new ApiError(res.status, msg);
  }
  return data || {};
}

const enc = encodeURIComponent;

// Runs a button's action: disables it meanwhile, reports failures.
async function act(button, work) {
  if (button) button.disabled = true;
  try {
    return await work();
  } catch (e) {
    report(e);
    return undefined;
  } finally {
    if (button) button.disabled = false;
  }
}

function nextSeq(panel) {
  state.seq[panel] = (state.seq[panel] || 0) + 1;
  return state.seq[panel];
}
const isStale = (panel, seq) => state.seq[panel] !== seq || !state.signedIn;

// Fills a panel's table body, or shows its "empty" note.
function fill(panel, rows) {
  const section = $(`section[data-panel="${panel}"]`);
  $('tbody', section).replaceChildren(...rows);
  $('.empty', section).hidden = rows.length > 0;
  section.dataset.loaded = 'true';
}

// ---------------------------------------------------------------- session

async function signIn(ev) {
  ev.preventDefault();
  const secretInput = $('#signin-secret');
  const name = $('#signin-name').value.trim();
  const body = { secret: secretInput.value };
  if (name) body.name = name;
  const button = $('#signin-form button[type="submit"]');
  button.disabled = true;
  try {
    const s = await api('POST', SESSION_URL, body);
    $('#signin-error').textContent = '';
    signedIn(s.name ?? (name || null));
  } catch (e) {
    $('#signin-error').textContent = e.message || 'Sign-in failed.';
  } finally {
    secretInput.value = ''; // never keep the secret around after an attempt
    button.disabled = false;
  }
}

// Only a sign-out the gateway confirmed clears the page: the cookie is
// HttpOnly, so only its answer can end the session in this browser.
async function signOut() {
  try {
    await api('DELETE', SESSION_URL);
  } catch (e) {
    if (!e.expired) report(e);
    return;
  }
  showSignIn();
  flash('Signed out.');
}

function signedIn(name) {
  state.signedIn = true;
  $('#signin').hidden = true;
  $('#nav').hidden = false;
  $('#whoami-box').hidden = false;
  $('#whoami').textContent = name || 'operator';
  showTab();
  clearInterval(state.pollTimer);
  state.pollTimer = setInterval(poll, POLL_MS);
  if (state.tab !== 'connections') poll(); // the badge, right away
}

// Back to the sign-in form, dropping everything the session had shown.
function showSignIn() {
  state.signedIn = false;
  clearInterval(state.pollTimer);
  state.pollTimer = null;
  state.keys = {};
  state.activityCursor = null;
  for (const p of $$('section[data-panel]')) {
    p.hidden = true;
    delete p.dataset.loaded;
    $('tbody', p).replaceChildren();
  }
  hideIssued();
  $('#conn-summary').textContent = '';
  $('#approvals-badge').hidden = true;
  $('#nav').hidden = true;
  $('#whoami-box').hidden = true;
  $('#signin').hidden = false;
  $('#signin-secret').focus();
}

// ---------------------------------------------------------------- tabs

const loaders = {
  connections: loadConnections,
  credentials: loadCredentials,
  tokens: loadTokens,
  approvals: loadApprovals,
  activity: () => loadActivity(false),
};

function currentTab() {
  const h = location.hash.slice(1);
  return TABS.includes(h) ? h : 'connections';
}

function showTab() {
  if (!state.signedIn) return;
  state.tab = currentTab();
  for (const a of $$('#nav a[data-tab]')) {
    const on = a.dataset.tab === state.tab;
    a.classList.toggle('active', on);
    if (on) a.setAttribute('aria-current', 'page');
    else a.removeAttribute('aria-current');
  }
  for (const p of $$('section[data-panel]')) p.hidden = p.dataset.panel !== state.tab;
  state.keys[state.tab] = null; // a tab visit always re-renders
  loaders[state.tab]().catch(report);
}

async function poll() {
  if (state.polling || !state.signedIn || document.hidden) return;
  state.polling = true;
  try {
    await loadConnections();
    if (state.tab === 'approvals') await loadApprovals();
    // The gateway answers again: an "unreachable" banner is out of date.
    const box = $('#flash');
    if (!box.hidden && box.textContent.startsWith('Cannot reach the gateway')) box.hidden = true;
  } catch (e) {
    report(e);
  } finally {
    state.polling = false;
  }
}

function updateBadge(n) {
  const b = $('#approvals-badge');
  const count = typeof n === 'number' ? n : 0;
  b.textContent = String(count);
  b.hidden = count === 0;
  b.title = `${count} pending`;
}

// ---------------------------------------------------------------- connections

async function loadConnections() {
  const seq = nextSeq('connections');
  const fetchedAt = Date.now();
  const data = await api('GET', '/ui/api/connections');
  if (isStale('connections', seq)) return;
  updateBadge(data.pendingApprovals);
  if (state.tab !== 'connections') return;
  $('#conn-summary').replaceChildren(
    'Gateway ', badge(data.status), ` · version ${show(data.version)} · store ${show(data.store)} · up ${duration(data.uptimeMs)}`,
  );
  // Ages tick on every poll; leave them out of the change check.
  const key = JSON.stringify(data.connectors, (k, v) => (k === 'ageMs' ? undefined : v));
  if (key === state.keys.connections) return;
  state.keys.connections = key;
  fill('connections', (data.connectors || []).map((c) => connectorRow(c, fetchedAt)));
}

function connectorRow(c, fetchedAt) {
  const cat = c.catalog;
  const problems = [];
  if (c.lastError) problems.push(el('div', {}, show(c.lastError)));
  if (c.catalogError) problems.push(el('div', {}, `catalog: ${show(c.catalogError)}`));
  const unset = (c.credential?.fields || []).filter((f) => !f.set).map((f) => f.field);
  if (unset.length) {
    problems.push(el('div', {}, el('a', { href: '#credentials' }, `credential not set: ${unset.join(', ')}`)));
  }
  if (c.oauth) problems.push(oauthStatus(c));
  const refresh = el('button', { type: 'button' }, 'Refresh catalog');
  refresh.addEventListener('click', () => act(refresh, async () => {
    const r = await api('POST', `/ui/api/connections/${enc(c.id)}/refresh`);
    flash(`Catalog of ${c.id} refreshed: ${show(r.tools)} tools.`);
    state.keys.connections = null;
    await loadConnections();
  }));
  const actions = [refresh, ...(c.oauth ? oauthButtons(c) : [])];
  return el('tr', { dataset: { connector: c.id } },
    el('td', {}, el('strong', {}, show(c.id))),
    el('td', {}, show(c.kind)),
    el('td', { dataset: { col: 'state' } }, badge(c.state)),
    el('td', { dataset: { col: 'tools' } }, cat ? show(cat.tools) : dash()),
    el('td', {}, cat ? [
      typeof cat.ageMs === 'number' ? timeEl(fetchedAt - cat.ageMs) : '',
      cat.stale ? [' ', badge('stale')] : '',
    ] : dash()),
    el('td', { title: c.pid ? `pid ${c.pid}` : null }, show(c.restarts ?? 0)),
    el('td', { class: 'problem' }, problems.length ? problems : ''),
    el('td', { class: 'actions' }, actions),
  );
}

// A connector with [connector.oauth]: where its downstream authorization
// stands, and the consent link while one is pending. The link is only ever
// an http(s) URL (the gateway checks it too).
function oauthStatus(c) {
  const o = c.oauth;
  const parts = ['OAuth: ', badge(show(o.status).replace(/_/g, ' '))];
  const url = show(o.authorizationUrl);
  // Pending while still authorized too (a re-authorization not yet given).
  if (o.authorizationUrl && /^https?:\/\//i.test(url)) {
    parts.push(' ', el('a', { href: url, target: '_blank', rel: 'noopener noreferrer', dataset: { consent: c.id } },
      'open the consent page'));
  }
  if (o.problem) parts.push(' ', show(o.problem));
  return el('div', { dataset: { col: 'oauth' } }, parts);
}

function oauthButtons(c) {
  const url = `/ui/api/connections/${enc(c.id)}`;
  const authorized = c.oauth.status === 'authorized';
  const start = el('button', { type: 'button', dataset: { oauth: 'authorize' } }, authorized ? 'Re-authorize' : 'Authorize');
  start.addEventListener('click', () => act(start, async () => {
    const r = await api('POST', `${url}/authorize`, { force: authorized });
    flash(r.authorizationUrl
      ? `Open the consent page for ${c.id} (link in the row); it works once, for ten minutes.`
      : `${c.id} is authorized.`);
    state.keys.connections = null;
    await loadConnections();
  }));
  const buttons = [start];
  if (c.oauth.status !== 'not_authorized') {
    const forget = el('button', { type: 'button', dataset: { oauth: 'forget' } }, 'Forget');
    forget.addEventListener('click', () => act(forget, async () => {
      if (!window.confirm(`Forget ${c.id}'s tokens? Calls will need a new consent.`)) return;
      await api('DELETE', `${url}/authorization`);
      flash(`${c.id}'s authorization was removed.`);
      state.keys.connections = null;
      await loadConnections();
    }));
    buttons.push(forget);
  }
  return buttons;
}

// ---------------------------------------------------------------- credentials

async function loadCredentials() {
  const seq = nextSeq('credentials');
  const data = await api('GET', '/ui/api/credentials');
  if (isStale('credentials', seq)) return;
  fill('credentials', (data.credentials || []).map(credentialRow));
}

function credentialRow(c) {
  const url = `/ui/api/credentials/${enc(c.connector)}`;
  const tr = el('tr', { dataset: { credential: c.connector } });
  const setBtn = el('button', { type: 'button' }, 'Set');
  setBtn.addEventListener('click', () => toggleCredentialForm(c, tr));
  const testBtn = el('button', { type: 'button' }, 'Test');
  testBtn.addEventListener('click', () => act(testBtn, async () => {
    const r = await api('POST', `${url}/test`);
    flash(`${c.connector}: ${r.ok ? 'test passed' : 'test failed'}${r.detail ? ` — ${show(r.detail)}` : ''}`, r.ok ? 'ok' : 'error');
  }));
  const removeBtn = el('button', { type: 'button', class: 'danger' }, 'Remove');
  removeBtn.disabled = !(c.fields || []).some((f) => f.set);
  removeBtn.addEventListener('click', () => {
    if (!window.confirm(`Remove the stored credential for ${c.connector}?`)) return;
    act(removeBtn, async () => {
      const r = await api('DELETE', url);
      flash(`Removed ${show(r.removed)} stored value(s) for ${c.connector}.`);
      await loadCredentials();
    });
  });
  tr.append(
    el('td', {}, el('strong', {}, show(c.connector))),
    el('td', {}, show(c.label)),
    el('td', {}, el('ul', { class: 'fields' }, (c.fields || []).map(fieldItem))),
    el('td', { class: 'actions' }, setBtn, testBtn, removeBtn),
  );
  return tr;
}

function fieldItem(f) {
  return el('li', { dataset: { field: f.field } },
    el('span', { class: 'field-name' }, show(f.field)), ' ',
    badge(f.set ? 'set' : 'not set'),
    f.masked ? [' ', el('code', { dataset: { col: 'masked' } }, show(f.masked))] : '',
    f.problem ? [' ', el('span', { class: 'error' }, show(f.problem))] : '',
  );
}

// Set / replace form: one password input per field, in a row under the
// connector. Empty inputs are left out, so one field can be replaced alone.
function toggleCredentialForm(c, tr) {
  const open = tr.nextElementSibling;
  if (open && open.classList.contains('form-row')) { open.remove(); return; }
  const inputs = (c.fields || []).map((f) => el('input', {
    type: 'password', autocomplete: 'new-password', dataset: { field: f.field },
    placeholder: f.set ? 'leave empty to keep' : '', 'aria-label': f.field,
  }));
  const save = el('button', { type: 'submit' }, 'Save');
  const cancel = el('button', { type: 'button' }, 'Cancel');
  const form = el('form', { class: 'inline', dataset: { credentialForm: c.connector } },
    (c.fields || []).map((f, i) => el('label', {}, el('span', {}, show(f.field)), inputs[i])),
    save, cancel);
  const row = el('tr', { class: 'form-row' }, el('td', { colspan: '4' }, form));
  cancel.addEventListener('click', () => row.remove());
  form.addEventListener('submit', (ev) => {
    ev.preventDefault();
    const values = {};
    for (const i of inputs) if (i.value !== '') values[i.dataset.field] = i.value;
    if (Object.keys(values).length === 0) { flash('Enter a value for at least one field.', 'error'); return; }
    act(save, async () => {
      await api('PUT', `/ui/api/credentials/${enc(c.connector)}`, { values });
      for (const i of inputs) i.value = '';
      row.remove();
      flash(`Credential for ${c.connector} saved.`);
      await loadCredentials();
    });
  });
  tr.after(row);
  if (inputs[0]) inputs[0].focus();
}

// ---------------------------------------------------------------- tokens

async function loadTokens() {
  const seq = nextSeq('tokens');
  const data = await api('GET', '/ui/api/tokens');
  if (isStale('tokens', seq)) return;
  fill('tokens', (data.tokens || []).map(tokenRow));
}

function tokenRow(t) {
  const nameCell = el('td', { dataset: { col: 'name' } }, show(t.name));
  const actions = el('td', { class: 'actions' });
  if (t.status !== 'revoked') {
    const rename = el('button', { type: 'button' }, 'Rename');
    rename.addEventListener('click', () => startRename(t, nameCell));
    actions.append(rename);
  }
  // An expired token still holds its name until it is revoked.
  if (t.status !== 'revoked') {
    const revoke = el('button', { type: 'button', class: 'danger' }, 'Revoke');
    revoke.addEventListener('click', () => {
      if (!window.confirm(`Revoke token "${t.name}"? Clients using it stop working at once.`)) return;
      act(revoke, async () => {
        await api('POST', `/ui/api/tokens/${enc(t.id)}/revoke`);
        flash(`Token ${t.name} revoked.`);
        await loadTokens();
      });
    });
    actions.append(' ', revoke);
  }
  let expires;
  if (t.revokedAtMs) expires = ['revoked ', timeEl(t.revokedAtMs)];
  else if (t.expiresAtMs) expires = timeEl(t.expiresAtMs);
  else expires = el('span', { class: 'muted' }, 'never');
  return el('tr', { dataset: { tokenId: t.id } },
    nameCell,
    el('td', {}, el('code', {}, show(t.id))),
    el('td', { dataset: { col: 'status' } }, badge(t.status)),
    el('td', {}, timeEl(t.createdAtMs)),
    el('td', {}, expires),
    actions,
  );
}

// Inline rename: the name cell becomes a small form until saved or cancelled.
function startRename(t, cell) {
  if ($('form', cell)) return;
  const input = el('input', { type: 'text', value: t.name, maxlength: '128', required: true, 'aria-label': 'New name', dataset: { rename: t.id } });
  const save = el('button', { type: 'submit' }, 'Save');
  const cancel = el('button', { type: 'button' }, 'Cancel');
  const form = el('form', { class: 'inline' }, input, save, cancel);
  const restore = () => cell.replaceChildren(show(t.name));
  cancel.addEventListener('click', restore);
  input.addEventListener('keydown', (ev) => { if (ev.key === 'Escape') restore(); });
  form.addEventListener('submit', (ev) => {
    ev.preventDefault();
    const name = input.value.trim();
    if (!name || name === t.name) { restore(); return; }
    act(save, async () => {
      await api('PATCH', `/ui/api/tokens/${enc(t.id)}`, { name });
      flash(`Token renamed to ${name}.`);
      await loadTokens();
    });
  });
  cell.replaceChildren(form);
  input.select();
}

async function issueToken(ev) {
  ev.preventDefault();
  const name = $('#token-name').value.trim();
  const daysText = $('#token-days').value.trim();
  const days = daysText === '' ? null : Number(daysText);
  if (!name) { flash('A token needs a name.', 'error'); return; }
  if (days !== null && !(Number.isInteger(days) && days > 0)) { flash('Expiry must be a whole number of days.', 'error'); return; }
  await act($('#token-form button[type="submit"]'), async () => {
    const r = await api('POST', '/ui/api/tokens', { name, expiresInDays: days });
    $('#token-form').reset();
    const box = $('#issued-box');
    box.dataset.tokenId = show(r.id);
    $('#issued-name').textContent = show(r.name);
    $('#issued-token').textContent = show(r.token);
    box.hidden = false;
    await loadTokens();
  });
}

function hideIssued() {
  const box = $('#issued-box');
  box.hidden = true;
  delete box.dataset.tokenId;
  $('#issued-token').textContent = '';
  $('#issued-name').textContent = '';
}

async function copyToken() {
  const code = $('#issued-token');
  try {
    await navigator.clipboard.writeText(code.textContent);
    flash('Token copied to the clipboard.');
  } catch {
    // No clipboard API (plain http on a non-local host): select it instead.
    const range = document.createRange();
    range.selectNodeContents(code);
    const sel = window.getSelection();
    sel.removeAllRanges();
    sel.addRange(range);
    flash('Token selected: press Ctrl+C (⌘C) to copy it.');
  }
}

// ---------------------------------------------------------------- approvals

async function loadApprovals() {
  const all = $('#show-decided').checked;
  const seq = nextSeq('approvals');
  const data = await api('GET', `/ui/api/approvals${all ? '?all=true' : ''}`);
  if (isStale('approvals', seq)) return;
  const list = data.approvals || [];
  updateBadge(list.filter((a) => a.status === 'pending').length);
  const key = JSON.stringify([all, list]);
  if (key === state.keys.approvals) return;
  state.keys.approvals = key;
  fill('approvals', list.map(approvalRow));
}

function approvalRow(a) {
  const pending = a.status === 'pending';
  let args;
  if (a.args === undefined || a.args === null) args = dash();
  else {
    let text;
    try { text = JSON.stringify(a.args, null, 2); } catch { text = String(a.args); }
    args = el('pre', { dataset: { col: 'args' } }, text);
  }
  const actions = el('td', { class: 'actions' });
  if (pending) {
    for (const [label, decision, cls] of [['Approve', 'approve', 'primary'], ['Reject', 'reject', 'danger']]) {
      const b = el('button', { type: 'button', class: cls }, label);
      b.addEventListener('click', () => decide(a, decision, actions));
      actions.append(b, ' ');
    }
  }
  return el('tr', { dataset: { approvalId: a.id, status: show(a.status) } },
    el('td', { dataset: { col: 'address' } }, el('strong', {}, show(a.address)), el('div', { class: 'muted' }, show(a.connector))),
    el('td', {}, show(a.askedBy)),
    el('td', { dataset: { col: 'reason' } }, a.reason ? show(a.reason) : dash()),
    el('td', {}, args),
    el('td', {}, timeEl(a.createdAtMs)),
    el('td', { dataset: { col: 'status' } }, badge(a.status), pending ? el('div', { class: 'muted' }, 'expires ', timeEl(a.expiresAtMs)) : ''),
    el('td', {}, el('span', { dataset: { col: 'decided-by' } }, show(a.decidedBy)), a.decidedAtMs ? [' ', timeEl(a.decidedAtMs)] : ''),
    actions,
  );
}

async function decide(a, decision, cell) {
  const buttons = $$('button', cell);
  buttons.forEach((b) => { b.disabled = true; });
  try {
    await api('POST', `/ui/api/approvals/${enc(a.id)}`, { decision });
    flash(`${decision === 'approve' ? 'Approved' : 'Rejected'} ${show(a.address)}.`);
  } catch (e) {
    report(e); // 409: decided elsewhere or expired; the reload below shows it
  }
  state.keys.approvals = null;
  await loadApprovals().catch(report);
  buttons.forEach((b) => { b.disabled = false; });
}

// ---------------------------------------------------------------- activity

async function loadActivity(older) {
  const seq = nextSeq('activity');
  const params = new URLSearchParams({ limit: '50' });
  // "Older" pages the list as it was filtered, whatever the inputs say now.
  if (!older || !state.activityFilter) {
    state.activityFilter = {
      connector: $('#filter-connector').value.trim(),
      outcome: $('#filter-outcome').value,
      source: $('#filter-source').value,
    };
  }
  const { connector, outcome, source } = state.activityFilter;
  if (connector) params.set('connector', connector);
  if (outcome) params.set('outcome', outcome);
  if (source) params.set('source', source);
  if (older && state.activityCursor !== null) params.set('before', state.activityCursor);
  const data = await api('GET', `/ui/api/activity?${params}`);
  if (isStale('activity', seq)) return;
  const events = data.events || [];
  const rows = events.map(eventRow);
  if (older) rows.unshift(...$$('#activity-table tbody tr'));
  fill('activity', rows);
  for (const e of events) {
    addOption('#filter-outcome', e.outcome);
    addOption('#filter-source', e.source);
  }
  const next = data.next;
  state.activityCursor = next === undefined || next === null ? null : (typeof next === 'string' ? next : JSON.stringify(next));
  $('#activity-older').hidden = state.activityCursor === null;
}

function addOption(selectSel, value) {
  if (typeof value !== 'string' || value === '') return;
  const select = $(selectSel);
  if (Array.from(select.options).some((o) => o.value === value)) return;
  select.append(el('option', { value }, value));
}

function eventRow(e) {
  let actor = dash();
  if (e.actor && typeof e.actor === 'object') actor = `${show(e.actor.kind)}${e.actor.id ? `:${show(e.actor.id)}` : ''}`;
  else if (e.actor !== undefined && e.actor !== null) actor = show(e.actor);
  const connector = e.connector ?? e.connectorId;
  const tool = e.tool ?? e.toolName;
  const address = e.address ?? [connector, tool].filter(Boolean).join('.');
  // Approval events carry a kind; show it where a call shows its source.
  const source = e.kind && e.kind !== 'call' ? e.kind : e.source;
  // Error code or friction in red; an approval note (which question, who
  // decided) is information, not a failure.
  const problem = [];
  const code = show(e.errorCode ?? e.friction);
  if (code) problem.push(el('span', { class: 'error' }, code));
  if (e.approval && typeof e.approval === 'object') {
    const ap = e.approval;
    const note = [ap.id, ap.decision, ap.decidedBy ? `by ${show(ap.decidedBy)}` : ''].map(show).filter(Boolean).join(' ');
    problem.push(el('div', { class: 'muted' }, note));
  } else if (e.approval !== undefined && e.approval !== null) {
    problem.push(el('div', { class: 'muted' }, show(e.approval)));
  }
  let took = typeof e.durationMs === 'number' ? `${e.durationMs} ms` : show(e.durationMs);
  if (typeof e.attempts === 'number' && e.attempts > 1) took += ` (${e.attempts} attempts)`;
  return el('tr', { dataset: { eventId: show(e.id) } },
    el('td', {}, timeEl(e.occurredAtMs)),
    el('td', {}, actor),
    el('td', { dataset: { col: 'address' } }, show(address)),
    el('td', {}, show(source)),
    el('td', { dataset: { col: 'outcome' } }, e.outcome !== undefined ? badge(e.outcome) : ''),
    el('td', { class: 'detail' }, problem),
    el('td', { class: 'num' }, took),
  );
}

// ---------------------------------------------------------------- start

async function start() {
  for (const v of OUTCOMES) addOption('#filter-outcome', v);
  for (const v of SOURCES) addOption('#filter-source', v);
  $('#signin-form').addEventListener('submit', signIn);
  $('#signout').addEventListener('click', signOut);
  $('#token-form').addEventListener('submit', issueToken);
  $('#copy-token').addEventListener('click', copyToken);
  $('#dismiss-token').addEventListener('click', hideIssued);
  $('#show-decided').addEventListener('change', () => loadApprovals().catch(report));
  $('#activity-filter').addEventListener('submit', (ev) => { ev.preventDefault(); loadActivity(false).catch(report); });
  $('#activity-older').addEventListener('click', () => act($('#activity-older'), () => loadActivity(true)));
  $('#flash').addEventListener('click', () => { $('#flash').hidden = true; });
  window.addEventListener('hashchange', showTab);
  document.addEventListener('visibilitychange', () => { if (!document.hidden) poll(); });
  setInterval(tick, 1000);
  try {
    const s = await api('GET', SESSION_URL);
    if (s.signedIn) signedIn(s.name);
    else showSignIn();
  } catch (e) {
    showSignIn();
    report(e);
  }
}

start();
