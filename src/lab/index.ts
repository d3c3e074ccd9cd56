/**
 * The crawl laboratory: the founding papers' measurements as experiments (`ubicrawl experiment NAME`),
 * each writing CSV tables, SVG plots and a Markdown report that checks the papers' claims.
 */

export type {
  Check,
  Experiment,
  ExperimentContext,
  ExperimentResult,
  Plot,
  Section,
  Table,
} from "./experiment.js";
export { balanceExperiment } from "./experiments/balance.js";
export { bandwidthExperiment } from "./experiments/bandwidth.js";
export { batchingExperiment } from "./experiments/batching.js";
export { faultsExperiment } from "./experiments/faults.js";
export { freshnessExperiment } from "./experiments/freshness.js";
export { modesExperiment } from "./experiments/modes.js";
export { partitioningExperiment } from "./experiments/partitioning.js";
export { politenessExperiment } from "./experiments/politeness.js";
export { replicationExperiment } from "./experiments/replication.js";
export { scalingExperiment } from "./experiments/scaling.js";
export { formatTextTable, markdownTable, type RunInfo, writeReport } from "./report-writer.js";
