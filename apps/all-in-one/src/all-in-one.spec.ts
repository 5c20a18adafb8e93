import { jest } from '@jest/globals';
import { defaultServiceOptions } from '@capstan/provider-kit';
import { allInOneCommandLine, serviceOptionsAt } from './all-in-one.js';

describe('the all-in-one command line', () => {
  it('hosts the five services in start order, the core first', () => {
    const commandLine = allInOneCommandLine(['--namespace', 'team-a'], {});
    expect(commandLine?.definitions.map((d) => d.name)).toEqual([
      'core',
      'cluster-provider',
      'machine-provider',
      'bootstrap-provider',
      'control-plane-provider',
    ]);
    expect(commandLine?.rest).toEqual(['--namespace', 'team-a']);
  });

  it("takes the core's and the sim's own flags off before the shared flags are parsed", () => {
    const commandLine = allInOneCommandLine(
      ['--watch-external-providers', '--sim-heartbeat-seconds', '1', '--webhook-port=9443', '--http-port', '9000'],
      {},
    );
    expect(commandLine?.rest).toEqual(['--http-port', '9000']);
  });

  it('reports a bad core or sim flag and sets exit code 2', () => {
    const write = jest.spyOn(process.stderr, 'write').mockImplementation(() => true);
    try {
      expect(allInOneCommandLine(['--webhook-port', 'soon'], {})).toBeUndefined();
      expect(process.exitCode).toBe(2);
      expect(allInOneCommandLine(['--sim-heartbeat-seconds'], {})).toBeUndefined();
      expect(write).toHaveBeenCalledWith(expect.stringContaining('--sim-heartbeat-seconds needs a value'));
    } finally {
      write.mockRestore();
      process.exitCode = undefined;
    }
  });

  it("gives service i its own port (--http-port + i, or any with 0) and its own Lease, as when deployed alone", () => {
    const options = { ...defaultServiceOptions('all-in-one', {}), httpPort: 8080 };
    expect(serviceOptionsAt(options, 'machine-provider', 2)).toMatchObject({ httpPort: 8082, leaderElectionId: 'capstan-machine-provider' });
    expect(serviceOptionsAt({ ...options, httpPort: 0 }, 'core', 0)).toMatchObject({ httpPort: 0, leaderElectionId: 'capstan-core' });
  });
});
