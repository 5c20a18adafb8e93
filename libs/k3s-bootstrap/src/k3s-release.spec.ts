import { k3sRelease } from './k3s-release.js';

describe('k3sRelease', () => {
  it('names the first K3s release of a Kubernetes version, and keeps a release already named', () => {
    expect(k3sRelease('v1.34.4')).toBe('v1.34.4+k3s1');
    expect(k3sRelease('v1.34.4+k3s2')).toBe('v1.34.4+k3s2');
    expect(k3sRelease('v1.32.0-rc1')).toBe('v1.32.0-rc1+k3s1');
  });
});
