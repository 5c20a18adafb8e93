import { isRegistriesPath, registriesFiles, type K3sRegistries } from '@capstan/k3s-bootstrap';
import { base64 } from './secrets.js';
import type { MachinePlan, PlanFile } from '@capstan/node-agent';

// registries.yaml and its certificate files on a running machine. The bootstrap data writes them at first boot and
// the machine's plans keep writing them, so the plans say which of them are Capstan's: a plan removes what the plan
// before it wrote and it no longer writes. A registries.yaml no plan ever wrote (one the machine image brings) is left
// alone, as the bootstrap data of a machine without privateRegistriesConfig leaves it.

/** registries.yaml and its certificate files as plan files, in the bootstrap data's order. */
export function registriesPlanFiles(registries: K3sRegistries | undefined): PlanFile[] {
  return (registries ? registriesFiles(registries) : []).map((file) => ({
    path: file.path,
    permissions: file.permissions,
    content: base64(file.content),
  }));
}

/**
 * A machine's first plan with the registries files its bootstrap data writes: the agent writes them again unchanged,
 * and the next plan knows they are there to remove.
 */
export function withRegistriesFiles(plan: MachinePlan, registries: K3sRegistries | undefined): MachinePlan {
  const files = registriesPlanFiles(registries);
  return files.length > 0 ? { ...plan, files: [...(plan.files ?? []), ...files] } : plan;
}

/**
 * Deletes for the registries files the machine's current plan writes or deletes and `next` does not write: removing
 * privateRegistriesConfig removes registries.yaml, dropping a registry's certificates removes its files. A delete is
 * carried into every later plan, so a plan written again before the agent applied the first keeps it.
 */
export function registriesFilesRemoved(
  current: MachinePlan | undefined,
  next: readonly PlanFile[],
): PlanFile[] {
  const written = new Set(next.filter((file) => file.action !== 'delete').map((file) => file.path));
  const removed = new Set(
    (current?.files ?? [])
      .map((file) => file.path)
      .filter((path) => isRegistriesPath(path) && !written.has(path)),
  );
  return [...removed].map((path) => ({ path, action: 'delete' }));
}
