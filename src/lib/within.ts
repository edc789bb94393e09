/**
 * Whether `p` settles before `deadline` (a performance.now time): a bounded wait that goes on
 * without it afterwards (a stopping cluster node's NATS steps: src/cluster/node.ts,
 * log-applier.ts). A rejection counts as settled.
 */
export async function within(deadline: number, p: Promise<unknown>): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), Math.max(0, deadline - performance.now()));
  });
  try {
    return await Promise.race([
      p.then(
        () => true,
        () => true,
      ),
      late,
    ]);
  } finally {
    clearTimeout(timer);
  }
}
