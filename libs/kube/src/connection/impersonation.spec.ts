import { ClusterConnection } from './cluster-connection.js';
import { impersonationHeaders } from './impersonation.js';

describe('impersonation', () => {
  it('sends one Impersonate-Group per group and percent-encodes extra keys, as client-go does', () => {
    expect(
      impersonationHeaders({
        username: 'system:serviceaccount:fleet:viewer',
        uid: 'u-1',
        groups: ['system:serviceaccounts', 'system:authenticated'],
        extra: { 'authentication.kubernetes.io/pod-name': ['p'], empty: [] },
      }),
    ).toEqual({
      'Impersonate-User': 'system:serviceaccount:fleet:viewer',
      'Impersonate-Uid': 'u-1',
      'Impersonate-Group': ['system:serviceaccounts', 'system:authenticated'],
      'Impersonate-Extra-authentication.kubernetes.io%2Fpod-name': ['p'],
    });
    expect(impersonationHeaders({ username: 'alice' })).toEqual({ 'Impersonate-User': 'alice' });
  });

  it("keeps the connection's own credentials and adds the user's headers, leaving the original connection as it was", async () => {
    const connection = new ClusterConnection({
      context: 'c',
      server: 'https://127.0.0.1:6443',
      token: 'own-token',
    });
    const acting = connection.impersonating({ username: 'alice', groups: ['devs'] });
    expect(await acting.authenticationHeaders('https://127.0.0.1:6443/api')).toEqual({
      Authorization: 'Bearer own-token',
      'Impersonate-User': 'alice',
      'Impersonate-Group': ['devs'],
    });
    expect(await connection.authenticationHeaders('https://127.0.0.1:6443/api')).toEqual({
      Authorization: 'Bearer own-token',
    });
  });
});
