// A Cluster's page (`#/clusters/<namespace>/<name>`): its actions, the rollout (a tile per machine), its machines, the
// hand-off timeline, its events and the `capstan describe cluster` tree, each read as the user. Live while open: the
// cluster's stream sends its machines, the Cluster and new timeline steps; it is closed when the page is left.
import { html, nothing, render } from './vendor/lit-html/lit-html.js';
import { repeat } from './vendor/lit-html/directives/repeat.js';
import { api, call, failed, follow, objectPath, post } from './api.js';
import { clusterRow, onClusterChange } from './fleet.js';
import { timelineView } from './timeline.js';
import { $, age, conditionCell, conditionText, notices } from './view.js';

/** The open page's state; undefined when no cluster page is open. */
let page;
/** The cluster page last open and the machines it listed (kept after it is left), for `clusterOf`. */
let last;
let stream;
let unsubscribe;
let ticker;

/**
 * The actions `GET .../permissions` answers for (`{actions: {<action>: {allowed, reason}}}`), and what each is, for a
 * disabled button's note when the answer gives no reason.
 */
const ACTIONS = {
  scaleControlPlane: 'scale the control plane of',
  scaleWorkers: 'scale the workers of',
  pause: 'pause or resume',
  upgrade: 'upgrade',
  delete: 'delete',
  kubeconfig: 'download the kubeconfig of',
};

const MACHINE_STATES = {
  provisioning: 'Provisioning',
  old: 'Running, old version',
  updating: 'Updating in place',
  ready: 'Up to date and ready',
  'not-ready': 'Running, not ready',
  deleting: 'Deleting',
};

/** Where a machine is in a rollout, from what its row carries. */
export function machineState(machine, targetVersion) {
  if (machine.deleting) return 'deleting';
  if (!machine.phase || ['Pending', 'Provisioning', 'Provisioned'].includes(machine.phase))
    return 'provisioning';
  if (machine.updating?.status === 'True') return 'updating';
  if (machine.upToDate?.status === 'False') return 'old';
  if (!machine.upToDate && targetVersion && machine.version && machine.version !== targetVersion)
    return 'old';
  return machine.ready?.status === 'True' ? 'ready' : 'not-ready';
}

const machineHref = (namespace, name) => `#/machines/${objectPath(namespace, name)}`;

/** The cluster (`{namespace, name}`) whose page last listed Machine `namespace/name`, if one did. */
export function clusterOf(namespace, machineName) {
  return last?.namespace === namespace && last.machines.some((m) => m.name === machineName)
    ? { namespace: last.namespace, name: last.name }
    : undefined;
}

/** The Cluster's fleet row: from the cluster stream once it sent one, else from the fleet's. */
const summary = () => page.cluster ?? clusterRow(page.namespace, page.name);

const may = (action) => page.permissions?.[action]?.allowed !== false;
const why = (action) =>
  may(action) ? '' : (page.permissions[action].reason ?? `You may not ${ACTIONS[action]} this cluster.`);
const whyNote = (action) =>
  may(action) ? nothing : html`<span class="why" data-why=${action}>${why(action)}</span>`;

function draw() {
  if (!page) return;
  render(view(), $('cluster'));
}

/**
 * How long a part waits before it is read again, so a burst of changes is read once: the events list (a list of the
 * namespace's Events) at most every 2 s, the rest after 300 ms.
 */
const RELOAD_DELAY_MS = { events: 2000 };

/** Reads `parts` again, each once its delay has passed (a part already due is not asked twice). */
function reload(...parts) {
  if (!page) return;
  const opened = page;
  for (const part of parts) {
    if (opened.reloads[part]) continue;
    opened.reloads[part] = setTimeout(() => {
      opened.reloads[part] = undefined;
      if (page === opened) load(part);
    }, RELOAD_DELAY_MS[part] ?? 300);
  }
}

const LOADS = {
  tree: async (path) => ({ tree: (await api(`${path}/tree`)).rows }),
  machines: async (path) => ({ machines: (await api(`${path}/machines`)).machines }),
  events: async (path) => ({ events: (await api(`${path}/events`)).events }),
  timeline: async (path) => {
    const answer = await api(`${path}/timeline`);
    // Steps the stream sent while this was read stay (mergeSteps drops the doubles).
    const live = page?.timeline.steps ?? [];
    const steps = [...(answer.steps ?? [])];
    const seen = new Set(steps.map(stepKey));
    for (const step of live) if (!seen.has(stepKey(step))) steps.push(step);
    return { timeline: { steps, unavailable: answer.unavailable, truncated: answer.truncated } };
  },
  permissions: async (path) => {
    try {
      return { permissions: (await api(`${path}/permissions`)).actions };
    } catch (error) {
      // A dashboard without the question: the buttons stay as they are, and the API server answers the click.
      if (error.status === 404) return { permissions: undefined };
      throw error;
    }
  },
};

