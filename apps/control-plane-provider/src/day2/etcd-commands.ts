import { createHash } from 'node:crypto';
import type { EtcdS3Spec } from '@capstan/api';
import { k3sShellArgs } from '@capstan/k3s-bootstrap';
import type { PlanFile, PlanInstruction } from '@capstan/node-agent';

// The K3s commands of etcd snapshots and restores, as plan instructions (Rancher's planner renders the same ones:
// pkg/capr/planner/etcdcreate.go, etcdrestore.go, s3args.go). Credentials: the access key as a flag, the secret key
// in AWS_SECRET_ACCESS_KEY, both only in the plan Secret.

/** Where an S3 endpoint's CA is written on the server (K3s takes `--etcd-s3-endpoint-ca` as a file). */
const S3_CA_DIR = '/var/lib/rancher/k3s/server/tls';

/** An S3 store and its keys (from the control plane's credentials Secret). */
export interface S3Target {
  spec: EtcdS3Spec;
  accessKey: string;
  secretKey: string;
}

/** What every command that reaches S3 adds: flags (`--s3-*` or `k3s server`'s `--etcd-s3-*`), env and the CA file. */
function s3Parts(
  s3: S3Target | undefined,
  prefix: 's3' | 'etcd-s3',
): { args: string[]; env: string[]; files: PlanFile[] } {
  if (!s3) return { args: [], env: [], files: [] };
  const { spec } = s3;
  const args = [
    `--${prefix}`,
    `--${prefix}-endpoint=${spec.endpoint}`,
    `--${prefix}-bucket=${spec.bucket}`,
    `--${prefix}-access-key=${s3.accessKey}`,
  ];
  if (spec.folder) args.push(`--${prefix}-folder=${spec.folder}`);
  if (spec.region) args.push(`--${prefix}-region=${spec.region}`);
  if (spec.insecure) args.push(`--${prefix}-insecure`);
  if (spec.skipSSLVerify) args.push(`--${prefix}-skip-ssl-verify`);
  const files: PlanFile[] = [];
  if (spec.endpointCA) {
    const path = `${S3_CA_DIR}/etcd-s3-endpoint-ca-${createHash('sha256').update(spec.endpointCA).digest('hex').slice(0, 12)}.crt`;
    files.push({ path, permissions: '0644', content: Buffer.from(spec.endpointCA).toString('base64') });
    args.push(`--${prefix}-endpoint-ca=${path}`);
  }
  return { args, env: [`AWS_SECRET_ACCESS_KEY=${s3.secretKey}`], files };
}

const k3s = (name: string, args: string[], env: string[], timeoutSeconds: number): PlanInstruction => ({
  name,
  command: 'sh',
  args: k3sShellArgs(args),
  env,
  saveOutput: true,
  timeoutSeconds,
});

/** `k3s etcd-snapshot save --name <name>` (and `--s3 ...`). */
export function snapshotSaveCommand(
  name: string,
  s3: S3Target | undefined,
): { instruction: PlanInstruction; files: PlanFile[] } {
  const parts = s3Parts(s3, 's3');
  return {
    instruction: k3s(
      'etcd-snapshot-save',
      ['etcd-snapshot', 'save', `--name=${name}`, ...parts.args],
      parts.env,
      900,
    ),
    files: parts.files,
  };
}

/** `k3s etcd-snapshot delete <file>` (and `--s3 ...`). */
export function snapshotDeleteCommand(
  fileName: string,
  s3: S3Target | undefined,
): { instruction: PlanInstruction; files: PlanFile[] } {
  const parts = s3Parts(s3, 's3');
  return {
    instruction: k3s(
      'etcd-snapshot-delete',
      ['etcd-snapshot', 'delete', ...parts.args, fileName],
      parts.env,
      300,
    ),
    files: parts.files,
  };
}

/** `k3s server --cluster-reset --cluster-reset-restore-path=<file>` (and `--etcd-s3 ...`), as Rancher's restore plan runs it. */
export function clusterResetCommand(
  fileName: string,
  s3: S3Target | undefined,
): { instruction: PlanInstruction; files: PlanFile[] } {
  const parts = s3Parts(s3, 'etcd-s3');
  const path = s3 ? fileName : `db/snapshots/${fileName}`;
  return {
    instruction: k3s(
      'etcd-restore',
      ['server', '--cluster-reset', `--cluster-reset-restore-path=${path}`, ...parts.args],
      parts.env,
      1200,
    ),
    files: parts.files,
  };
}
