import { BlockList, isIP } from 'node:net';

/** One `security.trustedProxies` entry read: an address, or a CIDR range (`10.0.0.0/8`, `fd00::/8`). */
export interface AddressRange {
  address: string;
  family: 'ipv4' | 'ipv6';
  /** The prefix length; an address alone is the whole width (32 or 128). */
  prefix: number;
}

/** `entry` as an {@link AddressRange}, or undefined when it is neither an IP address nor a CIDR range of one. */
export function addressRange(entry: string): AddressRange | undefined {
  const [address = '', length, extra] = entry.trim().split('/');
  const version = isIP(address);
  if (version === 0 || extra !== undefined) return undefined;
  const width = version === 4 ? 32 : 128;
  if (length !== undefined && !/^\d{1,3}$/.test(length)) return undefined;
  const prefix = length === undefined ? width : Number(length);
  return prefix <= width ? { address, family: version === 4 ? 'ipv4' : 'ipv6', prefix } : undefined;
}

/**
 * The `security.trustedProxies` entries as one node:net BlockList (matched with `check(address, family)`).
 * @throws RangeError naming the first entry that {@link addressRange} does not read (config/load.ts checks first).
 */
export function trustedProxyList(entries: readonly string[]): BlockList {
  const list = new BlockList();
  for (const entry of entries) {
    const range = addressRange(entry);
    if (!range) throw new RangeError(`"${entry}" is neither an IP address nor a CIDR range`);
    list.addSubnet(range.address, range.prefix, range.family);
  }
  return list;
}
