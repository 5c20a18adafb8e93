// The fleet: one row per Cluster the user may list, live from the fleet stream. Rows are keyed (lit-html's `repeat` by
// namespace/name): a change to one Cluster updates the cells of its row that changed, nothing else of the table, and
// a render is at most once per animation frame however many events came.
import { html, render } from './vendor/lit-html/lit-html.js';
import { repeat } from './vendor/lit-html/directives/repeat.js';
import { failed, follow, objectPath, post } from './api.js';
import { $, conditionCell } from './view.js';

/** namespace/name -> the row the stream sent (ClusterSummary of apps/dashboard/src/fleet/cluster-summary.ts). */
const rows = new Map();
/** The keys in namespace/name order; undefined when a Cluster came or went (an update keeps its place). */
let sortedKeys;
/** The namespaces in the list last drawn (joined), to redraw the namespace filter only when they change. */
let shownNamespaces = '';
/** The last template of each row, by the row object: an unchanged row costs lit-html no new template. */
const templates = new WeakMap();
let renderPending = false;
let stream;
/** Who wants to hear about a changed Cluster (the open cluster page). */
const listeners = new Set();

/** The states a row can be filtered by, each from what the row carries. */
export const STATES = {
  Available: (c) => c.conditions.Available?.status === 'True',
  Provisioning: (c) => !c.deleting && (c.phase === 'Pending' || c.phase === 'Provisioning'),
  Deleting: (c) => c.deleting || c.phase === 'Deleting',
  Failed: (c) => c.phase === 'Failed',
  RollingOut: (c) => c.conditions.RollingOut?.status === 'True' || c.conditions.Updating?.status === 'True',
  Remediating: (c) => c.conditions.Remediating?.status === 'True',
  Paused: (c) => c.paused,
};

const keyOf = (c) => `${c.namespace}/${c.name}`;

/** The row of a Cluster, when the fleet stream has it. */
export const clusterRow = (namespace, name) => rows.get(`${namespace}/${name}`);

