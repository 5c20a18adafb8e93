/** A Kubernetes MicroTime (RFC 3339 with exactly six fractional digits), as Lease and Event fields need. */
export function microTime(date: Date = new Date()): string {
  return date.toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');
}
