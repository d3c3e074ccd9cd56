/** robots.txt: fetch and cache per origin with RFC 9309 status semantics, on robots-parser. */
export { EVERY_CRAWLER, RobotsCache, type RobotsCacheDeps, type RobotsCacheOptions } from "./robots-cache.js";
export { type RobotsMatching, RobotsRules, type RobotsSnapshot, type RobotsStatus } from "./robots-rules.js";
