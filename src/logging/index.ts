export { type LogRecord, parseLogRecord } from "./log-record.js";
export {
  createLogger,
  DEFAULT_LOG_LEVEL,
  defaultLogger,
  LOG_FORMATS,
  LOG_LEVELS,
  type LogFields,
  type LogFormat,
  type Logger,
  type LoggerOptions,
  type LogLevel,
  type LogMethod,
  silentLogger,
} from "./logger.js";
