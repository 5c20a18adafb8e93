import { type KubeConfig } from '@kubernetes/client-node';
import { deployDir, installCrds, loadKustomization, ManifestApplier } from '@capstan/manifests';

/** Installs Capstan's generated CRDs (deploy/crds) and waits until they are served. Idempotent. */
export async function installCapstanCrds(kc: KubeConfig): Promise<void> {
  await installCrds(kc, new ManifestApplier(kc), loadKustomization(`${deployDir()}/crds`), { fieldManager: 'capstan-test' });
}
