// Pieces of markup the pages share, as lit-html templates: conditions, ages, key/value lists.
import { html, nothing } from './vendor/lit-html/lit-html.js';

export const $ = (id) => document.getElementById(id);

/** A duration in ms as people read it: 850ms, 42s, 3m 10s, 2h 5m, 3d 4h. */
export function duration(ms) {
  if (!Number.isFinite(ms)) return '';
  if (ms < 1000) return `${Math.max(0, Math.round(ms))}ms`;
  const s = Math.round(ms / 1000);
  if (s < 60) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 60) return s % 60 ? `${m}m ${s % 60}s` : `${m}m`;
  const h = Math.floor(m / 60);
  if (h < 24) return m % 60 ? `${h}h ${m % 60}m` : `${h}h`;
  const d = Math.floor(h / 24);
  return h % 24 ? `${d}d ${h % 24}h` : `${d}d`;
}

/** How long ago an RFC 3339 time was (as kubectl's AGE), or '' without one. */
export function age(time) {
  if (!time) return '';
  const at = Date.parse(time);
  return Number.isNaN(at) ? '' : duration(Date.now() - at);
}

/** `True (Reason)`, or '' without a condition. */
export const conditionText = (condition) =>
  condition ? `${condition.status}${condition.reason ? ` (${condition.reason})` : ''}` : '';

/** A table cell for a condition, coloured by its status, its message on hover. */
/**
 * A table cell for a condition, coloured by its status, its message (or its text, when cut short) on hover. A condition
 * whose True means work under way (`negative`: RollingOut, Remediating, Updating) is amber when True and plain when
 * False, not green and red.
 */
export function conditionCell(condition, { negative = false } = {}) {
  const status = condition?.status ?? '';
  const colour = negative ? (status === 'True' ? 'Busy' : '') : status;
  const text = conditionText(condition);
  return html`<td class=${colour} title=${condition?.message || text}>${text}</td>`;
}

/** Conditions with their reasons, messages and ages (`since` the last transition). */
export function conditionsTable(conditions, id) {
  if (!conditions?.length) return html`<p class="empty">No conditions reported.</p>`;
  return html`<table class="conditions" id=${id ?? nothing}>
    <thead>
      <tr>
        <th>Type</th>
        <th>Status</th>
        <th>Reason</th>
        <th>Since</th>
        <th>Message</th>
      </tr>
    </thead>
    <tbody>
      ${conditions.map(
        (c) =>
          html`<tr data-condition=${c.type}>
            <td>${c.type}</td>
            <td class=${c.status}>${c.status}</td>
            <td>${c.reason ?? ''}</td>
            <td>${age(c.lastTransitionTime)}</td>
            <td class="message">${c.message ?? ''}</td>
          </tr>`,
      )}
    </tbody>
  </table>`;
}

/** A definition list of the set fields of `fields` ([label, value] pairs). */
export function facts(fields) {
  const shown = fields.filter(([, value]) => value !== undefined && value !== null && value !== '');
  if (shown.length === 0) return nothing;
  return html`<dl class="facts">
    ${shown.map(
      ([label, value]) =>
        html`<dt>${label}</dt>
          <dd>${value}</dd>`,
    )}
  </dl>`;
}

/** A `{kind, name}` reference as `Kind name`. */
export const ref = (object) => (object ? `${object.kind} ${object.name}` : undefined);

/** A notice (`role=status`) and an error (`role=alert`) line. */
export const notices = (notice, error, ids = {}) =>
  html`<p id=${ids.notice ?? nothing} class="notice" role="status">${notice ?? ''}</p>
    <p id=${ids.error ?? nothing} role="alert">${error ?? ''}</p>`;
