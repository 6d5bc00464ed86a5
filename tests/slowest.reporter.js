/** A jest reporter: after the summary, the ten slowest test files with their seconds, so a slow file is seen the day it lands. */
export default class SlowestFiles {
  onRunComplete(_contexts, results) {
    const files = results.testResults
      .map((r) => ({
        file: r.testFilePath.replace(`${process.cwd()}/`, ""),
        seconds: (r.perfStats.end - r.perfStats.start) / 1000,
      }))
      .sort((a, b) => b.seconds - a.seconds)
      .slice(0, 10);
    if (files.length < 2) return;
    const lines = files.map(({ file, seconds }) => `  ${seconds.toFixed(1).padStart(6)} s  ${file}`);
    process.stdout.write(`\nThe ten slowest test files:\n${lines.join("\n")}\n`);
  }
}
