import { createInterface } from 'node:readline';

let reader: ReturnType<typeof createInterface> | undefined;
let lines: AsyncIterator<string> | undefined;

/** The next line of a standard input that is not a terminal (piped answers, one per prompt). */
async function nextLine(): Promise<string | undefined> {
  reader ??= createInterface({ input: process.stdin, terminal: false });
  lines ??= reader[Symbol.asyncIterator]();
  const r = await lines.next();
  return r.done ? undefined : r.value;
}

/** Reads one line from the terminal without showing what is typed (raw mode; Ctrl-C aborts). */
function readHidden(): Promise<string> {
  return new Promise((resolve, reject) => {
    const stdin = process.stdin;
    let value = '';
    stdin.setRawMode(true);
    stdin.resume();
    stdin.setEncoding('utf8');
    const done = (err?: Error) => {
      stdin.setRawMode(false);
      stdin.pause();
      stdin.off('data', onData);
      process.stderr.write('\n');
      if (err) reject(err);
      else resolve(value);
    };
    const onData = (chunk: string) => {
      for (const ch of chunk) {
        if (ch === '\r' || ch === '\n' || ch === '\u0004') return done();
        if (ch === '\u0003') return done(new Error('aborted'));
        if (ch === '\u007f' || ch === '\b') value = value.slice(0, -1);
        else value += ch;
      }
    };
    stdin.on('data', onData);
  });
}

/**
 * Asks on stderr and reads the answer: hidden when standard input is a terminal, else the next line
 * of standard input. Undefined when there is nothing to read.
 */
export async function ask(question: string, hidden: boolean): Promise<string | undefined> {
  process.stderr.write(question);
  if (process.stdin.isTTY) {
    if (hidden) return readHidden();
    const rl = createInterface({ input: process.stdin, output: process.stderr });
    return new Promise((resolve) => rl.question('', (a) => (rl.close(), resolve(a))));
  }
  const line = await nextLine();
  process.stderr.write('\n');
  return line;
}

/** Lets the process end: stops reading standard input. */
export function closePrompts() {
  reader?.close();
  process.stdin.pause();
}