/** Calls `listener(summary)` whenever a Cluster changes; returns the unsubscribe. */
export function onClusterChange(listener) {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

/** `key=value` or `key` (a label that is set, whatever its value); undefined for an empty filter. */
export function parseLabelFilter(text) {
  const trimmed = text.trim();
  if (!trimmed) return undefined;
  const at = trimmed.indexOf('=');
  return at < 0
    ? { key: trimmed }
    : { key: trimmed.slice(0, at).trim(), value: trimmed.slice(at + 1).trim() };
}

/** The filters as the inputs say now: they are read at every render, so a render never loses them. */
function filters() {
  return {
    text: $('filter-text').value.trim(),
    namespace: $('filter-namespace').value,
    label: parseLabelFilter($('filter-label').value),
    state: $('filter-state').value,
  };
}

function matches(c, { text, namespace, label, state }) {
  if (namespace && c.namespace !== namespace) return false;
  if (text && !keyOf(c).includes(text)) return false;
  if (label) {
    const labels = c.labels ?? {};
    if (!Object.hasOwn(labels, label.key)) return false;
    if (label.value !== undefined && labels[label.key] !== label.value) return false;
  }
  if (state && !STATES[state]?.(c)) return false;
  return true;
}

/** Pause or Resume, whichever the row's Cluster is not (the click reads the row as it is now). */
async function togglePaused(event) {
  const cluster = rows.get(event.currentTarget.closest('tr').dataset.cluster);
  if (!cluster) return;
  $('action-error').textContent = '';
  try {
    await post(
      `clusters/${objectPath(cluster.namespace, cluster.name)}/${cluster.paused ? 'resume' : 'pause'}`,
    );
  } catch (error) {
    failed(error, (message) => ($('action-error').textContent = message));
  }
}

function phaseOf(c) {
  return c.deleting ? 'Deleting' : (c.phase ?? '');
}

function rowTemplate(c) {
  let template = templates.get(c);
  if (template) return template;
  const key = keyOf(c);
  template = html`<tr data-cluster=${key} class=${c.paused ? 'paused' : ''}>
    <td title=${c.namespace}>${c.namespace}</td>
    <td title=${c.name}><a href=${`#/clusters/${objectPath(c.namespace, c.name)}`}>${c.name}</a></td>
    <td>${phaseOf(c)}</td>
    <td>${c.version ?? ''}</td>
    <td>${c.controlPlane.ready}/${c.controlPlane.desired}</td>
    <td>${c.workers.ready}/${c.workers.desired}</td>
    ${conditionCell(c.conditions.Available)} ${conditionCell(c.conditions.RollingOut, { negative: true })}
    ${conditionCell(c.conditions.Remediating, { negative: true })}
    <td><button type="button" @click=${togglePaused}>${c.paused ? 'Resume' : 'Pause'}</button></td>
  </tr>`;
  templates.set(c, template);
  return template;
}

/** Draws the table (only what changed reaches the DOM) and, when the namespaces changed, the namespace filter. */
export function renderFleet() {
  if (!sortedKeys) sortedKeys = [...rows.keys()].sort((a, b) => a.localeCompare(b));
  const chosen = filters();
  const shown = [];
  for (const key of sortedKeys) {
    const c = rows.get(key);
    if (matches(c, chosen)) shown.push(c);
  }
  render(repeat(shown, keyOf, rowTemplate), $('clusters'));
  $('fleet-count').textContent =
    rows.size === 0
      ? ''
      : shown.length === rows.size
        ? `${rows.size} clusters`
        : `${shown.length} of ${rows.size} clusters`;

  const namespaces = [...new Set(sortedKeys.map((key) => rows.get(key).namespace))];
  if (namespaces.join('\n') === shownNamespaces) return;
  shownNamespaces = namespaces.join('\n');
  // Keyed too: the chosen option stays the same element, so the choice survives a namespace coming or going.
  render(
    html`<option value="">All namespaces</option>
      ${repeat(
        namespaces,
        (n) => n,
        (n) => html`<option value=${n}>${n}</option>`,
      )}`,
    $('filter-namespace'),
  );
}

/** Renders once before the next frame however many events came meanwhile. */
function renderSoon() {
  if (renderPending) return;
  renderPending = true;
  requestAnimationFrame(() => {
    renderPending = false;
    renderFleet();
  });
}

function changed(cluster) {
  for (const listener of listeners) listener(cluster);
}

/** Follows the fleet stream (`snapshot`, then `upsert` and `delete`) until `stopFleet`. */
export function startFleet() {
  stream?.close();
  stream = follow('clusters/stream', {
    onEvent(event, payload) {
      if (event === 'snapshot') {
        $('live').textContent = 'live';
        rows.clear();
        sortedKeys = undefined;
        for (const cluster of payload.items) rows.set(keyOf(cluster), cluster);
        for (const cluster of payload.items) changed(cluster);
      } else if (event === 'upsert') {
        const key = keyOf(payload);
        if (!rows.has(key)) sortedKeys = undefined;
        rows.set(key, payload);
        changed(payload);
      } else if (event === 'delete') {
        if (rows.delete(keyOf(payload))) sortedKeys = undefined;
      } else return;
      renderSoon();
    },
    onStatus(status) {
      $('live').textContent = status;
    },
    onRefused(error) {
      $('live').textContent = error.message;
    },
  });
}

/** Stops following and forgets every row (sign-out: nothing of this user stays in the page). */
export function stopFleet() {
  stream?.close();
  stream = undefined;
  rows.clear();
  sortedKeys = undefined;
  $('live').textContent = '';
  $('action-error').textContent = '';
  renderFleet();
}

for (const id of ['filter-text', 'filter-label']) $(id).addEventListener('input', renderFleet);
for (const id of ['filter-namespace', 'filter-state']) $(id).addEventListener('change', renderFleet);
