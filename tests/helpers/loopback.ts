import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A server listening on a free loopback port: its origin (`http://127.0.0.1:<port>`) and how to stop it. */
export interface Listening {
  origin: string;
  port: number;
  /** Drops open connections (keep-alive, held streams) and closes the server. */
  close(): Promise<void>;
}

/** Starts `server` on 127.0.0.1 with a port the OS picks. */
export async function listenOnLoopback(server: Server): Promise<Listening> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    origin: `http://127.0.0.1:${port}`,
    port,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
