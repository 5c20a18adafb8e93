/** The shapes `describe cluster` reads: any Cluster API object, by the v1beta2 field names. */
export interface Condition {
  type: string;
  status: 'True' | 'False' | 'Unknown';
  reason?: string;
  message?: string;
  lastTransitionTime?: string;
}

export interface DescribedObject {
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string>; ownerReferences?: { kind: string; name: string; uid?: string; controller?: boolean }[]; creationTimestamp?: string; deletionTimestamp?: string; uid?: string };
  spec?: { replicas?: number; [field: string]: unknown };
  status?: {
    conditions?: Condition[];
    replicas?: number;
    readyReplicas?: number;
    availableReplicas?: number;
    upToDateReplicas?: number;
    controlPlane?: ReplicaCounters;
    workers?: ReplicaCounters;
    [field: string]: unknown;
  };
}

export interface ReplicaCounters {
  desiredReplicas?: number;
  replicas?: number;
  readyReplicas?: number;
  availableReplicas?: number;
  upToDateReplicas?: number;
}

export interface ClusterObjects {
  cluster: DescribedObject;
  infrastructure?: DescribedObject;
  controlPlane?: DescribedObject;
  machineDeployments: DescribedObject[];
  machineSets: DescribedObject[];
  machines: DescribedObject[];
}
