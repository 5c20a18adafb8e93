import { askCanUpdateMachine } from '@capstan/events';
import { type ServiceDefinition } from '@capstan/provider-kit';
import { day2Controller } from './day2/day2.controller.js';
import { etcdSnapshotController } from './day2/etcdsnapshot.controller.js';
import { k3sControlPlaneController } from './k3scontrolplane/k3scontrolplane.controller.js';

export const CONTROL_PLANE_PROVIDER_SERVICE = 'control-plane-provider';
export { K3SCONTROLPLANE_CONTROLLER } from './k3scontrolplane/k3scontrolplane.controller.js';

/**
 * The K3s control plane provider: one controller for K3sControlPlane. It owns the control plane Machines
 * and the cluster certificate and kubeconfig secrets, watches Clusters (infrastructure, endpoint, pause),
 * and publishes `control-plane.initialized`, `.available` and `.scaled`; it consumes no events.
 */
export const controlPlaneProviderService: ServiceDefinition = {
  name: CONTROL_PLANE_PROVIDER_SERVICE,
  setup(context) {
    k3sControlPlaneController({
      askCanUpdate: (request) => askCanUpdateMachine(context.bus.nc, context.topology.root, request),
    }).register(context);
    etcdSnapshotController().register(context);
    day2Controller().register(context);
  },
};
