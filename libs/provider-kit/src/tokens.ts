/** Nest injection token of the running service's ServiceContext. */
export const SERVICE_CONTEXT = Symbol('capstan:service-context');
