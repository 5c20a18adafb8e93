import { KubeConfig } from '@kubernetes/client-node';

export interface KubeconfigOptions {
  kubeconfig?: string;
  kubeconfigContext?: string;
}

/** The management cluster: --kubeconfig, else $KUBECONFIG, else ~/.kube/config, else in-cluster. */
export function loadKubeConfig(options: KubeconfigOptions): KubeConfig {
  const kc = new KubeConfig();
  if (options.kubeconfig) kc.loadFromFile(options.kubeconfig);
  else kc.loadFromDefault();
  if (options.kubeconfigContext) kc.setCurrentContext(options.kubeconfigContext);
  return kc;
}

export function namespaceOf(kc: KubeConfig, explicit?: string): string {
  return explicit ?? kc.getContextObject(kc.getCurrentContext())?.namespace ?? 'default';
}
