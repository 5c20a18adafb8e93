import { SimError } from './errors.js';

/**
 * The identity K3s join tokens get on a sim API server. A K3s agent uses its token only to fetch its kubelet
 * certificate from the server; the sim lets the token itself authenticate. `system:masters` because the sim
 * node acts also as the node lifecycle controller (NotReady taints, deleting its Node) that no
 * kube-controller-manager runs for it.
 */
export const NODE_TOKEN_USER = 'k3s-node';
export const NODE_TOKEN_GROUPS = ['system:nodes', 'system:masters'] as const;

function csvField(value: string): string {
  return /[",\s]/.test(value) ? `"${value.replaceAll('"', '""')}"` : value;
}

/**
 * One line of kube-apiserver's `--token-auth-file` (CSV: token, user, uid, "group1,group2"). A token the file
 * cannot hold (line breaks, empty) is refused; the error never repeats it.
 */
export function tokenAuthFileLine(
  token: string,
  user: string = NODE_TOKEN_USER,
  groups: readonly string[] = NODE_TOKEN_GROUPS,
): string {
  if (token === '' || /[\r\n]/.test(token) || token.trim() !== token) {
    throw new SimError(
      'the join token cannot be used as a bearer token (empty, line breaks or surrounding blanks)',
      'InvalidToken',
    );
  }
  return [token, user, user, groups.join(',')].map(csvField).join(',') + '\n';
}
