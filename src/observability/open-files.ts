/**
 * The process's open-files limit, said once at start: every client connection (a long-poll and an
 * event WebSocket too) holds one descriptor, so the limit bounds the connections one process can
 * hold (docs/operations.md "Descriptors"). Node raises the soft limit to the hard one when it
 * starts; where it could not, the log says so (a process cannot raise its hard limit: systemd's
 * `LimitNOFILE`, `ulimit -Hn` or /etc/security/limits.conf do).
 */
import fs from 'node:fs';

/** What the server itself holds besides connections: database, logs, threads, listening sockets. */
export const DESCRIPTORS_RESERVED = 100;

export type OpenFilesLimit = { soft: number; hard: number };

/** The "Max open files" line of a /proc/<pid>/limits text; null when it is not there. */
export function parseOpenFilesLimit(text: string): OpenFilesLimit | null {
  const line = text.split('\n').find((l) => l.startsWith('Max open files'));
  if (!line) return null;
  const [soft, hard] = line
    .slice('Max open files'.length)
    .trim()
    .split(/\s+/)
    .map((v) => (v === 'unlimited' ? Infinity : Number(v)));
  if (soft === undefined || hard === undefined || Number.isNaN(soft) || Number.isNaN(hard)) {
    return null;
  }
  return { soft, hard };
}

/** This process's limit (Linux: /proc/self/limits); null elsewhere. */
export function openFilesLimit(): OpenFilesLimit | null {
  try {
    return parseOpenFilesLimit(fs.readFileSync('/proc/self/limits', 'utf8'));
  } catch {
    return null;
  }
}

/** The start-up line: the limit, the connections it allows, and a warning when soft < hard. */
export function openFilesReport(limit: OpenFilesLimit): {
  level: 'info' | 'warn';
  msg: string;
  fields: Record<string, number>;
} {
  const connections = Math.max(0, limit.soft - DESCRIPTORS_RESERVED);
  const fields = { openFilesSoft: limit.soft, openFilesHard: limit.hard, connections };
  const allows = Number.isFinite(connections)
    ? `about ${connections} client connections (one descriptor each)`
    : 'client connections without a descriptor limit';
  if (limit.soft < limit.hard) {
    return {
      level: 'warn',
      msg:
        `open-files limit ${limit.soft}, below its hard limit ${limit.hard} (not raised at ` +
        `start): ${allows}; raise the soft limit (ulimit -n) to hold more`,
      fields,
    };
  }
  return { level: 'info', msg: `open-files limit ${limit.soft}: ${allows}`, fields };
}
