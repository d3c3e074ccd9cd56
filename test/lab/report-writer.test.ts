import { expect, it } from "vitest";
import { byAgentsTable, markdownTable } from "../../src/lab/report-writer.js";

it("markdownTable escapes pipes in cells", () => {
  expect(markdownTable(["a", "b|c"], [["x|y", 2]])).toBe(
    ["| a | b\\|c |", "| --- | --- |", "| x\\|y | 2 |"].join("\n"),
  );
});

it("byAgentsTable has a row per agent count, a column per series, and empty cells for pairs not run", () => {
  const figures = new Map([
    ["1 host", "0.5"],
    ["2 host", "0.75"],
    ["2 url", "3"],
  ]);
  const table = byAgentsTable(
    [1, 2],
    ["host", "url"],
    (each) => `by ${each}`,
    (agents, each) => figures.get(`${agents} ${each}`),
  );
  expect(table).toBe(
    ["| agents | by host | by url |", "| --- | --- | --- |", "| 1 | 0.5 |  |", "| 2 | 0.75 | 3 |"].join("\n"),
  );
});
