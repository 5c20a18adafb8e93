import { lstatSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { serverTlsFiles, serverTlsFromClusterCertificates } from '@capstan/k3s-bootstrap';
import { HostRoot, writeBeneath } from '@capstan/node-agent';
import { generateClusterCertificates, ONE_DAY_MS, type ClusterCertificates } from '@capstan/pki';
import { runK3sCommand, type K3sCommandHost } from './k3s-commands.js';
import {
  issueLeafCertificates,
  leafCertificatePath,
  type LeafCertificateReport,
} from './k3s-leaf-certificates.js';

// `k3s certificate check` and `k3s certificate rotate` on a sim server: the leaf certificates K3s keeps in
// server/tls, issued from the cluster CAs the bootstrap data wrote on the machine.
describe('the sim k3s certificate commands', () => {
  let certificates: ClusterCertificates;
  let dir: string;
  let host: K3sCommandHost;
  let renewedServing: number;
  const now = new Date('2026-11-28T10:00:00Z');
  const servingNames = { dnsNames: ['localhost'], ipAddresses: ['127.0.0.1'] };

  beforeAll(async () => {
    certificates = await generateClusterCertificates('demo');
  });

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'capstan-k3s-certs-'));
    renewedServing = 0;
    const root = join(dir, 'root');
    mkdirSync(root);
    for (const file of serverTlsFiles(serverTlsFromClusterCertificates(certificates)))
      writeBeneath(new HostRoot(root), file.path, file.content, 0o600);
    host = {
      root,
      recordsDir: join(dir, 'records'),
      nodeName: 'demo-cp-0',
      server: true,
      saveSnapshot: () => Promise.reject(new Error('no etcd here')),
      restoreSnapshot: () => Promise.reject(new Error('no etcd here')),
      servingNames,
      secretsEncrypt: () => Promise.reject(new Error('no cluster here')),
      renewServingCertificate: async () => {
        renewedServing++;
      },
      now: () => now,
    };
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  const check = async (): Promise<LeafCertificateReport[]> => {
    const result = await runK3sCommand(host, ['certificate', 'check', '--output', 'json'], '');
    expect(result.code).toBe(0);
    return JSON.parse(result.output) as LeafCertificateReport[];
  };
  const daysLeft = (report: LeafCertificateReport) =>
    Math.round((Date.parse(report.expiryTime) - now.getTime()) / ONE_DAY_MS);

  it('reports a year-old server as within K3s renewal window, and a rotation renews every certificate', async () => {
    await issueLeafCertificates(host.root, { servingNames, issuedDaysAgo: 350, now });
    const before = await check();
    expect(before.map((r) => r.filename)).toEqual(
      expect.arrayContaining([
        '/var/lib/rancher/k3s/server/tls/serving-kube-apiserver.crt',
        '/var/lib/rancher/k3s/server/tls/client-admin.crt',
        '/var/lib/rancher/k3s/server/tls/client-auth-proxy.crt',
      ]),
    );
    expect(before).toHaveLength(6);
    expect(before.every((r) => daysLeft(r) === 15 && r.status === 'WARNING')).toBe(true);

    const rotated = await runK3sCommand(host, ['certificate', 'rotate'], '');
    expect(rotated).toMatchObject({ code: 0 });
    expect(renewedServing).toBe(1);
    const after = await check();
    expect(after.every((r) => daysLeft(r) === 365 && r.status === 'OK')).toBe(true);
  });

  it('rotates only the services named, and the API server only when its certificate changed', async () => {
    await issueLeafCertificates(host.root, { servingNames, issuedDaysAgo: 300, now });
    const result = await runK3sCommand(host, ['certificate', 'rotate', '--service', 'admin,scheduler'], '');
    expect(result.code).toBe(0);
    expect(renewedServing).toBe(0);
    const byService = new Map((await check()).map((r) => [r.filename.split('/').pop(), daysLeft(r)]));
    expect(byService.get('client-admin.crt')).toBe(365);
    expect(byService.get('client-scheduler.crt')).toBe(365);
    expect(byService.get('serving-kube-apiserver.crt')).toBe(65);
  });

  it('refuses an unknown service and a CA planted as a link, writing nothing', async () => {
    await issueLeafCertificates(host.root, { servingNames, now });
    const admin = readFileSync(join(host.root, leafCertificatePath('client-admin')), 'utf8');
    expect(await runK3sCommand(host, ['certificate', 'rotate', '--service', 'etcd-everything'], '')).toEqual({
      code: 1,
      output: 'k3s: unknown certificate service "etcd-everything"',
    });
    // The cluster owner controls the machine: a CA file swapped for a link to a host file is never followed.
    const outside = join(dir, 'host-secret.key');
    writeFileSync(outside, 'not for tenants');
    const caKey = join(host.root, 'var/lib/rancher/k3s/server/tls/client-ca.key');
    rmSync(caKey);
    symlinkSync(outside, caKey);
    const refused = await runK3sCommand(host, ['certificate', 'rotate', '--service', 'admin'], '');
    expect(refused.code).toBe(1);
    expect(refused.output).toMatch(/client-ca\.crt and \.key cannot sign certificates/);
    expect(refused.output).not.toContain('not for tenants');
    expect(readFileSync(join(host.root, leafCertificatePath('client-admin')), 'utf8')).toBe(admin);
  });

  it('never reads or writes through a leaf certificate the owner swapped for a link to a host file', async () => {
    await issueLeafCertificates(host.root, { servingNames, now });
    const hostCert = join(dir, 'host-serving.crt');
    const hostPem = readFileSync(join(host.root, leafCertificatePath('serving-kube-apiserver')), 'utf8');
    writeFileSync(hostCert, hostPem);
    const planted = join(host.root, leafCertificatePath('client-scheduler'));
    rmSync(planted);
    symlinkSync(hostCert, planted);
    // The check does not follow it: the link is not one of the server's certificates.
    expect((await check()).map((r) => r.filename)).not.toContain(leafCertificatePath('client-scheduler'));
    // The rotation replaces the link with a file of the machine's own, and the host file stays as it was.
    expect((await runK3sCommand(host, ['certificate', 'rotate', '--service', 'scheduler'], '')).code).toBe(0);
    expect(lstatSync(planted).isSymbolicLink()).toBe(false);
    expect(readFileSync(hostCert, 'utf8')).toBe(hostPem);
  });

  it('refuses certificate commands on an agent', async () => {
    const result = await runK3sCommand({ ...host, server: false }, ['certificate', 'check'], '');
    expect(result).toMatchObject({ code: 1, output: expect.stringMatching(/servers only/) });
  });
});
