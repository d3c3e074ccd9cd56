import { expect, it } from "vitest";
import { linePlot } from "../../src/lab/plot.js";

const axes = { x: { field: "agents", title: "agents" }, y: { field: "gap", title: "gap (ms)" } };

it("linePlot plots the fields its axes name", () => {
  const plot = linePlot("gap", "Gaps", [{ agents: 1, gap: 3 }], axes);
  expect(plot.spec).toMatchObject({ encoding: { x: { field: "agents" }, y: { field: "gap" } } });
});

it("linePlot refuses data without a field an axis names, rather than drawing an empty plot", () => {
  expect(() => linePlot("gap", "Gaps", [{ agents: 1, shortGaps: 0.1 }], axes)).toThrow(
    /plot gap: a data row has no field "gap"/,
  );
});
