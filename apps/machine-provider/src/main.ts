// Entry point of the machine-provider service; its module is wired in by the issue that builds the service.
export const serviceName = 'machine-provider';
