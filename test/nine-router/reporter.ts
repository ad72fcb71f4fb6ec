// Says, at the end of a run, how many tests ran against the real gateway and how they ended.
import type { Reporter, TestModule } from 'vitest/node';

export default class RealGatewayReporter implements Reporter {
  onTestRunEnd(modules: ReadonlyArray<TestModule>): void {
    const counts = { passed: 0, failed: 0, skipped: 0, pending: 0 };
    let files = 0;
    for (const module of modules) {
      if (module.project.name !== 'real-gateway') continue;
      files += 1;
      for (const test of module.children.allTests()) counts[test.result().state] += 1;
    }
    if (files === 0) return;
    const skipped = counts.skipped ? `, ${counts.skipped} skipped` : '';
    console.log(
      `\nreal gateway (9router): ${counts.passed} passed, ${counts.failed} failed${skipped} in ${files} files\n`,
    );
  }
}
