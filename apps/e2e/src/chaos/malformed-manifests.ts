// Malformed manifests: objects of every Capstan kind, each one change away from a valid object, applied through
// the management API server. Each must be refused with a message naming the rule, or accepted and then carry a
// condition saying what is wrong; one accepted with no such condition is a failure. Pure: the cases and the
// judgement of what came back; chaos.ts applies them.

import { MALFORMED_LABEL } from './invariants.js';
import type { Random } from './random.js';

export const MANIFEST_CATEGORIES = [
  'wrong-type',
  'missing-field',
  'name-over-63',
  'invalid-name',
  'negative-replicas',
  'selector-mismatch',
  'nonexistent-kind',
  'nonexistent-object',
  'invalid-value',
] as const;
export type ManifestCategory = (typeof MANIFEST_CATEGORIES)[number];

export type Manifest = Record<string, unknown> & {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace: string; labels?: Record<string, string> };
};

export interface ManifestCase {
  category: ManifestCategory;
  /** What is wrong, e.g. `MachineDeployment spec.replicas: -1`. */
  label: string;
  kind: string;
  manifest: Manifest;
  /**
   * Valid objects created with an accepted malformed one so that its controller acts on it: the owner a provider
   * object waits for (a Machine for a K3sConfig or SimMachine, a Cluster for a SimCluster or K3sControlPlane), or
   * the objects a Machine or Cluster references. Their conditions count too.
   */
  companions: Manifest[];
  /** A refusal message or a condition names the rule when it contains one of these (case-insensitive). */
  mentions: string[];
}

export interface ManifestTarget {
  namespace: string;
  /** A real cluster the objects belong to, so controllers get past "cluster not found" to the actual problem. */
  cluster: string;
  version: string;
}

const GROUPS = {
  core: 'cluster.x-k8s.io',
  infra: 'infrastructure.capstan.dev',
  bootstrap: 'bootstrap.capstan.dev',
  controlPlane: 'controlplane.capstan.dev',
} as const;

const API_VERSION: Record<string, string> = {
  Cluster: `${GROUPS.core}/v1beta2`,
  Machine: `${GROUPS.core}/v1beta2`,
  MachineSet: `${GROUPS.core}/v1beta2`,
  MachineDeployment: `${GROUPS.core}/v1beta2`,
  MachineHealthCheck: `${GROUPS.core}/v1beta2`,
  SimCluster: `${GROUPS.infra}/v1alpha1`,
  SimMachine: `${GROUPS.infra}/v1alpha1`,
  SimMachineTemplate: `${GROUPS.infra}/v1alpha1`,
  K3sConfig: `${GROUPS.bootstrap}/v1alpha1`,
  K3sConfigTemplate: `${GROUPS.bootstrap}/v1alpha1`,
  K3sControlPlane: `${GROUPS.controlPlane}/v1alpha1`,
};
export const MANIFEST_KINDS = Object.keys(API_VERSION);

