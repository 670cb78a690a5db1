import { pino, type DestinationStream, type Logger } from 'pino';
import type { GatewayConfig } from '../../config/types.ts';

export type { Logger } from 'pino';

/**
 * The gateway's JSON logger (pino). Credentials never reach it by construction (handlers log digests
 * at most); the redaction list is the second line of defence for any header object that slips in.
 * @param destination - where lines go; default stdout. Tests pass a stream to read the lines back.
 */
export function createLogger(config: GatewayConfig, destination?: DestinationStream): Logger {
  const secretHeaders = ['authorization', 'cookie', config.credentials.keyHeader, config.credentials.secretHeader].map((h) => h.toLowerCase());
  const paths = secretHeaders.flatMap((h) => [`headers["${h}"]`, `*.headers["${h}"]`, `req.headers["${h}"]`]);
  return pino(
    {
      name: 'mcp-gateway',
      level: config.log.level,
      redact: { paths: [...paths, 'credential', '*.credential', 'token', '*.token', 'secret', '*.secret'], censor: '[redacted]' },
      base: { pid: process.pid },
    },
    destination ?? pino.destination({ sync: false }),
  );
}
