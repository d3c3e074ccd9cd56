/** Followed and inter-host links over the pages of the truth. */
export interface InterHostLinks {
  pages: number;
  followedLinks: number;
  interHostLinks: number;
  interHostShare: number;
  interHostLinksPerPage: number;
}
/** Counts the followed links of the truth's pages and the inter-host ones among them. */
export function interHostLinks(
  webOptions: { seed: number; hosts: number; pages: number },
  truthUrls: Iterable<string>,
): InterHostLinks;
