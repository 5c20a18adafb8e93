/**
 * Sim settings for end-to-end runs: a heartbeat a second, node status every 2 s, boots without random delay (the
 * machine-provider's CAPSTAN_SIM_* variables, docs/sim.md).
 */
export const FAST_SIM_ENV = {
  CAPSTAN_SIM_HEARTBEAT_SECONDS: '1',
  CAPSTAN_SIM_NODE_STATUS_SECONDS: '2',
  CAPSTAN_SIM_PROVISIONING_JITTER: '0',
} as const;
