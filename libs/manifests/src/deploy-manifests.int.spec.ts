import { AuthorizationV1Api, RbacAuthorizationV1Api, type V1ResourceAttributes } from '@kubernetes/client-node';
import { eventually, testKubeConfig } from '@capstan/testing';
import { ManifestApplier } from './apply.js';
import { applyOrder, deployDir, loadKustomization, loadManifestFile } from './manifests.js';

const NS = 'capstan-system';
const SERVICES = ['core', 'cluster-provider', 'machine-provider', 'bootstrap-provider', 'control-plane-provider'] as const;
/** The fleet dashboard: a service without controllers, Leases or Events; it acts for users by impersonating them. */
const DASHBOARD = 'dashboard';
type Service = (typeof SERVICES)[number] | typeof DASHBOARD;

describe('deploy/ manifests', () => {
  const kc = testKubeConfig();
  const applier = new ManifestApplier(kc);
  const manifests = applyOrder(loadKustomization(deployDir()));

  beforeAll(async () => {
    // Server-side dry runs of namespaced objects need their namespace to exist.
    for (const m of loadManifestFile(`${deployDir()}/namespace.yaml`)) await applier.apply(m, { fieldManager: 'capstan-test' });
  });

  it('hold a Deployment, ServiceAccount and RBAC for every service and the dashboard, NATS and the CRDs', () => {
    const names = (kind: string) => manifests.filter((m) => m.kind === kind).map((m) => m.metadata.name);
    for (const service of [...SERVICES, DASHBOARD]) {
      expect(names('Deployment')).toContain(`capstan-${service}`);
      expect(names('ServiceAccount')).toContain(`capstan-${service}`);
      expect(names('ClusterRole')).toContain(`capstan-${service}`);
    }
    expect(names('StatefulSet')).toContain('capstan-nats');
    expect(names('ValidatingWebhookConfiguration')).toEqual(['capstan-core-validating']);
    // The node agent's report-only writes (deploy/admission): a policy and the binding that makes it deny.
    expect(names('ValidatingAdmissionPolicy')).toEqual(['capstan-machine-plan-agent-restriction']);
    expect(manifests.find((m) => m.kind === 'ValidatingAdmissionPolicyBinding')).toMatchObject({
      spec: { policyName: 'capstan-machine-plan-agent-restriction', validationActions: ['Deny'] },
    });
    expect(names('CustomResourceDefinition').sort()).toEqual([
      'clusterclasses.cluster.x-k8s.io',
      'clusterresourcesetbindings.addons.cluster.x-k8s.io',
      'clusterresourcesets.addons.cluster.x-k8s.io',
      'clusters.cluster.x-k8s.io',
      'etcdsnapshots.controlplane.capstan.dev',
      'extensionconfigs.runtime.cluster.x-k8s.io',
      'ipaddressclaims.ipam.cluster.x-k8s.io',
      'ipaddresses.ipam.cluster.x-k8s.io',
      'k3sconfigs.bootstrap.capstan.dev',
      'k3sconfigtemplates.bootstrap.capstan.dev',
      'k3scontrolplanes.controlplane.capstan.dev',
      'k3scontrolplanetemplates.controlplane.capstan.dev',
      'machinedeployments.cluster.x-k8s.io',
      'machinedrainrules.cluster.x-k8s.io',
      'machinehealthchecks.cluster.x-k8s.io',
      'machinepools.cluster.x-k8s.io',
      'machines.cluster.x-k8s.io',
      'machinesets.cluster.x-k8s.io',
      'simclusters.infrastructure.capstan.dev',
      'simclustertemplates.infrastructure.capstan.dev',
      'simmachines.infrastructure.capstan.dev',
      'simmachinetemplates.infrastructure.capstan.dev',
    ]);
  });

  it('every manifest passes a server-side dry run', async () => {
    const refused: string[] = [];
    for (const manifest of manifests) {
      await applier.apply(manifest, { fieldManager: 'capstan-test', dryRun: true }).catch((error: Error) => {
        // CRD-based kinds cannot be dry-run before their CRD exists; deploy/ holds none of those.
        refused.push(error.message);
      });
    }
    expect(refused).toEqual([]);
  });

  describe('service accounts (SubjectAccessReview)', () => {
    const authorization = kc.makeApiClient(AuthorizationV1Api);
    const can = async (service: Service, attributes: V1ResourceAttributes) => {
      const review = await authorization.createSubjectAccessReview({
        body: {
          spec: {
            user: `system:serviceaccount:${NS}:capstan-${service}`,
            groups: ['system:serviceaccounts', `system:serviceaccounts:${NS}`],
            resourceAttributes: attributes,
          },
        },
      });
      return review.status?.allowed === true;
    };

    beforeAll(async () => {
      for (const m of manifests.filter((m) => /^(ServiceAccount|ClusterRole|ClusterRoleBinding|Role|RoleBinding)$/.test(m.kind))) {
        await applier.apply(m, { fieldManager: 'capstan-test' });
      }
      // The core is bound to an aggregated role: the controller manager fills it from the labelled roles.
      await eventually(() => can('core', { group: 'cluster.x-k8s.io', resource: 'clusters', verb: 'get', namespace: 'default' }), {
        timeoutMs: 30_000,
        message: "the core's aggregated ClusterRole filled in",
      });
    });

    it("grant the core a third-party provider's kinds through a ClusterRole labelled aggregate-to-manager, as upstream does", async () => {
      const role = (name: string, group: string, labels: Record<string, string>) => ({
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'ClusterRole',
        metadata: { name, labels },
        rules: [{ apiGroups: [group], resources: ['*'], verbs: ['get', 'list', 'watch', 'patch', 'update'] }],
      });
      const aggregated = { 'cluster.x-k8s.io/aggregate-to-manager': 'true' };
      await applier.apply(role('test-example-provider', 'infrastructure.example.com', aggregated), { fieldManager: 'capstan-test' });
      await applier.apply(role('test-unlabelled-provider', 'infrastructure.other.example.com', {}), { fieldManager: 'capstan-test' });
      const patchMachines = (group: string) => ({ group, resource: 'examplemachines', verb: 'patch', namespace: 'default' });
      try {
        await eventually(() => can('core', patchMachines('infrastructure.example.com')), {
          timeoutMs: 30_000,
          message: 'the labelled provider role aggregated into the core',
        });
        expect(await can('core', patchMachines('infrastructure.other.example.com'))).toBe(false);
        expect(await can('machine-provider', patchMachines('infrastructure.example.com'))).toBe(false);
      } finally {
        const rbac = kc.makeApiClient(RbacAuthorizationV1Api);
        for (const name of ['test-example-provider', 'test-unlabelled-provider']) await rbac.deleteClusterRole({ name });
      }
    });

    it('let each service do what it needs', async () => {
      const needs: [Service, V1ResourceAttributes][] = [
        ['core', { group: 'cluster.x-k8s.io', resource: 'clusters', subresource: 'status', verb: 'patch', namespace: 'default' }],
        ['core', { group: 'cluster.x-k8s.io', resource: 'machines', subresource: 'status', verb: 'patch', namespace: 'default' }],
        ['core', { group: 'infrastructure.capstan.dev', resource: 'simmachines', verb: 'create', namespace: 'default' }],
        ['core', { group: '', resource: 'secrets', verb: 'get', namespace: 'default' }],
        // ClusterResourceSets: their ConfigMaps read, their status and the bindings written.
        ['core', { group: '', resource: 'configmaps', verb: 'get', namespace: 'default' }],
        ['core', { group: 'addons.cluster.x-k8s.io', resource: 'clusterresourcesets', subresource: 'status', verb: 'patch', namespace: 'default' }],
        ['core', { group: 'addons.cluster.x-k8s.io', resource: 'clusterresourcesetbindings', verb: 'create', namespace: 'default' }],
        // Topologies: classes read and their status written; the objects of a topology created from the templates.
        ['core', { group: 'cluster.x-k8s.io', resource: 'clusterclasses', verb: 'watch', namespace: 'default' }],
        ['core', { group: 'cluster.x-k8s.io', resource: 'clusterclasses', subresource: 'status', verb: 'patch', namespace: 'default' }],
        ['core', { group: 'controlplane.capstan.dev', resource: 'k3scontrolplanes', verb: 'create', namespace: 'default' }],
        ['core', { group: 'bootstrap.capstan.dev', resource: 'k3sconfigtemplates', verb: 'delete', namespace: 'default' }],
        // Runtime SDK: ExtensionConfigs discovered and their caBundle injected; Namespaces read for namespaceSelectors.
        ['core', { group: 'runtime.cluster.x-k8s.io', resource: 'extensionconfigs', verb: 'watch' }],
        ['core', { group: 'runtime.cluster.x-k8s.io', resource: 'extensionconfigs', verb: 'patch' }],
        ['core', { group: 'runtime.cluster.x-k8s.io', resource: 'extensionconfigs', subresource: 'status', verb: 'patch' }],
        ['core', { group: '', resource: 'namespaces', verb: 'watch' }],
        // The conversion webhook: its CA bundle into the CRDs it converts, its certificates in its own namespace.
        ['core', { group: 'apiextensions.k8s.io', resource: 'customresourcedefinitions', name: 'machines.cluster.x-k8s.io', verb: 'patch' }],
        ['core', { group: '', resource: 'secrets', verb: 'create', namespace: NS }],
        ['core', { group: '', resource: 'secrets', name: 'capstan-core-webhook-tls', verb: 'update', namespace: NS }],
        // The validating webhook: its CA bundle into its one ValidatingWebhookConfiguration.
        ['core', { group: 'admissionregistration.k8s.io', resource: 'validatingwebhookconfigurations', name: 'capstan-core-validating', verb: 'get' }],
        ['core', { group: 'admissionregistration.k8s.io', resource: 'validatingwebhookconfigurations', name: 'capstan-core-validating', verb: 'patch' }],
        ['cluster-provider', { group: 'infrastructure.capstan.dev', resource: 'simclusters', subresource: 'status', verb: 'patch', namespace: 'default' }],
        ['machine-provider', { group: 'infrastructure.capstan.dev', resource: 'simmachines', subresource: 'status', verb: 'patch', namespace: 'default' }],
        ['machine-provider', { group: '', resource: 'secrets', verb: 'get', namespace: 'default' }],
        ['bootstrap-provider', { group: '', resource: 'secrets', verb: 'create', namespace: 'default' }],
        ['bootstrap-provider', { group: 'bootstrap.capstan.dev', resource: 'k3sconfigs', subresource: 'status', verb: 'patch', namespace: 'default' }],
        ['bootstrap-provider', { group: '', resource: 'serviceaccounts', verb: 'create', namespace: 'default' }],
        ['bootstrap-provider', { group: '', resource: 'serviceaccounts', subresource: 'token', verb: 'create', namespace: 'default' }],
        ['bootstrap-provider', { group: 'rbac.authorization.k8s.io', resource: 'roles', verb: 'create', namespace: 'default' }],
        ['bootstrap-provider', { group: 'rbac.authorization.k8s.io', resource: 'rolebindings', verb: 'create', namespace: 'default' }],
        // Agent liveness: it watches the node agents' Leases in every cluster's namespace (found running deploy/ in pods).
        ['bootstrap-provider', { group: 'coordination.k8s.io', resource: 'leases', verb: 'list' }],
        ['bootstrap-provider', { group: 'coordination.k8s.io', resource: 'leases', verb: 'watch' }],
        // It creates each node agent's Lease and Role, which grants get/update on that Lease: it must hold all three.
        ['bootstrap-provider', { group: 'coordination.k8s.io', resource: 'leases', verb: 'create', namespace: 'default' }],
        ['bootstrap-provider', { group: 'coordination.k8s.io', resource: 'leases', verb: 'update', namespace: 'default' }],
        ['control-plane-provider', { group: 'cluster.x-k8s.io', resource: 'machines', verb: 'create', namespace: 'default' }],
        ['control-plane-provider', { group: 'cluster.x-k8s.io', resource: 'machines', subresource: 'status', verb: 'patch', namespace: 'default' }],
        ['control-plane-provider', { group: 'controlplane.capstan.dev', resource: 'k3scontrolplanes', subresource: 'status', verb: 'patch', namespace: 'default' }],
        // Its machine template gets an owner reference to the Cluster (found running deploy/ in pods).
        ['control-plane-provider', { group: 'infrastructure.capstan.dev', resource: 'simmachinetemplates', verb: 'patch', namespace: 'default' }],
        // Day-2 (docs/day2.md): snapshot records (scheduled ones created and pruned), their status and finalizer, the
        // operations' plans on the machines' plan Secrets, and the Cluster paused during a restore.
        ['control-plane-provider', { group: 'controlplane.capstan.dev', resource: 'etcdsnapshots', verb: 'create', namespace: 'default' }],
        ['control-plane-provider', { group: 'controlplane.capstan.dev', resource: 'etcdsnapshots', verb: 'delete', namespace: 'default' }],
        ['control-plane-provider', { group: 'controlplane.capstan.dev', resource: 'etcdsnapshots', subresource: 'status', verb: 'patch', namespace: 'default' }],
        ['control-plane-provider', { group: 'controlplane.capstan.dev', resource: 'etcdsnapshots', subresource: 'finalizers', verb: 'update', namespace: 'default' }],
        ['control-plane-provider', { group: '', resource: 'secrets', verb: 'patch', namespace: 'default' }],
        ['control-plane-provider', { group: 'cluster.x-k8s.io', resource: 'clusters', verb: 'patch', namespace: 'default' }],
      ];
      for (const service of SERVICES) {
        needs.push([service, { group: 'coordination.k8s.io', resource: 'leases', verb: 'update', namespace: NS }]);
        needs.push([service, { group: 'events.k8s.io', resource: 'events', verb: 'create', namespace: 'default' }]);
        // Sharded services list the membership Leases and delete their own (and dead members') on leaving.
        if (service !== 'machine-provider' && service !== 'cluster-provider') {
          needs.push([service, { group: 'coordination.k8s.io', resource: 'leases', verb: 'list', namespace: NS }]);
          needs.push([service, { group: 'coordination.k8s.io', resource: 'leases', verb: 'delete', namespace: NS }]);
        }
      }
      const refused = [];
      for (const [service, attributes] of needs) if (!(await can(service, attributes))) refused.push({ service, attributes });
      expect(refused).toEqual([]);
    });

    it('refuse each service what it does not need', async () => {
      const forbidden: [Service, V1ResourceAttributes][] = [];
      for (const service of SERVICES.filter((s) => s !== 'core')) {
        forbidden.push([service, { group: 'cluster.x-k8s.io', resource: 'clusters', subresource: 'status', verb: 'patch', namespace: 'default' }]);
      }
      // Only the core and the control plane (UpToDate on its own Machines) write Machine status.
      for (const service of SERVICES.filter((s) => s !== 'core' && s !== 'control-plane-provider')) {
        forbidden.push([service, { group: 'cluster.x-k8s.io', resource: 'machines', subresource: 'status', verb: 'patch', namespace: 'default' }]);
      }
      for (const service of SERVICES) {
        forbidden.push([service, { group: 'apiextensions.k8s.io', resource: 'customresourcedefinitions', verb: 'delete' }]);
        forbidden.push([service, { group: 'rbac.authorization.k8s.io', resource: 'clusterrolebindings', verb: 'create' }]);
        forbidden.push([service, { group: 'rbac.authorization.k8s.io', resource: 'clusterroles', verb: 'bind' }]);
        // The bootstrap-provider holds Lease create and update everywhere: it makes each node agent's Lease and Role.
        if (service !== 'bootstrap-provider') {
          forbidden.push([service, { group: 'coordination.k8s.io', resource: 'leases', verb: 'update', namespace: 'default' }]);
        }
      }
      forbidden.push(['bootstrap-provider', { group: 'coordination.k8s.io', resource: 'leases', verb: 'delete', namespace: 'default' }]);
      // Only the control plane provider takes, prunes and records etcd snapshots (the core holds every provider kind, as
      // upstream's manager does).
      for (const service of SERVICES.filter((s) => s !== 'control-plane-provider' && s !== 'core')) {
        forbidden.push([service, { group: 'controlplane.capstan.dev', resource: 'etcdsnapshots', verb: 'create', namespace: 'default' }]);
        forbidden.push([service, { group: 'controlplane.capstan.dev', resource: 'etcdsnapshots', subresource: 'status', verb: 'patch', namespace: 'default' }]);
      }
      forbidden.push(['machine-provider', { group: 'bootstrap.capstan.dev', resource: 'k3sconfigs', verb: 'patch', namespace: 'default' }]);
      // The webhook patches only the CRDs it converts, and writes only its own Secret, only in its namespace.
      forbidden.push(['core', { group: 'apiextensions.k8s.io', resource: 'customresourcedefinitions', name: 'k3sconfigs.bootstrap.capstan.dev', verb: 'patch' }]);
      forbidden.push(['core', { group: '', resource: 'secrets', name: 'cluster-kubeconfig', verb: 'update', namespace: NS }]);
      forbidden.push(['core', { group: '', resource: 'secrets', verb: 'create', namespace: 'default' }]);
      // A ClusterClass is its author's: the core writes its status only.
      forbidden.push(['core', { group: 'cluster.x-k8s.io', resource: 'clusterclasses', verb: 'patch', namespace: 'default' }]);
      forbidden.push(['core', { group: 'cluster.x-k8s.io', resource: 'clusterclasses', verb: 'delete', namespace: 'default' }]);
      // A ClusterResourceSet's sources are only read: the core writes no ConfigMap and patches no Secret.
      forbidden.push(['core', { group: '', resource: 'configmaps', verb: 'patch', namespace: 'default' }]);
      forbidden.push(['core', { group: '', resource: 'secrets', verb: 'patch', namespace: 'default' }]);
      // The validating webhook changes only its own configuration: no other, no new one, none deleted, no mutating one.
      forbidden.push(['core', { group: 'admissionregistration.k8s.io', resource: 'validatingwebhookconfigurations', name: 'someone-elses', verb: 'patch' }]);
      forbidden.push(['core', { group: 'admissionregistration.k8s.io', resource: 'validatingwebhookconfigurations', verb: 'create' }]);
      forbidden.push(['core', { group: 'admissionregistration.k8s.io', resource: 'validatingwebhookconfigurations', verb: 'list' }]);
      forbidden.push(['core', { group: 'admissionregistration.k8s.io', resource: 'validatingwebhookconfigurations', name: 'capstan-core-validating', verb: 'delete' }]);
      forbidden.push(['core', { group: 'admissionregistration.k8s.io', resource: 'mutatingwebhookconfigurations', name: 'capstan-core-validating', verb: 'patch' }]);
      // Leader-elected, not sharded (the sim's host-bound providers): they never delete a Lease.
      forbidden.push(['machine-provider', { group: 'coordination.k8s.io', resource: 'leases', verb: 'delete', namespace: NS }]);
      forbidden.push(['cluster-provider', { group: 'coordination.k8s.io', resource: 'leases', verb: 'delete', namespace: NS }]);
      forbidden.push(['machine-provider', { group: '', resource: 'secrets', verb: 'create', namespace: 'default' }]);
      forbidden.push(['cluster-provider', { group: '', resource: 'secrets', verb: 'get', namespace: 'default' }]);
      forbidden.push(['bootstrap-provider', { group: 'cluster.x-k8s.io', resource: 'machines', verb: 'delete', namespace: 'default' }]);
      // It hands out tokens of the agents' own ServiceAccounts, never edits or deletes accounts and roles.
      forbidden.push(['bootstrap-provider', { group: '', resource: 'serviceaccounts', verb: 'delete', namespace: 'default' }]);
      forbidden.push(['bootstrap-provider', { group: 'rbac.authorization.k8s.io', resource: 'roles', verb: 'update', namespace: 'default' }]);
      forbidden.push(['bootstrap-provider', { group: 'rbac.authorization.k8s.io', resource: 'roles', verb: 'escalate', namespace: 'default' }]);
      const allowed = [];
      for (const [service, attributes] of forbidden) if (await can(service, attributes)) allowed.push({ service, attributes });
      expect(allowed).toEqual([]);
    });

    it('let the dashboard read the fleet (Clusters, Machines) and the CRDs, review callers, and impersonate exactly what it sends', async () => {
      const needs: V1ResourceAttributes[] = [
        // FleetView and MachineView: one informer of Clusters and one of Machines in every namespace.
        { group: 'cluster.x-k8s.io', resource: 'clusters', verb: 'list' },
        { group: 'cluster.x-k8s.io', resource: 'clusters', verb: 'watch' },
        { group: 'cluster.x-k8s.io', resource: 'clusters', verb: 'get', namespace: 'default' },
        { group: 'cluster.x-k8s.io', resource: 'machines', verb: 'list' },
        { group: 'cluster.x-k8s.io', resource: 'machines', verb: 'watch' },
        // A Cluster page's reference kinds resolved from their CRDs (ProviderKinds: a get, a list for irregular plurals).
        { group: 'apiextensions.k8s.io', resource: 'customresourcedefinitions', name: 'dockerclusters.infrastructure.cluster.x-k8s.io', verb: 'get' },
        { group: 'apiextensions.k8s.io', resource: 'customresourcedefinitions', verb: 'list' },
        // Sign-in (audience capstan-dashboard) and the kit's /admin; which namespaces a user may list Clusters in.
        { group: 'authentication.k8s.io', resource: 'tokenreviews', verb: 'create' },
        { group: 'authorization.k8s.io', resource: 'subjectaccessreviews', verb: 'create' },
        // Impersonate-User (a ServiceAccount is checked as serviceaccounts in its namespace), -Group, -Uid.
        { group: '', resource: 'users', name: 'alice@example.com', verb: 'impersonate' },
        { group: '', resource: 'serviceaccounts', namespace: 'fleet', name: 'viewer', verb: 'impersonate' },
        { group: '', resource: 'groups', name: 'system:authenticated', verb: 'impersonate' },
        { group: '', resource: 'groups', name: 'fleet-operators', verb: 'impersonate' },
        { group: 'authentication.k8s.io', resource: 'uids', name: '5c6f1a2e-0b7d-4c1e-9a57-1f0e2d3c4b5a', verb: 'impersonate' },
      ];
      const refused = [];
      for (const attributes of needs) if (!(await can(DASHBOARD, attributes))) refused.push(attributes);
      expect(refused).toEqual([]);
    });

    it('refuse the dashboard everything else: what users see and change is read and written as them', async () => {
      const forbidden: V1ResourceAttributes[] = [
        // Its own identity never changes the fleet: pause, scale, upgrade and delete are the user's, impersonated.
        { group: 'cluster.x-k8s.io', resource: 'clusters', verb: 'patch', namespace: 'default' },
        { group: 'cluster.x-k8s.io', resource: 'clusters', verb: 'update', namespace: 'default' },
        { group: 'cluster.x-k8s.io', resource: 'clusters', verb: 'delete', namespace: 'default' },
        { group: 'cluster.x-k8s.io', resource: 'clusters', verb: 'create', namespace: 'default' },
        { group: 'cluster.x-k8s.io', resource: 'clusters', subresource: 'status', verb: 'patch', namespace: 'default' },
        { group: 'cluster.x-k8s.io', resource: 'machinedeployments', verb: 'patch', namespace: 'default' },
        { group: 'cluster.x-k8s.io', resource: 'machines', verb: 'delete', namespace: 'default' },
        { group: 'cluster.x-k8s.io', resource: 'machines', verb: 'patch', namespace: 'default' },
        { group: 'controlplane.capstan.dev', resource: 'k3scontrolplanes', verb: 'patch', namespace: 'default' },
        // Nor reads beyond the Cluster and Machine lists: a Cluster's tree, a Machine's page, the kubeconfig and the
        // Kubernetes Events are read as the user.
        { group: 'cluster.x-k8s.io', resource: 'machinedeployments', verb: 'list', namespace: 'default' },
        { group: 'cluster.x-k8s.io', resource: 'machinesets', verb: 'get', namespace: 'default' },
        { group: 'infrastructure.capstan.dev', resource: 'simclusters', verb: 'get', namespace: 'default' },
        { group: 'infrastructure.capstan.dev', resource: 'simmachines', verb: 'get', namespace: 'default' },
        { group: 'bootstrap.capstan.dev', resource: 'k3sconfigs', verb: 'get', namespace: 'default' },
        { group: 'events.k8s.io', resource: 'events', verb: 'list', namespace: 'default' },
        { group: '', resource: 'secrets', verb: 'get', namespace: 'default' },
        { group: '', resource: 'secrets', verb: 'list' },
        { group: '', resource: 'secrets', verb: 'get', namespace: NS },
        { group: '', resource: 'configmaps', verb: 'get', namespace: 'default' },
        { group: '', resource: 'pods', verb: 'create', namespace: 'default' },
        { group: '', resource: 'pods', subresource: 'exec', verb: 'create', namespace: NS },
        // No tokens of its own making, no RBAC of its own making.
        { group: '', resource: 'serviceaccounts', subresource: 'token', verb: 'create', namespace: 'default' },
        { group: 'rbac.authorization.k8s.io', resource: 'clusterroles', verb: 'escalate' },
        { group: 'rbac.authorization.k8s.io', resource: 'clusterroles', verb: 'bind' },
        { group: 'rbac.authorization.k8s.io', resource: 'clusterrolebindings', verb: 'create' },
        { group: 'rbac.authorization.k8s.io', resource: 'rolebindings', verb: 'create', namespace: 'default' },
        // CRDs are read only, never watched (looked up on demand) nor changed.
        { group: 'apiextensions.k8s.io', resource: 'customresourcedefinitions', verb: 'watch' },
        { group: 'apiextensions.k8s.io', resource: 'customresourcedefinitions', name: 'clusters.cluster.x-k8s.io', verb: 'patch' },
        { group: 'apiextensions.k8s.io', resource: 'customresourcedefinitions', verb: 'delete' },
        // Stateless and without controllers: no Lease (leader election, shards), no Event.
        { group: 'coordination.k8s.io', resource: 'leases', verb: 'create', namespace: NS },
        { group: 'coordination.k8s.io', resource: 'leases', verb: 'update', namespace: NS },
        { group: 'events.k8s.io', resource: 'events', verb: 'create', namespace: 'default' },
        { group: '', resource: 'events', verb: 'create', namespace: 'default' },
        // Extras are never sent (RBAC does not read them): no impersonation of any.
        { group: 'authentication.k8s.io', resource: 'userextras', subresource: 'scopes', verb: 'impersonate' },
        { group: 'authentication.k8s.io', resource: 'userextras', subresource: 'authentication.kubernetes.io/pod-name', verb: 'impersonate' },
      ];
      const allowed = [];
      for (const attributes of forbidden) if (await can(DASHBOARD, attributes)) allowed.push(attributes);
      expect(allowed).toEqual([]);
    });
  });
});
