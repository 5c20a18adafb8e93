import {
  BadRequestException,
  Body,
  ConflictException,
  Controller,
  Get,
  HttpCode,
  Inject,
  Post,
  UseGuards,
} from '@nestjs/common';
import type { KubernetesObject } from '@kubernetes/client-node';
import { parseAllDocuments } from 'yaml';
import { ALL_RESOURCES, RESOURCES, type Cluster } from '@capstan/api';
import {
  builtInTemplates,
  generateCluster,
  InvalidClusterError,
  templateVariables,
  UnknownTemplateError,
  type BuiltInTemplate,
} from '@capstan/cluster-templates';
import { CONFIG_MAPS, isNotFound, type ResourceType } from '@capstan/kube';
import type { ReviewedUser } from '@capstan/observability';
import { SERVICE_CONTEXT, type ServiceContext } from '@capstan/provider-kit';
import { DashboardAuthGuard, DashboardUser } from '../auth/dashboard-auth.guard.js';
import { asUser } from './user-clients.js';

/** What the create form sends: `capstan generate cluster`'s flags, by the names of its template variables. */
export interface CreateClusterRequest {
  namespace: string;
  name: string;
  /** `--flavor`: absent for the plain template, `topology` for the ClusterClass one. */
  flavor?: string;
  kubernetesVersion: string;
  controlPlaneMachineCount: number;
  workerMachineCount: number;
  /**
   * Upgrades and reconfigurations in place (machine plans) rather than by replacing machines: the topology flavor's
   * `in-place-worker` class and `inPlaceControlPlane` variable. The plain template has no such choice.
   */
  inPlace?: boolean;
}

/** The topology template's variables that choose in-place rollouts (libs/cluster-templates/templates). */
const IN_PLACE_VARIABLES = {
  WORKER_MACHINE_CLASS: 'in-place-worker',
  IN_PLACE_CONTROL_PLANE: 'true',
} as const;
const TOPOLOGY_FLAVOR = 'topology';

/** The kinds a built-in template holds, by `apiVersion` and kind: Capstan's and Cluster API's, and ConfigMaps. */
function resourceOfDocument(apiVersion: string, kind: string): ResourceType | undefined {
  const [group, version] = apiVersion.includes('/') ? apiVersion.split('/') : ['', apiVersion];
  if (group === '' && version === 'v1' && kind === CONFIG_MAPS.kind) return CONFIG_MAPS;
  return ALL_RESOURCES.find((r) => r.group === group && r.version === version && r.kind === kind);
}

function requestOf(body: unknown): CreateClusterRequest {
  const fields = (body ?? {}) as Record<string, unknown>;
  const problems: string[] = [];
  const text = (key: string, optional = false) => {
    const value = fields[key];
    if (value === undefined && optional) return undefined;
    if (typeof value !== 'string') problems.push(`${key} must be a string`);
    return typeof value === 'string' ? value : '';
  };
  const count = (key: string) => {
    const value = fields[key];
    if (typeof value !== 'number' || !Number.isInteger(value) || value < 0 || value > 100)
      problems.push(`${key} must be a whole number of machines from 0 to 100`);
    return typeof value === 'number' ? value : 0;
  };
  const inPlace = fields['inPlace'];
  if (inPlace !== undefined && typeof inPlace !== 'boolean') problems.push('inPlace must be true or false');
  const request = {
    inPlace: inPlace === true,
    namespace: text('namespace') ?? '',
    name: text('name') ?? '',
    flavor: text('flavor', true) || undefined,
    kubernetesVersion: text('kubernetesVersion') ?? '',
    controlPlaneMachineCount: count('controlPlaneMachineCount'),
    workerMachineCount: count('workerMachineCount'),
  };
  if (request.inPlace && request.flavor !== TOPOLOGY_FLAVOR)
    problems.push(`in-place upgrades are chosen by the ClusterClass: use the ${TOPOLOGY_FLAVOR} template`);
  if (problems.length > 0) throw new BadRequestException({ message: problems.join('; '), problems });
  return request;
}

/**
 * Creating a cluster from the page: the same built-in templates and the same rules as `capstan generate cluster`
 * (libs/cluster-templates), then every object written as the user, so RBAC decides and the audit log names them. No
 * variable comes from the dashboard's own environment.
 */
@Controller('dashboard/api')
@UseGuards(DashboardAuthGuard)
export class CreateClusterController {
  constructor(@Inject(SERVICE_CONTEXT) private readonly context: ServiceContext) {}

  /** The templates the form offers, with the variables each one takes. */
  @Get('cluster-templates')
  templates(): { templates: (BuiltInTemplate & { variables: string[] })[] } {
    return {
      templates: builtInTemplates().map((template) => {
        const { required, optional } = templateVariables(template);
        return { ...template, variables: [...required, ...optional].map((v) => v.name) };
      }),
    };
  }

  /**
   * Renders the template and applies its objects in its order (server-side apply, not forced: a field another manager
   * owns is a conflict, not taken over). A Cluster of that name already there is refused 409 before anything is
   * written, so the page never rewrites somebody's cluster; objects clusters share (a topology's ClusterClass) are
   * applied as `kubectl apply` would.
   */
  @Post('clusters')
  @HttpCode(201)
  async create(
    @DashboardUser() user: ReviewedUser,
    @Body() body: unknown,
  ): Promise<{ namespace: string; name: string; objects: { kind: string; name: string }[] }> {
    const request = requestOf(body);
    let yaml: string;
    try {
      yaml = generateCluster({
        clusterName: request.name,
        infrastructure: 'sim',
        flavor: request.flavor,
        targetNamespace: request.namespace,
        kubernetesVersion: request.kubernetesVersion,
        controlPlaneMachineCount: request.controlPlaneMachineCount,
        workerMachineCount: request.workerMachineCount,
        env: request.inPlace ? IN_PLACE_VARIABLES : {},
      });
    } catch (error) {
      if (error instanceof InvalidClusterError)
        throw new BadRequestException({ message: error.message, problems: error.problems });
      if (error instanceof UnknownTemplateError) throw new BadRequestException(error.message);
      throw error;
    }
    const documents = parseAllDocuments(yaml).map((doc) => doc.toJS() as KubernetesObject);
    const typed = documents.map((object) => {
      const type = resourceOfDocument(object.apiVersion ?? '', object.kind ?? '');
      // The built-in templates hold only known kinds: anything else is a template bug, not the user's.
      if (!type)
        throw new Error(
          `the built-in template holds ${object.apiVersion} ${object.kind}, which the dashboard cannot create`,
        );
      return { object, type };
    });
    return asUser(this.context.connection, user, async (client) => {
      const clusters = client.resource<Cluster>(RESOURCES.Cluster);
      const existing = await clusters
        .get({ namespace: request.namespace, name: request.name })
        .catch((error: unknown) => {
          if (isNotFound(error)) return undefined;
          throw error;
        });
      if (existing)
        throw new ConflictException(`Cluster ${request.namespace}/${request.name} already exists`);
      for (const { object, type } of typed) await client.resource(type).apply(object, { force: false });
      return {
        namespace: request.namespace,
        name: request.name,
        objects: documents.map((object) => ({ kind: object.kind!, name: object.metadata!.name! })),
      };
    });
  }
}
