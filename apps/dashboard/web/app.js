// The fleet page: the user's token lives in this tab's sessionStorage only and goes as a header on every call (no
// cookie: another site cannot make the browser use it). Live updates come as server-sent events read with fetch.
// `#/` is the fleet, `#/clusters/<namespace>/<name>` a cluster's page.
const TOKEN_KEY = 'capstan-dashboard-token';
const $ = (id) => document.getElementById(id);
const rows = new Map();
let stream;
/** The cluster whose page is open ({ namespace, name }), or undefined on the fleet. */
let opened;
/** Counts tree loads, so an older answer arriving late does not replace a newer one. */
let treeLoads = 0;

const token = () => sessionStorage.getItem(TOKEN_KEY);
const clusterPath = (namespace, name) =>
  `clusters/${encodeURIComponent(namespace)}/${encodeURIComponent(name)}`;

/** A call as the user; a refusal throws the API server's message (the dashboard passes it on) and status. */
async function call(path, init = {}) {
  const response = await fetch(`/dashboard/api/${path}`, {
    ...init,
    headers: { authorization: `Bearer ${token()}`, ...(init.headers ?? {}) },
  });
  if (!response.ok) {
    const body = await response.json().catch(() => ({}));
    throw Object.assign(new Error(body.message ?? response.statusText), { status: response.status });
  }
  return response;
}

async function api(path, init = {}) {
  const response = await call(path, {
    ...init,
    headers: { 'content-type': 'application/json', ...(init.headers ?? {}) },
  });
  return response.json().catch(() => ({}));
}

function cell(text, className) {
  const td = document.createElement('td');
  td.textContent = text ?? '';
  if (className) td.className = className;
  return td;
}

function linkCell(text, href) {
  const td = document.createElement('td');
  const link = document.createElement('a');
  link.textContent = text;
  link.href = href;
  td.append(link);
  return td;
}

function conditionCell(condition) {
  return cell(
    condition ? `${condition.status}${condition.reason ? ` (${condition.reason})` : ''}` : '',
    condition?.status,
  );
}

let shownNamespaces;
let renderPending = false;

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
      linkCell(cluster.name, `#/${clusterPath(cluster.namespace, cluster.name)}`),
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
  // The namespace list is rebuilt only when the namespaces changed (it would lose an open dropdown otherwise).
  const listed = [...namespaces].sort();
  if (listed.join('\n') === shownNamespaces) return;
  shownNamespaces = listed.join('\n');
  const select = $('filter-namespace');
  const chosen = select.value;
  select.replaceChildren(new Option('All namespaces', ''), ...listed.map((n) => new Option(n, n)));
  select.value = chosen;
}

/**
 * Renders once before the next frame however many events came meanwhile: at 500 rows a render costs the tab about
 * 150 ms of script, style and layout (docs/dashboard.md, "Fleet size"), so a burst of changes is drawn once.
 */
function renderSoon() {
  if (renderPending) return;
  renderPending = true;
  requestAnimationFrame(() => {
    renderPending = false;
    render();
  });
}

/** Shows the page the address names: the fleet, or a cluster's page (its tree read as the user). */
function route() {
  const match = /^#\/clusters\/([^/]+)\/([^/]+)$/.exec(location.hash);
  opened = match
    ? { namespace: decodeURIComponent(match[1]), name: decodeURIComponent(match[2]) }
    : undefined;
  $('fleet').hidden = opened !== undefined;
  $('cluster').hidden = opened === undefined;
  // A tree still on its way is another page's now.
  treeLoads++;
  $('tree').replaceChildren();
  $('cluster-error').textContent = '';
  $('cluster-notice').textContent = '';
  $('delete-confirm').value = '';
  $('delete').disabled = true;
  if (!opened) return;
  $('cluster-title').textContent = `Cluster ${opened.namespace}/${opened.name}`;
  loadTree();
}

