/**
 * A reader for the protobuf text format as google/robotstxt-spec-test writes it: `name: value` fields,
 * messages in braces, lists in brackets, adjacent strings concatenated, C escapes (`\n`, `\xHH`, octal).
 * Strings are bytes (the robots.txt files hold deliberately broken UTF-8), so they are read as Buffers.
 * No npm package reads this format (protobufjs reads .proto schemas and JSON, not text format), and the
 * suite needs only this much of it.
 */

/** A parsed value: bytes, an enum name or number, a message, or a list. */
export type TextValue = Buffer | string | TextMessage | TextValue[];
/** A message: each field's values in order (a field given once has one value). */
export type TextMessage = { [field: string]: TextValue[] };

type Token =
  | { kind: "punct"; text: string }
  | { kind: "ident"; text: string }
  | { kind: "string"; bytes: Buffer };

/** Parses a text-format message. @throws Error naming the offset of what it cannot read. */
export function parseTextProto(source: string): TextMessage {
  const tokens = tokenize(source);
  let at = 0;
  const peek = (): Token | undefined => tokens[at];
  const expect = (text: string): void => {
    const token = tokens[at++];
    if (token?.kind !== "punct" || token.text !== text)
      throw new Error(`expected "${text}" at token ${at - 1}`);
  };

  const message = (end: string | undefined): TextMessage => {
    const fields: TextMessage = {};
    for (let token = peek(); token !== undefined; token = peek()) {
      if (token.kind === "punct" && token.text === end) break;
      if (token.kind === "punct" && (token.text === "," || token.text === ";")) {
        at++;
        continue;
      }
      if (token.kind !== "ident") throw new Error(`expected a field name at token ${at}`);
      at++;
      const next = peek();
      if (next?.kind === "punct" && next.text === ":") at++;
      const values = fields[token.text] ?? [];
      values.push(value());
      fields[token.text] = values;
    }
    return fields;
  };

  const value = (): TextValue => {
    const token = tokens[at++];
    if (token === undefined) throw new Error("unexpected end of input");
    if (token.kind === "string") {
      const parts = [token.bytes];
      for (let next = peek(); next?.kind === "string"; next = peek()) {
        parts.push(next.bytes);
        at++;
      }
      return Buffer.concat(parts);
    }
    if (token.kind === "ident") return token.text;
    if (token.text === "{") {
      const fields = message("}");
      expect("}");
      return fields;
    }
    if (token.text === "[") {
      const list: TextValue[] = [];
      for (let next = peek(); !(next?.kind === "punct" && next.text === "]"); next = peek()) {
        if (next === undefined) throw new Error("unterminated list");
        if (next.kind === "punct" && next.text === ",") at++;
        else list.push(value());
      }
      expect("]");
      return list;
    }
    throw new Error(`unexpected "${token.text}" at token ${at - 1}`);
  };

  const root = message(undefined);
  if (at !== tokens.length) throw new Error(`trailing input at token ${at}`);
  return root;
}

function tokenize(source: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  while (i < source.length) {
    const c = source[i] as string;
    if (/\s/.test(c)) i++;
    else if (c === "#") {
      while (i < source.length && source[i] !== "\n") i++;
    } else if ("{}[]:,;<>".includes(c)) {
      tokens.push({ kind: "punct", text: c === "<" ? "{" : c === ">" ? "}" : c });
      i++;
    } else if (c === '"' || c === "'") {
      const [bytes, end] = readString(source, i);
      tokens.push({ kind: "string", bytes });
      i = end;
    } else {
      const match = /^[A-Za-z0-9_.+-]+/.exec(source.slice(i));
      if (match === null) throw new Error(`unexpected character ${JSON.stringify(c)} at offset ${i}`);
      tokens.push({ kind: "ident", text: match[0] });
      i += match[0].length;
    }
  }
  return tokens;
}

const SIMPLE_ESCAPES: Record<string, number> = {
  n: 0x0a,
  r: 0x0d,
  t: 0x09,
  v: 0x0b,
  f: 0x0c,
  b: 0x08,
  a: 0x07,
  "\\": 0x5c,
  "'": 0x27,
  '"': 0x22,
  "?": 0x3f,
};

/** Reads the quoted string starting at `start`: its bytes and the offset after the closing quote. */
function readString(source: string, start: number): [Buffer, number] {
  const quote = source[start];
  const bytes: number[] = [];
  let i = start + 1;
  while (source[i] !== quote) {
    if (i >= source.length || source[i] === "\n") throw new Error(`unterminated string at offset ${start}`);
    const c = source[i] as string;
    if (c !== "\\") {
      bytes.push(...Buffer.from(c, "utf8"));
      i++;
      continue;
    }
    const e = source[i + 1] as string;
    if (e in SIMPLE_ESCAPES) {
      bytes.push(SIMPLE_ESCAPES[e] as number);
      i += 2;
    } else if (e === "x" || e === "X") {
      const hex = /^[0-9A-Fa-f]{1,2}/.exec(source.slice(i + 2))?.[0];
      if (hex === undefined) throw new Error(`bad \\x escape at offset ${i}`);
      bytes.push(Number.parseInt(hex, 16));
      i += 2 + hex.length;
    } else if (/[0-7]/.test(e)) {
      const octal = /^[0-7]{1,3}/.exec(source.slice(i + 1))?.[0] as string;
      bytes.push(Number.parseInt(octal, 8) & 0xff);
      i += 1 + octal.length;
    } else throw new Error(`unknown escape \\${e} at offset ${i}`);
  }
  return [Buffer.from(bytes), i + 1];
}
