import { readFileSync } from 'node:fs';
import { EVENT_CATALOGUE } from './catalogue.js';

describe('docs/events.md', () => {
  const docs = readFileSync(new URL('../../../../docs/events.md', import.meta.url), 'utf8');

  it.each(Object.values(EVENT_CATALOGUE).map((d) => [d.name, d]))(
    'lists %s with its event token',
    (_name, definition) => {
      const row = docs.split('\n').find((line) => line.startsWith(`| \`${definition.name}\``));
      expect(row).toBeDefined();
      expect(row).toContain(`\`${definition.event}\``);
      expect(docs).toContain(`\`dev.capstan.${definition.source}.\` + name`);
    },
  );
});