/** The `capstan describe cluster` rows of the opened cluster, as the user may read them. */
async function loadTree() {
  const load = ++treeLoads;
  const { namespace, name } = opened;
  try {
    const { rows: treeRows } = await api(`${clusterPath(namespace, name)}/tree`);
    if (load !== treeLoads) return;
    $('cluster-error').textContent = '';
    $('tree').replaceChildren(
      ...treeRows.map((row) => {
        const tr = document.createElement('tr');
        tr.append(
          cell(row.name, 'tree-name'),
          cell(row.replicas),
          cell(row.available),
          cell(row.ready),
          cell(row.upToDate),
          cell(row.status, row.status),
          cell(row.reason),
          cell(row.since),
          cell(row.message),
        );
        return tr;
      }),
    );
  } catch (error) {
    if (load !== treeLoads) return;
    if (error.status === 401) return signOut('Your token is no longer accepted: sign in again.');
    $('tree').replaceChildren();
    $('cluster-error').textContent = error.message;
  }
}

/**
 * One of the cluster page's actions, as the user: the API server's refusal (RBAC, the control plane's rules, the
 * core's admission webhook) is shown as it came.
 */
async function clusterAction(action, body, done) {
  const { namespace, name } = opened;
  $('cluster-error').textContent = '';
  $('cluster-notice').textContent = '';
  try {
    const answer = await api(`${clusterPath(namespace, name)}/${action}`, {
      method: 'POST',
      body: JSON.stringify(body),
    });
    $('cluster-notice').textContent = done(answer);
    loadTree();
  } catch (error) {
    if (error.status === 401) return signOut('Your token is no longer accepted: sign in again.');
    $('cluster-error').textContent = error.message;
  }
}

/** Fetches the kubeconfig as the user (the token is a header, so no plain link) and saves it as a file. */
async function downloadKubeconfig() {
  const { namespace, name } = opened;
  $('cluster-error').textContent = '';
  try {
    const response = await call(`${clusterPath(namespace, name)}/kubeconfig`);
    const url = URL.createObjectURL(await response.blob());
    const link = document.createElement('a');
    link.href = url;
    link.download = `${name}.kubeconfig`;
    link.click();
    // The download has its own copy once started; the next task frees the page's.
    setTimeout(() => URL.revokeObjectURL(url));
  } catch (error) {
    if (error.status === 401) return signOut('Your token is no longer accepted: sign in again.');
    $('cluster-error').textContent = error.message;
  }
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
        } else if (event === 'upsert') {
          rows.set(`${payload.namespace}/${payload.name}`, payload);
          // The opened cluster changed: its tree is read again.
          if (opened?.namespace === payload.namespace && opened?.name === payload.name) loadTree();
        } else if (event === 'delete') rows.delete(`${payload.namespace}/${payload.name}`);
        else if (event === 'signed-out') return signOut(payload.message);
        else if (event === 'error') $('live').textContent = payload.message;
        renderSoon();
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
  treeLoads++;
  // Nothing of this user stays in the page for the next one.
  render();
  $('tree').replaceChildren();
  $('cluster-error').textContent = '';
  $('fleet').hidden = true;
  $('cluster').hidden = true;
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
    route();
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
$('download-kubeconfig').addEventListener('click', downloadKubeconfig);
$('scale-cp').addEventListener('click', () =>
  clusterAction(
    'scale-control-plane',
    { replicas: Number($('scale-cp-replicas').value) },
    (a) => `${a.kind} ${a.name} scaled to ${a.replicas}`,
  ),
);
$('upgrade').addEventListener('click', () =>
  clusterAction(
    'upgrade',
    { version: $('upgrade-version').value.trim() },
    (a) => `Upgrading to ${a.version}: the control plane first, then the workers`,
  ),
);
// Deleting needs the name typed: the button wakes only when it matches.
$('delete-confirm').addEventListener('input', () => {
  $('delete').disabled = !opened || $('delete-confirm').value !== opened.name;
});
$('delete').addEventListener('click', () =>
  clusterAction(
    'delete',
    { confirm: $('delete-confirm').value },
    (a) => `Cluster ${a.namespace}/${a.name} is being deleted`,
  ),
);
window.addEventListener('hashchange', () => {
  if (token() && $('sign-in').hidden) route();
});
if (token()) start();
else signOut();
