import { BootstrapDataError } from '@capstan/k3s-bootstrap';
import { kubeApiserverArgsOf } from './machine-root.js';

// A machine's `kube-apiserver-arg` reaches a kube-apiserver the sim runs on the management host (issue 32, finding 4).

describe('kubeApiserverArgsOf', () => {
  it('passes the flags that only tune the server, as --name=value', () => {
    expect(
      kubeApiserverArgsOf({ 'kube-apiserver-arg': ['event-ttl=2h', '--v=2', 'profiling=false'] }),
    ).toEqual(['--event-ttl=2h', '--v=2', '--profiling=false']);
    expect(kubeApiserverArgsOf({ 'kube-apiserver-arg': 'max-requests-inflight=100' })).toEqual([
      '--max-requests-inflight=100',
    ]);
    expect(kubeApiserverArgsOf({})).toEqual([]);
  });

  it.each([
    ['storage', 'etcd-servers=http://127.0.0.1:2379'],
    ['authentication', 'token-auth-file=/etc/kubernetes/tokens.csv'],
    ['authorization', 'authorization-mode=AlwaysAllow'],
    ['a host file', 'audit-log-path=/etc/passwd'],
    ['admission', 'admission-control-config-file=/tmp/x'],
    ['a listener', 'bind-address=0.0.0.0'],
  ])('refuses a %s flag, naming it and not its value', (_what, arg) => {
    const attempt = () => kubeApiserverArgsOf({ 'kube-apiserver-arg': ['event-ttl=2h', arg] });
    expect(attempt).toThrow(BootstrapDataError);
    expect(attempt).toThrow(`kube-apiserver-arg[1] sets --${arg.split('=')[0]}, which the sim does not pass`);
    try {
      attempt();
    } catch (error) {
      expect((error as Error).message).not.toContain(arg.split('=')[1]);
    }
  });

  it('refuses what is not a flag', () => {
    expect(() => kubeApiserverArgsOf({ 'kube-apiserver-arg': ['$(reboot)'] })).toThrow('is not name[=value]');
  });
});
