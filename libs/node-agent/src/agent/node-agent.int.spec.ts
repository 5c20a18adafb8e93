import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type KubeConfig, type KubernetesObject, type V1Secret } from '@kubernetes/client-node';
import pino from 'pino';
import { KubeClient, SECRETS, type KubeRequest, type ResourceClient, HttpMethod } from '@capstan/kube';
import { createTestNamespace, eventually, kubeConfigForToken, type TestNamespace } from '@capstan/testing';
import { ensurePlanAccess, requestAgentToken } from '../access/plan-access.js';
import { agentKubeConfig, DEFAULT_AGENT_CONFIG_PATH, loadAgentConfig, readAgentToken } from './agent-config.js';
import { tokenClaims } from './token-renewer.js';
import { agentMachineRoot } from '../testing/agent-root.js';
import { createPlanMachine } from '../testing/plan-machine.js';
import { HostRoot } from '../apply/host-root.js';
import { planChecksum } from '../plan/parse-plan.js';
import type { MachinePlan } from '../plan/plan.js';
import { decodeSecretData, gunzipJson, MACHINE_PLAN_SECRET_TYPE, PLAN_KEYS, probeStatusesOf, text } from '../report/plan-secret.js';
import { NodeAgent } from './node-agent.js';

const b64 = (s: string) => Buffer.from(s).toString('base64');
const log = pino({ level: 'silent' });

/** The real client, counting the requests it sends by method and path (its informer's list and watch are apart). */
class CountingClient extends KubeClient {
  readonly sent = new Map<string, number>();

  override request<T>(req: KubeRequest): Promise<T> {
    const key = `${req.method} ${req.path}`;
    this.sent.set(key, (this.sent.get(key) ?? 0) + 1);
    return super.request<T>(req);
  }

  /** Requests for one named object: `path` ends with its name. */
  count(method: HttpMethod, path: string): number {
    return [...this.sent].filter(([key]) => key.startsWith(`${method} `) && key.endsWith(path)).reduce((n, [, c]) => n + c, 0);
  }
}

/** A client that authenticates as `token` against the test API server (the admin kubeconfig's cluster). */
function clientWithToken(admin: KubeConfig, token: string): CountingClient {
  return new CountingClient(kubeConfigForToken(admin, token));
}

