import { servingCertificateNames } from './api-server-certificates.js';
import { apiServiceIPs } from './service-network.js';

describe('service network', () => {
  it('finds the kubernetes Service IP of each service CIDR', () => {
    expect(apiServiceIPs('10.43.0.0/16')).toEqual(['10.43.0.1']);
    expect(apiServiceIPs('10.96.0.0/12,fd00:10:96::/112')).toEqual(['10.96.0.1', 'fd00:10:96:0:0:0:0:1']);
    expect(apiServiceIPs('not-a-cidr')).toEqual([]);
  });

  it('names the endpoint, the SANs, the kubernetes Service and localhost in the serving certificate', () => {
    expect(
      servingCertificateNames({
        endpointHost: 'api.demo.example',
        tlsSANs: ['10.0.0.5', 'api.demo.example'],
        serviceCIDR: '10.43.0.0/16',
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
