// The malformed-manifest phase: a real target cluster for the objects to belong to, a dry-run check that every
// baseline is valid (so a refusal is about the one change), then every malformed manifest created through the API
// server; accepted ones are watched for a condition naming the problem, then deleted.
import type { KubernetesObject } from '@kubernetes/client-node';
import { RESOURCES } from '@capstan/api';
import { isNotFound, KubeApiError, type KubeClient } from '@capstan/kube';
import { createCluster, createManifest, type ClusterShape } from './fleet.js';
import type { ConditionLike } from './invariants.js';
import {
  MANIFEST_KINDS,
  baseline,
  explainingCondition,
  judgeRefusal,
  malformedManifests,
  type ManifestCase,
  type ManifestTarget,
} from './malformed-manifests.js';
import type { Random } from './random.js';
import type { ManifestResult } from './report.js';

export interface ManifestPhaseOptions {
  client: KubeClient;
  shape: ClusterShape;
  count: number;
  random: Random;
  log: (line: string) => void;
  /** How long an accepted object has to get a condition naming its problem. */
  conditionWaitMs?: number;
}

export interface ManifestPhaseResult {
  results: ManifestResult[];
  baselineProblems: string[];
  targetAvailable: boolean;
  cleanup: { deleted: number; stuck: string[] };
}

export const TARGET_CLUSTER = 'chaos-target';
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

const resourceOf = (kind: string) => Object.values(RESOURCES).find((r) => r.kind === kind)!;

async function waitFor(
  what: () => Promise<boolean>,
  timeoutMs: number,
  intervalMs = 2_000,
): Promise<boolean> {
  const deadline = performance.now() + timeoutMs;
  while (performance.now() < deadline) {
    if (await what().catch(() => false)) return true;
    await sleep(intervalMs);
  }
  return false;
}

type Owned = KubernetesObject & { status?: { conditions?: ConditionLike[] } };

/** The MachineSets, Machines and K3sConfigs of the namespace (what accepted objects create). */
async function ownedObjects(client: KubeClient, namespace: string): Promise<Owned[]> {
  const lists = await Promise.all(
    [RESOURCES.MachineSet, RESOURCES.Machine, RESOURCES.K3sConfig].map((r) =>
      client
        .resource(r)
        .list({ namespace })
        .then((l) => l.items.map((o) => ({ ...o, kind: r.kind }) as Owned))
        .catch(() => [] as Owned[]),
    ),
  );
  return lists.flat();
}

/** Objects owned (transitively, by owner references) by the objects named `kind/name` in `roots`. */
function descendantsOf(objects: Owned[], roots: Set<string>): Owned[] {
  const found: Owned[] = [];
  const owners = new Set(roots);
  for (let changed = true; changed;) {
    changed = false;
    for (const o of objects) {
      const key = `${o.kind}/${o.metadata?.name}`;
      if (owners.has(key)) continue;
      if (o.metadata?.ownerReferences?.some((r) => owners.has(`${r.kind}/${r.name}`))) {
        owners.add(key);
        found.push(o);
        changed = true;
      }
    }
  }
  return found;
}