/** A valid object of `kind` named `name` in the target cluster (what each case changes one thing of). */
export function baseline(kind: string, name: string, target: ManifestTarget): Manifest {
  const metadata = { name, namespace: target.namespace, labels: { [MALFORMED_LABEL]: 'true' } };
  const ref = (apiGroup: string, refKind: string, refName: string) => ({
    apiGroup,
    kind: refKind,
    name: refName,
  });
  const labels = { 'cluster.x-k8s.io/cluster-name': target.cluster, 'chaos.capstan.dev/pool': name };
  const machineTemplate = {
    metadata: { labels },
    spec: {
      clusterName: target.cluster,
      version: target.version,
      bootstrap: { configRef: ref(GROUPS.bootstrap, 'K3sConfigTemplate', `${target.cluster}-md-0`) },
      infrastructureRef: ref(GROUPS.infra, 'SimMachineTemplate', `${target.cluster}-md-0`),
    },
  };
  const spec: Record<string, unknown> = (() => {
    switch (kind) {
      case 'Cluster':
        return {
          clusterNetwork: {
            pods: { cidrBlocks: ['10.42.0.0/16'] },
            services: { cidrBlocks: ['10.43.0.0/16'] },
          },
          infrastructureRef: ref(GROUPS.infra, 'SimCluster', name),
        };
      case 'MachineDeployment':
        return {
          clusterName: target.cluster,
          replicas: 1,
          rollout: { strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: 1, maxUnavailable: 0 } } },
          selector: { matchLabels: labels },
          template: machineTemplate,
        };
      case 'MachineSet':
        return {
          clusterName: target.cluster,
          replicas: 1,
          selector: { matchLabels: labels },
          template: machineTemplate,
        };
      case 'Machine':
        return {
          clusterName: target.cluster,
          version: target.version,
          bootstrap: { configRef: ref(GROUPS.bootstrap, 'K3sConfig', name) },
          infrastructureRef: ref(GROUPS.infra, 'SimMachine', name),
        };
      case 'MachineHealthCheck':
        return {
          clusterName: target.cluster,
          selector: { matchLabels: labels },
          checks: {
            nodeStartupTimeoutSeconds: 600,
            unhealthyNodeConditions: [{ type: 'Ready', status: 'False', timeoutSeconds: 300 }],
          },
        };
      case 'SimCluster':
        return { mode: 'shared' };
      case 'SimMachine':
        return { provisioningDelaySeconds: 0 };
      case 'SimMachineTemplate':
        return { template: { spec: { provisioningDelaySeconds: 0 } } };
      case 'K3sConfig':
        return { agentConfig: { nodeLabels: ['capstan.dev/pool=chaos'] } };
      case 'K3sConfigTemplate':
        return { template: { spec: { agentConfig: { nodeLabels: ['capstan.dev/pool=chaos'] } } } };
      case 'K3sControlPlane':
        return {
          replicas: 1,
          version: target.version,
          machineTemplate: {
            spec: {
              infrastructureRef: ref(GROUPS.infra, 'SimMachineTemplate', `${target.cluster}-control-plane`),
            },
          },
        };
      default:
        throw new Error(`no baseline for kind ${kind}`);
    }
  })();
  return { apiVersion: API_VERSION[kind]!, kind, metadata, spec };
}

type Change = (m: Manifest, spec: Record<string, unknown>) => void;
interface Mutation {
  category: ManifestCategory;
  /** `spec.replicas: -1` */
  what: string;
  mentions: string[];
  change: Change;
  /** Rename the object (names are part of some cases). */
  rename?: (name: string, random: Random) => string;
}

const get = (o: Record<string, unknown>, path: string): Record<string, unknown> =>
  path.split('.').reduce<Record<string, unknown>>((at, key) => at[key] as Record<string, unknown>, o);

const longName = (name: string, random: Random) =>
  `${name}-${'x'.repeat(random.int(64, 100) - name.length - 1)}`;

/** What a message about a name over 63 characters says (the API server's and Kubernetes' phrasings). */
const TOO_LONG = ['no more than 63', 'at most 63', '63 characters', '63 bytes', 'too long'];

/** Mutations every kind gets. */
const COMMON: Mutation[] = [
  {
    category: 'invalid-name',
    what: 'metadata.name not a DNS-1123 name',
    mentions: ['metadata.name', 'RFC 1123', 'lowercase'],
    change: () => undefined,
    rename: (n) => `Chaos_${n}`,
  },
  {
    category: 'wrong-type',
    what: 'spec: a string',
    mentions: ['spec'],
    change: (m) => (m['spec'] = 'not an object'),
  },
];

/**
 * Kinds whose names end up in label values (at most 63 characters): longer ones must be refused. Machine and
 * K3sControlPlane names may be longer, as upstream allows: their label values are hashed (upstream's
 * MustFormatValue) and a sim host name is cut to 63 characters, so such a name is not malformed.
 */
