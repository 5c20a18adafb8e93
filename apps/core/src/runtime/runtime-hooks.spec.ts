import {
  DISCOVERY_PATH,
  HOOK_NAMES,
  hookPath,
  isBlockingHook,
  isKnownHook,
  requestKind,
  RUNTIME_HOOKS_API_VERSION,
} from './runtime-hooks.js';

describe('the Runtime SDK hook catalogue', () => {
  it('serves every hook under hooks.runtime.cluster.x-k8s.io/v1alpha1', () => {
    expect(RUNTIME_HOOKS_API_VERSION).toBe('hooks.runtime.cluster.x-k8s.io/v1alpha1');
    expect(HOOK_NAMES).toEqual(
      expect.arrayContaining([
        'BeforeClusterCreate',
        'AfterControlPlaneInitialized',
        'BeforeClusterUpgrade',
        'BeforeControlPlaneUpgrade',
        'AfterControlPlaneUpgrade',
        'BeforeWorkersUpgrade',
        'AfterWorkersUpgrade',
        'AfterClusterUpgrade',
        'BeforeClusterDelete',
        'GeneratePatches',
        'ValidateTopology',
        'DiscoverVariables',
      ]),
    );
  });

  it('puts a handler at /<group>/<version>/<hook>/<handler>, both lowercased (upstream GVHToPath)', () => {
    expect(hookPath('BeforeClusterUpgrade', 'My-Handler')).toBe(
      '/hooks.runtime.cluster.x-k8s.io/v1alpha1/beforeclusterupgrade/my-handler',
    );
    expect(hookPath('GeneratePatches')).toBe('/hooks.runtime.cluster.x-k8s.io/v1alpha1/generatepatches');
    expect(DISCOVERY_PATH).toBe('/hooks.runtime.cluster.x-k8s.io/v1alpha1/discovery');
    expect(requestKind('BeforeClusterDelete')).toBe('BeforeClusterDeleteRequest');
  });

  it('says which hooks may block (their answers carry retryAfterSeconds)', () => {
    const blocking = HOOK_NAMES.filter(isBlockingHook).sort();
    expect(blocking).toEqual([
      'AfterClusterUpgrade',
      'AfterControlPlaneUpgrade',
      'AfterWorkersUpgrade',
      'BeforeClusterCreate',
      'BeforeClusterDelete',
      'BeforeClusterUpgrade',
      'BeforeControlPlaneUpgrade',
      'BeforeWorkersUpgrade',
    ]);
  });

  it("knows upstream's other hooks, so their handlers do not fail a discovery, but not Discovery itself", () => {
    expect(isKnownHook('CanUpdateMachine')).toBe(true);
    expect(isKnownHook('GenerateUpgradePlan')).toBe(true);
    expect(isKnownHook('Discovery')).toBe(false);
    expect(isKnownHook('beforeclustercreate')).toBe(false);
  });
});
