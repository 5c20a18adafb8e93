import { type KubeConfig } from '@kubernetes/client-node';
import { deployDir, installAdmissionPolicies, installCrds, loadKustomization, ManifestApplier } from '@capstan/manifests';

/**
 * Installs what Capstan defines cluster-wide (deploy/crds and deploy/admission, as `capstan init` does) and waits
 * until the CRDs are served and the policies checked. Idempotent.
 */
export async function installCapstanDefinitions(kc: KubeConfig): Promise<void> {
  const applier = new ManifestApplier(kc);
  await installCrds(kc, applier, loadKustomization(`${deployDir()}/crds`), { fieldManager: 'capstan-test' });
  await installAdmissionPolicies(applier, loadKustomization(`${deployDir()}/admission`), { fieldManager: 'capstan-test' });
}
