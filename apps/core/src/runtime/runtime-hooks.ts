import type { Cluster, ClusterClassVariable } from '@capstan/api';

// The Runtime SDK hook catalogue (upstream api/runtime/hooks/v1alpha1 and api/runtime/catalog): the hooks' names,
// the one API group and version they are served under, where a handler answers, which hooks may block, and the
// request and response bodies as upstream's JSON has them.

export const RUNTIME_HOOKS_GROUP = 'hooks.runtime.cluster.x-k8s.io';
export const RUNTIME_HOOKS_VERSION = 'v1alpha1';
export const RUNTIME_HOOKS_API_VERSION = `${RUNTIME_HOOKS_GROUP}/${RUNTIME_HOOKS_VERSION}`;

/** A handler's timeout when its discovery does not give one (upstream DefaultHandlersTimeoutSeconds). */
export const DEFAULT_HANDLER_TIMEOUT_SECONDS = 10;
/** The longest timeout a handler may ask for at discovery. */
export const MAX_HANDLER_TIMEOUT_SECONDS = 30;

/**
 * The hooks Capstan calls (typed below), with whether each may block: its response carries `retryAfterSeconds`, and
 * a non-zero value holds the operation back that long. AfterClusterUpgrade blocks since upstream v1.12.
 */
const CALLED_HOOKS = {
  BeforeClusterCreate: { blocking: true },
  AfterControlPlaneInitialized: { blocking: false },
  BeforeClusterUpgrade: { blocking: true },
  BeforeControlPlaneUpgrade: { blocking: true },
  AfterControlPlaneUpgrade: { blocking: true },
  BeforeWorkersUpgrade: { blocking: true },
  AfterWorkersUpgrade: { blocking: true },
  AfterClusterUpgrade: { blocking: true },
  BeforeClusterDelete: { blocking: true },
  GeneratePatches: { blocking: false },
  ValidateTopology: { blocking: false },
  DiscoverVariables: { blocking: false },
  GenerateUpgradePlan: { blocking: false },
} as const satisfies Record<string, { blocking: boolean }>;

/**
 * Hooks of upstream's catalogue that Capstan does not call (in-place updates go through its own providers): an
 * extension written for upstream serves them too, and its discovery must not fail for that.
 */
const UNCALLED_HOOKS = ['CanUpdateMachine', 'CanUpdateMachineSet', 'UpdateMachine'] as const;

export type HookName = keyof typeof CALLED_HOOKS;
export const HOOK_NAMES = Object.keys(CALLED_HOOKS) as HookName[];

/** Every hook a discovery may register a handler for: upstream's catalogue but Discovery itself. */
export type KnownHookName = HookName | (typeof UNCALLED_HOOKS)[number];
const KNOWN_HOOKS: ReadonlySet<string> = new Set<string>([...HOOK_NAMES, ...UNCALLED_HOOKS]);

export function isKnownHook(name: string): name is KnownHookName {
  return KNOWN_HOOKS.has(name);
}

/** Whether the hook's response carries `retryAfterSeconds` (a non-zero value blocks). */
export function isBlockingHook(hook: HookName): boolean {
  return CALLED_HOOKS[hook].blocking;
}

/**
 * Where a handler answers, relative to the extension's base URL: `/<group>/<version>/<hook>/<handler>`, both
 * lowercased (upstream catalog.GVHToPath); without a handler, the hook's own path (as discovery's).
 */
export function hookPath(hook: string, handlerName?: string): string {
  const base = `/${RUNTIME_HOOKS_GROUP}/${RUNTIME_HOOKS_VERSION}/${hook.toLowerCase()}`;
  return handlerName ? `${base}/${handlerName.toLowerCase()}` : base;
}

/** Where an extension answers discovery: `/hooks.runtime.cluster.x-k8s.io/v1alpha1/discovery`. */
export const DISCOVERY_PATH = hookPath('Discovery');

/** The `kind` of a hook's request and response bodies. */
export const requestKind = (hook: string) => `${hook}Request`;
export const responseKind = (hook: string) => `${hook}Response`;

// ---- Bodies (JSON as upstream marshals them; optional fields are upstream's omitempty ones). ----

export type FailurePolicy = 'Fail' | 'Ignore';
export type ResponseStatus = 'Success' | 'Failure';

/** What every request has: its type and the settings of the extension (merged with the caller's). */
export interface CommonRequest {
  apiVersion?: string;
  kind?: string;
  settings?: Record<string, string>;
}

export interface CommonResponse {
  apiVersion?: string;
  kind?: string;
  status: ResponseStatus;
  message?: string;
}

/** The response of a blocking hook: a non-zero `retryAfterSeconds` asks to be called again after that long. */
export interface CommonRetryResponse extends CommonResponse {
  retryAfterSeconds: number;
}

export type DiscoveryRequest = Omit<CommonRequest, 'settings'>;

export interface DiscoveryResponse extends CommonResponse {
  handlers?: DiscoveredHandler[];
}

/** A handler as an extension reports it at discovery. */
export interface DiscoveredHandler {
  name: string;
  requestHook: { apiVersion: string; hook: string };
  timeoutSeconds?: number;
  failurePolicy?: FailurePolicy;
}

