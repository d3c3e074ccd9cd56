/** Packaging a crawl for the people who keep web archives: agents' data dirs to one WACZ file. */

export {
  checkOutput,
  type ExportOptions,
  type ExportSummary,
  exportWacz,
  INDEX_FORMATS,
  type IndexFormat,
  ZIPNUM_FROM_LINES,
} from "./export-wacz.js";
export { WACZ_VERSION, type WaczResource } from "./wacz-package.js";
