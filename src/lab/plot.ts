import { parse, View } from "vega";
import { compile, type TopLevelSpec } from "vega-lite";

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
