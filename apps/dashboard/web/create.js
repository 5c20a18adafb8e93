// Creating a cluster from the fleet page: the built-in templates `capstan generate cluster` has, with its rules, every
// object written as the user (POST /dashboard/api/clusters); a refusal (the rules, RBAC, a name taken) is shown as it
// came. The new Cluster's row comes by the fleet stream, like any other.
import { html, render } from './vendor/lit-html/lit-html.js';
import { api, failed, post } from './api.js';
import { $ } from './view.js';

const TOPOLOGY = 'topology';

/** The template options: from the dashboard's list once signed in; the two built-in ones until then. */
function renderTemplates(templates) {
  render(
    html`${templates.map(
      (t) =>
        html`<option value=${t.flavor ?? ''}>
          ${t.infrastructure}${t.flavor ? `, ${t.flavor}${t.flavor === TOPOLOGY ? ' (ClusterClass)' : ''}` : ''}
        </option>`,
    )}`,
    $('create-flavor'),
  );
  flavorChanged();
}

/** In-place upgrades are the topology template's choice (its ClusterClass): the box is only for it. */
function flavorChanged() {
  const topology = $('create-flavor').value === TOPOLOGY;
  $('create-in-place').disabled = !topology;
  if (!topology) $('create-in-place').checked = false;
}

/** Reads the templates the dashboard offers (after sign-in). */
export async function loadTemplates() {
  try {
    const { templates } = await api('cluster-templates');
    if (Array.isArray(templates) && templates.length > 0) renderTemplates(templates);
  } catch (error) {
    failed(error, () => undefined);
  }
}

/** Sign-out: the form keeps nothing of the last user. */
export function resetCreate() {
  $('create-form').reset();
  $('create-cluster').open = false;
  $('create-notice').textContent = '';
  $('create-error').textContent = '';
  flavorChanged();
}

async function submit(event) {
  event.preventDefault();
  $('create-notice').textContent = '';
  $('create-error').textContent = '';
  const flavor = $('create-flavor').value;
  const request = {
    namespace: $('create-namespace').value.trim(),
    name: $('create-name').value.trim(),
    ...(flavor ? { flavor } : {}),
    kubernetesVersion: $('create-version').value.trim(),
    controlPlaneMachineCount: Number($('create-control-plane').value),
    workerMachineCount: Number($('create-workers').value),
    ...(flavor === TOPOLOGY ? { inPlace: $('create-in-place').checked } : {}),
  };
  $('create-submit').disabled = true;
  try {
    const made = await post('clusters', request);
    $('create-notice').textContent =
      `Cluster ${made.namespace}/${made.name} created: ` +
      `${made.objects.map((o) => `${o.kind} ${o.name}`).join(', ')}`;
  } catch (error) {
    failed(error, (message) => ($('create-error').textContent = message));
  } finally {
    $('create-submit').disabled = false;
  }
}

renderTemplates([{ infrastructure: 'sim' }, { infrastructure: 'sim', flavor: TOPOLOGY }]);
$('create-flavor').addEventListener('change', flavorChanged);
$('create-form').addEventListener('submit', submit);
// Opened while the fleet is filtered to a namespace: the new cluster goes there unless told otherwise.
$('create-cluster').addEventListener('toggle', () => {
  if ($('create-cluster').open && !$('create-namespace').value)
    $('create-namespace').value = $('filter-namespace').value;
});
