import { generateKeyPairSync, randomBytes } from 'node:crypto';
import {
  NEEDLE_MIN,
  NeedleIndex,
  base64Variants,
  scanTexts,
  secretNeedles,
  type SecretInput,
} from './secret-scan.js';

const b64 = (text: string) => Buffer.from(text).toString('base64');
const privateKey = () =>
  generateKeyPairSync('ec', { namedCurve: 'P-256' })
    .privateKey.export({ type: 'pkcs8', format: 'pem' })
    .toString();
const rsaKey = () =>
  generateKeyPairSync('rsa', { modulusLength: 2048 })
    .privateKey.export({ type: 'pkcs1', format: 'pem' })
    .toString();

describe('secret scan', () => {
  const joinToken = randomBytes(32).toString('hex');
  const key = rsaKey();
  const jwt = `eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJzeXN0ZW06c2VydmljZWFjY291bnQ6eCJ9.${randomBytes(64).toString('base64url')}`;
  const kubeconfig = `apiVersion: v1\nusers:\n- name: admin\n  user:\n    client-key-data: ${b64(key)}\n    token: ${randomBytes(24).toString('hex')}\n`;
  const cloudConfig = `#cloud-config\nwrite_files:\n- path: /etc/rancher/k3s/config.yaml\n  content: |\n    token: ${joinToken}\n- path: /var/lib/capstan/agent/token\n  encoding: b64\n  content: ${b64(jwt)}\n`;
  const secrets: SecretInput[] = [
    { name: 'ns/a-token', type: 'cluster.x-k8s.io/secret', data: { value: b64(joinToken) } },
    {
      name: 'ns/a-sa',
      type: 'cluster.x-k8s.io/secret',
      data: {
        'tls.key': b64(key),
        'tls.crt': b64('-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n'),
      },
    },
    { name: 'ns/a-kubeconfig', type: 'cluster.x-k8s.io/secret', data: { value: b64(kubeconfig) } },
    {
      name: 'ns/m1',
      type: 'cluster.x-k8s.io/secret',
      data: { value: b64(cloudConfig), format: b64('cloud-config') },
    },
    {
      name: 'ns/m1-machine-plan',
      type: 'capstan.dev/machine-plan',
      data: { 'applied-checksum': b64('a'.repeat(64)), 'plan-state': b64('succeeded') },
    },
  ];
  const index = new NeedleIndex(secretNeedles(secrets));
  const find = (text: string) => scanTexts([{ where: 'line', text }], index).hits;

  it('finds join tokens, private keys and JWTs in log lines, however they were written', () => {
    expect(find(JSON.stringify({ msg: 'joining', token: joinToken }))).not.toHaveLength(0);
    // A PEM key logged inside JSON (newlines escaped).
    expect(find(JSON.stringify({ err: `bad key ${key}` }))).not.toHaveLength(0);
    // A whole Secret or kubeconfig dumped: base64 of the key at any alignment.
    expect(find(`x${b64(`ab${key}`)}`)).not.toHaveLength(0);
    expect(find(`data: ${b64(kubeconfig)}`)).not.toHaveLength(0);
    // The agent token inside base64-encoded bootstrap data.
    expect(find(`Authorization: Bearer ${jwt}`)).not.toHaveLength(0);
    expect(find(JSON.stringify({ value: b64(cloudConfig) }))).not.toHaveLength(0);
  });

  it('says which secret leaked, never the value', () => {
    const [hit] = find(`token=${joinToken}`);
    expect(hit!.secret).toContain('ns/a-token');
    expect(JSON.stringify(hit)).not.toContain(joinToken);
  });

  it('does not flag certificates, checksums, states or ordinary lines', () => {
    expect(find('-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----')).toHaveLength(0);
    expect(find(`plan applied, checksum ${'a'.repeat(64)}`)).toHaveLength(0);
    expect(
      find(
        '{"level":30,"msg":"Node fleet-0-md-0-4dc9a124ac-jcd7s registered; Lease renewed every 10 s","uid":"7c1e4f9a-3d2b-4c55-9f31-0a8b6d2e4f10"}',
      ),
    ).toHaveLength(0);
  });

  it('takes extra values (the admin token, an injected fake key) and refuses unusable needles', () => {
    const fake = privateKey();
    const extra = new NeedleIndex(secretNeedles([], [{ source: 'fake', value: fake }]));
    expect(scanTexts([{ where: 'x', text: JSON.stringify({ data: fake }) }], extra).hits).not.toHaveLength(0);
    expect(() => new NeedleIndex([{ source: 's', kind: 'value', text: 'short' }])).toThrow(
      String(NEEDLE_MIN),
    );
  });

  it('encodes a secret at all three byte alignments', () => {
    const secret = 'correct-horse-battery-staple-0123456789';
    const variants = base64Variants(secret);
    for (const prefix of ['', 'a', 'ab', 'abc']) {
      const encoded = b64(`${prefix}${secret}suffix`);
      expect(variants.some((v) => encoded.includes(v))).toBe(true);
    }
  });
});
