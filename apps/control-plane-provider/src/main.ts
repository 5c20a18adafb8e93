// Entry point of the control-plane-provider service; its module is wired in by the issue that builds the service.
export const serviceName = 'control-plane-provider';
