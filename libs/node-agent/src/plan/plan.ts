// The machine plan: what the management cluster wants a machine to have (rancher/system-agent's NodePlan, in
// Capstan's own words). Written as JSON into the `plan` key of the machine's plan Secret; see docs/node-agent.md.

/** A file the agent writes, creates as a directory, or deletes. Paths are absolute on the machine. */
export interface PlanFile {
  path: string;
  /** Base64 of the content (ignored for directories and deletions). */
  content?: string;
  /** Octal mode, e.g. "0600"; default "0644" for files, "0755" for directories. */
  permissions?: string;
  uid?: number;
  gid?: number;
  directory?: boolean;
  /** "delete" removes the file or (empty) directory. */
  action?: 'delete';
}

/** A command run once per plan, in order; the first that fails stops the plan. */
export interface PlanInstruction {
  name: string;
  command: string;
  args?: string[];
  /** `NAME=value` entries added to the agent's environment. */
  env?: string[];
  /** Absolute path on the machine; default the agent's work directory for the plan. */
  workingDirectory?: string;
  /** Report the combined output in `applied-output` (capped). */
  saveOutput?: boolean;
  /** Seconds before the command is killed; default 600. */
  timeoutSeconds?: number;
}

/** A command run every `periodSeconds` while the plan stands; failures back off. */
export interface PlanPeriodicInstruction {
  name: string;
  command: string;
  args?: string[];
  env?: string[];
  workingDirectory?: string;
  /** Default 600. */
  periodSeconds?: number;
  /** Report stderr too in `applied-periodic-output`. */
  saveStderrOutput?: boolean;
  timeoutSeconds?: number;
}

/** An HTTP(S) GET that says whether what the plan set up is healthy. Paths are on the machine. */
export interface PlanProbe {
  /** Seconds after the plan was applied before the first try; default 0. */
  initialDelaySeconds?: number;
  /** Default 5. */
  timeoutSeconds?: number;
  /** Consecutive successes to become healthy; default 1. */
  successThreshold?: number;
  /** Consecutive failures to become unhealthy; default 3. */
  failureThreshold?: number;
  httpGet: {
    url: string;
    /** Skip server certificate verification. */
    insecure?: boolean;
    caCert?: string;
    clientCert?: string;
    clientKey?: string;
  };
}

export interface MachinePlan {
  files?: PlanFile[];
  instructions?: PlanInstruction[];
  periodicInstructions?: PlanPeriodicInstruction[];
  probes?: Record<string, PlanProbe>;
}

export const PLAN_DEFAULTS = {
  instructionTimeoutSeconds: 600,
  periodSeconds: 600,
  probeTimeoutSeconds: 5,
  successThreshold: 1,
  failureThreshold: 3,
} as const;
