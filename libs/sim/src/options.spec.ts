import {
  extractSimFlags,
  parsePortRange,
  simClusterOptionsFromEnv,
  simMachineOptionsFromEnv,
} from './options.js';
import { isSimError } from './errors.js';

describe('sim options', () => {
  it('reads CAPSTAN_SIM_* variables with defaults', () => {
    const options = simMachineOptionsFromEnv({
      HOME: '/home/u',
      CAPSTAN_SIM_ETCD_URL: 'http://127.0.0.1:2379',
      CAPSTAN_SIM_HEARTBEAT_SECONDS: '5',
    });
    expect(options).toMatchObject({
      stateDir: '/home/u/.local/state/capstan/sim',
      etcdUrl: 'http://127.0.0.1:2379',
      heartbeatSeconds: 5,
      nodeStatusSeconds: 60,
      provisioningJitter: 0.2,
      workloads: true,
    });
    expect(simMachineOptionsFromEnv({ CAPSTAN_SIM_WORKLOADS: 'off' }).workloads).toBe(false);
    expect(simMachineOptionsFromEnv({}).clusterEtcd).toBe('per-cluster');
    expect(simMachineOptionsFromEnv({ CAPSTAN_SIM_CLUSTER_ETCD: 'shared' }).clusterEtcd).toBe('shared');
    expect(simMachineOptionsFromEnv({ XDG_STATE_HOME: '/state' }).stateDir).toBe('/state/capstan/sim');
    expect(simClusterOptionsFromEnv({})).toEqual({
      endpointHost: '127.0.0.1',
      portRange: { min: 20000, max: 29999 },
    });
  });

  it('refuses values it cannot use, naming the variable', () => {
    const refusal = (env: NodeJS.ProcessEnv) => {
      try {
        simMachineOptionsFromEnv(env);
      } catch (error) {
        return error;
      }
      return undefined;
    };
    const badSwitch = refusal({ CAPSTAN_SIM_WORKLOADS: 'yes' });
    expect(isSimError(badSwitch, 'InvalidOption') && badSwitch.message).toBe(
      'CAPSTAN_SIM_WORKLOADS must be on or off',
    );
    const badNumber = refusal({ CAPSTAN_SIM_HEARTBEAT_SECONDS: 'soon' });
    expect(isSimError(badNumber, 'InvalidOption') && badNumber.message).toContain(
      'CAPSTAN_SIM_HEARTBEAT_SECONDS',
    );
    expect(isSimError(refusal({ CAPSTAN_SIM_BIND_ADDRESS: 'localhost' }), 'InvalidOption')).toBe(true);
    expect(() => parsePortRange('30000-20000')).toThrow('port range');
    expect(() => parsePortRange('1-70000')).toThrow('port range');
    expect(parsePortRange(' 100-200 ')).toEqual({ min: 100, max: 200 });
  });

  it('takes --sim-* flags off the command line as CAPSTAN_SIM_* settings', () => {
    const { env, rest } = extractSimFlags(
      [
        '--nats-url',
        'nats://x:4222',
        '--sim-etcd-url=http://e:2379',
        '--sim-state-dir',
        '/tmp/s',
        '--log-level=debug',
      ],
      { KEEP: '1' },
    );
    expect(rest).toEqual(['--nats-url', 'nats://x:4222', '--log-level=debug']);
    expect(env).toEqual({
      KEEP: '1',
      CAPSTAN_SIM_ETCD_URL: 'http://e:2379',
      CAPSTAN_SIM_STATE_DIR: '/tmp/s',
    });
    expect(() => extractSimFlags(['--sim-etcd-url'])).toThrow('needs a value');
  });
});