describe('the node agent on the real API server', () => {
  let ns: TestNamespace;
  let admin: KubeClient;
  let secrets: ResourceClient<V1Secret>;
  let probeTarget: Server;
  let probeUrl: string;
  const agents: NodeAgent[] = [];
  const agentClients: KubeClient[] = [];
  const roots: string[] = [];

  beforeAll(async () => {
    ns = await createTestNamespace('agent');
    admin = new KubeClient(ns.kc);
    secrets = admin.resource<V1Secret>(SECRETS);
    probeTarget = createServer((_req, res) => res.writeHead(200).end('ok'));
    await new Promise<void>((resolve) => probeTarget.listen(0, '127.0.0.1', resolve));
    probeUrl = `http://127.0.0.1:${(probeTarget.address() as AddressInfo).port}/readyz`;
  });
  afterAll(async () => {
    await Promise.all(agents.map((a) => a.stop()));
    await Promise.all(agentClients.map((c) => c.close()));
    await new Promise((resolve) => probeTarget.close(resolve));
    for (const root of roots) rmSync(root, { recursive: true, force: true });
    await ns?.delete();
    await admin?.close();
  });

  const machine = async (name: string) => {
    const { secretName, token } = await createPlanMachine(admin, ns.name, name);
    return { secretName, token };
  };

  /** An agent; `on` names the machine root and state directory of an agent that ran before (a restart). */
  function startAgent(
    secretName: string,
    token: string,
    on: { root?: string; stateDir?: string; ownerLeaseMs?: number } = {},
  ): { agent: NodeAgent; root: string; stateDir: string; client: CountingClient } {
    const root = on.root ?? mkdtempSync(join(tmpdir(), 'capstan-agent-root-'));
    const stateDir = on.stateDir ?? `${root}-state`;
    roots.push(root, stateDir);
    const client = clientWithToken(ns.kc, token);
    agentClients.push(client);
    const agent = new NodeAgent({
      client,
      namespace: ns.name,
      secretName,
      root: new HostRoot(root),
      stateDir,
      logger: log,
      probePeriodMs: 200,
      ...(on.ownerLeaseMs !== undefined && { ownerLeaseMs: on.ownerLeaseMs }),
    });
    agents.push(agent);
    agent.start();
    return { agent, root, stateDir, client };
  }

  const planData = async (secretName: string) =>
    decodeSecretData((await secrets.get({ namespace: ns.name, name: secretName })).data);

  async function writePlan(secretName: string, plan: MachinePlan | string): Promise<string> {
    const raw = typeof plan === 'string' ? plan : JSON.stringify(plan);
    await secrets.mergePatch(
      { namespace: ns.name, name: secretName },
      { data: { plan: b64(raw), 'plan-state': b64('pending'), 'probe-statuses': null } },
    );
    return planChecksum(raw);
  }

  it('can reach its own plan Secret and nothing else (SubjectAccessReviews)', async () => {
    const { secretName } = await machine('sar');
    const user = `system:serviceaccount:${ns.name}:${secretName}`;
    const allowed = async (verb: string, name?: string, resource = 'secrets', subresource?: string, group?: string) => {
      const review = await admin.request<{ status?: { allowed?: boolean } }>({
        method: HttpMethod.POST,
        path: '/apis/authorization.k8s.io/v1/subjectaccessreviews',
        body: {
          apiVersion: 'authorization.k8s.io/v1',
          kind: 'SubjectAccessReview',
          spec: { user, groups: ['system:serviceaccounts', `system:serviceaccounts:${ns.name}`], resourceAttributes: { namespace: ns.name, verb, group, resource, name, subresource } },
        },
      });
      return review.status?.allowed === true;
    };
    for (const verb of ['get', 'list', 'watch', 'update', 'patch']) expect(await allowed(verb, secretName)).toBe(true);
    expect(await allowed('get', 'other-machine-machine-plan')).toBe(false);
    expect(await allowed('get', 'sar-bootstrap-data')).toBe(false);
    expect(await allowed('list')).toBe(false);
    expect(await allowed('delete', secretName)).toBe(false);
    expect(await allowed('create')).toBe(false);
    expect(await allowed('get', 'sar', 'configmaps')).toBe(false);
    // Its own token it may renew; another account's it may not mint, nor read or change any account.
    expect(await allowed('create', secretName, 'serviceaccounts', 'token')).toBe(true);
    expect(await allowed('create', 'other-machine-machine-plan', 'serviceaccounts', 'token')).toBe(false);
    expect(await allowed('get', secretName, 'serviceaccounts')).toBe(false);
    expect(await allowed('update', secretName, 'serviceaccounts')).toBe(false);
    // Its heartbeat Lease it may read and renew; no other Lease, and none it could create.
    const leases = (verb: string, name?: string) => allowed(verb, name, 'leases', undefined, 'coordination.k8s.io');
    expect(await leases('update', secretName)).toBe(true);
    expect(await leases('update', 'other-machine-machine-plan')).toBe(false);
    expect(await leases('create')).toBe(false);
    expect(await leases('delete', secretName)).toBe(false);
  });

  it('applies a plan (file, instruction, probe) and reports state, checksum, output and probes', async () => {
    const { secretName, token } = await machine('apply');
    const { root } = startAgent(secretName, token);
    const checksum = await writePlan(secretName, {
      files: [{ path: '/etc/capstan/test/config.yaml', content: b64('secret: value\n'), permissions: '0600' }],
      instructions: [
        { name: 'hello', command: 'sh', args: ['-c', 'cat "$CAPSTAN_HOST_ROOT/etc/capstan/test/config.yaml" >/dev/null && echo hello-$GREETING'], env: ['GREETING=world'], saveOutput: true },
      ],
      probes: { target: { httpGet: { url: probeUrl } } },
    });
    const data = await eventually(async () => {
      const d = await planData(secretName);
      return probeStatusesOf(d)['target']?.healthy ? d : undefined;
    }, { timeoutMs: 20_000 });
    expect(text(data, PLAN_KEYS.state)).toBe('succeeded');
    expect(text(data, PLAN_KEYS.appliedChecksum)).toBe(checksum);
    expect(text(data, PLAN_KEYS.revision)).toBe('1');
    expect(gunzipJson(data[PLAN_KEYS.appliedOutput])).toEqual({ hello: 'hello-world\n' });
    const file = join(root, 'etc/capstan/test/config.yaml');
    expect(readFileSync(file, 'utf8')).toBe('secret: value\n');
    expect(statSync(file).mode & 0o777).toBe(0o600);
  });

  it('refuses a malformed plan with a clear failed state, applies nothing, and keeps running', async () => {
    const { secretName, token } = await machine('bad');
    const { root } = startAgent(secretName, token);
    await writePlan(secretName, { files: [{ path: '/etc/../../escape', content: b64('x') }], instructions: [{ name: 'never', command: 'touch', args: ['/tmp/never'] }] });
    const failed = await eventually(async () => {
      const d = await planData(secretName);
      return text(d, PLAN_KEYS.state) === 'failed' ? d : undefined;
    }, { timeoutMs: 20_000 });
    expect(text(failed, PLAN_KEYS.failureMessage)).toBe('invalid plan: files[0].path: must not contain ".."');
    await writePlan(secretName, '{"files": [{"path": "/a", "content": "%%%"}]}');
    await eventually(async () => text(await planData(secretName), PLAN_KEYS.failureMessage) === 'invalid plan: files[0].content: must be base64', { timeoutMs: 20_000 });
    const good = await writePlan(secretName, { files: [{ path: '/ok', content: b64('ok') }] });
    await eventually(async () => text(await planData(secretName), PLAN_KEYS.appliedChecksum) === good, { timeoutMs: 20_000 });
    expect(readFileSync(join(root, 'ok'), 'utf8')).toBe('ok');
    expect(() => statSync(join(root, '..', 'escape'))).toThrow();
  });

  it('stops at the first failing instruction and reports which one, with its output only in the Secret', async () => {
    const { secretName, token } = await machine('fail');
    const { root } = startAgent(secretName, token);
    await writePlan(secretName, {
      instructions: [
        { name: 'breaks', command: 'sh', args: ['-c', 'echo token-abc >&2; exit 3'] },
        { name: 'after', command: 'sh', args: ['-c', 'touch "$CAPSTAN_HOST_ROOT/after"'] },
      ],
    });
    const failed = await eventually(async () => {
      const d = await planData(secretName);
      return text(d, PLAN_KEYS.state) === 'failed' ? d : undefined;
    }, { timeoutMs: 20_000 });
    expect(text(failed, PLAN_KEYS.failureMessage)).toBe('instruction breaks exited 3');
    expect(text(failed, PLAN_KEYS.failureCount)).toBe('1');
    expect(gunzipJson(failed[PLAN_KEYS.failedOutput])).toEqual({ breaks: 'token-abc\n' });
    expect(() => statSync(join(root, 'after'))).toThrow();
  });

  it('never wedges on a Secret that changed under it: an unrelated write mid-plan, then a new plan mid-plan', async () => {
    const { secretName, token } = await machine('race');
    startAgent(secretName, token);
    const slow = { instructions: [{ name: 'slow', command: 'sleep', args: ['1'] }] };
    const first = await writePlan(secretName, slow);
    await eventually(async () => text(await planData(secretName), PLAN_KEYS.state) === 'in-progress', { timeoutMs: 10_000 });
    // Someone else writes the Secret meanwhile: the agent's report must land on the newer version.
    await secrets.mergePatch({ namespace: ns.name, name: secretName }, { metadata: { labels: { touched: 'yes' } } });
    await eventually(async () => text(await planData(secretName), PLAN_KEYS.appliedChecksum) === first, { timeoutMs: 20_000 });

    const second = await writePlan(secretName, { ...slow, files: [{ path: '/second', content: b64('2') }] });
    await eventually(async () => text(await planData(secretName), PLAN_KEYS.state) === 'in-progress', { timeoutMs: 10_000 });
    const third = await writePlan(secretName, { files: [{ path: '/third', content: b64('3') }] });
    const done = await eventually(async () => {
      const d = await planData(secretName);
      return text(d, PLAN_KEYS.appliedChecksum) === third && text(d, PLAN_KEYS.state) === 'succeeded' ? d : undefined;
    }, { timeoutMs: 20_000 });
    // The second plan's result was dropped (its plan was replaced), never reported as the third's.
    expect(text(done, PLAN_KEYS.appliedChecksum)).not.toBe(second);
  });

  // Issue 32, finding 8: a plan ran again although no agent died whenever its outcome could not be written.
  describe('exactly once unless an agent dies', () => {
    /** A plan whose one instruction appends a line to `runs` in the machine: its side effect, counted. */
    const countedPlan = (seconds: number) => ({
      instructions: [
        {
          name: 'counted',
          command: 'sh',
          args: ['-c', `echo "start $CAPSTAN_AGENT_ATTEMPT_NUMBER" >> "$CAPSTAN_HOST_ROOT/runs"; sleep ${seconds}; echo end >> "$CAPSTAN_HOST_ROOT/runs"`],
        },
      ],
    });
    const runsOf = (root: string) => {
      try {
        return readFileSync(join(root, 'runs'), 'utf8').trim().split('\n');
      } catch {
        return [];
      }
    };
    const bindings = () => admin.resource<KubernetesObject>({ group: 'rbac.authorization.k8s.io', version: 'v1', plural: 'rolebindings', kind: 'RoleBinding', namespaced: true });

    it('keeps an outcome it could not write and writes it later without running the plan again', async () => {
      const { secretName, token } = await machine('refused-report');
      const { root } = startAgent(secretName, token);
      const checksum = await writePlan(secretName, countedPlan(2));
      await eventually(async () => runsOf(root).length === 1, { timeoutMs: 10_000 });
      // The agent loses its rights while the instruction runs: its report is refused (403).
      await bindings().delete({ namespace: ns.name, name: secretName });
      await new Promise((resolve) => setTimeout(resolve, 6_000));
      expect(runsOf(root)).toEqual(['start 1', 'end']);
      await ensurePlanAccess(admin, ns.name, secretName);
      const data = await eventually(async () => {
        const d = await planData(secretName);
        return text(d, PLAN_KEYS.state) === 'succeeded' ? d : undefined;
      }, { timeoutMs: 20_000 });
      expect(text(data, PLAN_KEYS.appliedChecksum)).toBe(checksum);
      expect(text(data, PLAN_KEYS.owner)).toBeUndefined();
      expect(runsOf(root)).toEqual(['start 1', 'end']);
    });

    it('reports the outcome a stopped agent kept when it starts again, without running the plan again', async () => {
      const { secretName, token } = await machine('restart-report');
      const first = startAgent(secretName, token);
      await writePlan(secretName, countedPlan(1));
      await eventually(async () => runsOf(first.root).length === 1, { timeoutMs: 10_000 });
      await bindings().delete({ namespace: ns.name, name: secretName });
      await eventually(async () => runsOf(first.root).length === 2, { timeoutMs: 10_000 });
      await new Promise((resolve) => setTimeout(resolve, 1_000));
      await first.agent.stop();
      await ensurePlanAccess(admin, ns.name, secretName);
      startAgent(secretName, token, { root: first.root, stateDir: first.stateDir });
      await eventually(async () => text(await planData(secretName), PLAN_KEYS.state) === 'succeeded', { timeoutMs: 20_000 });
      expect(runsOf(first.root)).toEqual(['start 1', 'end']);
    });

    it('never applies one plan with two agents at once: the second waits for the owner\'s lease', async () => {
      const { secretName, token } = await machine('two-agents');
      const a = startAgent(secretName, token);
      await writePlan(secretName, countedPlan(3));
      await eventually(async () => runsOf(a.root).length === 1, { timeoutMs: 10_000 });
      // Another agent (another host's state) with the same Secret finds the plan in progress under another owner.
      const b = startAgent(secretName, token, { root: a.root, ownerLeaseMs: 60_000 });
      await eventually(async () => text(await planData(secretName), PLAN_KEYS.state) === 'succeeded', { timeoutMs: 20_000 });
      await b.agent.idle();
      expect(runsOf(a.root)).toEqual(['start 1', 'end']);
    });

    it('fails a plan that its agent never finished in max(3, max-failures) runs, instead of resuming it forever', async () => {
      const { secretName, token } = await machine('run-limit');
      await secrets.mergePatch(
        { namespace: ns.name, name: secretName },
        { data: { plan: b64(JSON.stringify(countedPlan(0))), 'plan-state': b64('in-progress'), 'plan-attempt': b64('3'), 'plan-revision': b64('1') } },
      );
      const { root } = startAgent(secretName, token);
      const data = await eventually(async () => {
        const d = await planData(secretName);
        return text(d, PLAN_KEYS.state) === 'failed' ? d : undefined;
      }, { timeoutMs: 20_000 });
      expect(text(data, PLAN_KEYS.failureMessage)).toBe('the agent stopped while applying the plan in each of its 3 runs');
      expect(runsOf(root)).toEqual([]);
    });
  });

  it('acts on the Secret as it is, not on a watch event older than its own write ("secret received was too old")', async () => {
    const { secretName, token } = await machine('stale');
    const { agent, root } = startAgent(secretName, token);
    const counting = { instructions: [{ name: 'count', command: 'sh', args: ['-c', 'echo run >> "$CAPSTAN_HOST_ROOT/runs"'] }] };
    const first = await writePlan(secretName, counting);
    const pendingCopy = await secrets.get({ namespace: ns.name, name: secretName });
    await eventually(async () => text(await planData(secretName), PLAN_KEYS.appliedChecksum) === first, { timeoutMs: 20_000 });
    // Replay the pending version the agent has long written past, as a lagging watch would deliver it.
    type Handlers = { handlers: Set<{ onUpdate?(a: V1Secret, b: V1Secret): void }> };
    const informer = (agent as unknown as { informer: Handlers }).informer;
    for (const handler of informer.handlers) handler.onUpdate?.(pendingCopy, pendingCopy);
    await agent.idle();
    await new Promise((r) => setTimeout(r, 500));
    await agent.idle();
    expect(readFileSync(join(root, 'runs'), 'utf8')).toBe('run\n');
    expect(text(await planData(secretName), PLAN_KEYS.revision)).toBe('1');
    // And it is not stuck: the next plan is applied.
    const second = await writePlan(secretName, { files: [{ path: '/next', content: b64('n') }] });
    await eventually(async () => text(await planData(secretName), PLAN_KEYS.appliedChecksum) === second, { timeoutMs: 20_000 });
  });

  // Issue 32, finding 9: the token was bound to the plan Secret's uid, so a deleted plan Secret could never be
  // recovered. The token is the ServiceAccount's: the same agent, with the same token, goes on.
  it('goes on with the same token when its Secret is deleted and created again', async () => {
    const { secretName, token } = await machine('recreate');
    const { root } = startAgent(secretName, token);
    const first = await writePlan(secretName, { files: [{ path: '/one', content: b64('1') }] });
    await eventually(async () => text(await planData(secretName), PLAN_KEYS.appliedChecksum) === first, { timeoutMs: 20_000 });
    await secrets.delete({ namespace: ns.name, name: secretName });
    await secrets.create({
      metadata: { name: secretName, namespace: ns.name },
      type: MACHINE_PLAN_SECRET_TYPE,
      data: { plan: b64('{"files":[{"path":"/two","content":"Mg=="}]}'), 'plan-state': b64('pending') },
    });
    await eventually(async () => text(await planData(secretName), PLAN_KEYS.state) === 'succeeded', { timeoutMs: 20_000 });
    expect(readFileSync(join(root, 'two'), 'utf8')).toBe('2');
  });

  it('renews its own short-lived token without a restart, and may request tokens for no other account', async () => {
    const { secretName } = await machine('renew');
    // The shortest token the API server issues (10 min), renewed at once by the agent (renewAt 0).
    const { token } = await requestAgentToken(admin, ns.name, secretName, 600);
    const root = agentMachineRoot(ns.kc, { namespace: ns.name, secretName, token });
    roots.push(root);
    const host = new HostRoot(root);
    const config = loadAgentConfig(host, DEFAULT_AGENT_CONFIG_PATH);
    const client = new KubeClient(agentKubeConfig(host, config));
    agentClients.push(client);
    const agent = new NodeAgent({
      client,
      namespace: ns.name,
      secretName,
      root: host,
      stateDir: `${root}-state`,
      logger: log,
      probePeriodMs: 200,
      token: { file: config.tokenFile, read: () => readAgentToken(host, config), renewAt: 0 },
    });
    agents.push(agent);
    agent.start();
    const renewed = await eventually(async () => {
      const now = readFileSync(join(root, 'etc/capstan/agent/token'), 'utf8').trim();
      return now !== token ? now : undefined;
    }, { timeoutMs: 20_000 });
    expect(statSync(join(root, 'etc/capstan/agent/token')).mode & 0o777).toBe(0o600);
    const claims = tokenClaims(renewed)!;
    expect(claims.serviceAccount).toBe(secretName);
    expect(claims.expiresAt - claims.issuedAt).toBe(600_000);
    // The renewed token works: a plan written now is applied.
    const checksum = await writePlan(secretName, { files: [{ path: '/after-renewal', content: b64('ok') }] });
    await eventually(async () => text(await planData(secretName), PLAN_KEYS.appliedChecksum) === checksum, { timeoutMs: 20_000 });
    // It may not mint tokens for another machine's account.
    const other = await machine('renew-other');
    await expect(requestAgentToken(clientWithToken(ns.kc, renewed), ns.name, other.secretName, 600)).rejects.toMatchObject({ code: 403 });
  });

  it('writes nothing once converged', async () => {
    const { secretName, token } = await machine('quiet');
    startAgent(secretName, token);
    await writePlan(secretName, { files: [{ path: '/q', content: b64('q') }], probes: { p: { httpGet: { url: probeUrl } } } });
    await eventually(async () => probeStatusesOf(await planData(secretName))['p']?.healthy === true, { timeoutMs: 20_000 });
    await new Promise((r) => setTimeout(r, 2_500)); // probe counters settle
    const before = (await secrets.get({ namespace: ns.name, name: secretName })).metadata?.resourceVersion;
    await new Promise((r) => setTimeout(r, 1_500));
    const after = (await secrets.get({ namespace: ns.name, name: secretName })).metadata?.resourceVersion;
    expect(after).toBe(before);
  });

  it('reads its Secret for a change by someone else or a retry: not for a probe tick, its own write, or to write', async () => {
    let healthy = true;
    const target = createServer((_req, res) => res.writeHead(healthy ? 200 : 500).end());
    await new Promise<void>((resolve) => target.listen(0, '127.0.0.1', resolve));
    try {
      const url = `http://127.0.0.1:${(target.address() as AddressInfo).port}/`;
      const { secretName, token } = await machine('reads');
      const { client } = startAgent(secretName, token);
      const secretPath = `/secrets/${secretName}`;
      await writePlan(secretName, { files: [{ path: '/r', content: b64('r') }], probes: { p: { httpGet: { url } } } });
      await eventually(async () => probeStatusesOf(await planData(secretName))['p']?.healthy === true, { timeoutMs: 20_000 });
      await new Promise((r) => setTimeout(r, 1_000));

      // Converged: seven probe ticks (200 ms) and not one read.
      const getsConverged = client.count(HttpMethod.GET, secretPath);
      await new Promise((r) => setTimeout(r, 1_500));
      expect(client.count(HttpMethod.GET, secretPath)).toBe(getsConverged);

      // A new plan: one read to decide, then each write (in progress, outcome, probes) builds on the agent's own
      // last write (one extra read allowed: an event can overtake its write's answer).
      const [getsBefore, putsBefore] = [client.count(HttpMethod.GET, secretPath), client.count(HttpMethod.PUT, secretPath)];
      const second = await writePlan(secretName, { files: [{ path: '/r', content: b64('r2') }], probes: { p: { httpGet: { url } } } });
      await eventually(async () => {
        const data = await planData(secretName);
        return text(data, PLAN_KEYS.appliedChecksum) === second && probeStatusesOf(data)['p']?.healthy === true;
      }, { timeoutMs: 20_000 });
      await new Promise((r) => setTimeout(r, 1_000));
      expect(client.count(HttpMethod.PUT, secretPath) - putsBefore).toBeGreaterThanOrEqual(2);
      expect(client.count(HttpMethod.GET, secretPath) - getsBefore).toBeLessThanOrEqual(2);

      // The probe fails three times (failureThreshold): each report is one read and one write, and the writes'
      // own watch events are not read again (one extra read allowed: an event can overtake its write's answer).
      const [gets, puts] = [client.count(HttpMethod.GET, secretPath), client.count(HttpMethod.PUT, secretPath)];
      healthy = false;
      await eventually(async () => probeStatusesOf(await planData(secretName))['p']?.healthy === false, { timeoutMs: 20_000 });
      await new Promise((r) => setTimeout(r, 1_000));
      const writes = client.count(HttpMethod.PUT, secretPath) - puts;
      expect(writes).toBeGreaterThanOrEqual(1);
      expect(client.count(HttpMethod.GET, secretPath) - gets).toBeLessThanOrEqual(writes + 1);
    } finally {
      await new Promise((resolve) => target.close(resolve));
    }
  });
});
