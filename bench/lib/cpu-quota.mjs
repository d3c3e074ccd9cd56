// A CPU of its own for each agent: the laboratory's cgroup quota groups (src/lab/cpu-quota.ts), built
// into dist/ by `npm run build`.
export { CpuQuotaGroup } from "../../dist/lab/cpu-quota.js";
