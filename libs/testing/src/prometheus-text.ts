// Reading Prometheus text exposition: the sums the benchmarks take of a server's /metrics.

/** Each sample of one metric (all label sets) in Prometheus text: its labels and value. */
function samples(text: string, name: string): { labels: string; value: number }[] {
  const found: { labels: string; value: number }[] = [];
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}{`) && !line.startsWith(`${name} `)) continue;
    const labels = line.startsWith(`${name}{`) ? line.slice(name.length + 1, line.lastIndexOf('}')) : '';
    found.push({ labels, value: Number(line.slice(line.lastIndexOf(' ') + 1)) });
  }
  return found;
}

/** The sum of every sample of one metric (all label sets) in Prometheus text. */
export function sumMetric(text: string, name: string): number {
  return samples(text, name).reduce((total, s) => total + s.value, 0);
}

/** One label's value in a sample's label text; undefined when the sample has no such label. */
function labelValue(labels: string, name: string): string | undefined {
  return new RegExp(`(?:^|,)${name}="((?:[^"\\\\]|\\\\.)*)"`).exec(labels)?.[1];
}

/** The sum of one metric's samples per value of one label (`''` for samples without it). */
export function sumMetricBy(text: string, name: string, label: string): Record<string, number> {
  const totals: Record<string, number> = {};
  for (const s of samples(text, name)) {
    const key = labelValue(s.labels, label) ?? '';
    totals[key] = (totals[key] ?? 0) + s.value;
  }
  return totals;
}

/**
 * apiserver_request_total per `VERB resource[/subresource]` (`GET secrets`, `PATCH machines/status`); a watch counts
 * once, when it starts.
 */
export function apiserverRequestsByResource(text: string): Record<string, number> {
  const totals: Record<string, number> = {};
  for (const s of samples(text, 'apiserver_request_total')) {
    const subresource = labelValue(s.labels, 'subresource');
    const key = `${labelValue(s.labels, 'verb') ?? ''} ${labelValue(s.labels, 'resource') ?? ''}${subresource ? `/${subresource}` : ''}`;
    totals[key] = (totals[key] ?? 0) + s.value;
  }
  return totals;
}
