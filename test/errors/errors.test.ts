import { describe, expect, it } from "vitest";
import { ErrorCode, errorChain, errorMessage, UbiError } from "../../src/errors.js";

describe("error descriptions", () => {
  it("gives the message of an Error, and the string form of anything else", () => {
    expect(errorMessage(new Error("boom"))).toBe("boom");
    expect(errorMessage("plain")).toBe("plain");
    expect(errorMessage(42)).toBe("42");
  });

  it("follows the causes, so a log line keeps what went wrong underneath", () => {
    const root = new Error("EIO: i/o error, fsync");
    const middle = new UbiError(ErrorCode.StorageFailed, "cannot sync the WARC file", { cause: root });
    expect(errorChain(new Error("the submitUrls handler failed", { cause: middle }))).toBe(
      "the submitUrls handler failed: caused by cannot sync the WARC file: caused by EIO: i/o error, fsync",
    );
    expect(errorChain("not an error")).toBe("not an error");
  });

  it("stops after five levels, whatever the chain", () => {
    const looped = new Error("again");
    (looped as { cause?: unknown }).cause = looped;
    expect(errorChain(looped).split(": caused by ")).toHaveLength(5);
  });
});
