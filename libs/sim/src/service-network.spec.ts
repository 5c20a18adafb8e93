import { servingCertificateNames } from './api-server-certificates.js';
import { addressInCidr, apiServiceIPs } from './service-network.js';

describe('service network', () => {
  it('finds the kubernetes Service IP of each service CIDR', () => {
    expect(apiServiceIPs('10.43.0.0/16')).toEqual(['10.43.0.1']);
    expect(apiServiceIPs('10.96.0.0/12,fd00:10:96::/112')).toEqual(['10.96.0.1', 'fd00:10:96:0:0:0:0:1']);
    expect(apiServiceIPs('not-a-cidr')).toEqual([]);
  });

  it('finds addresses inside a CIDR, and none outside it', () => {
    expect(addressInCidr('10.42.3.0/24', 2)).toBe('10.42.3.2');
    expect(addressInCidr('10.42.3.0/24', 254)).toBe('10.42.3.254');
    expect(addressInCidr('10.42.3.0/24', 255)).toBeUndefined(); // broadcast
    expect(addressInCidr('fd00:42::/64', 10)).toBe('fd00:42:0:0:0:0:0:a');
    expect(addressInCidr('10.42.3.0/33', 1)).toBeUndefined();
    expect(addressInCidr('nonsense', 1)).toBeUndefined();
  });

  it('names the endpoint, the SANs, the kubernetes Service and localhost in the serving certificate', () => {
    expect(
      servingCertificateNames({
        endpointHost: 'api.demo.example',
        tlsSANs: ['10.0.0.5', 'api.demo.example'],
        serviceCIDR: '10.43.0.0/16',
        clusterCIDR: '10.42.0.0/16',
        clusterDomain: 'corp.local',
      }),
    ).toEqual({
      dnsNames: [
        'api.demo.example',
        'kubernetes',
        'kubernetes.default',
        'kubernetes.default.svc',
        'kubernetes.default.svc.corp.local',
        'localhost',
      ],
      ipAddresses: ['10.0.0.5', '10.43.0.1', '127.0.0.1'],
    });
  });
});
