/**
 * What the CLI prints. Results go to stdout: words for people, or with `--json` exactly one JSON
 * document, also when the command fails. Notes, questions and progress go to stderr. Colours and the
 * spinner appear only when the stream is a terminal (and NO_COLOR is unset), so CI logs and pipes get
 * plain text.
 */
import { createInterface } from "node:readline/promises";
import { Writable } from "node:stream";
import { type CliError, type Problem, usage } from "./cli.errors.ts";

type Tty = Writable & { isTTY?: boolean };

const colourful = (stream: Tty, env: NodeJS.ProcessEnv) =>
  stream.isTTY === true && env.NO_COLOR === undefined && env.TERM !== "dumb";

function painter(on: boolean) {
  const paint = (open: number, close: number) => (text: string) => (on ? `\x1b[${open}m${text}\x1b[${close}m` : text);
  return {
    bold: paint(1, 22),
    dim: paint(2, 22),
    red: paint(31, 39),
    green: paint(32, 39),
    yellow: paint(33, 39),
    cyan: paint(36, 39),
  };
}
export type Paint = ReturnType<typeof painter>;

const SPINNER = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"];

export class Output {
  /** Colours for stdout and for stderr, each on only when its stream is a terminal. */
  readonly out: Paint;
  readonly err: Paint;
  private readonly stdin: NodeJS.ReadStream;
  private readonly stdout: Tty;
  private readonly stderr: Tty;

  constructor(
    readonly json: boolean,
    streams: { stdin: NodeJS.ReadStream; stdout: Tty; stderr: Tty },
    env: NodeJS.ProcessEnv,
  ) {
    this.stdin = streams.stdin;
    this.stdout = streams.stdout;
    this.stderr = streams.stderr;
    this.out = painter(colourful(this.stdout, env));
    this.err = painter(colourful(this.stderr, env));
  }

  /** Whether a person is there to answer a question. */
  get interactive(): boolean {
    return this.stdin.isTTY === true && this.stderr.isTTY === true;
  }

  /** The command's result: `lines` for people, `data` with --json. */
  result(data: unknown, lines: string | string[]): void {
    if (this.json) this.stdout.write(`${JSON.stringify(data, null, 2)}\n`);
    else {
      const text = Array.isArray(lines) ? lines.join("\n") : lines;
      if (text) this.stdout.write(`${text}\n`);
    }
  }

  /** A note for the person (never with --json, where stdout carries one document and nothing else is said). */
  note(text: string): void {
    if (!this.json) this.stderr.write(`${text}\n`);
  }

  /** Something the person must act on, said even with --json (a sign-in code to enter). */
  tell(text: string): void {
    this.stderr.write(`${text}\n`);
  }

  /** A failure: its message and each problem by pointer, or with --json one `{ error }` document on stdout. */
  failure(error: CliError): void {
    const { problems, ...rest } = error.details;
    if (this.json) {
      const body = { error: { message: error.message, exitCode: error.exitCode, ...rest, problems: problems ?? [] } };
      this.stdout.write(`${JSON.stringify(body, null, 2)}\n`);
      return;
    }
    const e = this.err;
    this.stderr.write(`${e.red(e.bold("error:"))} ${error.message}\n`);
    for (const line of problemLines(problems ?? [], e)) this.stderr.write(`${line}\n`);
  }

  /** A spinner on stderr while `work` runs, on a terminal only; elsewhere the label once, as a note. */
  async spin<T>(label: string, work: Promise<T>): Promise<T> {
    if (this.json || this.stderr.isTTY !== true) return work;
    let frame = 0;
    const draw = () => this.stderr.write(`\r${this.err.cyan(SPINNER[frame++ % SPINNER.length] as string)} ${label}`);
    draw();
    const timer = setInterval(draw, 80);
    try {
      return await work;
    } finally {
      clearInterval(timer);
      this.stderr.write("\r\x1b[2K");
    }
  }

  /** A yes/no question on the terminal; without one it is a usage error naming the flag that answers it. */
  async confirm(question: string, flag: string): Promise<boolean> {
    if (!this.interactive) throw usage(`${question} There is no terminal to ask on: pass ${flag}`);
    return /^y(es)?$/i.test((await this.ask(`${question} [y/N] `)).trim());
  }

  /** A question on the terminal; `fallback` is taken for an empty answer. */
  async ask(question: string, fallback = ""): Promise<string> {
    const rl = createInterface({ input: this.stdin, output: this.stderr, terminal: true });
    try {
      const answer = (await rl.question(fallback ? `${question} (${fallback}) ` : question)).trim();
      return answer || fallback;
    } finally {
      rl.close();
    }
  }

  /** A secret typed on the terminal, not echoed. */
  async secret(question: string): Promise<string> {
    const muted = new Writable({ write: (_c, _e, done) => done() });
    this.stderr.write(question);
    const rl = createInterface({ input: this.stdin, output: muted, terminal: true });
    try {
      return (await rl.question("")).trim();
    } finally {
      rl.close();
      this.stderr.write("\n");
    }
  }
}

/** A list of problems, one a line: the pointer (or "(file)" for the whole), then the words. */
export function problemLines(problems: readonly Problem[], paint: Paint): string[] {
  return problems.map((p) => `  ${paint.bold(p.path === "" ? "(file)" : p.path)}: ${p.message}`);
}
