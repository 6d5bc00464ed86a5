/**
 * Native ESM jest (jose 6 and Prisma 7's client are ESM only), TypeScript through SWC. Each test file
 * has a database of its own (tests/database.ts), so files run in several workers side by side.
 *
 * TEST_DIALECT_ONLY=1 leaves out the files whose outcome cannot depend on the database's dialect
 * (pure rules, the outbound door, generated code and types, the OpenAPI document, the examples, the
 * pages): .ci/run runs them once, on SQLite, and only the rest again on PostgreSQL.
 *
 * The files of the scale-out setup (replica processes sharing one PostgreSQL database, with Redis)
 * run when the suite runs on PostgreSQL: the SQLite pass, plain `npm test`, needs neither server.
 */
import { availableParallelism } from "node:os";

export const DIALECT_INDEPENDENT = [
  "<rootDir>/tests/unit/",
  "<rootDir>/tests/web/",
  "<rootDir>/tests/examples/",
  "<rootDir>/tests/browser/",
  "<rootDir>/tests/rest/openapi",
  "<rootDir>/tests/graphql/schema.test.ts",
  "<rootDir>/tests/http/sofa.internals.test.ts",
  "<rootDir>/tests/outbound/",
  "<rootDir>/tests/auth/access-token.test.ts",
  "<rootDir>/tests/webhooks/webhook.rules.test.ts",
  "<rootDir>/tests/process/jest-exit.test.ts",
  // On a SQLite file of their own whatever the suite's dialect: SQLite's own machinery, and the
  // process-level behaviours (drain, request log, the cache in front of Yoga).
  "<rootDir>/tests/db/wal-sync.test.ts",
  "<rootDir>/tests/db/checkpoint.test.ts",
  "<rootDir>/tests/perf/query-plans.test.ts",
  "<rootDir>/tests/process/shutdown.test.ts",
  "<rootDir>/tests/process/logs.test.ts",
  "<rootDir>/tests/cache/node-cache.test.ts",
];

export const POSTGRES_ONLY = [
  "<rootDir>/tests/replicas/",
  "<rootDir>/tests/events/events.replicas.test.ts",
  "<rootDir>/tests/feed/feed.replicas.test.ts",
  "<rootDir>/tests/webhooks/webhooks.replicas.test.ts",
  "<rootDir>/tests/cache/replicas.cache.test.ts",
  "<rootDir>/tests/db/postgres.test.ts",
  "<rootDir>/tests/health/health.replicas.test.ts",
];

const onPostgres = /^postgres(ql)?:/.test(process.env.TEST_DATABASE_URL ?? "");

export default {
  testEnvironment: "node",
  extensionsToTreatAsEsm: [".ts"],
  transform: {
    "^.+\\.ts$": [
      "@swc/jest",
      { jsc: { parser: { syntax: "typescript" }, target: "es2022" }, module: { type: "es6" } },
    ],
  },
  testMatch: ["<rootDir>/tests/**/*.test.ts"],
  testPathIgnorePatterns: [
    "/node_modules/",
    "<rootDir>/tests/bench/",
    ...(onPostgres ? [] : POSTGRES_ONLY),
    ...(process.env.TEST_DIALECT_ONLY === "1" ? DIALECT_INDEPENDENT : []),
  ],
  globalSetup: "<rootDir>/tests/global-setup.ts",
  globalTeardown: "<rootDir>/tests/global-teardown.ts",
  // Half again as many workers as cores (three on two): a file often waits (on the server processes
  // it started, a browser, a socket), and the extra worker fills that time. (Jest reads a percentage
  // over 100% as a count.)
  maxWorkers: Math.ceil(availableParallelism() * 1.5),
  // A worker that grew past this (each file loads the app's modules anew) is replaced between files.
  workerIdleMemoryLimit: "1GB",
  // A worker ends on its own once its last file is done, but a Node process with a heap this size takes
  // a while to be torn down: 0.2-0.3 s on an idle machine, 0.8-1.1 s with both cores busy, past jest's
  // default of 0.5 s, after which it kills the worker and blames a leak. A handle left open still keeps
  // a worker alive past this limit, and jest still says so.
  workerGracefulExitTimeout: 3000,
  reporters: ["default", "<rootDir>/tests/slowest.reporter.js"],
  testTimeout: 30000,
};