export async function runMalformedManifests(options: ManifestPhaseOptions): Promise<ManifestPhaseResult> {
  const { client, shape } = options;
  const namespace = shape.namespace;
  const target: ManifestTarget = { namespace, cluster: TARGET_CLUSTER, version: shape.kubernetesVersion };

  await createCluster(client, TARGET_CLUSTER, shape, { malformedTarget: true, workers: 0 });
  const targetAvailable = await waitFor(async () => {
    const cluster = (await client
      .resource(RESOURCES.Cluster)
      .get({ namespace, name: TARGET_CLUSTER })) as KubernetesObject & {
      status?: { conditions?: ConditionLike[] };
    };
    return cluster.status?.conditions?.find((c) => c.type === 'Available')?.status === 'True';
  }, 300_000);
  options.log(
    `malformed manifests: target cluster ${TARGET_CLUSTER} ${targetAvailable ? 'Available' : 'NOT Available after 300 s'}`,
  );

  // The harness's own check: each baseline, unchanged, is accepted (dry run: nothing is created).
  const baselineProblems: string[] = [];
  for (const kind of MANIFEST_KINDS) {
    try {
      await createManifest(
        client,
        baseline(kind, `chaos-baseline-${kind.toLowerCase()}`, target) as KubernetesObject,
        { dryRun: true },
      );
    } catch (error) {
      baselineProblems.push(
        `${kind}: ${error instanceof KubeApiError ? (error.status.message ?? error.message) : (error as Error).message}`,
      );
    }
  }
  if (baselineProblems.length > 0)
    options.log(`malformed manifests: baselines refused (harness bug): ${baselineProblems.join('; ')}`);

  const cases = malformedManifests(options.count, target, options.random);
  const results: ManifestResult[] = [];
  const accepted: { index: number; c: ManifestCase }[] = [];
  for (const [index, c] of cases.entries()) {
    const base = resultBase(index, c);
    try {
      await createManifest(client, c.manifest as KubernetesObject);
      accepted.push({ index, c });
      for (const companion of c.companions) {
        await createManifest(client, companion as KubernetesObject).catch((error: unknown) =>
          options.log(
            `malformed manifests: companion ${companion.kind} ${companion.metadata.name} of case ${index} refused: ${error instanceof KubeApiError ? error.status.message : (error as Error).message}`,
          ),
        );
      }
    } catch (error) {
      if (error instanceof KubeApiError) {
        const message = error.status.message ?? error.message;
        const verdict = judgeRefusal(message, c.mentions);
        results[index] = {
          ...base,
          outcome: verdict.outcome === 'refused' ? 'refused' : 'refused-unclear',
          evidence: `${error.code} ${error.reason ?? ''}: ${message}`,
        };
      } else {
        results[index] = { ...base, outcome: 'harness-error', evidence: (error as Error).message };
      }
    }
  }
  options.log(
    `malformed manifests: ${cases.length} applied, ${cases.length - accepted.length} refused by the API server, ${accepted.length} accepted; watching those for conditions`,
  );

  // Accepted objects: a condition must say what is wrong.
  const pending = new Map(accepted.map((a) => [a.index, a]));
  const lastConditions = new Map<number, ConditionLike[]>();
  const deadline = performance.now() + (options.conditionWaitMs ?? 60_000);
  while (pending.size > 0 && performance.now() < deadline) {
    await Promise.all(
      [...pending.values()].map(async ({ index, c }) => {
        // The malformed object first, then the companions that make its controller act on it.
        const conditions: ConditionLike[] = [];
        for (const m of [c.manifest, ...c.companions]) {
          try {
            const object = (await client
              .resource(resourceOf(m.kind))
              .get({ namespace, name: m.metadata.name })) as KubernetesObject & {
              status?: { conditions?: ConditionLike[] };
            };
            const own = (object.status?.conditions ?? []).map((k) =>
              m === c.manifest ? k : { ...k, type: `${m.kind}/${k.type}` },
            );
            conditions.push(...own);
          } catch {
            /* retried on the next round */
          }
        }
        lastConditions.set(index, conditions);
        const explaining = explainingCondition(conditions, c.mentions);
        if (explaining) {
          results[index] = { ...resultBase(index, c), outcome: 'condition', evidence: conditionEvidence(explaining) };
          pending.delete(index);
        }
      }),
    );
    if (pending.size > 0) await sleep(3_000);
  }
  // Still unexplained: does an object it created (MachineSet, Machine, their K3sConfig) say what is wrong?
  const children = pending.size > 0 ? await ownedObjects(client, namespace) : [];
  for (const { index, c } of pending.values()) {
    const conditions = lastConditions.get(index) ?? [];
    const roots = new Set([c.manifest, ...c.companions].map((m) => `${m.kind}/${m.metadata.name}`));
    const descendants = descendantsOf(children, roots);
    const explaining = explainingCondition(
      descendants.flatMap((d) =>
        (d.status?.conditions ?? []).map((k) => ({ ...k, type: `${d.kind} ${d.metadata?.name}/${k.type}` })),
      ),
      c.mentions,
    );
    if (explaining) {
      results[index] = { ...resultBase(index, c), outcome: 'condition-on-child', evidence: conditionEvidence(explaining) };
      continue;
    }
    results[index] = {
      ...resultBase(index, c),
      outcome: 'silent',
      evidence:
        conditions.length === 0
          ? 'no conditions at all'
          : conditions
              .map((k) => `${k.type}=${k.status} ${k.reason ?? ''}${k.message ? `: ${k.message}` : ''}`)
              .join('; '),
    };
  }

  // Clean up what was accepted, and the target cluster.
  const toDelete = [
    ...accepted.flatMap(({ c }) =>
      [c.manifest, ...c.companions].map((m) => ({ kind: m.kind, name: m.metadata.name })),
    ),
    { kind: 'Cluster', name: TARGET_CLUSTER },
  ];
  for (const o of toDelete)
    await client
      .resource(resourceOf(o.kind))
      .delete({ namespace, name: o.name })
      .catch(() => undefined);
  const stuck: string[] = [];
  await waitFor(
    async () => {
      stuck.length = 0;
      for (const o of toDelete) {
        try {
          await client.resource(resourceOf(o.kind)).get({ namespace, name: o.name });
          stuck.push(`${o.kind} ${o.name}`);
        } catch (error) {
          if (!isNotFound(error)) stuck.push(`${o.kind} ${o.name} (${(error as Error).message})`);
        }
      }
      return stuck.length === 0;
    },
    180_000,
    3_000,
  );
  options.log(
    `malformed manifests: cleanup ${stuck.length === 0 ? 'complete' : `left ${stuck.length} objects: ${stuck.slice(0, 10).join(', ')}`}`,
  );
  return {
    results,
    baselineProblems,
    targetAvailable,
    cleanup: { deleted: toDelete.length - stuck.length, stuck },
  };
}

/** What every verdict on a case names: the case and its object. */
function resultBase(index: number, c: ManifestCase): Pick<ManifestResult, 'index' | 'category' | 'label' | 'name'> {
  return { index, category: c.category, label: c.label, name: c.manifest.metadata.name };
}

/** A condition as a verdict quotes it: `type=status reason: message`. */
function conditionEvidence(k: ConditionLike): string {
  return `${k.type}=${k.status} ${k.reason ?? ''}: ${k.message ?? ''}`;
}
