// The dashboard's page: sign-in and the address's page. `#/` is the fleet, `#/clusters/<namespace>/<name>` a Cluster's
// page, `#/machines/<namespace>/<name>` a Machine's. Markup is lit-html templates (./vendor/lit-html, served by the
// dashboard from its npm package): no build step, no eval, nothing from another origin.
import { api, failed, onUnauthorized, TOKEN_KEY, token } from './api.js';
import { clearCluster, clusterOf, hideCluster, showCluster } from './cluster.js';
import { loadTemplates, resetCreate } from './create.js';
import { startFleet, stopFleet } from './fleet.js';
import { clearMachine, hideMachine, showMachine } from './machine.js';
import { $ } from './view.js';

const PAGES = ['fleet', 'cluster', 'machine'];

/** Shows the page the address names; the page left stops (its stream closes). */
function route() {
  const match = /^#\/(clusters|machines)\/([^/]+)\/([^/]+)$/.exec(location.hash);
  const kind = match?.[1];
  const namespace = match && decodeURIComponent(match[2]);
  const name = match && decodeURIComponent(match[3]);
  const shown = kind === 'clusters' ? 'cluster' : kind === 'machines' ? 'machine' : 'fleet';
  for (const id of PAGES) $(id).hidden = id !== shown;
  if (shown !== 'cluster') hideCluster();
  if (shown !== 'machine') hideMachine();
  // A machine page opened from its cluster's page links back to it and follows its stream.
  if (shown === 'cluster') showCluster(namespace, name);
  else if (shown === 'machine') showMachine(namespace, name, clusterOf(namespace, name));
  window.scrollTo(0, 0);
}

function signOut(message = '') {
  sessionStorage.removeItem(TOKEN_KEY);
  // Nothing of this user stays in the page for the next one.
  stopFleet();
  resetCreate();
  clearCluster();
  clearMachine();
  for (const id of PAGES) $(id).hidden = true;
  $('sign-out').hidden = true;
  $('who').textContent = '';
  $('sign-in').hidden = false;
  $('sign-in-error').textContent = message;
}

onUnauthorized(signOut);

async function start() {
  try {
    const me = await api('whoami');
    $('who').textContent = me.username;
    $('sign-in').hidden = true;
    $('sign-out').hidden = false;
    startFleet();
    loadTemplates();
    route();
  } catch (error) {
    if (error.status === 401) signOut(error.message);
    else failed(error, (message) => signOut(`Sign-in failed: ${message}`));
  }
}

$('sign-in').addEventListener('submit', (event) => {
  event.preventDefault();
  sessionStorage.setItem(TOKEN_KEY, $('token').value.trim());
  $('token').value = '';
  start();
});
$('sign-out').addEventListener('click', () => signOut());
window.addEventListener('hashchange', () => {
  if (token() && $('sign-in').hidden) route();
});
if (token()) start();
else signOut();
