/**
 * What an agent may do with a host, as the cluster answers it: hold its URLs, begin crawling it, send it
 * a request. A lone agent may do all three with every host.
 */

/** Whether a host may be crawled now (0), or until when and why it waits. */
export type Admission = 0 | { readonly untilMs: number; readonly reason: "held" | "hand-over" };

/** The ownership predicates a host visit asks, as the cluster answers them for the agent's own hosts. */
export interface CrawlRights {
  /** True while the agent owns `host` in its current view. */
  readonly owns: (host: string) => boolean;
  /** When the agent may begin crawling `host`: 0 for now, or a later time. */
  readonly admit?: (host: string) => Admission | Promise<Admission>;
  /** True while the agent may send `host` a request. */
  readonly mayFetch?: (host: string) => boolean;
}