/** Reads one part of the page as the user; an answer for a page since left is dropped. */
async function load(part) {
  const opened = page;
  try {
    const answer = await LOADS[part](opened.path);
    if (page !== opened) return;
    Object.assign(page, answer);
    page.errors[part] = undefined;
    if (answer.machines) last.machines = answer.machines;
  } catch (error) {
    if (page !== opened) return;
    failed(error, (message) => (page.errors[part] = message));
  }
  draw();
}

/** A step seen twice (the replay, then live) is one: by its event id. */
const stepKey = (s) => s.id ?? `${s.machine ?? ''}|${s.step}|${s.time}`;

function mergeSteps(steps) {
  const seen = new Set(page.timeline.steps.map(stepKey));
  for (const step of steps) {
    const key = stepKey(step);
    if (seen.has(key)) continue;
    seen.add(key);
    page.timeline.steps.push(step);
  }
  page.timeline = { ...page.timeline, steps: [...page.timeline.steps] };
}

/** What the cluster's stream sends: `machines` (every MachineRow), `cluster` (its fleet row), `timeline` (new steps). */
function onStreamEvent(event, payload) {
  if (event === 'machines') {
    page.machines = Array.isArray(payload) ? payload : (payload.machines ?? []);
    page.errors.machines = undefined;
    last.machines = page.machines;
    reload('tree', 'events');
  } else if (event === 'cluster') {
    page.cluster = payload;
    page.deleted = false;
    reload('tree', 'events', 'permissions');
  } else if (event === 'cluster-deleted') {
    page.deleted = true;
  } else if (event === 'timeline') {
    mergeSteps(Array.isArray(payload) ? payload : (payload.steps ?? []));
  } else if (event === 'timeline-unavailable') {
    page.timeline = { ...page.timeline, unavailable: payload.message };
  } else return;
  draw();
}

/** Opens the page of `namespace/name`: reads every part, then follows the cluster's stream until it is left. */
export function showCluster(namespace, name) {
  hideCluster();
  page = {
    namespace,
    name,
    path: `clusters/${objectPath(namespace, name)}`,
    tree: [],
    machines: [],
    events: [],
    timeline: { steps: [] },
    permissions: undefined,
    errors: {},
    reloads: {},
    notice: '',
    error: '',
    live: '',
    deleteTyped: '',
  };
  last = { namespace, name, machines: [] };
  $('cluster-actions')?.reset();
  draw();
  // The timeline is read once the stream is open (and again after each reconnect): a step published in between is
  // then in one or the other, and a step in both is drawn once (by its id).
  for (const part of Object.keys(LOADS)) if (part !== 'timeline') load(part);
  const opened = page;
  stream = follow(`${page.path}/stream`, {
    onOpen: () => {
      opened.live = 'live';
      if (page === opened) load('timeline');
      draw();
    },
    onEvent: (event, payload) => page === opened && onStreamEvent(event, payload),
    onStatus: (status) => {
      opened.live = status;
      draw();
    },
    onRefused: (error) => {
      // No stream here (an older dashboard) or not for this user: the fleet's stream still says when the Cluster
      // changed, and the page reads its parts again then.
      opened.live = error.status === 404 ? '' : error.message;
      opened.noStream = true;
      if (page === opened) load('timeline');
      draw();
    },
  });
  unsubscribe = onClusterChange((cluster) => {
    if (page !== opened || cluster.namespace !== namespace || cluster.name !== name) return;
    if (opened.noStream || opened.live !== 'live') reload('tree', 'machines', 'events');
    else reload('tree');
    draw();
  });
  // Ages ("since") move on while the page is open.
  ticker = setInterval(draw, 5000);
}

/** Leaves the page: its stream closes, answers still on their way are dropped. */
export function hideCluster() {
  stream?.close();
  unsubscribe?.();
  clearInterval(ticker);
  for (const timer of Object.values(page?.reloads ?? {})) clearTimeout(timer);
  stream = unsubscribe = ticker = undefined;
  page = undefined;
}

/** Sign-out: nothing of this user's cluster stays in the page. */
export function clearCluster() {
  hideCluster();
  last = undefined;
  render(nothing, $('cluster'));
}