const NAME_IN_LABEL_OR_HOSTNAME = new Set(['Cluster', 'MachineDeployment', 'MachineSet']);

const REPLICATED: Mutation[] = [
  {
    category: 'negative-replicas',
    what: 'spec.replicas: -1',
    mentions: ['replicas'],
    change: (_, s) => (s['replicas'] = -1),
  },
  {
    category: 'wrong-type',
    what: 'spec.replicas: "three"',
    mentions: ['replicas'],
    change: (_, s) => (s['replicas'] = 'three'),
  },
];

const TEMPLATED: Mutation[] = [
  ...REPLICATED,
  {
    category: 'missing-field',
    what: 'no spec.clusterName',
    mentions: ['clusterName'],
    change: (_, s) => delete s['clusterName'],
  },
  {
    category: 'missing-field',
    what: 'no spec.selector',
    mentions: ['selector'],
    change: (_, s) => delete s['selector'],
  },
  {
    category: 'missing-field',
    what: 'no spec.template',
    mentions: ['template'],
    change: (_, s) => delete s['template'],
  },
  {
    category: 'selector-mismatch',
    what: 'spec.selector does not match the template labels',
    mentions: ['selector'],
    change: (_, s) => (get(s, 'selector')['matchLabels'] = { 'chaos.capstan.dev/pool': 'something-else' }),
  },
  {
    category: 'nonexistent-kind',
    what: 'template infrastructureRef kind NoSuchMachineTemplate',
    mentions: ['NoSuchMachineTemplate'],
    change: (_, s) => (get(s, 'template.spec.infrastructureRef')['kind'] = 'NoSuchMachineTemplate'),
  },
  {
    category: 'nonexistent-kind',
    what: 'template bootstrap configRef kind NoSuchConfigTemplate',
    mentions: ['NoSuchConfigTemplate'],
    change: (_, s) => (get(s, 'template.spec.bootstrap.configRef')['kind'] = 'NoSuchConfigTemplate'),
  },
  {
    category: 'nonexistent-kind',
    what: 'template infrastructureRef apiGroup nonexistent.example.com',
    mentions: ['nonexistent.example.com'],
    change: (_, s) => (get(s, 'template.spec.infrastructureRef')['apiGroup'] = 'nonexistent.example.com'),
  },
  {
    category: 'invalid-value',
    what: 'template clusterName differs from spec.clusterName',
    mentions: ['clusterName'],
    change: (_, s) => (get(s, 'template.spec')['clusterName'] = 'another-cluster'),
  },
  {
    category: 'nonexistent-object',
    what: 'spec.clusterName names no Cluster',
    mentions: ['no-such-cluster', 'does not exist', 'not found'],
    change: (_, s) => {
      s['clusterName'] = 'no-such-cluster';
      get(s, 'template.spec')['clusterName'] = 'no-such-cluster';
    },
  },
  {
    category: 'name-over-63',
    what: 'spec.clusterName longer than 63 characters',
    mentions: TOO_LONG,
    change: (_, s) => {
      s['clusterName'] = `c${'x'.repeat(70)}`;
      get(s, 'template.spec')['clusterName'] = `c${'x'.repeat(70)}`;
    },
  },
];

