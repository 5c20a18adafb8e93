/** The admin API, described for humans and tools at GET /openapi.json. */
export function adminOpenApi(service: string): Record<string, unknown> {
  const bearer = [{ bearer: [] }];
  const clusterParams = [
    { name: 'namespace', in: 'path', required: true, schema: { type: 'string' } },
    { name: 'name', in: 'path', required: true, schema: { type: 'string' } },
  ];
  return {
    openapi: '3.1.0',
    info: { title: `capstan-${service} admin API`, version: '0.1.0' },
    components: {
      securitySchemes: {
        bearer: {
          type: 'http',
          scheme: 'bearer',
          description: 'A Kubernetes token; access is an RBAC rule on the non-resource URL /admin/*.',
        },
      },
    },
    paths: {
      '/healthz': { get: { summary: 'Liveness: the process answers', responses: { '200': { description: 'alive' } } } },
      '/readyz': {
        get: { summary: 'Readiness: caches synced, NATS connected', responses: { '200': { description: 'ready' }, '503': { description: 'not ready (which check fails: /admin/readiness)' } } },
      },
      '/metrics': { get: { summary: 'Prometheus metrics', responses: { '200': { description: 'text exposition format' } } } },
      '/admin/controllers': {
        get: { summary: 'Controllers: queue depth, reconciles, failures, last error; leadership', security: bearer, responses: { '200': { description: 'status' } } },
      },
      '/admin/readiness': {
        get: { summary: 'Each readiness check with its detail', security: bearer, responses: { '200': { description: 'ready, and every check' } } },
      },
      '/admin/shards': {
        get: { summary: 'Sharding: live members, the view this replica published, and which replica each cluster lands on', security: bearer, responses: { '200': { description: 'membership and assignments (sharded: false without --sharding)' } } },
      },
      '/admin/resync': {
        post: { summary: 'Reconcile every object of every controller now', security: bearer, responses: { '201': { description: 'number of keys enqueued' } } },
      },
      '/admin/clusters/{namespace}/{name}/pause': {
        post: { summary: 'Pause a cluster (spec.paused = true)', security: bearer, parameters: clusterParams, responses: { '201': { description: 'paused' }, '403': { description: 'the caller may not patch this Cluster' }, '404': { description: 'no such cluster' } } },
      },
      '/admin/clusters/{namespace}/{name}/resume': {
        post: { summary: 'Resume a paused cluster', security: bearer, parameters: clusterParams, responses: { '201': { description: 'resumed' }, '403': { description: 'the caller may not patch this Cluster' }, '404': { description: 'no such cluster' } } },
      },
    },
  };
}