/** One of the page's actions, as the user: the API server's refusal (RBAC, the control plane, the webhook) shown as it came. */
async function act(path, body, done) {
  const opened = page;
  opened.error = '';
  opened.notice = '';
  draw();
  try {
    const answer = await post(path, body);
    if (page !== opened) return;
    opened.notice = done(answer);
    reload('tree', 'machines');
  } catch (error) {
    if (page !== opened) return;
    failed(error, (message) => (opened.error = message));
  }
  draw();
}

const inputValue = (id) => $(id)?.value.trim() ?? '';

function scaleControlPlane() {
  act(
    `${page.path}/scale-control-plane`,
    { replicas: Number(inputValue('scale-cp-replicas')) },
    // A topology Cluster's count is written in its topology (the answer names the Cluster).
    (a) =>
      a.kind === 'Cluster'
        ? `Control plane of Cluster ${a.name} scaled to ${a.replicas} (its topology)`
        : `${a.kind} ${a.name} scaled to ${a.replicas}`,
  );
}

function scaleDeployment(event) {
  const deployment = event.currentTarget.dataset.deployment;
  const replicas = Number(event.currentTarget.closest('.scale').querySelector('input').value);
  act(
    `machinedeployments/${objectPath(page.namespace, deployment)}/scale`,
    { replicas },
    (a) =>
      `MachineDeployment ${a.name} scaled to ${a.replicas}` +
      (a.scaled && a.scaled.kind !== 'MachineDeployment'
        ? ` (through ${a.scaled.kind} ${a.scaled.name}'s topology)`
        : ''),
  );
}

function upgrade() {
  act(
    `${page.path}/upgrade`,
    { version: inputValue('upgrade-version') },
    (a) => `Upgrading to ${a.version}: the control plane first, then the workers`,
  );
}

function togglePaused() {
  const paused = summary()?.paused === true;
  act(`${page.path}/${paused ? 'resume' : 'pause'}`, {}, (a) =>
    a.paused ? `Cluster ${a.name} paused` : `Cluster ${a.name} resumed`,
  );
}

function removeCluster() {
  act(
    `${page.path}/delete`,
    { confirm: inputValue('delete-confirm') },
    (a) => `Cluster ${a.namespace}/${a.name} is being deleted`,
  );
}

/** Fetches the kubeconfig as the user (the token is a header, so no plain link) and saves it as a file. */
async function downloadKubeconfig() {
  const opened = page;
  opened.error = '';
  draw();
  try {
    const response = await call(`${opened.path}/kubeconfig`);
    const url = URL.createObjectURL(await response.blob());
    const link = document.createElement('a');
    link.href = url;
    link.download = `${opened.name}.kubeconfig`;
    link.click();
    // The download has its own copy once started; the next task frees the page's.
    setTimeout(() => URL.revokeObjectURL(url));
  } catch (error) {
    if (page !== opened) return;
    failed(error, (message) => (opened.error = message));
    draw();
  }
}

function typedName(event) {
  page.deleteTyped = event.currentTarget.value;
  draw();
}

function actionsView() {
  const paused = summary()?.paused === true;
  return html`<form id="cluster-actions" class="actions" @submit=${(e) => e.preventDefault()}>
    <span class="action">
      <label
        >Control plane replicas
        <input id="scale-cp-replicas" type="number" min="1" max="99" ?disabled=${!may('scaleControlPlane')}
      /></label>
      <button
        id="scale-cp"
        type="button"
        ?disabled=${!may('scaleControlPlane')}
        title=${why('scaleControlPlane')}
        @click=${scaleControlPlane}
      >
        Scale
      </button>
      ${whyNote('scaleControlPlane')}
    </span>
    <span class="action">
      <label
        >Kubernetes version
        <input id="upgrade-version" type="text" placeholder="v1.35.4" ?disabled=${!may('upgrade')}
      /></label>
      <button
        id="upgrade"
        type="button"
        ?disabled=${!may('upgrade')}
        title=${why('upgrade')}
        @click=${upgrade}
      >
        Upgrade
      </button>
      ${whyNote('upgrade')}
    </span>
    <span class="action">
      <button
        id="pause"
        type="button"
        ?disabled=${!may('pause')}
        title=${why('pause')}
        @click=${togglePaused}
      >
        ${paused ? 'Resume' : 'Pause'}
      </button>
      ${whyNote('pause')}
    </span>
    <span class="action">
      <label
        >Type the name to delete
        <input
          id="delete-confirm"
          type="text"
          autocomplete="off"
          ?disabled=${!may('delete')}
          @input=${typedName}
      /></label>
      <button
        id="delete"
        type="button"
        ?disabled=${!may('delete') || page.deleteTyped !== page.name}
        title=${why('delete')}
        @click=${removeCluster}
      >
        Delete
      </button>
      ${whyNote('delete')}
    </span>
  </form>`;
}