const BY_KIND: Record<string, Mutation[]> = {
  Cluster: [
    {
      category: 'nonexistent-kind',
      what: 'infrastructureRef kind NoSuchCluster',
      mentions: ['NoSuchCluster'],
      change: (_, s) => (get(s, 'infrastructureRef')['kind'] = 'NoSuchCluster'),
    },
    {
      category: 'nonexistent-kind',
      what: 'controlPlaneRef kind NoSuchControlPlane',
      mentions: ['NoSuchControlPlane'],
      change: (_, s) =>
        (s['controlPlaneRef'] = { apiGroup: GROUPS.controlPlane, kind: 'NoSuchControlPlane', name: 'x' }),
    },
    {
      category: 'nonexistent-kind',
      what: 'infrastructureRef apiGroup nonexistent.example.com',
      mentions: ['nonexistent.example.com'],
      change: (_, s) => (get(s, 'infrastructureRef')['apiGroup'] = 'nonexistent.example.com'),
    },
    {
      category: 'wrong-type',
      what: 'spec.infrastructureRef: a string',
      mentions: ['infrastructureRef'],
      change: (_, s) => (s['infrastructureRef'] = 'SimCluster/x'),
    },
    {
      category: 'wrong-type',
      what: 'spec.clusterNetwork.pods.cidrBlocks: a string',
      mentions: ['cidrBlocks'],
      change: (_, s) => (get(s, 'clusterNetwork.pods')['cidrBlocks'] = '10.42.0.0/16'),
    },
    {
      category: 'wrong-type',
      what: 'spec.paused: "yes"',
      mentions: ['paused'],
      change: (_, s) => (s['paused'] = 'yes'),
    },
    {
      category: 'invalid-value',
      what: 'spec.clusterNetwork.pods.cidrBlocks: not a CIDR',
      mentions: ['cidr'],
      change: (_, s) => (get(s, 'clusterNetwork.pods')['cidrBlocks'] = ['not-a-cidr']),
    },
    {
      category: 'invalid-value',
      what: 'spec.controlPlaneEndpoint.port: 70000',
      mentions: ['port'],
      change: (_, s) => (s['controlPlaneEndpoint'] = { host: '127.0.0.1', port: 70000 }),
    },
    {
      category: 'nonexistent-object',
      what: 'infrastructureRef names no SimCluster',
      mentions: ['no-such-simcluster', 'does not exist', 'not found'],
      change: (_, s) => (get(s, 'infrastructureRef')['name'] = 'no-such-simcluster'),
    },
  ],
  MachineDeployment: [
    ...TEMPLATED,
    {
      category: 'invalid-value',
      what: 'spec.rollout.strategy.type: Teleport',
      mentions: ['type', 'Teleport'],
      change: (_, s) => (get(s, 'rollout.strategy')['type'] = 'Teleport'),
    },
  ],
  MachineSet: TEMPLATED,
  Machine: [
    {
      category: 'missing-field',
      what: 'no spec.bootstrap',
      mentions: ['bootstrap'],
      change: (_, s) => delete s['bootstrap'],
    },
    {
      category: 'missing-field',
      what: 'spec.bootstrap without configRef or dataSecretName',
      mentions: ['bootstrap', 'configRef', 'dataSecretName'],
      change: (_, s) => (s['bootstrap'] = {}),
    },
    {
      category: 'missing-field',
      what: 'no spec.infrastructureRef',
      mentions: ['infrastructureRef'],
      change: (_, s) => delete s['infrastructureRef'],
    },
    {
      category: 'missing-field',
      what: 'no spec.clusterName',
      mentions: ['clusterName'],
      change: (_, s) => delete s['clusterName'],
    },
    {
      category: 'wrong-type',
      what: 'spec.clusterName: 42',
      mentions: ['clusterName'],
      change: (_, s) => (s['clusterName'] = 42),
    },
    {
      category: 'wrong-type',
      what: 'spec.version: 1.34 (a number)',
      mentions: ['version'],
      change: (_, s) => (s['version'] = 1.34),
    },
    {
      category: 'nonexistent-kind',
      what: 'infrastructureRef kind NoSuchMachine',
      mentions: ['NoSuchMachine'],
      change: (_, s) => (get(s, 'infrastructureRef')['kind'] = 'NoSuchMachine'),
    },
    {
      category: 'nonexistent-kind',
      what: 'bootstrap.configRef kind NoSuchConfig',
      mentions: ['NoSuchConfig'],
      change: (_, s) => (get(s, 'bootstrap.configRef')['kind'] = 'NoSuchConfig'),
    },
    {
      category: 'nonexistent-object',
      what: 'infrastructureRef names no SimMachine',
      mentions: ['no-such-simmachine', 'does not exist', 'not found'],
      change: (_, s) => (get(s, 'infrastructureRef')['name'] = 'no-such-simmachine'),
    },
    {
      category: 'invalid-value',
      what: 'spec.version: "latest"',
      mentions: ['version', 'latest'],
      change: (_, s) => (s['version'] = 'latest'),
    },
  ],
  MachineHealthCheck: [
    {
      category: 'missing-field',
      what: 'no spec.clusterName',
      mentions: ['clusterName'],
      change: (_, s) => delete s['clusterName'],
    },
    {
      category: 'missing-field',
      what: 'no spec.selector',
      mentions: ['selector'],
      change: (_, s) => delete s['selector'],
    },
    {
      category: 'invalid-value',
      what: 'unhealthyNodeConditions timeoutSeconds: -1',
      mentions: ['timeoutSeconds'],
      change: (_, s) =>
        ((get(s, 'checks')['unhealthyNodeConditions'] as Record<string, unknown>[])[0]!['timeoutSeconds'] =
          -1),
    },
    {
      category: 'invalid-value',
      what: 'remediation.triggerIf.unhealthyLessThanOrEqualTo: "-5%"',
      mentions: ['unhealthyLessThanOrEqualTo'],
      change: (_, s) => (s['remediation'] = { triggerIf: { unhealthyLessThanOrEqualTo: '-5%' } }),
    },
    {
      category: 'nonexistent-kind',
      what: 'remediation.templateRef kind NoSuchRemediationTemplate',
      mentions: ['NoSuchRemediationTemplate'],
      change: (_, s) =>
        (s['remediation'] = {
          templateRef: {
            apiVersion: 'remediation.example.com/v1',
            kind: 'NoSuchRemediationTemplate',
            name: 'x',
          },
        }),
    },
    {
      category: 'nonexistent-object',
      what: 'spec.clusterName names no Cluster',
      mentions: ['no-such-cluster', 'does not exist', 'not found'],
      change: (_, s) => (s['clusterName'] = 'no-such-cluster'),
    },
  ],
  SimCluster: [
    {
      category: 'invalid-value',
      what: 'spec.mode: galactic',
      mentions: ['mode'],
      change: (_, s) => (s['mode'] = 'galactic'),
    },
    {
      category: 'invalid-value',
      what: 'spec.controlPlaneEndpoint.port: 70000',
      mentions: ['port'],
      change: (_, s) => (s['controlPlaneEndpoint'] = { host: '127.0.0.1', port: 70000 }),
    },
    {
      category: 'wrong-type',
      what: 'spec.failureDomains: a string',
      mentions: ['failureDomains'],
      change: (_, s) => (s['failureDomains'] = 'zone-a'),
    },
  ],
  SimMachine: [
    {
      category: 'invalid-value',
      what: 'spec.provisioningDelaySeconds: -5',
      mentions: ['provisioningDelaySeconds'],
      change: (_, s) => (s['provisioningDelaySeconds'] = -5),
    },
    {
      category: 'wrong-type',
      what: 'spec.nodeNotReadyAfterSeconds: "soon"',
      mentions: ['nodeNotReadyAfterSeconds'],
      change: (_, s) => (s['nodeNotReadyAfterSeconds'] = 'soon'),
    },
    {
      category: 'wrong-type',
      what: 'spec.failProvisioning: 42',
      mentions: ['failProvisioning'],
      change: (_, s) => (s['failProvisioning'] = 42),
    },
  ],
  SimMachineTemplate: [
    {
      category: 'missing-field',
      what: 'no spec.template',
      mentions: ['template'],
      change: (_, s) => delete s['template'],
    },
    {
      category: 'wrong-type',
      what: 'template provisioningDelaySeconds: "fast"',
      mentions: ['provisioningDelaySeconds'],
      change: (_, s) => (get(s, 'template.spec')['provisioningDelaySeconds'] = 'fast'),
    },
  ],
  K3sConfig: [
    {
      category: 'wrong-type',
      what: 'spec.agentConfig.nodeLabels: a string',
      mentions: ['nodeLabels'],
      change: (_, s) => (get(s, 'agentConfig')['nodeLabels'] = 'a=b'),
    },
    {
      category: 'missing-field',
      what: 'spec.files entry without path',
      mentions: ['path'],
      change: (_, s) => (s['files'] = [{ content: 'x' }]),
    },
    {
      category: 'wrong-type',
      what: 'spec.files[0].path: 42',
      mentions: ['path'],
      change: (_, s) => (s['files'] = [{ path: 42, content: 'x' }]),
    },
    {
      category: 'invalid-value',
      what: 'spec.version: "latest"',
      mentions: ['version', 'latest'],
      change: (_, s) => (s['version'] = 'latest'),
    },
    {
      category: 'invalid-value',
      what: 'spec.serverConfig.clusterCIDR: not a CIDR',
      mentions: ['clusterCIDR', 'CIDR'],
      change: (_, s) => (s['serverConfig'] = { clusterCIDR: 'not-a-cidr' }),
    },
  ],
  K3sConfigTemplate: [
    {
      category: 'missing-field',
      what: 'no spec.template',
      mentions: ['template'],
      change: (_, s) => delete s['template'],
    },
    {
      category: 'wrong-type',
      what: 'template agentConfig.nodeLabels: a string',
      mentions: ['nodeLabels'],
      change: (_, s) => (get(s, 'template.spec.agentConfig')['nodeLabels'] = 'a=b'),
    },
  ],
  K3sControlPlane: [
    ...REPLICATED,
    {
      category: 'invalid-value',
      what: 'spec.replicas: 2 (even: no etcd quorum)',
      // Not `quorum`: `etcd quorum needs 1` is a passing availability state, not a refusal of two members.
      mentions: ['odd', ' even'],
      change: (_, s) => (s['replicas'] = 2),
    },
    {
      category: 'missing-field',
      what: 'no spec.version',
      mentions: ['version'],
      change: (_, s) => delete s['version'],
    },
    {
      category: 'invalid-value',
      what: 'spec.version: "latest"',
      mentions: ['version', 'latest'],
      change: (_, s) => (s['version'] = 'latest'),
    },
    {
      category: 'missing-field',
      what: 'no spec.machineTemplate',
      mentions: ['machineTemplate'],
      change: (_, s) => delete s['machineTemplate'],
    },
    {
      category: 'nonexistent-kind',
      what: 'machineTemplate infrastructureRef kind NoSuchMachineTemplate',
      mentions: ['NoSuchMachineTemplate'],
      change: (_, s) => (get(s, 'machineTemplate.spec.infrastructureRef')['kind'] = 'NoSuchMachineTemplate'),
    },
  ],
};

