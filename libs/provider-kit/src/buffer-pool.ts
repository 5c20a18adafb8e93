/**
 * The slab small Buffers are cut from in a service process. Node 24 cuts them from 64 KiB slabs, and one small Buffer
 * that lives long keeps its whole slab: every TLS socket keeps its ALPN list in its options, so a process holding a
 * few hundred connections kept 13.5 MiB of slabs for a few bytes each (docs/performance.md). 8 KiB is what Node used
 * before; small allocations stay pooled.
 */
export const SERVICE_BUFFER_POOL_BYTES = 8 * 1024;

/** Sets the process's Buffer slab size for a service: first thing in its main, before connections are made. */
export function useServiceBufferPool(): void {
  Buffer.poolSize = SERVICE_BUFFER_POOL_BYTES;
}
