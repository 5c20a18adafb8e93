// The hand-off timeline as a picture: for each machine, one line per step (infrastructure-ready, bootstrap-data,
// machine-provisioned, node-ready, control-plane-initialized, plan-applied, or whatever else the server reports), a bar
// from the step before it to this one on an axis all machines share, labelled with how long that step took. A step
// that took much longer than the others is drawn in the warning colour, the slowest of all marked so.
import { html, svg } from './vendor/lit-html/lit-html.js';
import { duration } from './view.js';

const WIDTH = 1000;
/** Left column: the machine and step names. */
const CHART_X = 230;
/** Right margin: each bar's duration label. */
const CHART_END = 920;
const ROW = 20;
const AXIS = 28;

/** The steps by machine (cluster-wide steps, without one, first), each machine's in time order. */
function groupSteps(steps) {
  const groups = new Map();
  for (const step of steps) {
    const time = Date.parse(step.time);
    if (Number.isNaN(time)) continue;
    const key = step.machine ?? '';
    if (!groups.has(key)) groups.set(key, []);
    groups.get(key).push({ ...step, at: time });
  }
  for (const list of groups.values()) list.sort((a, b) => a.at - b.at);
  return [...groups.entries()].sort(([a, x], [b, y]) =>
    a === '' ? -1 : b === '' ? 1 : x[0].at - y[0].at || a.localeCompare(b),
  );
}

/** Round tick spacing for an axis of `span` ms: about six ticks. */
function tickEvery(span) {
  const steps = [1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 21600, 43200, 86400].map(
    (s) => s * 1000,
  );
  return steps.find((s) => span / s <= 6) ?? steps.at(-1);
}

/**
 * The picture of `steps` (`{ machine?, step, time, type }`); `machines` (MachineRow[]) give each machine its creation
 * time, the start of its first step. `unavailable` says why there are no steps, when the server said.
 */
export function timelineView({ steps = [], unavailable } = {}, machines = []) {
  const created = new Map(machines.map((m) => [m.name, m.createdAt && Date.parse(m.createdAt)]));
  const groups = groupSteps(steps);
  if (groups.length === 0)
    return html`<p class="empty">${unavailable ?? 'No hand-off steps reported yet.'}</p>`;

  // Each step's bar: from the step before it on the same machine (the first from the machine's creation, when known).
  const lines = [];
  for (const [machine, list] of groups) {
    const born = created.get(machine);
    let from = Number.isFinite(born) && born <= list[0].at ? born : undefined;
    const bars = list.map((step) => {
      const bar = {
        ...step,
        machine,
        from: from ?? step.at,
        took: from === undefined ? undefined : step.at - from,
      };
      from = step.at;
      return bar;
    });
    lines.push({ machine, bars });
  }
  const all = lines.flatMap((line) => line.bars);
  const start = Math.min(...all.map((bar) => bar.from));
  const end = Math.max(...all.map((bar) => bar.at));
  const span = Math.max(end - start, 1000);
  const x = (time) => CHART_X + ((time - start) / span) * (CHART_END - CHART_X);

  // Slow: at least twice the median step and 5 s; the slowest of all is named.
  const durations = all
    .map((bar) => bar.took)
    .filter((took) => took !== undefined)
    .sort((a, b) => a - b);
  const median = durations.length ? durations[Math.floor(durations.length / 2)] : 0;
  const slowest = durations.at(-1);
  const slow = (took) => took !== undefined && took >= Math.max(2 * median, 5000);

  const every = tickEvery(span);
  const ticks = [];
  for (let t = 0; t <= span; t += every) ticks.push(t);
  const rows = lines.reduce((count, line) => count + 1 + line.bars.length, 0);
  const height = AXIS + rows * ROW + 4;

  let y = AXIS;
  const body = [];
  for (const { machine, bars } of lines) {
    body.push(
      svg`<text class="machine" x="4" y=${y + 14}>${machine || 'Cluster'}</text>
        <line class="lane" x1=${CHART_X} x2=${CHART_END} y1=${y + ROW - 2} y2=${y + ROW - 2}></line>`,
    );
    y += ROW;
    for (const bar of bars) {
      const left = x(bar.from);
      const width = Math.max(x(bar.at) - left, 2);
      const label = bar.took === undefined ? `at +${duration(bar.at - start)}` : duration(bar.took);
      const classes = [
        'step',
        `step-${bar.step.replace(/[^a-z0-9-]/gi, '')}`,
        slow(bar.took) ? 'slow' : '',
        bar.took !== undefined && bar.took === slowest && slow(bar.took) ? 'slowest' : '',
        bar.type === 'Warning' ? 'warning' : '',
      ].join(' ');
      body.push(
        svg`<g class=${classes} data-machine=${machine} data-step=${bar.step} data-took=${bar.took ?? ''}>
          <title>${`${machine || 'Cluster'}: ${bar.step}${
            bar.took === undefined ? '' : ` took ${duration(bar.took)},`
          } at ${new Date(bar.at).toLocaleTimeString()}`}</title>
          <text class="step-name" x="16" y=${y + 13}>${bar.step}</text>
          <rect x=${left} y=${y + 3} width=${width} height=${ROW - 8} rx="2"></rect>
          <text class="took" x=${left + width + 4} y=${y + 13}>${label}${
            bar.took !== undefined && bar.took === slowest && slow(bar.took) ? ' slowest' : ''
          }</text>
        </g>`,
      );
      y += ROW;
    }
  }
  return html`<svg
      class="timeline"
      viewBox=${`0 0 ${WIDTH} ${height}`}
      role="img"
      aria-label="Hand-off timeline: each machine's steps on a shared time axis"
    >
      ${ticks.map(
        (t) =>
          svg`<g class="tick"><line x1=${x(start + t)} x2=${x(start + t)} y1="18" y2=${height}></line>
            <text x=${x(start + t)} y="12">${t === 0 ? '0' : `+${duration(t)}`}</text></g>`,
      )}
      ${body}
    </svg>
    ${unavailable ? html`<p class="empty">${unavailable}</p>` : ''}`;
}
