import { parse, View } from "vega";
import { compile, type TopLevelSpec } from "vega-lite";
import type { Plot } from "./experiment.js";

/**
 * Plots as SVG, rendered in Node by Vega's headless renderer from a Vega-Lite specification (no browser,
 * no canvas: text is measured by estimate). The data must be inline: nothing is loaded from anywhere.
 */
export async function renderSvg(spec: TopLevelSpec): Promise<string> {
  const view = new View(parse(compile(spec).spec), { renderer: "none" });
  try {
    return await view.toSVG();
  } finally {
    view.finalize();
  }
}

/** An axis of a {@link linePlot}. */
export interface PlotAxis {
  /** The data field it shows. */
  readonly field: string;
  readonly title: string;
  /** A log scale: `true` for base 10, or the base. */
  readonly log?: boolean | number;
}

/**
 * A line plot with points: `data`'s `x` field against its `y` field, one line (and colour) per value
 * of the `color` field when there is one. Throws when a row lacks a field an axis names: the plot
 * would be drawn empty, without a word.
 */
export function linePlot(
  name: string,
  title: string,
  data: readonly Record<string, unknown>[],
  axes: { readonly x: PlotAxis; readonly y: PlotAxis; readonly color?: PlotAxis },
): Plot {
  for (const axis of [axes.x, axes.y, ...(axes.color ? [axes.color] : [])]) {
    if (data.some((row) => row[axis.field] === undefined)) {
      throw new Error(`plot ${name}: a data row has no field "${axis.field}" (${axis.title})`);
    }
  }
  const scaleOf = (axis: PlotAxis) =>
    axis.log === undefined || axis.log === false
      ? {}
      : { scale: axis.log === true ? { type: "log" as const } : { type: "log" as const, base: axis.log } };
  return {
    name,
    title,
    spec: {
      data: { values: [...data] },
      width: 360,
      height: 240,
      mark: { type: "line", point: true },
      encoding: {
        x: { field: axes.x.field, type: "quantitative", title: axes.x.title, ...scaleOf(axes.x) },
        y: { field: axes.y.field, type: "quantitative", title: axes.y.title, ...scaleOf(axes.y) },
        ...(axes.color
          ? { color: { field: axes.color.field, type: "nominal", title: axes.color.title } }
          : {}),
      },
    },
  };
}
