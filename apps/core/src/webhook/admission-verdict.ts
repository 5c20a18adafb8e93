import type { ValidationIssue } from '@capstan/api';

/**
 * What a validator decided about one write: `issues` refuse it as Invalid (422, each `path: rule`), `forbidden`
 * refuses it as Forbidden (403: the write is well formed but not allowed now, e.g. deleting a class in use), and
 * `warnings` reach the client (kubectl prints them) whether or not the write is allowed.
 */
export interface AdmissionVerdict {
  issues: ValidationIssue[];
  warnings: string[];
  forbidden?: string;
}
