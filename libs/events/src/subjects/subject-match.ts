/**
 * NATS subject matching: `*` matches exactly one token, `>` (only as the last token) one or more.
 * Used to route a delivered message to the handlers whose patterns cover its subject.
 */
export function subjectMatches(pattern: string, subject: string): boolean {
  const patternTokens = pattern.split('.');
  const subjectTokens = subject.split('.');
  for (let i = 0; i < patternTokens.length; i++) {
    const token = patternTokens[i];
    if (token === '>') return i === patternTokens.length - 1 && subjectTokens.length > i;
    if (i >= subjectTokens.length) return false;
    if (token !== '*' && token !== subjectTokens[i]) return false;
  }
  return patternTokens.length === subjectTokens.length;
}

/** True when every subject `inner` matches is also matched by `outer` (e.g. a stream covers a consumer filter). */
export function subjectCovers(outer: string, inner: string): boolean {
  const outerTokens = outer.split('.');
  const innerTokens = inner.split('.');
  for (let i = 0; i < outerTokens.length; i++) {
    const token = outerTokens[i];
    if (token === '>') return innerTokens.length > i;
    if (i >= innerTokens.length) return false;
    const other = innerTokens[i];
    if (other === '>') return false;
    if (token !== '*' && token !== other) return false;
  }
  return outerTokens.length === innerTokens.length;
}

/** Valid NATS subject or filter: non-empty tokens, no whitespace, `>` only last. */
export function isValidSubjectPattern(pattern: string): boolean {
  if (pattern.length === 0 || /\s/.test(pattern)) return false;
  const tokens = pattern.split('.');
  return tokens.every((token, i) => token.length > 0 && (token !== '>' || i === tokens.length - 1));
}
