import { parseArgs, type ParseArgsConfig } from 'node:util';

type Options = NonNullable<ParseArgsConfig['options']>;

/** One command line entry point: its usage text and its options (node:util parseArgs). */
export interface CommandSpec<O extends Options> {
  /** Printed for `--help` (exit 0) and under a usage error (exit 2). */
  usage: string;
  options: O;
  allowPositionals?: boolean;
}

/** What parseArgs returns for a spec. */
export type Parsed<O extends Options> = ReturnType<typeof parseArgs<{ options: O; allowPositionals: true; strict: true }>>;

/** Thrown for a command line that cannot be used; the entry point prints `message` and the usage, exit 2. */
export class UsageError extends Error {
  override name = 'UsageError';
}

/**
 * Parses `argv` for one entry point. Every entry point takes `-h`/`--help` (the usage on stdout, exit 0)
 * and reports a bad command line in one line plus the usage on stderr, exit 2: never a stack trace.
 * @returns the parsed values, or exits the process.
 */
export function parseCommandLine<O extends Options>(spec: CommandSpec<O>, argv: readonly string[] = process.argv.slice(2)): Parsed<O> {
  try {
    const parsed = parseArgs({
      args: [...argv],
      options: { help: { type: 'boolean', short: 'h' }, ...spec.options } as O,
      allowPositionals: true,
      strict: true,
    }) as Parsed<O>;
    if ((parsed.values as { help?: boolean }).help) {
      process.stdout.write(`${spec.usage.trim()}\n`);
      process.exit(0);
    }
    if (!spec.allowPositionals && parsed.positionals.length > 0) throw new UsageError(`unexpected argument "${parsed.positionals[0]}"`);
    return parsed;
  } catch (error) {
    return usageFailure(spec.usage, error);
  }
}

/** Prints a usage error (a UsageError or parseArgs' own ERR_PARSE_ARGS_* errors) and exits 2; rethrows anything else. */
export function usageFailure(usage: string, error: unknown): never {
  const code = (error as NodeJS.ErrnoException).code;
  if (!(error instanceof UsageError) && !(typeof code === 'string' && code.startsWith('ERR_PARSE_ARGS'))) throw error;
  // The synopsis only (the usage text's first paragraph): the error is the point of the message.
  const synopsis = usage.trim().split(/\n\s*\n/)[0];
  process.stderr.write(`error: ${(error as Error).message}\n${synopsis}\n(--help for the options)\n`);
  process.exit(2);
}
