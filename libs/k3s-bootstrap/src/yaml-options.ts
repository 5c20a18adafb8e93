/**
 * cloud-init and K3s read YAML 1.1 (PyYAML, go-yaml): written as 1.1 so strings such as `on`, `no` or
 * `0644` are quoted and stay strings. No line folding, so a long command stays on one line.
 */
export const YAML_OPTIONS = { version: '1.1', lineWidth: 0 } as const;
