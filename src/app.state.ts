/** What the process tells the app about itself while it runs (main.ts sets it). */
export interface AppState {
  /** Set when SIGTERM arrives: readiness answers 503 while in-flight requests finish. */
  draining: boolean;
}
