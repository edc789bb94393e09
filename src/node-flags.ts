/**
 * The flags Node is given for a server process, however it is started: `npm start`
 * (package.json), the container (Dockerfile), the systemd unit (deploy/confab.service) and a
 * cluster node started by its supervisor or by `npm run cluster` (src/cluster/supervise.ts,
 * src/cluster/local.ts). test/deploy/young-generation.test.ts holds them all to this list.
 *
 * --min-semi-space-size=16: V8 shrinks an idle process's young generation (down to 1 MB), and a
 * burst of requests after a quiet spell then meets a scavenge every few dozen requests instead of
 * every few hundred (docs/operations.md "Memory").
 */
export const SERVER_NODE_FLAGS: readonly string[] = ['--min-semi-space-size=16'];
