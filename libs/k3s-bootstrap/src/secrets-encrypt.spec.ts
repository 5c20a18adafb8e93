import { encryptionStageIn, secretsEncryptArgs } from './secrets-encrypt.js';

describe('the secrets-encrypt plan commands', () => {
  it('reads the last rotation stage a status printed', () => {
    const output = [
      'secrets-encrypt prepare done',
      'Encryption Status: Enabled',
      'Current Rotation Stage: start',
      '...',
      'Current Rotation Stage: prepare',
      'Server Encryption Hashes: All hashes match',
    ].join('\n');
    expect(encryptionStageIn(output)).toBe('prepare');
    expect(encryptionStageIn('Encryption Status: Disabled')).toBeUndefined();
    expect(encryptionStageIn('Current Rotation Stage: $(rm -rf /)')).toBeUndefined();
  });

  it('passes the command as an argument, never inside the script', () => {
    const args = secretsEncryptArgs('rotate');
    expect(args.at(-1)).toBe('rotate');
    expect(args[1]).toContain('k3s secrets-encrypt "$1"');
    expect(args[1]).toContain('k3s secrets-encrypt status');
  });
});
