/** Where an agent's console serves /healthz, from its command line (see healthcheck.mjs). */
export interface ConsoleTarget {
  readonly host: string;
  readonly port: number;
  readonly https: boolean;
}

/** `argv` with the console's flags its `--config FILE` gives (and it does not) added. */
export function withConfigFile(argv: readonly string[], cwd?: string): Promise<string[]>;

export function consoleTarget(argv: readonly string[]): ConsoleTarget | undefined;

export function healthzUrl(target: ConsoleTarget): string;
