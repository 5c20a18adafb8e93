import { JsonValueSplitter } from './json-stream.js';

describe('JsonValueSplitter', () => {
  it('splits one value per line, and values pretty-printed across lines, however the chunks fall', () => {
    const events = [
      { type: 'ADDED', object: { metadata: { name: 'a' } } },
      { type: 'MODIFIED', object: { metadata: { name: 'b', annotations: { note: 'a } brace and "quotes" \\ \n' } } } },
      { type: 'BOOKMARK', object: { items: [1, [2, { x: '[' }]] } },
    ];
    const text = `${JSON.stringify(events[0])}\n${JSON.stringify(events[1], null, 2)}\n  ${JSON.stringify(events[2], null, 4)}\n`;
    for (const size of [1, 3, 7, 64, text.length]) {
      const splitter = new JsonValueSplitter();
      const out: unknown[] = [];
      for (let i = 0; i < text.length; i += size) {
        for (const value of splitter.push(text.slice(i, i + size))) out.push(JSON.parse(value));
      }
      expect(out).toEqual(events);
    }
  });

  it('refuses a value that grows past its limit instead of buffering it without bound', () => {
    const splitter = new JsonValueSplitter(100);
    expect(splitter.push(`{"a":"${'x'.repeat(80)}"}`)).toHaveLength(1);
    splitter.push(`{"b":"${'y'.repeat(60)}`);
    expect(() => splitter.push('y'.repeat(60))).toThrow(/a value longer than 100 characters/);
  });

  it('refuses text that is not a JSON value between values', () => {
    expect(() => new JsonValueSplitter().push('{"a":1} oops')).toThrow(/unexpected "o"/);
  });
});
