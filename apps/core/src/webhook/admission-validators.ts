import { CLUSTER_API_GROUP, validateClusterClass, type Cluster, type ClusterClass } from '@capstan/api';
import type { KubeClient } from '@capstan/kube';
import type { ProviderKinds } from '@capstan/provider-kit';
import type { AdmissionValidators } from './admission-review.js';
import { ClusterAdmission } from './cluster-admission.js';
import { ClusterClassAdmission } from './cluster-class-admission.js';

// The kinds the core's validating webhook reviews and the rules for each:
// - ClusterClass CREATE and UPDATE: the rules on the class alone (libs/api's validateClusterClass); an UPDATE also
//   may not take away what the Clusters using the class use; DELETE is refused while a Cluster uses the class.
// - Cluster CREATE and UPDATE: the topology against its class and the Cluster's objects (cluster-admission.ts).

export function admissionValidators(client: KubeClient, kinds: ProviderKinds): AdmissionValidators {
  const clusters = new ClusterAdmission(client, kinds);
  const classes = new ClusterClassAdmission(client);
  return {
    [`${CLUSTER_API_GROUP}/ClusterClass`]: async ({ operation, object, oldObject }) => {
      if (operation === 'DELETE') return classes.reviewDelete(oldObject as unknown as ClusterClass);
      const issues = validateClusterClass(object);
      // The class is read as valid below: its own problems are reported first, alone.
      if (operation === 'UPDATE' && issues.length === 0)
        issues.push(
          ...(await classes.reviewUpdate(
            object as unknown as ClusterClass,
            oldObject as unknown as ClusterClass,
          )),
        );
      return { issues, warnings: [] };
    },
    [`${CLUSTER_API_GROUP}/Cluster`]: async ({ operation, object, oldObject }) =>
      operation === 'DELETE'
        ? { issues: [], warnings: [] }
        : clusters.review(object as unknown as Cluster, oldObject as unknown as Cluster | undefined),
  };
}
