// What every fidelity script shares: its environment, its one-JSON-object-per-line stdout
// protocol, failing with the reason on stderr, and a failure guard on its run time.

// env returns the named environment variables and exits 2 naming them when one is missing.
export function env(...names) {
  const vars = Object.fromEntries(names.map((n) => [n, process.env[n]]));
  if (names.some((n) => !vars[n])) {
    console.error(`${names.join(', ')} are required`);
    process.exit(2);
  }
  return vars;
}

// emit writes one protocol line: {"event": event, ...data}.
export const emit = (event, data = {}) => console.log(JSON.stringify({ event, ...data }));

// fail ends the script with status 1 and the error on stderr.
export const fail = (err) => {
  console.error(err?.stack ?? String(err));
  process.exit(1);
};

// deadline fails the script after seconds (a failure guard, never a timing requirement) and
// returns the timer, for clearTimeout once the script is done; unhandled rejections fail it too.
export function deadline(seconds) {
  process.on('unhandledRejection', fail);
  return setTimeout(() => fail(new Error(`timed out after ${seconds} s`)), seconds * 1000);
}
