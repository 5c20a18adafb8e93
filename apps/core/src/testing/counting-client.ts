import { HttpMethod, KubeClient, type KubeRequest } from '@capstan/kube';

/** The real client, counting its GETs by path: how tests tell a cached read from a request. */
export class CountingClient extends KubeClient {
  private readonly gets = new Map<string, number>();

  override request<T>(req: KubeRequest): Promise<T> {
    if (req.method === HttpMethod.GET) this.gets.set(req.path, (this.gets.get(req.path) ?? 0) + 1);
    return super.request<T>(req);
  }

  /** GETs of the paths that end with `path` (lists and watches of a resource are not by name). */
  getsOf(path: string): number {
    return [...this.gets].filter(([p]) => p.endsWith(path)).reduce((n, [, c]) => n + c, 0);
  }
}
