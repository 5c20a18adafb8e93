import { isSimError } from './errors.js';
import { tokenAuthFileLine } from './token-file.js';

describe('token auth file line', () => {
  it('gives the join token the node identity', () => {
    expect(tokenAuthFileLine('abc123')).toBe('abc123,k3s-node,k3s-node,"system:nodes,system:masters"\n');
  });

  it('quotes what CSV must quote (K3s secure tokens are K10<hash>::<user>:<password>)', () => {
    expect(tokenAuthFileLine('K10ab::server:p"w,x')).toBe(
      '"K10ab::server:p""w,x",k3s-node,k3s-node,"system:nodes,system:masters"\n',
    );
  });

  it('refuses tokens a bearer header cannot carry, without repeating them', () => {
    for (const token of ['', 'two\nlines', ' padded ']) {
      let refused: unknown;
      try {
        tokenAuthFileLine(token);
      } catch (error) {
        refused = error;
      }
      expect(isSimError(refused, 'InvalidToken')).toBe(true);
      if (token) expect((refused as Error).message).not.toContain(token.trim());
    }
  });
});