function summaryView() {
  const c = summary();
  if (!c) return nothing;
  return html`<p class="summary" id="cluster-summary">
    ${c.deleting ? 'Deleting' : (c.phase ?? 'No phase yet')}${c.version ? html` · ${c.version}` : ''} ·
    control plane ${c.controlPlane.ready}/${c.controlPlane.desired} · workers
    ${c.workers.ready}/${c.workers.desired} ${c.paused ? html` · <strong>paused</strong>` : ''}
    ${['Available', 'RollingOut', 'Remediating']
      .filter((type) => c.conditions[type])
      .map((type) => html` · ${type} ${conditionText(c.conditions[type])}`)}
  </p>`;
}

/** Machines by what owns them: the control plane, each MachineDeployment, then the others. */
function machineGroups() {
  const groups = new Map();
  const add = (key, label, deployment, machine) => {
    if (!groups.has(key)) groups.set(key, { key, label, deployment, machines: [] });
    groups.get(key).machines.push(machine);
  };
  const sorted = [...page.machines].sort((a, b) => a.name.localeCompare(b.name));
  for (const m of sorted.filter((m) => m.controlPlane)) add('cp', 'Control plane', undefined, m);
  for (const m of sorted.filter((m) => !m.controlPlane && m.deployment))
    add(`md/${m.deployment}`, `MachineDeployment ${m.deployment}`, m.deployment, m);
  for (const m of sorted.filter((m) => !m.controlPlane && !m.deployment))
    add('other', 'Other machines', undefined, m);
  return [...groups.values()];
}

function rolloutView() {
  const target = summary()?.version;
  const groups = machineGroups();
  if (groups.length === 0) return html`<p class="empty">No machines.</p>`;
  const counts = {};
  for (const m of page.machines) {
    const state = machineState(m, target);
    counts[state] = (counts[state] ?? 0) + 1;
  }
  return html`<p class="legend">
      ${Object.entries(MACHINE_STATES).map(
        ([state, label]) =>
          html`<span class="tile-key state-${state}">${label}: ${counts[state] ?? 0}</span>`,
      )}
    </p>
    ${repeat(
      groups,
      (g) => g.key,
      (g) =>
        html`<div class="rollout-group" data-group=${g.key}>
          <h4>
            ${g.label} <span class="muted">(${g.machines.length})</span>
            ${
              g.deployment
                ? html`<span class="scale">
                    <input
                      type="number"
                      min="0"
                      max="1000"
                      aria-label=${`Replicas of ${g.deployment}`}
                      value=${String(g.machines.filter((m) => !m.deleting).length)}
                      ?disabled=${!may('scaleWorkers')}
                    />
                    <button
                      type="button"
                      data-deployment=${g.deployment}
                      ?disabled=${!may('scaleWorkers')}
                      title=${why('scaleWorkers')}
                      @click=${scaleDeployment}
                    >
                      Scale ${g.deployment}
                    </button>
                    ${whyNote('scaleWorkers')}
                  </span>`
                : nothing
            }
          </h4>
          <div class="tiles">
            ${repeat(
              g.machines,
              (m) => m.name,
              (m) => {
                const state = machineState(m, target);
                return html`<a
                  class="tile state-${state}"
                  data-machine=${m.name}
                  data-state=${state}
                  href=${machineHref(m.namespace, m.name)}
                  title=${`${m.name}: ${MACHINE_STATES[state]}`}
                >
                  <span class="tile-name">${m.name}</span>
                  <span class="tile-version">${m.version ?? '?'}</span>
                  <span class="tile-state">${MACHINE_STATES[state]}</span>
                </a>`;
              },
            )}
          </div>
        </div>`,
    )}`;
}

