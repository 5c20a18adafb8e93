// Entry point of the bootstrap-provider service; its module is wired in by the issue that builds the service.
export const serviceName = 'bootstrap-provider';