/** Every distinct case (kind x mutation), in a stable order. */
const LONG_NAME: Mutation = {
  category: 'name-over-63',
  what: 'metadata.name longer than 63 characters',
  mentions: TOO_LONG,
  change: () => undefined,
  rename: longName,
};

export function distinctCases(): { kind: string; mutation: Mutation }[] {
  return MANIFEST_KINDS.flatMap((kind) =>
    [...COMMON, ...(NAME_IN_LABEL_OR_HOSTNAME.has(kind) ? [LONG_NAME] : []), ...(BY_KIND[kind] ?? [])].map(
      (mutation) => ({ kind, mutation }),
    ),
  );
}

/** The valid objects that make a controller act on an object of `kind` named `name` (see ManifestCase). */
export function companionsOf(kind: string, name: string, target: ManifestTarget): Manifest[] {
  const machine = (): Manifest => baseline('Machine', name, target);
  switch (kind) {
    case 'K3sConfig':
      return [baseline('SimMachine', name, target), machine()];
    case 'SimMachine':
      return [baseline('K3sConfig', name, target), machine()];
    case 'Machine':
      return [baseline('K3sConfig', name, target), baseline('SimMachine', name, target)];
    case 'Cluster':
      return [baseline('SimCluster', name, target)];
    case 'SimCluster': {
      const cluster = baseline('Cluster', `${name.slice(0, 60)}-c`, target);
      (cluster['spec'] as Record<string, unknown>)['infrastructureRef'] = {
        apiGroup: GROUPS.infra,
        kind: 'SimCluster',
        name,
      };
      return [cluster];
    }
    case 'K3sControlPlane': {
      const owner = `${name.slice(0, 60)}-c`;
      const cluster = baseline('Cluster', owner, target);
      (cluster['spec'] as Record<string, unknown>)['controlPlaneRef'] = {
        apiGroup: GROUPS.controlPlane,
        kind: 'K3sControlPlane',
        name,
      };
      return [baseline('SimCluster', owner, target), cluster];
    }
    default:
      return [];
  }
}

