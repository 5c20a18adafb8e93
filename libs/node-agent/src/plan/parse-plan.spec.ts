import { InvalidPlanError, parsePlan, planChecksum } from './parse-plan.js';

const b64 = (s: string) => Buffer.from(s).toString('base64');
const refused = (plan: unknown) => {
  try {
    parsePlan(typeof plan === 'string' ? plan : JSON.stringify(plan));
  } catch (error) {
    expect(error).toBeInstanceOf(InvalidPlanError);
    return (error as Error).message;
  }
  throw new Error('the plan was accepted');
};

describe('parsePlan', () => {
  it('accepts a full plan and keeps what it says', () => {
    const plan = parsePlan(
      JSON.stringify({
        files: [
          { path: '/etc/rancher/k3s/config.yaml.d/50-capstan.yaml', content: b64('a: 1\n'), permissions: '0600' },
          { path: '/var/lib/x/', directory: true },
          { path: '/etc/old', action: 'delete' },
        ],
        instructions: [{ name: 'install', command: 'sh', args: ['-c', 'true'], env: ['INSTALL_K3S_VERSION=v1.35.0+k3s1'], saveOutput: true }],
        periodicInstructions: [{ name: 'address', command: 'hostname', periodSeconds: 60 }],
        probes: { 'kube-apiserver': { failureThreshold: 5, httpGet: { url: 'https://127.0.0.1:6443/readyz', caCert: '/etc/ca.crt' } } },
      }),
    );
    expect(plan.files?.map((f) => f.path)).toEqual(['/etc/rancher/k3s/config.yaml.d/50-capstan.yaml', '/var/lib/x', '/etc/old']);
    expect(plan.instructions?.[0]).toMatchObject({ name: 'install', saveOutput: true });
    expect(plan.probes?.['kube-apiserver']?.failureThreshold).toBe(5);
    expect(parsePlan('{}')).toEqual({});
  });

  it('refuses malformed plans with the rule and the place, never a value', () => {
    expect(refused('{not json')).toBe('plan: is not valid JSON');
    expect(refused([])).toBe('plan: must be a JSON object');
    expect(refused({ files: [{ path: '/a', content: 'not base64!' }] })).toBe('files[0].content: must be base64');
    expect(refused({ extra: 1 })).toBe('plan: unknown field "extra"');
    expect(refused({ files: [{ path: '/a', size: 3 }] })).toBe('files[0]: unknown field "size"');
    expect(refused({ files: [{ path: 'relative' }] })).toBe('files[0].path: must be an absolute path');
    expect(refused({ files: [{ path: '/etc/../../outside' }] })).toBe('files[0].path: must not contain ".."');
    expect(refused({ files: [{ path: '/' }] })).toBe('files[0].path: must not be the root directory');
    expect(refused({ files: [{ path: '/a', permissions: 'rwx' }] })).toBe('files[0].permissions: must be an octal mode like "0644"');
    expect(refused({ instructions: [{ name: 'Bad Name', command: 'x' }] })).toBe('instructions[0].name: must be a DNS label (a-z, 0-9, -)');
    expect(refused({ instructions: [{ name: 'a', command: '' }] })).toBe('instructions[0].command: must be a non-empty string');
    expect(refused({ instructions: [{ name: 'a', command: 'x', env: ['SECRET_VALUE'] }] })).toBe('instructions[0].env[0]: must be NAME=value');
    expect(refused({ instructions: [{ name: 'a', command: 'x' }, { name: 'a', command: 'y' }] })).toBe('instructions: duplicate name "a"');
    expect(refused({ instructions: [{ name: 'a', command: 'x', workingDirectory: '/a/../..' }] })).toBe(
      'instructions[0].workingDirectory: must not contain ".."',
    );
    expect(refused({ probes: { p: { httpGet: { url: 'ftp://x' } } } })).toBe('probes.p.httpGet.url: must be http or https');
    expect(refused({ probes: { p: { httpGet: { url: 'https://x', clientCert: '/c' } } } })).toBe(
      'probes.p.httpGet: clientCert and clientKey go together',
    );
    expect(refused({ probes: { p: { timeoutSeconds: 0, httpGet: { url: 'https://x' } } } })).toBe(
      'probes.p.timeoutSeconds: must be an integer >= 1',
    );
    const secret = 's3cr3t-value-never-shown';
    expect(refused({ files: [{ path: '/a', content: `${secret}!` }] })).not.toContain(secret);
  });

  it('checksums the raw bytes', () => {
    expect(planChecksum('{}')).toBe('44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a');
  });
});
