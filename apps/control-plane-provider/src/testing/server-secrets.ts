import { type V1Secret } from '@kubernetes/client-node';
import { LABELS, RESOURCES, type K3sControlPlane } from '@capstan/api';
import { Informer, KubeClient, type KubeRequest, type ResourceClient, HttpMethod } from '@capstan/kube';
import { createTestNamespace, eventually, type TestNamespace } from '@capstan/testing';
import type { SecretAccess } from '../k3scontrolplane/secrets.js';
import { SECRETS, secretText } from '../k3scontrolplane/secrets.js';
import { testKcp } from './control-plane-scope.js';

const SECRET_PATH = /^\/api\/v1\/namespaces\/[^/]+\/secrets(?:\/([^/]+))?$/;

const WRITES: Partial<Record<string, string>> = {
  [HttpMethod.POST]: 'create',
  [HttpMethod.PATCH]: 'patch',
  [HttpMethod.PUT]: 'replace',
  [HttpMethod.DELETE]: 'delete',
};

interface Hook {
  write: string;
  name: string;
  action: () => Promise<unknown>;
}

/**
 * The phases' Secrets on the test environment's real kube-apiserver (libs/testing), in a namespace of their own.
 * The phases read and write through `client`, whose requests are only observed (`requests`, `writes`), never
 * answered here; anyone else (a user, a competing reconcile) writes through `admin`.
 */
export class ServerSecrets {
  /** Secrets the phases' client wrote, in order, as `create <name>` or `patch <name>`; refused writes are not. */
  readonly writes: string[] = [];
  /** Every Secret request the phases' client sent, as `<METHOD> <name>`. */
  readonly requests: string[] = [];
  private readonly hooks: Hook[] = [];
  private informer: Informer<V1Secret> | undefined;

  private constructor(
    readonly ns: TestNamespace,
    /** The provider's client. */
    readonly client: KubeClient,
    /** Someone else's client. */
    readonly admin: KubeClient,
  ) {
    const send = client.request.bind(client);
    client.request = async <T>(req: KubeRequest): Promise<T> => {
      const match = SECRET_PATH.exec(req.path);
      if (!match) return send<T>(req);
      const name = match[1] ?? (req.body as V1Secret | undefined)?.metadata?.name ?? '';
      const write = WRITES[req.method];
      const hook = this.hooks.findIndex((h) => h.write === write && h.name === name);
      if (hook >= 0) await this.hooks.splice(hook, 1)[0]!.action();
      this.requests.push(`${req.method} ${name}`);
      const result = await send<T>(req);
      if (write) this.writes.push(`${write} ${name}`);
      return result;
    };
  }

  /** A new namespace and the clients into it. */
  static async create(prefix = 'kcp-secrets'): Promise<ServerSecrets> {
    const ns = await createTestNamespace(prefix);
    return new ServerSecrets(
      ns,
      new KubeClient(ns.kc, { fieldManager: 'capstan-control-plane-provider' }),
      new KubeClient(ns.kc, { fieldManager: 'capstan-test-admin' }),
    );
  }

  get namespace(): string {
    return this.ns.name;
  }

  /** The Secrets as the admin reads and writes them. */
  get secrets(): ResourceClient<V1Secret> {
    return this.admin.resource<V1Secret>(SECRETS);
  }

  /** A K3sControlPlane created on the server (testKcp's spec, named demo-cp), for the phases to own what they create. */
  async controlPlane(): Promise<K3sControlPlane> {
    const { metadata: _example, ...kcp } = testKcp();
    return this.admin.resource<K3sControlPlane>(RESOURCES.K3sControlPlane).create({
      ...kcp,
      metadata: { name: 'demo-cp', namespace: this.namespace },
    });
  }

  /** What the phases see while the cache lags: nothing cached, so every read goes to the API server. */
  uncached(): SecretAccess {
    return { client: this.client.resource<V1Secret>(SECRETS), cache: { getByName: () => undefined, hasSynced: () => false } };
  }

  /**
   * What the phases see through the provider's cache (Secrets with the cluster-name label, as the service
   * watches them), once the informer shows every such Secret at the version the server has.
   */
  async cached(): Promise<SecretAccess> {
    if (!this.informer) {
      // The cache reads through the admin's client, so its requests are not counted as the phases'.
      this.informer = new Informer<V1Secret>(this.admin, SECRETS, {
        namespace: this.namespace,
        labelSelector: LABELS.clusterName,
      });
      this.informer.start();
      await this.informer.waitForSync(30_000);
    }
    const informer = this.informer;
    await eventually(
      async () => {
        const { items } = await this.secrets.list({
          namespace: this.namespace,
          labelSelector: LABELS.clusterName,
        });
        const versions = (list: V1Secret[]) =>
          list
            .map((s) => `${s.metadata?.name}@${s.metadata?.resourceVersion}`)
            .sort()
            .join(',');
        return versions(informer.list(this.namespace)) === versions(items);
      },
      { message: 'the Secret cache to show what the server has' },
    );
    return { client: this.client.resource<V1Secret>(SECRETS), cache: informer };
  }

  /** Runs `action` (someone else's write) just before the phases' client sends its next `write` of `name`. */
  beforeWrite(write: 'create' | 'patch', name: string, action: () => Promise<unknown>): void {
    this.hooks.push({ write, name, action });
  }

  /** The Secret as the server has it now. */
  get(name: string): Promise<V1Secret | undefined> {
    return this.secrets.getIfExists({ namespace: this.namespace, name });
  }

  /** The UTF-8 text of one key of the Secret as the server has it now. */
  async text(name: string, key: string): Promise<string | undefined> {
    return secretText(await this.get(name), key);
  }

  async close(): Promise<void> {
    await this.informer?.stop();
    await this.ns.delete();
    await this.client.close();
    await this.admin.close();
  }
}
