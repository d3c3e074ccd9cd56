/** Where an agent's console serves /healthz, from its command line (see healthcheck.mjs). */
export interface ConsoleTarget {
  readonly host: string;
  readonly port: number;
  readonly https: boolean;
}

export function consoleTarget(argv: readonly string[]): ConsoleTarget | undefined;

export function healthzUrl(target: ConsoleTarget): string;
