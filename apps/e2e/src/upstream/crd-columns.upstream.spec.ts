import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { deployDir } from '@capstan/manifests';
import { resolveUpstreamClusterApi } from '@capstan/testing';

// `kubectl get clusters` (and machines, machinesets, ...) prints the same columns on Capstan as on upstream.

interface CrdFile {
  spec: { versions: { name: string; additionalPrinterColumns?: { name: string; jsonPath: string; priority?: number }[] }[] };
}

const columnsOf = (path: string, version: string) =>
  ((parse(readFileSync(path, 'utf8')) as CrdFile).spec.versions.find((v) => v.name === version)?.additionalPrinterColumns ?? []).map(
    (c) => ({ name: c.name, jsonPath: c.jsonPath, priority: c.priority ?? 0 }),
  );

describe("the core kinds' printer columns", () => {
  it.each(['clusters', 'machines', 'machinesets', 'machinedeployments', 'machinehealthchecks', 'machinepools', 'machinedrainrules', 'clusterclasses'])(
    '%s: the columns, paths and priorities of upstream v1.14 for v1beta2',
    (plural) => {
      const file = `cluster.x-k8s.io_${plural}.yaml`;
      const upstream = columnsOf(join(resolveUpstreamClusterApi().sourceDir, 'core', 'config', 'crd', 'bases', file), 'v1beta2');
      expect(columnsOf(join(deployDir(), 'crds', file), 'v1beta2')).toEqual(upstream);
    },
  );
});
