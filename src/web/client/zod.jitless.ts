/**
 * zod compiles a faster parser with `new Function` unless told not to; the pages' Content-Security-
 * Policy (no 'unsafe-eval') refuses that, and Chromium reports each refusal as a CSP issue. zod keeps
 * its configuration on globalThis and reads it as each schema is built, so a page that loads the
 * rules imports this first: the same rules, interpreted, which for one form costs nothing that shows.
 * (Not `z.config()`: the bundler puts zod and the rules in one shared chunk, evaluated before any
 * module that would call it.)
 */
const zodConfig = globalThis as { __zod_globalConfig?: { jitless?: boolean } };
// Changed in place: should zod have loaded already, it holds this very object.
zodConfig.__zod_globalConfig ??= {};
zodConfig.__zod_globalConfig.jitless = true;
