/**
 * `npm run bench -- compress`: what compressing the large JSON answers costs and saves
 * (src/http/compress.ts). Two answers the web app fetches often: GET /messages (the newest 100 of
 * a channel of varied, rendered messages) and GET /users (BENCH_USERS users). Each is loaded by
 * the load-generator process (bench/lib/loadgen.ts) without Accept-Encoding, with `gzip,
 * deflate` (what browsers send over http) and with `gzip, deflate, br` (over https), in
 * interleaved rounds: on one connection (latency) and on BENCH_CONNECTIONS (throughput, the main
 * thread's busy time per request). Prints the bytes of each answer and the ratios to the
 * uncompressed run of the same round. On a loopback the network costs nothing, so this shows the
 * price only; the saving is the bytes, which a real network turns into time.
 *
 * Options (env): BENCH_SECONDS (default 5 per load), BENCH_ROUNDS (default 2), BENCH_USERS
 * (default 2000), BENCH_CONNECTIONS (default 8).
 */
import http from 'node:http';
import { runChild } from './lib/child.js';
import { serverWithUsers } from './lib/seed.js';
import { fmt, machine } from './lib/stats.js';

type LoadResult = {
  requests: number;
  seconds: number;
  rps: number;
  p50: number;
  p99: number;
  errors: number;
};

const WORDS =
  'the a topic deploy review we should maybe tomorrow release branch server client latency queue socket test fix bug merge ticket design meeting notes idea why because works broken again later lunch coffee'.split(
    ' ',
  );

/** A message of varied length and markup, as people write them. */
function messageText(i: number): string {
  let seed = i * 2654435761;
  const rnd = (n: number) => {
    seed = (seed * 1103515245 + 12345) >>> 0;
    return seed % n;
  };
  const words = Array.from({ length: 5 + rnd(60) }, () => WORDS[rnd(WORDS.length)]).join(' ');
  switch (i % 6) {
    case 0:
      return `${words}\n\n\`\`\`js\nconst x${i} = await fetch('/api/v1/messages?anchor=${i}');\n\`\`\``;
    case 1:
      return `**${words.slice(0, 20)}** ${words} https://example.com/issues/${i}`;
    case 2:
      return `- ${words.split(' ').slice(0, 8).join('\n- ')}`;
    default:
      return words;
  }
}

export async function compressBench(): Promise<void> {
  const seconds = Number(process.env.BENCH_SECONDS ?? 5);
  const rounds = Number(process.env.BENCH_ROUNDS ?? 2);
  const users = Number(process.env.BENCH_USERS ?? 2000);
  const connections = Number(process.env.BENCH_CONNECTIONS ?? 8);
  const bench = await serverWithUsers(users, 'compress');
  const { server } = bench;
  try {
    const owner = bench.users[0]!;
    const auth = 'Basic ' + Buffer.from(`${owner.email}:${owner.api_key}`).toString('base64');
    const api = async (method: string, path: string, form: Record<string, string> = {}) => {
      const body = new URLSearchParams(form).toString();
      const r = await fetch(`${server.url}/api/v1/${path}`, {
        method,
        headers: { authorization: auth, 'content-type': 'application/x-www-form-urlencoded' },
        ...(method === 'GET' ? {} : { body }),
      });
      if (r.status !== 200) throw new Error(`${method} ${path}: ${r.status} ${await r.text()}`);
      return (await r.json()) as Record<string, unknown>;
    };
    await api('POST', 'users/me/subscriptions', {
      subscriptions: JSON.stringify([{ name: 'talk' }]),
    });
    for (let i = 0; i < 150; i++)
      await api('POST', 'messages', {
        type: 'stream',
        to: 'talk',
        topic: `topic ${i % 7}`,
        content: messageText(i),
      });
    const targets = [
      {
        name: 'GET /messages (newest 100)',
        path: '/api/v1/messages?anchor=newest&num_before=100&num_after=0&narrow=%5B%7B%22operator%22%3A%22channel%22%2C%22operand%22%3A%22talk%22%7D%5D',
      },
      { name: `GET /users (${users} users)`, path: '/api/v1/users' },
    ];
    const variants: { name: string; headers: Record<string, string> }[] = [
      { name: 'none', headers: {} },
      { name: 'gzip', headers: { 'Accept-Encoding': 'gzip, deflate' } },
      { name: 'br', headers: { 'Accept-Encoding': 'gzip, deflate, br' } },
    ];
    console.log(
      `compress bench: ${targets.map((t) => t.name).join(', ')}; 1 and ${connections} connections, ${seconds} s each, ${rounds} interleaved rounds, ${machine()}`,
    );
    for (const target of targets) {
      const sizes: string[] = [];
      for (const v of variants) {
        const r = await rawGet(server.port, target.path, { Authorization: auth, ...v.headers });
        sizes.push(`${v.name} ${fmt(r.bytes / 1024, 1)} KiB (${r.encoding ?? 'identity'})`);
      }
      console.log(`  ${target.name}: ${sizes.join(', ')}`);
    }
    const load = (path: string, headers: Record<string, string>, n: number) =>
      runChild<LoadResult>(
        'loadgen.js',
        {
          port: server.port,
          path,
          headers: { Authorization: auth, ...headers },
          connections: n,
          durationMs: seconds * 1000,
          warmupMs: 1000,
        },
        (seconds + 30) * 1000,
      );
    const measured = async (path: string, headers: Record<string, string>, n: number) => {
      const elu = performance.eventLoopUtilization();
      const r = await load(path, headers, n);
      const mainUs = (performance.eventLoopUtilization(elu).utilization * 1e6) / r.rps;
      return { ...r, mainUs };
    };
    const all: unknown[] = [];
    for (let round = 1; round <= rounds; round++) {
      console.log(`round ${round}`);
      for (const target of targets) {
        const base: Record<string, { one: LoadResult; many: LoadResult & { mainUs: number } }> = {};
        for (const v of variants) {
          const one = await load(target.path, v.headers, 1);
          const many = await measured(target.path, v.headers, connections);
          base[v.name] = { one, many };
          const none = base.none!;
          console.log(
            `  ${target.name.padEnd(30)} ${v.name.padEnd(5)} 1 conn p50 ${fmt(one.p50, 2)} ms (${fmt(one.p50 / none.one.p50, 2)}x)  ` +
              `${connections} conns ${fmt(many.rps, 0)} req/s (${fmt(many.rps / none.many.rps, 2)}x), main thread ${fmt(many.mainUs, 0)} µs/req, errors ${one.errors + many.errors}`,
          );
        }
        all.push({ round, target: target.name, results: base });
      }
    }
    console.log(
      JSON.stringify({
        bench: 'compress',
        date: new Date().toISOString(),
        users,
        connections,
        seconds,
        rounds: all,
      }),
    );
  } finally {
    await bench.close();
  }
}

/** One GET read as bytes: the body's size as sent, and its Content-Encoding. */
function rawGet(
  port: number,
  path: string,
  headers: Record<string, string>,
): Promise<{ bytes: number; encoding: string | undefined }> {
  return new Promise((resolve, reject) => {
    http
      .get({ host: '127.0.0.1', port, path, headers, agent: false }, (res) => {
        let bytes = 0;
        res.on('data', (c: Buffer) => (bytes += c.length));
        res.on('end', () => resolve({ bytes, encoding: res.headers['content-encoding'] }));
      })
      .on('error', reject);
  });
}
