import { randomBytes } from 'node:crypto';
import type { SimClusterMode } from '@capstan/api';
import {
  parseK3sCloudConfig,
  renderK3sCloudConfig,
  type K3sAgentConfigSpec,
  type K3sRole,
  type ParsedK3sBootstrap,
} from '@capstan/k3s-bootstrap';
import {
  generateClusterCertificates,
  issueAdminKubeconfig,
  loadCertificateAuthority,
  type ClusterCertificates,
} from '@capstan/pki';
import { freePort } from '@capstan/testing/local-host';
import type { SimClusterRef } from './host-plan.js';

/**
 * A workload cluster's material as the K3s providers would make it (certificates, token, endpoint), able to
 * render and parse each node's bootstrap data: what the sim's own tests and its bench feed the runtime
 * without a management cluster.
 */
export class ClusterBlueprint {
  private constructor(
    readonly ref: SimClusterRef,
    readonly certificates: ClusterCertificates,
    readonly token: string,
    readonly version: string,
  ) {}

  static async create(
    namespace: string,
    clusterName: string,
    options: { mode?: SimClusterMode; version?: string } = {},
  ): Promise<ClusterBlueprint> {
    return new ClusterBlueprint(
      {
        namespace,
        clusterName,
        mode: options.mode ?? 'dedicated',
        endpoint: { host: '127.0.0.1', port: await freePort() },
      },
      await generateClusterCertificates(clusterName),
      randomBytes(16).toString('hex'),
      options.version ?? 'v1.34.1+k3s1',
    );
  }

  render(role: K3sRole, agentConfig?: K3sAgentConfigSpec): string {
    return renderK3sCloudConfig({
      role,
      spec: { version: this.version, ...(agentConfig && { agentConfig }) },
      endpoint: this.ref.endpoint,
      token: this.token,
      certificates: role === 'agent' ? undefined : this.certificates,
    });
  }

  parsed(role: K3sRole, agentConfig?: K3sAgentConfigSpec): ParsedK3sBootstrap {
    return parseK3sCloudConfig(this.render(role, agentConfig));
  }

  /** `<cluster>-kubeconfig` content: the admin client certificate from the client CA, trusting the server CA. */
  async adminKubeconfig(): Promise<string> {
    const { kubeconfig } = await issueAdminKubeconfig(
      {
        serverCaPem: this.certificates.ca.certPem,
        clientCA: await loadCertificateAuthority(this.certificates.cca),
      },
      this.ref.clusterName,
      this.ref.endpoint,
    );
    return kubeconfig;
  }
}
