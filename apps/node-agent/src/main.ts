// Entry point of the node-agent service; its module is wired in by the issue that builds the service.
export const serviceName = 'node-agent';
