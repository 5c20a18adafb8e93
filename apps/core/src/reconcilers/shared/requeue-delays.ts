/** How long to wait before looking again for a referenced object that does not exist (upstream externalReadyWait is 30 s). */
export const MISSING_REFERENCE_REQUEUE_MS = 10_000;

/**
 * How often deletion of provider objects is checked (a cache read): not every provider announces it, and changes
 * of provider objects do not wake the core unless it watches external providers.
 */
export const DELETION_POLL_MS = 2_000;

/** Descendant changes are collected this long before their owner is reconciled once for all of them. */
export const DESCENDANT_BATCH_MS = 250;
