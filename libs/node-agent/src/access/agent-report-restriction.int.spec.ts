import type { V1Secret } from '@kubernetes/client-node';
import { isForbidden, KubeClient, SECRETS, type ResourceClient } from '@capstan/kube';
import { createTestNamespace, eventually, installCapstanDefinitions, kubeConfigForToken, type TestNamespace } from '@capstan/testing';
import { createPlanMachine } from '../testing/plan-machine.js';
import { PLAN_KEYS } from '../report/plan-secret.js';

const b64 = (s: string) => Buffer.from(s).toString('base64');

/**
 * deploy/admission/machine-plan-agent-restriction.yaml on the real API server: the agent's Role lets it update its
 * plan Secret, the policy keeps that update to the report.
 */
describe('what a node agent may write to its plan Secret', () => {
  let ns: TestNamespace;
  let admin: KubeClient;
  let asAgent: KubeClient;
  let agentSecrets: ResourceClient<V1Secret>;
  let adminSecrets: ResourceClient<V1Secret>;
  let secretName: string;

  beforeAll(async () => {
    ns = await createTestNamespace('plan-restriction');
    await installCapstanDefinitions(ns.kc);
    admin = new KubeClient(ns.kc);
    const machine = await createPlanMachine(admin, ns.name, 'm', { instructions: [{ name: 'noop', command: 'true' }] });
    secretName = machine.secretName;
    asAgent = new KubeClient(kubeConfigForToken(ns.kc, machine.token));
    agentSecrets = asAgent.resource<V1Secret>(SECRETS);
    adminSecrets = admin.resource<V1Secret>(SECRETS);
    await adminSecrets.replace({
      ...(await adminSecrets.get({ namespace: ns.name, name: secretName })),
      metadata: { ...machine.secret.metadata, resourceVersion: undefined, labels: { owner: 'bootstrap-provider' } },
    });
    // The API server compiles a new policy a moment after it is stored: wait until a dry run of a refused write is.
    await eventually(
      async () => {
        const secret = await agentSecrets.get({ namespace: ns.name, name: secretName });
        const probe = { ...secret, data: { ...secret.data, [PLAN_KEYS.plan]: b64('{}') } };
        return agentSecrets.replace(probe, { dryRun: true }).then(() => false, isForbidden);
      },
      { message: 'the admission policy enforced', timeoutMs: 30_000 },
    );
  });

  afterAll(async () => {
    await asAgent?.close();
    await admin?.close();
    await ns?.delete();
  });

  /** The agent's update of its Secret with `change` applied to what it reads now. */
  async function agentWrites(change: (secret: V1Secret) => V1Secret): Promise<V1Secret> {
    const current = await agentSecrets.get({ namespace: ns.name, name: secretName });
    return agentSecrets.replace(change(structuredClone(current)));
  }

  const refusal = async (write: Promise<unknown>): Promise<string> => {
    const error = await write.then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(isForbidden(error)).toBe(true);
    return (error as Error).message;
  };

  it('lets the agent write its report keys', async () => {
    const written = await agentWrites((s) => ({
      ...s,
      data: { ...s.data, [PLAN_KEYS.state]: b64('in-progress'), [PLAN_KEYS.attempt]: b64('1'), [PLAN_KEYS.owner]: b64('agent-1') },
    }));
    expect(Buffer.from(written.data![PLAN_KEYS.state]!, 'base64').toString()).toBe('in-progress');
    const done = await agentWrites((s) => {
      const data: Record<string, string> = { ...s.data, [PLAN_KEYS.state]: b64('succeeded'), [PLAN_KEYS.appliedChecksum]: b64('abc') };
      delete data[PLAN_KEYS.owner];
      return { ...s, data };
    });
    expect(done.data![PLAN_KEYS.owner]).toBeUndefined();
  });

  it('refuses the agent a change of its plan, naming the rule', async () => {
    const message = await refusal(agentWrites((s) => ({ ...s, data: { ...s.data, [PLAN_KEYS.plan]: b64('{"instructions":[]}') } })));
    expect(message).toContain('may not change its plan');
    await refusal(
      agentWrites((s) => {
        const data = { ...s.data };
        delete data[PLAN_KEYS.plan];
        return { ...s, data };
      }),
    );
  });

  it('refuses the agent its retry limit', async () => {
    await refusal(agentWrites((s) => ({ ...s, data: { ...s.data, [PLAN_KEYS.maxFailures]: b64('-1') } })));
  });

  it('refuses the agent setting its plan pending again', async () => {
    const message = await refusal(agentWrites((s) => ({ ...s, data: { ...s.data, [PLAN_KEYS.state]: b64('pending') } })));
    expect(message).toContain('may not set its plan pending');
  });

  it("refuses the agent a change of the Secret's labels, annotations or owner references", async () => {
    await refusal(agentWrites((s) => ({ ...s, metadata: { ...s.metadata, labels: { owner: 'agent' } } })));
    await refusal(agentWrites((s) => ({ ...s, metadata: { ...s.metadata, annotations: { note: 'x' } } })));
    const message = await refusal(
      agentWrites((s) => ({
        ...s,
        metadata: { ...s.metadata, ownerReferences: [{ apiVersion: 'v1', kind: 'ConfigMap', name: 'x', uid: '00000000-0000-0000-0000-000000000001' }] },
      })),
    );
    expect(message).toContain('owner references');
  });

  it('leaves the bootstrap provider free to write a new plan and set it pending', async () => {
    const current = await adminSecrets.get({ namespace: ns.name, name: secretName });
    const written = await adminSecrets.replace({
      ...current,
      data: { ...current.data, [PLAN_KEYS.plan]: b64('{"instructions":[]}'), [PLAN_KEYS.state]: b64('pending') },
    });
    expect(Buffer.from(written.data![PLAN_KEYS.state]!, 'base64').toString()).toBe('pending');
  });
});
