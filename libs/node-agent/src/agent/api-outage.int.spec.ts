import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, connect, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type V1Secret } from '@kubernetes/client-node';
import pino from 'pino';
import { KubeClient, SECRETS } from '@capstan/kube';
import { createTestNamespace, eventually, kubeConfigForToken, type TestNamespace } from '@capstan/testing';
import { HostRoot } from '../apply/host-root.js';
import { planChecksum } from '../plan/parse-plan.js';
import { decodeSecretData, PLAN_KEYS, text } from '../report/plan-secret.js';
import { createPlanMachine } from '../testing/plan-machine.js';
import { NodeAgent } from './node-agent.js';

/** A TCP relay to the API server that can be cut (every connection dropped, new ones refused) and restored. */
class CuttableRelay {
  private server: Server | undefined;
  private readonly sockets = new Set<Socket>();
  port = 0;

  constructor(private readonly target: { host: string; port: number }) {}

  async open(): Promise<void> {
    this.server = createServer((client) => {
      const upstream = connect(this.target.port, this.target.host);
      for (const s of [client, upstream]) {
        this.sockets.add(s);
        s.on('close', () => this.sockets.delete(s));
        s.on('error', () => s.destroy());
      }
      client.pipe(upstream).pipe(client);
    });
    await new Promise<void>((resolve) => this.server!.listen(this.port, '127.0.0.1', resolve));
    this.port = (this.server.address() as { port: number }).port;
  }

  async cut(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    await new Promise((resolve) => this.server?.close(resolve));
    this.server = undefined;
  }
}

describe('the node agent through an API server outage', () => {
  let ns: TestNamespace;
  let admin: KubeClient;
  const b64 = (s: string) => Buffer.from(s).toString('base64');

  beforeAll(async () => {
    ns = await createTestNamespace('agent-outage');
    admin = new KubeClient(ns.kc);
  });
  afterAll(async () => {
    await ns?.delete();
    await admin?.close();
  });

  it('keeps running while the API server is unreachable and applies the plan written meanwhile once it is back', async () => {
    const { secretName, token } = await createPlanMachine(admin, ns.name, 'outage');
    const server = new URL(ns.kc.getCurrentCluster()!.server);
    const relay = new CuttableRelay({ host: server.hostname, port: Number(server.port) });
    await relay.open();
    const kc = kubeConfigForToken(ns.kc, token, { server: `https://127.0.0.1:${relay.port}` });
    const client = new KubeClient(kc, { requestTimeoutMs: 2_000 });
    const root = mkdtempSync(join(tmpdir(), 'capstan-agent-outage-'));
    const agent = new NodeAgent({ client, namespace: ns.name, secretName, root: new HostRoot(root), stateDir: `${root}-state`, logger: pino({ level: 'silent' }), probePeriodMs: 200 });
    agent.start();
    const secrets = admin.resource<V1Secret>(SECRETS);
    const write = async (plan: string) => {
      await secrets.mergePatch({ namespace: ns.name, name: secretName }, { data: { plan: b64(plan), 'plan-state': b64('pending') } });
      return planChecksum(plan);
    };
    const appliedChecksum = async () => text(decodeSecretData((await secrets.get({ namespace: ns.name, name: secretName })).data), PLAN_KEYS.appliedChecksum);
    try {
      const first = await write('{"files":[{"path":"/a","content":"YQ=="}]}');
      await eventually(async () => (await appliedChecksum()) === first, { timeoutMs: 20_000 });

      await relay.cut();
      const second = await write('{"files":[{"path":"/b","content":"Yg=="}]}');
      // Down for longer than a watch, a request timeout and several probe ticks: nothing is applied, nothing crashes.
      await new Promise((r) => setTimeout(r, 8_000));
      expect(await appliedChecksum()).toBe(first);

      await relay.open();
      await eventually(async () => (await appliedChecksum()) === second, { timeoutMs: 60_000 });
    } finally {
      await agent.stop();
      await client.close();
      await relay.cut();
      rmSync(root, { recursive: true, force: true });
    }
  });
});
