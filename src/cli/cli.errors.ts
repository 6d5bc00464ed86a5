/**
 * How the CLI fails: exit 1 for a refusal or a failure (the registry's problem, a file that does not
 * validate, a registry that cannot be reached), exit 2 for a command line that cannot be run as given.
 */

/** A field at fault, by JSON Pointer into the file or body, in plain words. */
export interface Problem {
  path: string;
  message: string;
}

export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode: 1 | 2 = 1,
    readonly details: { problems?: Problem[]; status?: number; code?: string; [key: string]: unknown } = {},
  ) {
    super(message);
  }
}

/** Wrong usage: exit 2, as commander's own usage errors. */
export function usage(message: string): CliError {
  return new CliError(message, 2);
}