/**
 * `count` malformed manifests: every distinct case once (in random order), then random cases again until `count`
 * (each a new object: its own name).
 */
export function malformedManifests(count: number, target: ManifestTarget, random: Random): ManifestCase[] {
  const all = distinctCases();
  const order = [...random.shuffle(all)];
  while (order.length < count) order.push(random.pick(all));
  return order.slice(0, count).map(({ kind, mutation }, i) => {
    const base = `chaos-bad-${i}-${kind.toLowerCase()}`;
    const name = mutation.rename ? mutation.rename(base, random) : base;
    const manifest = baseline(kind, name, target);
    mutation.change(manifest, (manifest['spec'] ?? {}) as Record<string, unknown>);
    return {
      category: mutation.category,
      label: `${kind} ${mutation.what}`,
      kind,
      manifest,
      mentions: mutation.mentions,
      companions: companionsOf(kind, name, target),
    };
  });
}

export type ManifestVerdict =
  /** Refused by the API server with a message naming the rule. */
  | { outcome: 'refused'; message: string }
  /** Refused, but the message does not say which rule. */
  | { outcome: 'refused-unclear'; message: string }
  /** Accepted; a condition says what is wrong. */
  | { outcome: 'condition'; condition: { type: string; status: string; reason?: string; message?: string } }
  /** Accepted; only an object it created (a MachineSet, a Machine, a K3sConfig) says what is wrong. */
  | {
      outcome: 'condition-on-child';
      condition: { type: string; status: string; reason?: string; message?: string };
    }
  /** Accepted, and no condition said what is wrong within the wait. */
  | { outcome: 'silent'; conditions: { type: string; status: string; reason?: string; message?: string }[] };

export const mentionsAny = (text: string | undefined, mentions: string[]) =>
  !!text && mentions.some((m) => text.toLowerCase().includes(m.toLowerCase()));

export function judgeRefusal(message: string, mentions: string[]): ManifestVerdict {
  return mentionsAny(message, mentions)
    ? { outcome: 'refused', message }
    : { outcome: 'refused-unclear', message };
}

const TROUBLE =
  /block|invalid|error|fail|not found|does not exist|no customresourcedefinition|refus|cannot|can't|unable|must|not a /i;

/**
 * A condition of an accepted object that says what is wrong, if any: it names the problem (by message or reason)
 * and reports trouble (False or Unknown, or True with a message saying something is blocked, invalid, missing...),
 * so `ScalingUp=True: Scaling up from 1 to 2 replicas` does not explain a bad replica count.
 */
export function explainingCondition(
  conditions: { type: string; status: string; reason?: string; message?: string }[],
  mentions: string[],
): { type: string; status: string; reason?: string; message?: string } | undefined {
  return conditions.find((c) => {
    const text = `${c.reason ?? ''} ${c.message ?? ''}`;
    const troubled = c.status !== 'True' || TROUBLE.test(text);
    return troubled && mentionsAny(text, mentions);
  });
}
