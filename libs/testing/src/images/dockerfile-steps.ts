/**
 * The instructions a classic-builder build of `target` records in the image history, oldest first: those of its
 * stage after those of the stage it is FROM (FROM itself, and ARGs before the first FROM, record nothing). Image
 * history names an ADDed file by a hash only (`ADD file:92f2… in /`); matched with these, a layer says which file
 * it came from.
 */
export function dockerfileSteps(dockerfile: string, target?: string): string[] {
  const lines = dockerfile
    .replace(/\\\r?\n/g, ' ')
    .split('\n')
    .map((line) => line.trim().replace(/\s+/g, ' '))
    .filter((line) => line && !line.startsWith('#'));
  const stages: { name?: string; from: string; steps: string[] }[] = [];
  for (const line of lines) {
    const from = /^FROM (\S+)(?: AS (\S+))?/i.exec(line);
    if (from) stages.push({ from: from[1]!, ...(from[2] ? { name: from[2] } : {}), steps: [] });
    else stages.at(-1)?.steps.push(line);
  }
  const steps = (stage: (typeof stages)[number] | undefined): string[] => {
    if (!stage) return [];
    const parent = stages.find((s) => s.name === stage.from && s !== stage);
    return [...steps(parent), ...stage.steps];
  };
  return steps(target ? stages.find((s) => s.name === target) : stages.at(-1));
}

/** The instruction keyword of an image history entry: `/bin/sh -c #(nop) ADD file:… in /` is ADD, a bare command RUN. */
export function historyKeyword(createdBy: string): string {
  return /#\(nop\)\s+([A-Z]+)/.exec(createdBy)?.[1] ?? 'RUN';
}
