import { Writable } from "node:stream";
import { describe, expect, it } from "vitest";
import { ErrorCode, UbiError } from "../../src/errors.js";
import { createLogger, type LogFormat, type LogLevel, parseLogRecord } from "../../src/logging/index.js";

/** A logger writing into a string. */
async function capture(level: LogLevel, format: LogFormat) {
  let text = "";
  const destination = new Writable({
    write(chunk: Buffer, _encoding, done) {
      text += chunk.toString("utf8");
      done();
    },
  });
  const logger = await createLogger({ level, format, destination, bindings: { agent: "a1" } });
  return { logger, text: () => text };
}

describe("createLogger", () => {
  it("writes one JSON record a line: string level, ISO time, bindings, fields, message", async () => {
    const { logger, text } = await capture("info", "json");
    logger.info({ event: "listening", address: "127.0.0.1:4000" }, "listening on 127.0.0.1:4000");
    const lines = text().trim().split("\n");
    expect(lines).toHaveLength(1);
    const record = parseLogRecord(lines[0] as string);
    expect(record).toMatchObject({
      level: "info",
      agent: "a1",
      pid: process.pid,
      event: "listening",
      address: "127.0.0.1:4000",
      msg: "listening on 127.0.0.1:4000",
    });
    expect(new Date(record?.time ?? "").toISOString()).toBe(record?.time);
  });

  it("serializes an error with its code, stack and causes", async () => {
    const { logger, text } = await capture("info", "json");
    const cause = Object.assign(new Error("EACCES: permission denied, open '/data/state'"), {
      code: "EACCES",
    });
    const error = new UbiError(ErrorCode.StorageFailed, "cannot write the state store", { cause });
    logger.error({ event: "visit-failed", err: error }, "the visit of h1 failed");
    const record = parseLogRecord(text().trim());
    expect(record?.err?.code).toBe(ErrorCode.StorageFailed);
    expect(record?.err?.message).toContain("cannot write the state store");
    expect(record?.err?.message).toContain("EACCES: permission denied");
    expect(record?.err?.stack).toContain("caused by: Error: EACCES");
  });

  it("drops records below its level", async () => {
    const { logger, text } = await capture("warn", "json");
    logger.info({ event: "progress" }, "5 pages");
    logger.debug("detail");
    logger.warn({ event: "agent-suspected" }, "agent a2 is not answering");
    const records = text().trim().split("\n").map(parseLogRecord);
    expect(records.map((record) => record?.event)).toEqual(["agent-suspected"]);
    const silent = await capture("silent", "json");
    silent.logger.fatal("gone");
    expect(silent.text()).toBe("");
  });

  it("writes lines for people in the pretty format: the message, then the fields, no JSON", async () => {
    const { logger, text } = await capture("info", "pretty");
    logger.warn({ event: "left", hostsHanded: 12 }, "left: 12 hosts handed over");
    const output = text();
    expect(output).toMatch(/WARN.*: left: 12 hosts handed over\n/);
    expect(output).toMatch(/^\s+hostsHanded: 12$/m);
    expect(output).not.toContain("{");
    // No colours when the destination is not a terminal.
    expect(output).not.toContain("\u001b[");
  });

  it("keeps a child's bindings on its records", async () => {
    const { logger, text } = await capture("info", "json");
    logger.child({ component: "console" }).error({ event: "console-failed" }, "the console failed");
    expect(parseLogRecord(text().trim())).toMatchObject({
      agent: "a1",
      component: "console",
      level: "error",
    });
  });
});

describe("parseLogRecord", () => {
  it("reads records and nothing else", () => {
    expect(parseLogRecord('{"level":"info","time":"t","msg":"m"}')).toMatchObject({ msg: "m" });
    expect(parseLogRecord("ubicrawl agent: --id is required [UBI_ERR_INVALID_ARGUMENT]")).toBeUndefined();
    expect(parseLogRecord('{"level":"info"')).toBeUndefined();
    expect(parseLogRecord('{"msg":"no level"}')).toBeUndefined();
    expect(parseLogRecord("[1,2]")).toBeUndefined();
  });
});
