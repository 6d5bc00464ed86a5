/** The part of autocannon's programmatic API the benchmark uses (the package ships no types). */
declare module "autocannon" {
  interface Histogram {
    average: number;
    p50: number;
    p99: number;
  }
  interface Result {
    requests: Histogram;
    latency: Histogram;
    errors: number;
    timeouts: number;
    non2xx: number;
  }
  interface RequestSpec {
    method?: string;
    path?: string;
    headers?: Record<string, string>;
    body?: string;
    setupRequest?: (request: object) => object;
  }
  interface Options {
    url: string;
    connections?: number;
    duration?: number;
    overallRate?: number;
    requests?: RequestSpec[];
  }
  interface Instance extends PromiseLike<Result> {
    on(event: "response", listener: (client: unknown, status: number, bytes: number, ms: number) => void): void;
  }
  function autocannon(options: Options): Instance;
  export default autocannon;
}
