/** A parsed `Content-Type`: the lowercased media type and, when given, the lowercased charset. */
export interface ContentType {
  /** `text/html`, lowercased, no parameters; `""` when the header is missing or empty. */
  mediaType: string;
  /** The `charset` parameter, lowercased and unquoted. */
  charset: string | undefined;
}

/** Parses a `Content-Type` header value leniently: a malformed value yields what could be read. */
export function parseContentType(value: string | undefined): ContentType {
  if (value === undefined) return { mediaType: "", charset: undefined };
  const semicolon = value.indexOf(";");
  const mediaType = (semicolon === -1 ? value : value.slice(0, semicolon)).trim().toLowerCase();
  let charset: string | undefined;
  if (semicolon !== -1) {
    for (const param of value.slice(semicolon + 1).split(";")) {
      const eq = param.indexOf("=");
      if (eq === -1 || param.slice(0, eq).trim().toLowerCase() !== "charset") continue;
      let raw = param.slice(eq + 1).trim();
      if (raw.length >= 2 && raw.startsWith('"') && raw.endsWith('"')) raw = raw.slice(1, -1);
      if (raw !== "") charset = raw.toLowerCase();
      break;
    }
  }
  return { mediaType, charset };
}
