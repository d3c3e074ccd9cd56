import { htmlPage, randomBytes } from "./content.js";
import type { HttpHostileHost } from "./hostile-host.js";

/** HTML served as `image/png`, and binary bytes served as `text/html`. */
export const wrongTypesHost: HttpHostileHost = {
  kind: "http",
  label: "wrong-types",
  description:
    "HTML as image/png (not parsed: its link is not followed) and binary as text/html (parsed harmlessly)",
  entryPaths: ["/html-as-png", "/binary-as-html"],
  handle(req, res, context) {
    if (req.url === "/html-as-png") {
      res.writeHead(200, { "content-type": "image/png" }).end(htmlPage("not an image", ["/never-followed"]));
      return;
    }
    if (req.url === "/binary-as-html") {
      const body = randomBytes(context.options.seed + 2, 256 * 1024);
      res.writeHead(200, { "content-type": "text/html", "content-length": body.length }).end(body);
      return;
    }
    res.writeHead(404, { "content-type": "text/plain" }).end("not here\n");
  },
};
