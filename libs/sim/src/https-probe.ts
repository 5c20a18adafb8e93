import { request } from 'node:https';

export interface ProbeCredentials {
  /** PEM of the CA that signed the serving certificate. */
  caPem: string;
  token?: string;
  cert?: string;
  key?: string;
}

/** The HTTP status of a GET (0 when the connection failed), e.g. `/readyz` of an API server. */
export function httpsStatus(url: string, credentials: ProbeCredentials, timeoutMs = 2000): Promise<number> {
  return new Promise((resolve) => {
    const req = request(
      url,
      {
        ca: credentials.caPem,
        cert: credentials.cert,
        key: credentials.key,
        headers: credentials.token ? { authorization: `Bearer ${credentials.token}` } : {},
        timeout: timeoutMs,
        agent: false,
      },
      (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      },
    );
    req.on('error', () => resolve(0));
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.end();
  });
}

/** Whether the API server at `url` answers `/readyz` for a client that trusts `caPem` and holds `token`. */
export async function apiServerReady(url: string, caPem: string, token: string): Promise<boolean> {
  return (await httpsStatus(`${url}/readyz`, { caPem, token })) === 200;
}
