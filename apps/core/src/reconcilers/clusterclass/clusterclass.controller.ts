import { RESOURCES, type ClusterClass } from '@capstan/api';
import { defineController } from '@capstan/provider-kit';
import { CLUSTER_CLASS_CONDITIONS, ClusterClassReconciler } from './clusterclass.reconciler.js';

export const CLUSTER_CLASS_CONTROLLER = 'clusterclass';

/** The ClusterClass controller: its classes only (their variables come from their own spec). */
export function clusterClassController(options: { now?: () => Date } = {}) {
  return defineController<ClusterClass>({
    name: CLUSTER_CLASS_CONTROLLER,
    for: RESOURCES.ClusterClass,
    conditions: { owned: CLUSTER_CLASS_CONDITIONS },
    wire: () => ({ reconciler: new ClusterClassReconciler(options.now) }),
  });
}
