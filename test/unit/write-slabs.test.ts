/**
 * The HTTP guard's recycled write memory (src/http/write-slabs.ts): copies hold their bytes until
 * released, a slab is reused only once every copy from it is released, and a warm relay allocates
 * nothing; and, over real loopback sockets, a slow reader's queued bytes survive the slabs' reuse.
 */
import net from 'node:net';
import t from 'tap';
import { WriteSlabs } from '../../src/http/write-slabs.js';

const fill = (n: number, byte: number) => Buffer.alloc(n, byte);

t.test('copies keep their bytes until released; slabs are reused only then', (t) => {
  const slabs = new WriteSlabs(100, 2);
  const a = slabs.copy(fill(60, 1));
  const b = slabs.copy(fill(30, 2));
  t.equal(a.slab, b.slab, 'two copies that fit share a slab');
  const c = slabs.copy(fill(20, 3)); // does not fit: the first slab is sealed, a second one taken
  t.not(c.slab, a.slab);
  t.equal(slabs.allocated, 2);
  const d = slabs.copy(fill(90, 4)); // nor this: the second is sealed with c still out
  t.equal(slabs.allocated, 3, 'slabs with copies out are not reused');
  t.equal(slabs.spare, 0);
  t.ok(a.bytes.equals(fill(60, 1)) && b.bytes.equals(fill(30, 2)), 'earlier copies intact');
  t.ok(c.bytes.equals(fill(20, 3)) && d.bytes.equals(fill(90, 4)));
  slabs.release(c.slab!);
  t.equal(slabs.spare, 1, 'the second slab is free once c is released');
  slabs.release(a.slab!);
  t.equal(slabs.spare, 1, 'the first is not, while b is out');
  slabs.release(b.slab!);
  t.equal(slabs.spare, 2, 'and is once b is released');
  const e = slabs.copy(fill(20, 5)); // the third slab has 10 bytes left: a spare is taken
  t.equal(slabs.allocated, 3, 'no new slab');
  t.ok(e.slab === a.slab || e.slab === c.slab, 'a released slab is reused');
  t.ok(e.bytes.equals(fill(20, 5)));
  t.ok(d.bytes.equals(fill(90, 4)), 'a copy still out is untouched by the reuse');
  t.end();
});

t.test('larger than a slab: a plain copy; at most `keep` spares; warm, nothing allocated', (t) => {
  const slabs = new WriteSlabs(64, 1);
  const big = slabs.copy(fill(65, 7));
  t.equal(big.slab, null);
  t.ok(big.bytes.equals(fill(65, 7)));
  t.equal(slabs.allocated, 0);
  const out = [1, 2, 3, 4].map((i) => slabs.copy(fill(64, i)));
  t.equal(slabs.allocated, 4);
  for (const o of out) slabs.release(o.slab!);
  t.equal(slabs.spare, 1, 'three sealed slabs released, one kept');
  // Steady state: copy, release, copy, ... allocates nothing more.
  const before = slabs.allocated;
  for (let i = 0; i < 1000; i++) {
    const c = slabs.copy(fill(40, i & 0xff));
    t.equal(c.bytes[0], i & 0xff);
    slabs.release(c.slab!);
  }
  t.ok(slabs.allocated - before <= 1, 'at most one more slab for a thousand copies');
  t.end();
});

t.test('through a real socket: a slow reader gets every byte in order', async (t) => {
  // The relay's use: each chunk copied into a slab, written, released in the write's callback.
  const server = net.createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  t.teardown(() => server.close());
  const accepted = new Promise<net.Socket>((r) => server.once('connection', r));
  const reader = net.connect((server.address() as net.AddressInfo).port, '127.0.0.1');
  const writer = await accepted;
  const slabs = new WriteSlabs(16 * 1024, 2);
  const scratch = Buffer.alloc(16 * 1024); // as the relay's one read buffer, overwritten each time
  const expected: Buffer[] = [];
  reader.pause(); // a slow reader: writes queue up behind the kernel's buffers
  for (let i = 0; i < 2000; i++) {
    const n = 1000 + ((i * 7919) % 15000);
    for (let j = 0; j < n; j++) scratch[j] = (i * 31 + j) & 0xff;
    expected.push(Buffer.from(scratch.subarray(0, n)));
    const { bytes, slab } = slabs.copy(scratch.subarray(0, n));
    writer.write(bytes, () => slabs.release(slab!));
  }
  writer.end();
  t.ok(writer.writableLength > 0, 'writes are queued while the reader waits');
  const received: Buffer[] = [];
  reader.on('data', (c: Buffer) => received.push(c));
  await new Promise((r) => setTimeout(r, 50));
  reader.resume();
  await new Promise((r) => reader.on('end', r));
  t.ok(Buffer.concat(received).equals(Buffer.concat(expected)), 'every byte, in order');
  t.ok(slabs.allocated > 2, 'queued writes pinned their slabs (more were allocated)');
  t.ok(slabs.spare <= 2);
});
