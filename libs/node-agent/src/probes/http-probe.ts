import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { readBeneath } from '../apply/beneath-root.js';
import type { HostRoot } from '../apply/host-root.js';
import { PLAN_DEFAULTS, type PlanProbe } from '../plan/plan.js';

/** The most a probe's CA bundle, certificate or key file may hold (they are a few KiB). */
const MAX_PROBE_FILE_BYTES = 1024 * 1024;

/**
 * One try of an HTTP(S) GET probe: healthy on a 2xx/3xx answer within the timeout. Its CA, certificate and key are
 * the machine's files, read without following a symlink: on the sim a link could name a host key, which the agent
 * would then present to a URL the plan's owner chose.
 */
export async function probeOnce(root: HostRoot, probe: PlanProbe): Promise<boolean> {
  const { url, insecure, caCert, clientCert, clientKey } = probe.httpGet;
  const target = new URL(url);
  const timeoutMs = (probe.timeoutSeconds ?? PLAN_DEFAULTS.probeTimeoutSeconds) * 1000;
  let tls: { ca?: Buffer; cert?: Buffer; key?: Buffer } = {};
  if (target.protocol === 'https:') {
    try {
      tls = {
        ...(caCert && { ca: readBeneath(root, caCert, MAX_PROBE_FILE_BYTES) }),
        ...(clientCert && { cert: readBeneath(root, clientCert, MAX_PROBE_FILE_BYTES) }),
        ...(clientKey && { key: readBeneath(root, clientKey, MAX_PROBE_FILE_BYTES) }),
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
