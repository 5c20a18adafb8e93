import { X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';

const PEM_CERTIFICATE = /-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g;

/**
 * The certificates a kube-apiserver started with `--cert-dir` generated for itself (`apiserver.crt`: its serving
 * certificate and the CA that signed it), or undefined while that file is missing or not yet whole. The API server
 * creates the file before it writes it: a reader in between gets an empty file, and a kubeconfig made from that
 * trusts nothing (a controller manager then failed with "certificate signed by unknown authority").
 */
export function readSelfSignedServingCa(certPath: string): string | undefined {
  let text: string;
  try {
    text = readFileSync(certPath, 'utf8');
  } catch {
    return undefined;
  }
  const blocks = text.match(PEM_CERTIFICATE) ?? [];
  if (blocks.length === 0) return undefined;
  try {
    for (const block of blocks) new X509Certificate(block);
  } catch {
    return undefined;
  }
  return text;
}
