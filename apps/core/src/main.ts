// Entry point of the core service; its module is wired in by the issue that builds the service.
export const serviceName = 'core';
