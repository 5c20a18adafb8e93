import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  encryptionConfigPath,
  encryptionStatusText,
  ensureEncryption,
  prepareStage,
  readEncryption,
  reencryptedStage,
  rotateStage,
  writeEncryption,
} from './secrets-encryption.js';

// The key rotation stages of `k3s secrets-encrypt` on a sim cluster: what each does to the keys, the order K3s
// enforces, and the EncryptionConfiguration the cluster's kube-apiserver reads.
describe('the sim secrets-encryption stages', () => {
  const t0 = new Date('2026-11-28T10:00:00Z');
  const t1 = new Date('2026-11-28T11:00:00Z');

  it('prepares a second key, rotates it first, and re-encryption leaves it alone', () => {
    const start = {
      stage: 'start' as const,
      keys: [{ name: 'aescbckey-2026-11-28T10:00:00Z', secret: 'a' }],
    };
    const prepared = prepareStage(start, t1);
    expect(prepared.stage).toBe('prepare');
    expect(prepared.keys.map((k) => k.name)).toEqual([
      'aescbckey-2026-11-28T10:00:00Z',
      'aescbckey-2026-11-28T11:00:00Z',
    ]);
    const rotated = rotateStage(prepared);
    expect(rotated.keys.map((k) => k.name)).toEqual([
      'aescbckey-2026-11-28T11:00:00Z',
      'aescbckey-2026-11-28T10:00:00Z',
    ]);
    const finished = reencryptedStage(rotated);
    expect(finished).toEqual({ stage: 'reencrypt_finished', keys: [rotated.keys[0]] });
    // A second rotation starts from reencrypt_finished.
    expect(prepareStage(finished, t1).stage).toBe('prepare');
  });

  it('refuses a stage out of order, naming the stage it needs', () => {
    const start = { stage: 'start' as const, keys: [{ name: 'k', secret: 'a' }] };
    expect(() => rotateStage(start)).toThrow(
      'secrets-encrypt rotate needs the rotation stage to be prepare, and it is start',
    );
    expect(() => reencryptedStage(prepareStage(start, t1))).toThrow(
      /needs the rotation stage to be rotate or reencrypt_active/,
    );
    expect(() => prepareStage(rotateStage(prepareStage(start, t1)), t1)).toThrow(
      /start or reencrypt_finished/,
    );
  });

  it('writes the EncryptionConfiguration with the first key encrypting and identity last, and prints no key material', () => {
    const dir = mkdtempSync(join(tmpdir(), 'capstan-encryption-'));
    try {
      expect(readEncryption(dir)).toBeUndefined();
      const state = ensureEncryption(dir, t0);
      expect(ensureEncryption(dir, t1)).toEqual(state);
      writeEncryption(dir, prepareStage(state, t1));
      const config = JSON.parse(readFileSync(encryptionConfigPath(dir), 'utf8')) as {
        resources: { resources: string[]; providers: Record<string, { keys?: { name: string }[] }>[] }[];
      };
      expect(config.resources[0]!.resources).toEqual(['secrets']);
      expect(config.resources[0]!.providers[0]!['aescbc']!.keys!.map((k) => k.name)).toEqual([
        'aescbckey-2026-11-28T10:00:00Z',
        'aescbckey-2026-11-28T11:00:00Z',
      ]);
      expect(config.resources[0]!.providers[1]).toEqual({ identity: {} });
      const status = encryptionStatusText(readEncryption(dir));
      expect(status).toContain('Current Rotation Stage: prepare');
      expect(status).toContain(' *      AES-CBC   aescbckey-2026-11-28T10:00:00Z');
      for (const key of readEncryption(dir)!.keys) expect(status).not.toContain(key.secret);
      expect(encryptionStatusText(undefined)).toBe('Encryption Status: Disabled');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
