import type { V1OwnerReference } from '@kubernetes/client-node';
import type { ClusterClass, MachineDeployment, MachineDeploymentClass, Unstructured } from '@capstan/api';

// What the desired state is computed from: the class with every template it names (the blueprint), and the
// objects of the topology as they are now (the current state). Both are read by topology-reads.ts.

export type TemplateObject = Unstructured & {
  apiVersion: string;
  kind: string;
  metadata: {
    name: string;
    namespace?: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
    ownerReferences?: V1OwnerReference[];
    uid?: string;
    resourceVersion?: string;
    deletionTimestamp?: Date;
  };
};

export interface MachineDeploymentBlueprint {
  class: MachineDeploymentClass;
  bootstrapTemplate: TemplateObject;
  infrastructureTemplate: TemplateObject;
}

export interface Blueprint {
  clusterClass: ClusterClass;
  infrastructureClusterTemplate: TemplateObject;
  controlPlaneTemplate: TemplateObject;
  controlPlaneMachineInfrastructureTemplate?: TemplateObject;
  /** By worker class name. */
  machineDeploymentClasses: Map<string, MachineDeploymentBlueprint>;
}

export interface CurrentMachineDeployment {
  object: MachineDeployment;
  bootstrapTemplate?: TemplateObject;
  infrastructureTemplate?: TemplateObject;
  /** Whether some of its Machines do not run its version yet. */
  upgrading: boolean;
}

export interface CurrentState {
  infrastructureCluster?: TemplateObject;
  controlPlane?: TemplateObject;
  controlPlaneMachineInfrastructureTemplate?: TemplateObject;
  /** The topology's MachineDeployments, by topology name. */
  machineDeployments: Map<string, CurrentMachineDeployment>;
}
