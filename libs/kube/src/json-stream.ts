/**
 * Splits a stream of concatenated JSON values (a watch body) into complete values, whatever the whitespace between
 * and inside them: one per line as kube-apiserver writes them, or pretty-printed across lines as other servers and
 * proxies do (upstream's in-memory backend, for one). Feed it text as it arrives; it keeps the incomplete tail.
 */
export class JsonValueSplitter {
  /**
   * `maxValueLength`: longest value kept (characters). An object is at most about 1.5 MiB in etcd; a server that
   * streams one unending value must not grow this process without bound.
   */
  constructor(private readonly maxValueLength = 16 * 1024 * 1024) {}

  private buffer = '';
  /** Where scanning resumes in `buffer`, and the state there (so a long value is not rescanned per chunk). */
  private scanned = 0;
  private depth = 0;
  private inString = false;
  private escaped = false;
  private start = -1;

  /** Adds text; returns the JSON texts of the values it completes, in order. */
  push(text: string): string[] {
    this.buffer += text;
    const values: string[] = [];
    for (let i = this.scanned; i < this.buffer.length; i++) {
      const c = this.buffer[i]!;
      if (this.start < 0) {
        if (c === '{' || c === '[') {
          this.start = i;
          this.depth = 1;
        } else if (c.trim() !== '') {
          throw new SyntaxError(`watch stream: unexpected ${JSON.stringify(c)} between values`);
        }
        continue;
      }
      if (this.inString) {
        if (this.escaped) this.escaped = false;
        else if (c === '\\') this.escaped = true;
        else if (c === '"') this.inString = false;
        continue;
      }
      if (c === '"') this.inString = true;
      else if (c === '{' || c === '[') this.depth++;
      else if (c === '}' || c === ']') {
        this.depth--;
        if (this.depth === 0) {
          values.push(this.buffer.slice(this.start, i + 1));
          this.start = -1;
        }
      }
    }
    // Keep only the unfinished value (or nothing), and resume after what was scanned.
    const keepFrom = this.start < 0 ? this.buffer.length : this.start;
    this.buffer = this.buffer.slice(keepFrom);
    this.scanned = this.buffer.length;
    if (this.start >= 0) this.start = 0;
    if (this.buffer.length > this.maxValueLength) {
      throw new SyntaxError(`watch stream: a value longer than ${this.maxValueLength} characters`);
    }
    return values;
  }
}
