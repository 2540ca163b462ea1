/**
 * Fastify gives every request its own pino child logger: the request id serialised into the
 * child's bindings and, on a route with its own level, every log method rebuilt — over a
 * microsecond per request, for a logger that busy routes (access line below their level) never
 * write to. This factory hands out a stand-in that builds the real child only when a line at an
 * enabled level is written, or when the child itself is asked for; lines are the same.
 */
import type { FastifyBaseLogger } from "fastify";
import type { Bindings, ChildLoggerOptions, Logger } from "pino";

type Method = "fatal" | "error" | "warn" | "info" | "debug" | "trace";

class LazyRequestLogger {
  readonly #parent: Logger;
  readonly #bindings: Bindings;
  readonly #options: ChildLoggerOptions;
  /** Lines below this level value are dropped without building the child. */
  readonly #threshold: number;
  #child: Logger | undefined;

  constructor(parent: Logger, bindings: Bindings, options: ChildLoggerOptions) {
    this.#parent = parent;
    this.#bindings = bindings;
    this.#options = options;
    this.#threshold = options.level === undefined ? parent.levelVal : (parent.levels.values[options.level] ?? 0);
  }

  #real(): Logger {
    this.#child ??= this.#parent.child(this.#bindings, this.#options);
    return this.#child;
  }

  #write(method: Method, args: unknown[]) {
    if (this.#child === undefined && (this.#parent.levels.values[method] ?? 0) < this.#threshold) return;
    (this.#real()[method] as (...line: unknown[]) => void)(...args);
  }

  get level(): string {
    return this.#child?.level ?? this.#options.level ?? this.#parent.level;
  }
  set level(level: string) {
    this.#real().level = level;
  }
  fatal(...args: unknown[]) {
    this.#write("fatal", args);
  }
  error(...args: unknown[]) {
    this.#write("error", args);
  }
  warn(...args: unknown[]) {
    this.#write("warn", args);
  }
  info(...args: unknown[]) {
    this.#write("info", args);
  }
  debug(...args: unknown[]) {
    this.#write("debug", args);
  }
  trace(...args: unknown[]) {
    this.#write("trace", args);
  }
  silent() {}
  child(bindings: Bindings, options?: ChildLoggerOptions): Logger {
    return this.#real().child(bindings, options);
  }
  bindings(): Bindings {
    return this.#real().bindings();
  }
  isLevelEnabled(level: string): boolean {
    return this.#real().isLevelEnabled(level);
  }
}

export function lazyChildLoggerFactory(
  logger: FastifyBaseLogger,
  bindings: Bindings,
  options: ChildLoggerOptions,
): FastifyBaseLogger {
  return new LazyRequestLogger(logger as unknown as Logger, bindings, options) as unknown as FastifyBaseLogger;
}
