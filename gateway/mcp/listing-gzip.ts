import { constants as zlib, crc32, deflateRawSync } from 'node:zlib';
import type { Listing } from '../catalog/listing.ts';
import { MODERN_TOOLS_LIST_TAIL } from '../wire/server-codec.ts';
import { listingToolsJson } from './listing-wire.ts';

/** Listings smaller than this go out plain: compressing them saves less than it costs. */
export const COMPRESS_MIN_BYTES = 16 * 1024;

/** Whether `Accept-Encoding` (RFC 9110 §12.5.3) admits gzip: named, or `*`, with a q above 0. */
export function acceptsGzip(header: string): boolean {
  if (!header) return false;
  let star = false;
  for (const item of header.split(',')) {
    const [coding = '', ...params] = item.split(';');
    const name = coding.trim().toLowerCase();
    const q = params.map((p) => p.trim().toLowerCase()).find((p) => p.startsWith('q='));
    const weight = q === undefined ? 1 : Number(q.slice(2));
    if (name === 'gzip' || name === 'x-gzip') return weight > 0;
    if (name === '*') star = weight > 0;
  }
  return star;
}

/** A compressed listing answer up to its `ttlMs` value: raw deflate ending on a sync flush, and the CRC-32 and length of what it holds. */
interface DeflatedHead {
  deflated: Buffer;
  crc: number;
  length: number;
}
const deflatedHeads = new WeakMap<Buffer, DeflatedHead>();
/** ID1 ID2 CM=deflate FLG=0 MTIME=0 XFL=0 OS=255 (RFC 1952 §2.3). */
const GZIP_HEADER = Buffer.from([0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff]);

/**
 * A 2026-07-28 tools/list answer (`{"result":{"tools":…,"resultType":"complete","ttlMs":<ttl>,…},
 * "jsonrpc":"2.0","id":<id>}`, the fast path's bytes) in gzip without compressing per request. Everything
 * before the answer's `ttlMs` value is deflated once per listing (listing.ts keeps it beside the plain
 * bytes and counts it in the byte bound), ending with a sync flush so it stops on a byte boundary with no
 * final block; each answer then adds its `ttlMs`, the rest of the result (cache scope, serverInfo), the
 * id and closing brace as a final stored block (RFC 1951 §3.2.4, some 120 bytes) and the gzip trailer,
 * the CRC-32 continued over the tail. One gzip member, so every decoder reads it (curl, for one, reads no
 * concatenated members).
 */
export function gzippedListingAnswer(listing: Listing, ttlMs: number, id: string | number): Buffer[] {
  const packed = listing.derived('gzip|modern', () => {
    const head = Buffer.concat([Buffer.from('{"result":{"tools":'), listingToolsJson(listing, 'modern'), Buffer.from(MODERN_TOOLS_LIST_TAIL.beforeTtl)]);
    const deflated = deflateRawSync(head, { level: zlib.Z_BEST_COMPRESSION, finishFlush: zlib.Z_SYNC_FLUSH });
    const out = Buffer.alloc(deflated.length + 8);
    deflated.copy(out, 8);
    out.writeUInt32LE(crc32(head) >>> 0, 0);
    out.writeUInt32LE(head.length >>> 0, 4);
    return out;
  });
  let head = deflatedHeads.get(packed);
  if (!head) deflatedHeads.set(packed, (head = { crc: packed.readUInt32LE(0), length: packed.readUInt32LE(4), deflated: packed.subarray(8) }));
  const tail = Buffer.from(`${ttlMs}${MODERN_TOOLS_LIST_TAIL.afterTtl}},"jsonrpc":"2.0","id":${JSON.stringify(id)}}`);
  return [GZIP_HEADER, head.deflated, finalStoredBlock(tail, head.crc, head.length)];
}

/** The last deflate block(s) holding `data` uncompressed, then the gzip trailer for everything (crc, length so far). */
function finalStoredBlock(data: Buffer, crcSoFar: number, lengthSoFar: number): Buffer {
  const blocks = Math.max(1, Math.ceil(data.length / 0xffff));
  const out = Buffer.alloc(blocks * 5 + data.length + 8);
  let at = 0;
  for (let i = 0; i < blocks; i++) {
    const chunk = data.subarray(i * 0xffff, (i + 1) * 0xffff);
    out[at] = i === blocks - 1 ? 1 : 0; // BFINAL on the last, BTYPE=00 (stored)
    out.writeUInt16LE(chunk.length, at + 1);
    out.writeUInt16LE(~chunk.length & 0xffff, at + 3);
    chunk.copy(out, at + 5);
    at += 5 + chunk.length;
  }
  out.writeUInt32LE(crc32(data, crcSoFar) >>> 0, at);
  out.writeUInt32LE((lengthSoFar + data.length) >>> 0, at + 4);
  return out;
}
