/** Native ESM jest (jose 6 and Prisma 7's client are ESM only), TypeScript through SWC. */
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
  testPathIgnorePatterns: ["/node_modules/", "<rootDir>/tests/bench/"],
  globalSetup: "<rootDir>/tests/global-setup.ts",
  testTimeout: 30000,
};
