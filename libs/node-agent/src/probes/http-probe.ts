import { readFile } from 'node:fs/promises';
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { HostRoot } from '../apply/host-root.js';
import { PLAN_DEFAULTS, type PlanProbe } from '../plan/plan.js';

/** One try of an HTTP(S) GET probe: healthy on a 2xx/3xx answer within the timeout. */
export async function probeOnce(root: HostRoot, probe: PlanProbe): Promise<boolean> {
  const { url, insecure, caCert, clientCert, clientKey } = probe.httpGet;
  const target = new URL(url);
  const timeoutMs = (probe.timeoutSeconds ?? PLAN_DEFAULTS.probeTimeoutSeconds) * 1000;
  let tls: { ca?: Buffer; cert?: Buffer; key?: Buffer } = {};
  if (target.protocol === 'https:') {
    try {
      tls = {
        ...(caCert && { ca: await readFile(root.resolve(caCert)) }),
        ...(clientCert && { cert: await readFile(root.resolve(clientCert)) }),
        ...(clientKey && { key: await readFile(root.resolve(clientKey)) }),
      };
    } catch {
      return false; // the files the plan promised are not there (yet): not healthy
    }
  }
  const request = target.protocol === 'https:' ? httpsRequest : httpRequest;
  return new Promise((resolve) => {
    const req = request(
      target,
      {
        method: 'GET',
        timeout: timeoutMs,
        signal: AbortSignal.timeout(timeoutMs),
        ...(target.protocol === 'https:' && { ...tls, rejectUnauthorized: !insecure }),
      },
      (res) => {
        res.resume();
        resolve((res.statusCode ?? 0) >= 200 && (res.statusCode ?? 0) < 400);
      },
    );
    req.on('timeout', () => req.destroy());
    req.on('error', () => resolve(false));
    req.end();
  });
}
