/**
 * A cluster test file's set-up on its own, for test/cluster/harness-ends.test.ts:
 * `upForTest(NAME)` with supervised nodes (as the fault tests), then it runs until it is ended.
 * Prints "up" once its cluster serves. `node cluster-up-child.js NAME`.
 */
import { upForTest } from './cluster-run.js';

await upForTest(process.argv[2] ?? 'cluster-up-child', {}, { supervise: true });
console.log('up');
setInterval(() => undefined, 60_000);
