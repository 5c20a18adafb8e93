import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { repoRoot } from '../repo.js';
import { dockerfileSteps, historyKeyword } from './dockerfile-steps.js';

const dockerfile = (path: string) => readFileSync(join(repoRoot(), path), 'utf8');

describe('the Dockerfile steps an image history records', () => {
  it("are the target stage's instructions after those of the stage it is FROM, without FROM or global ARGs", () => {
    const service = dockerfileSteps(dockerfile('Dockerfile'), 'service');
    const machineProvider = dockerfileSteps(dockerfile('Dockerfile'), 'machine-provider');
    expect(service[0]).toBe('ADD node_modules.tar /');
    expect(service.at(-1)).toMatch(/^ENTRYPOINT /);
    expect(service.some((step) => /^(FROM|ARG BASE)/.test(step))).toBe(false);
    expect(machineProvider.slice(0, service.length)).toEqual(service);
    expect(machineProvider.slice(service.length)).toEqual([
      'ENV XDG_CACHE_HOME=/opt/capstan-cache',
      'ADD go-cache/etcd.tar /',
      'ADD go-cache/kube-scheduler.tar /',
      'ADD go-cache/kube-controller-manager.tar /',
      'ADD go-cache/kube-apiserver.tar /',
    ]);
  });

  it('join continued lines into one instruction', () => {
    const base = dockerfileSteps(dockerfile('deploy/images/base.Dockerfile'));
    expect(base[0]).toBe('ADD rootfs.tar /');
    expect(base.filter((step) => step.startsWith('LABEL'))).toEqual([
      expect.stringMatching(/^LABEL dev\.capstan\.base\.node-version=\S+ dev\.capstan\.base\.node-stripped=/),
    ]);
  });

  it('match history entries by keyword', () => {
    expect(historyKeyword('/bin/sh -c #(nop) ADD file:92f2 in / ')).toBe('ADD');
    expect(historyKeyword('/bin/sh -c #(nop)  ENV APP=core')).toBe('ENV');
    expect(historyKeyword('/bin/sh -c apt-get update')).toBe('RUN');
  });
});
