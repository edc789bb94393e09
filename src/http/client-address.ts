/**
 * Who is the client: the peer address of the connection, or — only behind a reverse proxy the
 * operator trusts (TRUSTED_PROXIES) — the address that proxy put in X-Forwarded-For. The
 * per-address limits and rate limits count by it; /metrics, the access log and the audit log read
 * it (RequestContext.clientAddress).
 *
 * Addresses are canonical text: IPv4 dotted (IPv4-mapped IPv6 included), IPv6 compressed
 * lowercase. Per-address limits key IPv6 clients by their /64 network, which one subscriber
 * usually holds whole.
 */
import net from 'node:net';

/** Canonical text of an address (uWS's expanded IPv6, an X-Forwarded-For entry), '' if invalid. */
export function normalizeAddress(text: string): string {
  let s = text.trim();
  if (s.startsWith('[')) {
    const end = s.indexOf(']');
    if (end === -1) return '';
    s = s.slice(1, end); // [v6]:port
  } else if (s.indexOf(':') !== -1 && s.indexOf(':') === s.lastIndexOf(':')) {
    s = s.slice(0, s.indexOf(':')); // v4:port
  }
  if (net.isIPv4(s)) return s;
  if (!net.isIPv6(s)) return '';
  let canonical: string;
  try {
    canonical = new URL(`http://[${s}]/`).hostname.slice(1, -1);
  } catch {
    return '';
  }
  if (canonical.startsWith('::ffff:') && canonical.split(':').length === 5) {
    const [hi, lo] = canonical
      .slice(7)
      .split(':')
      .map((g) => parseInt(g, 16)) as [number, number];
    return `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`;
  }
  return canonical;
}

/**
 * The dotted text of an IPv4 peer from uWS's binary address (4 bytes, or 16 holding an
 * IPv4-mapped IPv6 address on a dual-stack socket); null for any other address. Cheaper than
 * uWS's text form, which is then normalized.
 */
export function ipv4FromBytes(b: Uint8Array): string | null {
  if (b.length === 4) return `${b[0]}.${b[1]}.${b[2]}.${b[3]}`;
  if (
    b.length === 16 &&
    b[10] === 255 &&
    b[11] === 255 &&
    (b[0]! | b[1]! | b[2]! | b[3]! | b[4]! | b[5]! | b[6]! | b[7]! | b[8]! | b[9]!) === 0
  ) {
    return `${b[12]}.${b[13]}.${b[14]}.${b[15]}`;
  }
  return null;
}

/** The rate-limit key of a canonical address: IPv4 as it is, IPv6 its /64 network. */
export function addressKey(address: string): string {
  if (address.indexOf(':') === -1) return address;
  const [head = '', tail = ''] = address.split('::', 2) as [string, string?];
  const left = head === '' ? [] : head.split(':');
  const right = address.includes('::') ? (tail === '' ? [] : tail.split(':')) : [];
  const groups = address.includes('::')
    ? [...left, ...Array<string>(8 - left.length - right.length).fill('0'), ...right]
    : left;
  return `${groups.slice(0, 4).join(':')}::/64`;
}

/** The reverse proxies whose X-Forwarded-For is believed: addresses and CIDR ranges. */
export class ProxyTrust {
  private readonly list = new net.BlockList();

  constructor(entries: readonly string[]) {
    for (const raw of entries) {
      const entry = raw.trim();
      if (entry === '') continue;
      const slash = entry.indexOf('/');
      const address = normalizeAddress(slash === -1 ? entry : entry.slice(0, slash));
      if (address === '') throw new Error(`not an address or CIDR range: ${entry}`);
      const family = address.includes(':') ? 'ipv6' : 'ipv4';
      if (slash === -1) {
        this.list.addAddress(address, family);
      } else {
        const bits = Number(entry.slice(slash + 1));
        if (!Number.isInteger(bits) || bits < 0 || bits > (family === 'ipv4' ? 32 : 128)) {
          throw new Error(`bad prefix length: ${entry}`);
        }
        this.list.addSubnet(address, bits, family);
      }
    }
  }

  trusts(address: string): boolean {
    if (address === '') return false;
    return this.list.check(address, address.includes(':') ? 'ipv6' : 'ipv4');
  }
}

/**
 * The client's address: the peer, unless the peer is a trusted proxy, in which case the
 * X-Forwarded-For entries are read from the right (each appended by the hop before) for as long
 * as they name trusted proxies. An invalid entry stops the walk at the last address known good.
 */
export function clientAddress(
  peerText: string,
  forwardedFor: string,
  trust: ProxyTrust | null,
): string {
  let address = normalizeAddress(peerText);
  if (trust === null || forwardedFor === '' || !trust.trusts(address)) return address;
  const hops = forwardedFor.split(',');
  for (let i = hops.length - 1; i >= 0; i--) {
    const hop = normalizeAddress(hops[i]!);
    if (hop === '') break;
    address = hop;
    if (!trust.trusts(address)) break;
  }
  return address;
}