function machinesView() {
  if (page.errors.machines) return html`<p role="alert">${page.errors.machines}</p>`;
  if (page.machines.length === 0) return html`<p class="empty">No machines.</p>`;
  return html`<table class="machines">
    <thead>
      <tr>
        <th>Name</th>
        <th>Role</th>
        <th>Phase</th>
        <th>Version</th>
        <th>Node</th>
        <th>Provider ID</th>
        <th>Ready</th>
        <th>Up to date</th>
        <th>Updating</th>
        <th>Age</th>
      </tr>
    </thead>
    <tbody id="machines">
      ${repeat(
        [...page.machines].sort((a, b) => a.name.localeCompare(b.name)),
        (m) => m.name,
        (m) =>
          html`<tr data-machine=${m.name}>
            <td><a href=${machineHref(m.namespace, m.name)}>${m.name}</a></td>
            <td>${m.controlPlane ? 'control plane' : (m.deployment ?? '')}</td>
            <td>${m.deleting ? 'Deleting' : (m.phase ?? '')}</td>
            <td>${m.version ?? ''}</td>
            <td>${m.nodeName ?? ''}</td>
            <td class="ellipsis" title=${m.providerID ?? ''}>${m.providerID ?? ''}</td>
            ${conditionCell(m.ready)} ${conditionCell(m.upToDate)}
            ${conditionCell(m.updating, { negative: true })}
            <td>${age(m.createdAt)}</td>
          </tr>`,
      )}
    </tbody>
  </table>`;
}

function eventsView() {
  if (page.errors.events) return html`<p role="alert">${page.errors.events}</p>`;
  if (page.events.length === 0) return html`<p class="empty">No events.</p>`;
  const when = (e) => Date.parse(e.lastTime ?? e.firstTime ?? '') || 0;
  const newest = [...page.events].sort((a, b) => when(b) - when(a));
  return html`<table class="events">
    <thead>
      <tr>
        <th>Last seen</th>
        <th>Type</th>
        <th>Reason</th>
        <th>Object</th>
        <th>Message</th>
        <th>Count</th>
      </tr>
    </thead>
    <tbody id="events">
      ${newest.map(
        (e) =>
          html`<tr class=${e.type === 'Warning' ? 'warning' : ''} data-reason=${e.reason ?? ''}>
            <td>${age(e.lastTime ?? e.firstTime)}</td>
            <td>${e.type ?? ''}</td>
            <td>${e.reason ?? ''}</td>
            <td>${e.object ? `${e.object.kind} ${e.object.name}` : ''}</td>
            <td class="message">${e.message ?? ''}</td>
            <td>${e.count ?? ''}</td>
          </tr>`,
      )}
    </tbody>
  </table>`;
}

function treeView() {
  return html`<table class="tree">
    <thead>
      <tr>
        <th>Name</th>
        <th>Replicas</th>
        <th>Available</th>
        <th>Ready</th>
        <th>Up to date</th>
        <th>Status</th>
        <th>Reason</th>
        <th>Since</th>
        <th>Message</th>
      </tr>
    </thead>
    <tbody id="tree">
      ${page.tree.map(
        (row) =>
          html`<tr>
            <td class="tree-name">${row.name}</td>
            <td>${row.replicas ?? ''}</td>
            <td>${row.available ?? ''}</td>
            <td>${row.ready ?? ''}</td>
            <td>${row.upToDate ?? ''}</td>
            <td class=${row.status ?? ''}>${row.status ?? ''}</td>
            <td>${row.reason ?? ''}</td>
            <td>${row.since ?? ''}</td>
            <td class="message">${row.message ?? ''}</td>
          </tr>`,
      )}
    </tbody>
  </table>`;
}

function view() {
  const { namespace, name } = page;
  return html`<p><a id="back" href="#/">Back to the fleet</a></p>
    <div class="title">
      <h2 id="cluster-title">Cluster ${namespace}/${name}</h2>
      <button
        id="download-kubeconfig"
        type="button"
        ?disabled=${!may('kubeconfig')}
        title=${why('kubeconfig')}
        @click=${downloadKubeconfig}
      >
        Download kubeconfig
      </button>
      ${whyNote('kubeconfig')}
      <span id="cluster-live" class="muted" aria-live="polite">${page.live}</span>
    </div>
    ${
      page.deleted
        ? html`<p class="failure" id="cluster-deleted">This Cluster has been deleted.</p>`
        : html`${summaryView()} ${actionsView()}`
    }
    ${notices(page.notice, page.error || page.errors.tree, { notice: 'cluster-notice', error: 'cluster-error' })}
    ${page.errors.permissions ? html`<p class="muted">${page.errors.permissions}</p>` : nothing}
    <h3>Rollout</h3>
    <div id="rollout">${rolloutView()}</div>
    <h3>Machines</h3>
    ${machinesView()}
    <h3>Hand-off timeline</h3>
    <div id="timeline">
      ${
        page.errors.timeline
          ? html`<p role="alert">${page.errors.timeline}</p>`
          : timelineView(page.timeline, page.machines)
      }
    </div>
    <h3>Events</h3>
    ${eventsView()}
    <h3>Objects</h3>
    ${treeView()}`;
}
