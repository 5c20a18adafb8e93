// The fleet page: the user's token lives in this tab's sessionStorage only and goes as a header on every call (no
// cookie: another site cannot make the browser use it). Live updates come as server-sent events read with fetch.
const TOKEN_KEY = 'capstan-dashboard-token';
const $ = (id) => document.getElementById(id);
const rows = new Map();
let stream;

const token = () => sessionStorage.getItem(TOKEN_KEY);

async function api(path, init = {}) {
  const response = await fetch(`/dashboard/api/${path}`, {
    ...init,
    headers: {
      authorization: `Bearer ${token()}`,
      'content-type': 'application/json',
      ...(init.headers ?? {}),
    },
  });
  const body = await response.json().catch(() => ({}));
  if (!response.ok)
    throw Object.assign(new Error(body.message ?? response.statusText), { status: response.status });
  return body;
}

function cell(text, className) {
  const td = document.createElement('td');
  td.textContent = text ?? '';
  if (className) td.className = className;
  return td;
}

function conditionCell(condition) {
  return cell(
    condition ? `${condition.status}${condition.reason ? ` (${condition.reason})` : ''}` : '',
    condition?.status,
  );
}

function render() {
  const text = $('filter-text').value;
  const namespace = $('filter-namespace').value;
  const body = $('clusters');
  body.replaceChildren();
  const namespaces = new Set();
  for (const cluster of [...rows.values()].sort((a, b) =>
    `${a.namespace}/${a.name}`.localeCompare(`${b.namespace}/${b.name}`),
  )) {
    namespaces.add(cluster.namespace);
    if (namespace && cluster.namespace !== namespace) continue;
    if (text && !`${cluster.namespace}/${cluster.name}`.includes(text)) continue;
    const tr = document.createElement('tr');
    tr.dataset.cluster = `${cluster.namespace}/${cluster.name}`;
    tr.append(
      cell(cluster.namespace),
      cell(cluster.name),
      cell(cluster.deleting ? 'Deleting' : cluster.phase),
      cell(cluster.version),
      cell(`${cluster.controlPlane.ready}/${cluster.controlPlane.desired}`),
      cell(`${cluster.workers.ready}/${cluster.workers.desired}`),
      conditionCell(cluster.conditions.Available),
      conditionCell(cluster.conditions.RollingOut),
      conditionCell(cluster.conditions.Remediating),
    );
    const action = document.createElement('td');
    const button = document.createElement('button');
    button.textContent = cluster.paused ? 'Resume' : 'Pause';
    button.addEventListener('click', () =>
      act(`clusters/${cluster.namespace}/${cluster.name}/${cluster.paused ? 'resume' : 'pause'}`),
    );
    action.append(button);
    tr.append(action);
    body.append(tr);
  }
  const select = $('filter-namespace');
  const chosen = select.value;
  select.replaceChildren(
    new Option('All namespaces', ''),
    ...[...namespaces].sort().map((n) => new Option(n, n)),
  );
  select.value = chosen;
}

async function act(path) {
  $('action-error').textContent = '';
  try {
    await api(path, { method: 'POST', body: '{}' });
  } catch (error) {
    $('action-error').textContent = error.message;
  }
}

/** Reads the event stream; on any end but sign-out it starts again (a fresh snapshot) after a second. */
async function follow() {
  stream?.abort();
  const controller = new AbortController();
  stream = controller;
  try {
    const response = await fetch('/dashboard/api/clusters/stream', {
      headers: { authorization: `Bearer ${token()}` },
      signal: controller.signal,
    });
    if (response.status === 401) return signOut('Your token is no longer accepted: sign in again.');
    if (!response.ok) throw new Error(`the live view answered ${response.status}`);
    const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
    let buffer = '';
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      buffer += value;
      let end;
      while ((end = buffer.indexOf('\n\n')) >= 0) {
        const message = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        const event = /^event: (.*)$/m.exec(message)?.[1];
        const data = /^data: (.*)$/m.exec(message)?.[1];
        if (!event || data === undefined) continue;
        const payload = JSON.parse(data);
        if (event === 'snapshot') {
          $('live').textContent = 'live';
          rows.clear();
          for (const cluster of payload.items) rows.set(`${cluster.namespace}/${cluster.name}`, cluster);
        } else if (event === 'upsert') rows.set(`${payload.namespace}/${payload.name}`, payload);
        else if (event === 'delete') rows.delete(`${payload.namespace}/${payload.name}`);
        else if (event === 'signed-out') return signOut(payload.message);
        else if (event === 'error') $('live').textContent = payload.message;
        render();
      }
    }
  } catch {
    // Cut off, or the server went away: reconnect below, unless this stream was replaced or signed out.
    if (controller.signal.aborted) return;
  }
  $('live').textContent = 'reconnecting';
  setTimeout(() => stream === controller && follow(), 1000);
}

function signOut(message = '') {
  stream?.abort();
  stream = undefined;
  sessionStorage.removeItem(TOKEN_KEY);
  rows.clear();
  // Nothing of this user stays in the page for the next one.
  render();
  $('fleet').hidden = true;
  $('sign-out').hidden = true;
  $('who').textContent = '';
  $('sign-in').hidden = false;
  $('sign-in-error').textContent = message;
}

async function start() {
  try {
    const me = await api('whoami');
    $('who').textContent = me.username;
    $('sign-in').hidden = true;
    $('sign-out').hidden = false;
    $('fleet').hidden = false;
    follow();
  } catch (error) {
    signOut(error.status === 401 ? error.message : `Sign-in failed: ${error.message}`);
  }
}

$('sign-in').addEventListener('submit', (event) => {
  event.preventDefault();
  sessionStorage.setItem(TOKEN_KEY, $('token').value.trim());
  $('token').value = '';
  start();
});
$('sign-out').addEventListener('click', () => signOut());
$('filter-text').addEventListener('input', render);
$('filter-namespace').addEventListener('change', render);
if (token()) start();
else signOut();
