/**
 * A failover timeline for diagnosis (docs/cluster.md "Faults"): with CLUSTER_TRACE=1 a node writes
 * one timestamped line to stderr at each step of riding out a NATS fault — an append unanswered or
 * refused and asked again, a connection check, a lease renewal sent and its answer, a takeover's
 * steps, the log consumer made again, the read barrier's questions — so that the pause after a
 * NATS server's loss can be split into its parts. Off by default: nothing is formatted then.
 */
const on = process.env.CLUSTER_TRACE === '1';
const who = process.env.CLUSTER_NODE ?? '';

/** Whether tracing is on (callers building costly lines check it first). */
export const tracing = on;

/** One line of the timeline (wall-clock time, this node's name). */
export function trace(line: string): void {
  if (on) process.stderr.write(`${new Date().toISOString()} trace ${who}: ${line}\n`);
}
