// A Machine's page (`#/machines/<namespace>/<name>`): its conditions, its infrastructure (provider) object, its node
// (or why it cannot be read), and its plan: state, probes and the output of a failed step. Read as the user; read again
// while open whenever its cluster's stream says the machine changed.
import { html, nothing, render } from './vendor/lit-html/lit-html.js';
import { api, failed, follow, objectPath } from './api.js';
import { $, age, conditionsTable, facts, ref } from './view.js';

let page;
let stream;
let ticker;
let reloadTimer;

function draw() {
  if (page) render(view(), $('machine'));
}

async function load() {
  const opened = page;
  try {
    const answer = await api(opened.path);
    if (page !== opened) return;
    opened.data = answer;
    opened.error = '';
    // Followed once the machine says which cluster it is of, when the page was not opened from that cluster's.
    const cluster = answer.machine?.cluster ?? answer.machine?.clusterName;
    if (!opened.cluster && cluster) follows(opened, { namespace: opened.namespace, name: cluster });
  } catch (error) {
    if (page !== opened) return;
    failed(error, (message) => (opened.error = message));
  }
  draw();
}

function reloadSoon() {
  if (reloadTimer) return;
  reloadTimer = setTimeout(() => {
    reloadTimer = undefined;
    if (page) load();
  }, 300);
}

/** Follows the cluster's stream: a `machines` event whose row of this machine changed reads the page again. */
function follows(opened, cluster) {
  opened.cluster = cluster;
  let last;
  stream?.close();
  stream = follow(`clusters/${objectPath(cluster.namespace, cluster.name)}/stream`, {
    onEvent: (event, payload) => {
      if (page !== opened || event !== 'machines') return;
      const machines = Array.isArray(payload) ? payload : (payload.machines ?? []);
      const row = JSON.stringify(machines.find((m) => m.name === opened.name) ?? null);
      if (last !== undefined && row !== last) reloadSoon();
      last = row;
    },
    onRefused: () => undefined,
  });
}

/** Opens the page of Machine `namespace/name`; `cluster` ({ namespace, name }) is the cluster page it came from. */
export function showMachine(namespace, name, cluster) {
  hideMachine();
  page = { namespace, name, path: `machines/${objectPath(namespace, name)}`, error: '', data: undefined };
  draw();
  load();
  if (cluster?.namespace === namespace) follows(page, cluster);
  ticker = setInterval(draw, 5000);
}

export function hideMachine() {
  stream?.close();
  clearInterval(ticker);
  clearTimeout(reloadTimer);
  stream = ticker = reloadTimer = undefined;
  page = undefined;
}

export function clearMachine() {
  hideMachine();
  render(nothing, $('machine'));
}

function planView(plan, unavailable) {
  if (!plan) return html`<p class="empty" id="plan-unavailable">${unavailable ?? 'No plan reported.'}</p>`;
  return html`${facts([
    ['State', html`<span class=${`plan-state plan-${plan.state}`} id="plan-state">${plan.state}</span>`],
    ['Applied', plan.applied ? `yes${plan.appliedChecksum ? ` (${plan.appliedChecksum})` : ''}` : 'no'],
    ['Revision', plan.revision],
    ['Last applied', plan.lastApplyTime ? `${age(plan.lastApplyTime)} ago` : undefined],
  ])}
  ${
    plan.probes?.length
      ? html`<table class="probes">
          <thead>
            <tr>
              <th>Probe</th>
              <th>Healthy</th>
              <th>Successes</th>
              <th>Failures</th>
            </tr>
          </thead>
          <tbody id="probes">
            ${plan.probes.map(
              (p) =>
                html`<tr data-probe=${p.name}>
                  <td>${p.name}</td>
                  <td class=${p.healthy ? 'True' : 'False'}>${p.healthy ? 'yes' : 'no'}</td>
                  <td>${p.successCount ?? ''}</td>
                  <td>${p.failureCount ?? ''}</td>
                </tr>`,
            )}
          </tbody>
        </table>`
      : html`<p class="empty">No probes.</p>`
  }
  ${plan.failures !== undefined ? html`<p>Failed attempts: ${plan.failures}</p>` : nothing}
  ${plan.failureMessage ? html`<p class="failure" id="plan-failure">${plan.failureMessage}</p>` : nothing}
  ${
    plan.failureOutput
      ? html`<h4>Output of the failed step</h4>
          <pre id="plan-output">${plan.failureOutput}</pre>`
      : nothing
  }`;
}

function nodeView({ node, nodeUnavailable }) {
  if (!node) return html`<p class="empty" id="node-unavailable">${nodeUnavailable ?? 'No node yet.'}</p>`;
  const info = node.nodeInfo ?? {};
  return html`${facts([
    ['Name', node.name],
    ['Kubelet', info.kubeletVersion],
    ['OS', info.osImage],
    ['Kernel', info.kernelVersion],
    ['Container runtime', info.containerRuntimeVersion],
    ['Architecture', info.architecture],
    ['Addresses', node.addresses?.map((a) => `${a.type} ${a.address}`).join(', ')],
  ])}
  ${conditionsTable(node.conditions, 'node-conditions')}`;
}

function view() {
  const back = page.cluster
    ? html`<a
        id="back-to-cluster"
        href=${`#/clusters/${objectPath(page.cluster.namespace, page.cluster.name)}`}
        >Back to cluster ${page.cluster.name}</a
      >`
    : html`<a href="#/">Back to the fleet</a>`;
  const head = html`<p>${back}</p>
    <div class="title"><h2 id="machine-title">Machine ${page.namespace}/${page.name}</h2></div>
    <p id="machine-error" role="alert">${page.error}</p>`;
  const data = page.data;
  if (!data?.machine) return head;
  const m = data.machine;
  const infra = data.infrastructure;
  return html`${head}
    ${facts([
      [
        'Role',
        m.controlPlane ? 'control plane' : m.deployment ? `MachineDeployment ${m.deployment}` : undefined,
      ],
      ['Phase', m.deleting ? 'Deleting' : m.phase],
      ['Version', m.version],
      ['Node', m.nodeName],
      ['Provider ID', m.providerID],
      ['Infrastructure', ref(m.infrastructure)],
      ['Bootstrap', ref(m.bootstrap)],
      ['Age', age(m.createdAt)],
      ['Failure domain', m.failureDomain],
      ['Addresses', m.addresses?.map((a) => `${a.type} ${a.address}`).join(', ')],
    ])}
    ${
      m.failureReason || m.failureMessage
        ? html`<p class="failure" id="machine-failure">
            <strong>${m.failureReason ?? 'Failed'}</strong> ${m.failureMessage ?? ''}
          </p>`
        : nothing
    }
    <h3>Conditions</h3>
    ${conditionsTable(m.conditions, 'machine-conditions')}
    <h3>Infrastructure${infra ? ` (${infra.kind} ${infra.name})` : ''}</h3>
    ${
      infra
        ? html`${facts([
            ['Provisioned', infra.ready === undefined ? undefined : infra.ready ? 'yes' : 'no'],
            ['Provider ID', infra.providerID],
          ])}
          ${conditionsTable(infra.conditions, 'infrastructure-conditions')}`
        : html`<p class="empty" id="infrastructure-unavailable">
            ${data.infrastructureUnavailable ?? 'Not readable.'}
          </p>`
    }
    <h3>Node</h3>
    <div id="node">${nodeView(data)}</div>
    <h3>Plan</h3>
    <div id="plan">${planView(data.plan, data.planUnavailable)}</div>`;
}