/** One version step of a chained upgrade. */
export interface UpgradeStepInfo {
  version?: string;
}

interface ClusterRequest extends CommonRequest {
  cluster: Cluster;
}

interface UpgradeStepRequest extends ClusterRequest {
  fromKubernetesVersion: string;
  toKubernetesVersion: string;
  controlPlaneUpgrades?: UpgradeStepInfo[];
  workersUpgrades?: UpgradeStepInfo[];
}

interface UpgradeDoneRequest extends ClusterRequest {
  kubernetesVersion: string;
  controlPlaneUpgrades?: UpgradeStepInfo[];
  workersUpgrades?: UpgradeStepInfo[];
}

export type BeforeClusterCreateRequest = ClusterRequest;
export type AfterControlPlaneInitializedRequest = ClusterRequest;
export type BeforeClusterUpgradeRequest = UpgradeStepRequest;
export type BeforeControlPlaneUpgradeRequest = UpgradeStepRequest;
export type AfterControlPlaneUpgradeRequest = UpgradeDoneRequest;
export type BeforeWorkersUpgradeRequest = UpgradeStepRequest;
export type AfterWorkersUpgradeRequest = UpgradeDoneRequest;
export interface AfterClusterUpgradeRequest extends ClusterRequest {
  kubernetesVersion: string;
}
export type BeforeClusterDeleteRequest = ClusterRequest;

/** A variable's value as patches see it. */
export interface HookVariable {
  name: string;
  value: unknown;
}

/** The object that uses a template, and the field that references it. */
export interface HolderReference {
  apiVersion: string;
  kind: string;
  namespace: string;
  name: string;
  fieldPath: string;
}

export interface GeneratePatchesRequestItem {
  /** Pairs the template with its patches in the response. */
  uid: string;
  holderReference: HolderReference;
  object: Record<string, unknown>;
  variables?: HookVariable[];
}

export interface GeneratePatchesRequest extends CommonRequest {
  variables?: HookVariable[];
  items: GeneratePatchesRequestItem[];
}

export type PatchType = 'JSONPatch' | 'JSONMergePatch';

export interface GeneratePatchesResponseItem {
  uid: string;
  patchType: PatchType;
  /** The patch document, base64-encoded (upstream's `[]byte`). */
  patch: string;
}

export interface GeneratePatchesResponse extends CommonResponse {
  items?: GeneratePatchesResponseItem[];
}

export interface ValidateTopologyRequest extends CommonRequest {
  variables?: HookVariable[];
  items: Omit<GeneratePatchesRequestItem, 'uid'>[];
}

export type DiscoverVariablesRequest = CommonRequest;

export interface DiscoverVariablesResponse extends CommonResponse {
  variables?: ClusterClassVariable[];
}

export interface GenerateUpgradePlanRequest extends CommonRequest {
  cluster?: Cluster;
  fromControlPlaneKubernetesVersion?: string;
  fromWorkersKubernetesVersion?: string;
  toKubernetesVersion?: string;
}

export interface GenerateUpgradePlanResponse extends CommonResponse {
  controlPlaneUpgrades?: UpgradeStepInfo[];
  workersUpgrades?: UpgradeStepInfo[];
}

/** Each called hook's request body. */
export interface HookRequests {
  BeforeClusterCreate: BeforeClusterCreateRequest;
  AfterControlPlaneInitialized: AfterControlPlaneInitializedRequest;
  BeforeClusterUpgrade: BeforeClusterUpgradeRequest;
  BeforeControlPlaneUpgrade: BeforeControlPlaneUpgradeRequest;
  AfterControlPlaneUpgrade: AfterControlPlaneUpgradeRequest;
  BeforeWorkersUpgrade: BeforeWorkersUpgradeRequest;
  AfterWorkersUpgrade: AfterWorkersUpgradeRequest;
  AfterClusterUpgrade: AfterClusterUpgradeRequest;
  BeforeClusterDelete: BeforeClusterDeleteRequest;
  GeneratePatches: GeneratePatchesRequest;
  ValidateTopology: ValidateTopologyRequest;
  DiscoverVariables: DiscoverVariablesRequest;
  GenerateUpgradePlan: GenerateUpgradePlanRequest;
}

/** Each called hook's response body. */
export interface HookResponses {
  BeforeClusterCreate: CommonRetryResponse;
  AfterControlPlaneInitialized: CommonResponse;
  BeforeClusterUpgrade: CommonRetryResponse;
  BeforeControlPlaneUpgrade: CommonRetryResponse;
  AfterControlPlaneUpgrade: CommonRetryResponse;
  BeforeWorkersUpgrade: CommonRetryResponse;
  AfterWorkersUpgrade: CommonRetryResponse;
  AfterClusterUpgrade: CommonRetryResponse;
  BeforeClusterDelete: CommonRetryResponse;
  GeneratePatches: GeneratePatchesResponse;
  ValidateTopology: CommonResponse;
  DiscoverVariables: DiscoverVariablesResponse;
  GenerateUpgradePlan: GenerateUpgradePlanResponse;
}

/** What a caller passes: the body without its type, which the client sets. */
export type HookRequestBody<H extends HookName> = Omit<HookRequests[H], 'apiVersion' | 'kind'>;
