/**
 * The descriptors of this process (the benches run the server in their own process): how many
 * are open and how many of them are sockets, listed on libuv's pool (/proc/self/fd; Linux only,
 * null elsewhere). The capacity bench divides the sockets a step added by the connections its
 * clients hold, to show one descriptor per connection (docs/operations.md "Descriptors").
 */
import fs from 'node:fs/promises';

export type Descriptors = { open: number; sockets: number };

export async function descriptors(): Promise<Descriptors | null> {
  let names: string[];
  try {
    names = await fs.readdir('/proc/self/fd');
  } catch {
    return null;
  }
  const targets = await Promise.all(
    names.map((n) => fs.readlink(`/proc/self/fd/${n}`).catch(() => '')),
  );
  return { open: names.length, sockets: targets.filter((t) => t.startsWith('socket:')).length };
}
