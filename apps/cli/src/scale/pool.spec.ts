import { type MachineDeployment } from '@capstan/api';
import { CliError } from '../output.js';
import { findPool, poolName } from './pool.js';

const md = (name: string, clusterName: string, namespace = 'fleet') =>
  ({ metadata: { name, namespace }, spec: { clusterName } }) as MachineDeployment;

describe('findPool', () => {
  const deployments = [md('demo-md-0', 'demo'), md('demo-gpu', 'demo'), md('other-md-0', 'other'), md('demo-md-1', 'demo', 'elsewhere')];
  const demo = { namespace: 'fleet', name: 'demo' };

  it('finds a pool by its full name or by the suffix after the cluster name', () => {
    expect(findPool(deployments, demo, 'demo-md-0').metadata.name).toBe('demo-md-0');
    expect(findPool(deployments, demo, 'gpu').metadata.name).toBe('demo-gpu');
  });

  it("refuses another cluster's or another namespace's MachineDeployment, naming the cluster's pools", () => {
    expect(() => findPool(deployments, demo, 'other-md-0')).toThrow(CliError);
    expect(() => findPool(deployments, demo, 'md-1')).toThrow(
      'Cluster fleet/demo has no MachineDeployment "md-1" or "demo-md-1"; its pools: demo-gpu (gpu), demo-md-0 (md-0)',
    );
    expect(() => findPool([], demo, 'md-0')).toThrow(/it has no MachineDeployments$/);
  });

  it('shortens only names that start with the cluster name', () => {
    expect(poolName('demo', 'demo-md-0')).toBe('md-0');
    expect(poolName('demo', 'workers')).toBe('workers');
  });
});
