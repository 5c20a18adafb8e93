import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { SimError } from './errors.js';

// K3s's secrets encryption on a sim cluster (docs/day2.md): the EncryptionConfiguration the cluster's kube-apiserver
// reads (`--encryption-provider-config`, K3s's server/cred/encryption-config.json), and the key rotation stages of
// `k3s secrets-encrypt prepare|rotate|reencrypt` (k3s-io/k3s pkg/secretsencrypt): prepare adds a key, rotate makes it
// the one that writes, reencrypt rewrites every Secret with it and drops the old one.

export const ENCRYPTION_STAGES = [
  'start',
  'prepare',
  'rotate',
  'reencrypt_request',
  'reencrypt_active',
  'reencrypt_finished',
] as const;
export type EncryptionStage = (typeof ENCRYPTION_STAGES)[number];

interface EncryptionKey {
  name: string;
  /** 32 random bytes, base64 (AES-256-CBC). */
  secret: string;
}

export interface EncryptionState {
  stage: EncryptionStage;
  /** The first key encrypts; every key decrypts. */
  keys: EncryptionKey[];
}

const CONFIG_FILE = 'encryption-config.json';
const STATE_FILE = 'encryption-state.json';

export const encryptionConfigPath = (clusterDir: string): string => join(clusterDir, 'cred', CONFIG_FILE);
const statePath = (clusterDir: string): string => join(clusterDir, 'cred', STATE_FILE);

/** A new AES-CBC key named as K3s names them (`aescbckey-<RFC 3339 time>`). */
export function newEncryptionKey(now: Date): EncryptionKey {
  return {
    name: `aescbckey-${now.toISOString().replace(/\.\d+Z$/, 'Z')}`,
    secret: randomBytes(32).toString('base64'),
  };
}

/** The cluster's encryption state, or undefined when its Secrets are not encrypted. */
export function readEncryption(clusterDir: string): EncryptionState | undefined {
  if (!existsSync(statePath(clusterDir))) return undefined;
  return JSON.parse(readFileSync(statePath(clusterDir), 'utf8')) as EncryptionState;
}

/** Writes the EncryptionConfiguration for `state` (keys in order, identity last to read what was written before). */
export function writeEncryption(clusterDir: string, state: EncryptionState): void {
  const dir = join(clusterDir, 'cred');
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const config = {
    kind: 'EncryptionConfiguration',
    apiVersion: 'apiserver.config.k8s.io/v1',
    resources: [
      {
        resources: ['secrets'],
        providers: [{ aescbc: { keys: state.keys } }, { identity: {} }],
      },
    ],
  };
  const write = (path: string, content: string) => {
    writeFileSync(`${path}.new`, content, { mode: 0o600 });
    renameSync(`${path}.new`, path);
  };
  write(encryptionConfigPath(clusterDir), JSON.stringify(config, null, 2));
  write(statePath(clusterDir), JSON.stringify(state));
}

/** Turns encryption on for a cluster that has none yet (K3s's `secrets-encryption: true` at start). */
export function ensureEncryption(clusterDir: string, now: Date): EncryptionState {
  const current = readEncryption(clusterDir);
  if (current) return current;
  const state: EncryptionState = { stage: 'start', keys: [newEncryptionKey(now)] };
  writeEncryption(clusterDir, state);
  return state;
}

function requireStage(state: EncryptionState, command: string, allowed: readonly EncryptionStage[]): void {
  if (!allowed.includes(state.stage)) {
    throw new SimError(
      `secrets-encrypt ${command} needs the rotation stage to be ${allowed.join(' or ')}, and it is ${state.stage}`,
      'EncryptionStageInvalid',
    );
  }
}

/** `prepare`: a new key is added, still only for reading. */
export function prepareStage(state: EncryptionState, now: Date): EncryptionState {
  requireStage(state, 'prepare', ['start', 'reencrypt_finished']);
  return { stage: 'prepare', keys: [...state.keys, newEncryptionKey(now)] };
}

/** `rotate`: the newest key moves first, so it encrypts what is written from now on. */
export function rotateStage(state: EncryptionState): EncryptionState {
  requireStage(state, 'rotate', ['prepare']);
  const newest = state.keys[state.keys.length - 1]!;
  return { stage: 'rotate', keys: [newest, ...state.keys.slice(0, -1)] };
}

/** `reencrypt`, once every Secret was written again with the first key: the old keys go. */
export function reencryptedStage(state: EncryptionState): EncryptionState {
  requireStage(state, 'reencrypt', ['rotate', 'reencrypt_active']);
  return { stage: 'reencrypt_finished', keys: [state.keys[0]!] };
}

/** `k3s secrets-encrypt status` as K3s prints it (key names only, never key material). */
export function encryptionStatusText(state: EncryptionState | undefined): string {
  if (!state) return 'Encryption Status: Disabled';
  return [
    'Encryption Status: Enabled',
    `Current Rotation Stage: ${state.stage}`,
    'Server Encryption Hashes: All hashes match',
    '',
    'Active  Key Type  Name',
    '------  --------  ----',
    ...state.keys.map((key, index) => ` ${index === 0 ? '*' : ' '}      AES-CBC   ${key.name}`),
  ].join('\n');
}
