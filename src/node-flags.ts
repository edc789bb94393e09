/**
 * The flags Node is given for a server process, however it is started: `npm start`
 * (package.json), the container (Dockerfile), the systemd unit (deploy/confab.service) and a
 * cluster node started by its supervisor or by `npm run cluster` (src/cluster/supervise.ts,
 * src/cluster/local.ts). test/deploy/young-generation.test.ts holds them all to this list.
 *
 * --min-semi-space-size=16: V8 shrinks an idle process's young generation (down to 1 MB), and a
 * burst of requests after a quiet spell then meets a scavenge every few dozen requests instead of
 * every few hundred (docs/operations.md "Memory").
 *
 * --no-allocation-site-pretenuring: V8 otherwise allocates the objects of a site straight into the
 * old generation once a young collection at the young generation's full size (always, with the
 * flag above) finds 85% of that site's objects alive. On the request path such a site makes
 * short-lived objects (the realm actor's envelopes, xstate's snapshots) that die there and keep
 * what they point to alive through the young collections until the next old-generation one:
 * ~1 KB per send of old generation, three quarters of what a send left there after 7f07a86
 * (docs/benchmarks.md "What a send leaves in the old generation").
 */
export const SERVER_NODE_FLAGS: readonly string[] = [
  '--min-semi-space-size=16',
  '--no-allocation-site-pretenuring',
];
