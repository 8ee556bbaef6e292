/**
 * The order in which the files of one group start (vitest.config.ts): those that take longest
 * first, so that the run does not end waiting for a long file that started last. Vitest's own
 * order puts a group's projects one after the other by name and, within a project, the files
 * that took longest in the last run on this machine first (the largest files when it has none,
 * as on a fresh clone). This one keeps vitest's order within a project, but starts the projects
 * in the order of `PROJECTS_FIRST`: whole `npm start` stacks, killed and restarted (a minute or
 * more each), before the many short files that fill the workers meanwhile.
 */
import { BaseSequencer, type TestSpecification } from 'vitest/node';

const PROJECTS_FIRST = ['local-stack', 'integration'];

function projectRank(spec: TestSpecification): number {
  const rank = PROJECTS_FIRST.indexOf(spec.project.name);
  return rank === -1 ? PROJECTS_FIRST.length : rank;
}

export class LongestFirstSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    // Array.prototype.sort is stable: vitest's order holds wherever these keys are equal.
    return (await super.sort(files)).sort(
      (a, b) =>
        a.project.config.sequence.groupOrder - b.project.config.sequence.groupOrder ||
        projectRank(a) - projectRank(b),
    );
  }
}
