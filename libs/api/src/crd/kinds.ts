import { customResourceOf, type SchemaClass } from '../schema/metadata.js';
import { ClusterClassSchema } from '../types/cluster-class.js';
import { ClusterResourceSetBindingSchema } from '../types/cluster-resource-set-binding.js';
import { ClusterResourceSetSchema } from '../types/cluster-resource-set.js';
import { ClusterSchema } from '../types/cluster.js';
import { ExtensionConfigSchema } from '../types/extension-config.js';
import { IPAddressClaimSchema } from '../types/ip-address-claim.js';
import { IPAddressSchema } from '../types/ip-address.js';
import { K3sConfigTemplateSchema } from '../types/k3s-config-template.js';
import { K3sConfigSchema } from '../types/k3s-config.js';
import { EtcdSnapshotSchema } from '../types/etcd-snapshot.js';
import { K3sControlPlaneTemplateSchema } from '../types/k3s-control-plane-template.js';
import { K3sControlPlaneSchema } from '../types/k3s-control-plane.js';
import { MachineDeploymentSchema } from '../types/machine-deployment.js';
import { MachineDrainRuleSchema } from '../types/machine-drain-rule.js';
import { MachineHealthCheckSchema } from '../types/machine-health-check.js';
import { MachinePoolSchema } from '../types/machine-pool.js';
import { MachineSetSchema } from '../types/machine-set.js';
import { MachineSchema } from '../types/machine.js';
import { SimClusterTemplateSchema } from '../types/sim-cluster-template.js';
import { SimClusterSchema } from '../types/sim-cluster.js';
import { SimMachineTemplateSchema } from '../types/sim-machine-template.js';
import { SimMachineSchema } from '../types/sim-machine.js';

/** Every root class Capstan turns into a CRD, in a stable order. */
export const CUSTOM_RESOURCE_CLASSES: readonly SchemaClass[] = [
  ClusterSchema,
  MachineSchema,
  MachineSetSchema,
  MachineDeploymentSchema,
  MachineHealthCheckSchema,
  MachinePoolSchema,
  MachineDrainRuleSchema,
  ClusterClassSchema,
  ClusterResourceSetSchema,
  ClusterResourceSetBindingSchema,
  IPAddressClaimSchema,
  IPAddressSchema,
  ExtensionConfigSchema,
  SimClusterSchema,
  SimClusterTemplateSchema,
  SimMachineSchema,
  SimMachineTemplateSchema,
  K3sConfigSchema,
  K3sConfigTemplateSchema,
  K3sControlPlaneSchema,
  K3sControlPlaneTemplateSchema,
  EtcdSnapshotSchema,
];

/** The root class of a kind Capstan serves, by `apiVersion` and `kind`. */
export function schemaClassFor(apiVersion: string, kind: string): SchemaClass | undefined {
  return CUSTOM_RESOURCE_CLASSES.find((cls) => {
    const resource = customResourceOf(cls)?.resource;
    return resource?.apiVersion === apiVersion && resource.kind === kind;
  });
}
