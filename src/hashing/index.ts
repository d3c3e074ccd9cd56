export { type AgentSpec, Assignment, type AssignmentOptions } from "./assignment.js";
export { DEFAULT_CAPACITY, DEFAULT_REPLICAS_PER_UNIT } from "./constants.js";
export { Mt19937 } from "./mt19937.js";
export { type Hasher64, loadHasher64 } from "./xxhash64.js";
