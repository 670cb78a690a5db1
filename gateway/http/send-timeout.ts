import type { Server, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';

/** A connection {@link cutUnreadAnswers} reset: what the log line says of it (no header, no body). */
export interface UnreadAnswer {
  /** The X-Request-Id of the answer being written, when one was. */
  requestId?: string;
  /** The TCP peer (a reverse proxy's address behind one). */
  peer?: string;
  /** Bytes of answers the gateway still held for the connection (written, their sending not finished). */
  heldBytes: number;
}

/** Where a watched connection's writes stood when last seen moving. */
interface Progress {
  /** Bytes the kernel has taken of the connection's writes (see {@link takenBytes}). */
  taken: number;
  /** When `taken` last changed while something was waiting to be sent; -1: nothing waiting. */
  since: number;
}

/**
 * Resets a connection of `server` whose client has taken none of the bytes written to it for
 * `sendTimeoutMs` (config `server.sendTimeoutMs`), and tells `onCut` first. Why: node:http keeps an
 * answer the client does not read in memory, whole, until the connection closes, and bounds it with no
 * timeout of its own (`requestTimeout` stops once the request is read, `keepAliveTimeout` starts once the
 * answer is sent); measured, 100 sockets that each sent a tools/call and never read its 4 MB answer held
 * 1 GB of the gateway until they left.
 *
 * The clock runs only while bytes wait to be sent and restarts whenever the kernel takes some (nginx's
 * `send_timeout`), and an idle SSE stream or a call still running (nothing waiting) is never cut. The
 * kernel takes more in steps of about a third of the socket's send buffer, so a client reading a large
 * answer very slowly (under about 20 KB/s on Linux's default buffers, measured by review) can go a whole
 * bound without a step and be cut, as with nginx. Node's own `socket.setTimeout`
 * would cut both of those. Connections are looked at on one timer for the server, like Node's own
 * `connectionsCheckingInterval`, rather than a timer per write.
 */
export function cutUnreadAnswers(server: Server, sendTimeoutMs: number, onCut: (cut: UnreadAnswer) => void): void {
  const watched = new Map<Socket, Progress>();
  server.on('connection', (socket: Socket) => {
    watched.set(socket, { taken: 0, since: -1 });
    socket.once('close', () => watched.delete(socket));
  });
  const look = () => {
    const now = performance.now();
    for (const [socket, progress] of watched) {
      if (socket.destroyed || socket.writableLength === 0) {
        progress.since = -1;
        continue;
      }
      const taken = takenBytes(socket);
      if (progress.since < 0 || taken !== progress.taken) {
        progress.taken = taken;
        progress.since = now;
        continue;
      }
      if (now - progress.since < sendTimeoutMs) continue;
      watched.delete(socket);
      const response = (socket as Socket & { _httpMessage?: ServerResponse | null })._httpMessage;
      const requestId = response?.getHeader('x-request-id');
      onCut({ requestId: typeof requestId === 'string' ? requestId : undefined, peer: socket.remoteAddress, heldBytes: socket.writableLength });
      // A reset, not a close: the kernel would otherwise keep trying to deliver what it holds of the
      // answer (megabytes on a fast link) to a client that does not read, and the client could take a
      // cut answer for a finished one.
      socket.resetAndDestroy();
    }
  };
  // A quarter of the bound (at most 1 s): a stall is cut at most two looks past the bound.
  const timer = setInterval(look, Math.min(1000, Math.ceil(sendTimeoutMs / 4)));
  timer.unref();
  server.once('close', () => clearInterval(timer));
}

/**
 * Bytes of the connection's writes the kernel has taken: what libuv dispatched less what it still
 * queues. It grows as a partly sent write moves on, which `writableLength` does not show (it drops only
 * once a whole write is sent, and one answer is one write). Node's own socket timeout reads the same
 * `writeQueueSize` to tell a write in progress from a stall (net.js `_onTimeout`). Without those handle
 * fields, the bytes still unsent (a change of them counts as progress).
 */
function takenBytes(socket: Socket): number {
  const handle = (socket as Socket & { _handle?: { bytesWritten?: unknown; writeQueueSize?: unknown } | null })._handle;
  if (typeof handle?.bytesWritten === 'number' && typeof handle.writeQueueSize === 'number') return handle.bytesWritten - handle.writeQueueSize;
  return -socket.writableLength;
}
