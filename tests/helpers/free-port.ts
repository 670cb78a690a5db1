import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';

/** The first port the kernel hands out for port 0 (Linux `ip_local_port_range`), else the IANA dynamic range's. */
const EPHEMERAL_LOW = (() => {
  try {
    return Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]) || 32_768;
  } catch {
    return 49_152;
  }
})();

/** Whether `port` can be bound on loopback now (bound, then released). */
async function bindable(port: number): Promise<boolean> {
  const server = createServer();
  const bound = await new Promise<boolean>((resolve) => {
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => resolve(true));
  });
  if (bound) await new Promise<void>((resolve) => server.close(() => resolve()));
  return bound;
}

/**
 * A loopback port nothing listens on right now, for a process the test starts later. Picked at random
 * below the kernel's ephemeral range: a port bound to 0 and released is the next one any concurrent test
 * binding port 0 may be handed, which took `npm start`'s port in a CI run (EADDRINUSE between this and
 * the start); below the range only another random pick can collide. Falls back to a port-0 pick.
 */
export async function freePort(): Promise<number> {
  const low = 10_000;
  for (let attempt = 0; attempt < 50 && EPHEMERAL_LOW > low + 1000; attempt++) {
    const port = low + Math.floor(Math.random() * (EPHEMERAL_LOW - low));
    if (await bindable(port)) return port;
  }
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}
