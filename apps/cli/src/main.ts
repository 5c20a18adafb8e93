// Entry point of the cli service; its module is wired in by the issue that builds the service.
export const serviceName = 'cli';
