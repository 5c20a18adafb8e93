// Entry point of the cluster-provider service; its module is wired in by the issue that builds the service.
export const serviceName = 'cluster-provider';
