import { runFuzz } from './main';

const USAGE = `usage: npm run fuzz -- [--runs N] [--seed S] [--app A] [--op PATH] [--case I] [--shrink N] [--timeout MS] [--budget S] [--no-build] [--verbose]
  --runs N      cases per target (operation or route), default 50
  --seed S      the run's seed (default: random, printed)
  --app A       only the targets of app A
  --op PATH     only the targets whose path contains PATH (--runs 0: only the corpus of known attacks)
  --case I      only case I of each chosen target (reproduces a reported failure)
  --shrink N    shrink attempts per distinct failure, default 60
  --timeout MS  a case with no answer within MS is a freeze, default 10000
  --budget S    stop sending cases after S seconds (the rest are reported as skipped)
  --no-build    use the apps already built in dist/apps
  --verbose     print every case and its answer`;

function parse(argv: string[]) {
  const o: Record<string, string | boolean> = {};
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--help' || a === '-h') o.help = true;
    else if (a === '--no-build') o.noBuild = true;
    else if (a === '--verbose') o.verbose = true;
    else if (a.startsWith('--')) {
      const [k, inline] = a.slice(2).split('=', 2);
      const v = inline ?? argv[++i];
      if (v === undefined) throw new Error(`--${k} needs a value`);
      o[k] = v;
    } else throw new Error(`unexpected argument ${a}`);
  }
  const known = ['help', 'verbose', 'noBuild', 'runs', 'seed', 'app', 'op', 'case', 'shrink', 'timeout', 'budget'];
  for (const k of Object.keys(o)) if (!known.includes(k)) throw new Error(`unknown option --${k}`);
  const int = (k: string, d: number) => {
    if (o[k] === undefined) return d;
    const n = Number(o[k]);
    if (!Number.isInteger(n)) throw new Error(`--${k} must be an integer`);
    return n;
  };
  return {
    help: Boolean(o.help),
    runs: int('runs', 50),
    seed: int('seed', Math.floor(Math.random() * 2 ** 31)),
    app: o.app as string | undefined,
    op: o.op as string | undefined,
    caseIndex: o.case === undefined ? undefined : int('case', 0),
    shrink: int('shrink', 60),
    timeoutMs: int('timeout', 10_000),
    budgetMs: o.budget === undefined ? undefined : int('budget', 0) * 1000,
    build: !o.noBuild,
    verbose: Boolean(o.verbose),
  };
}

async function main() {
  let args;
  try {
    args = parse(process.argv.slice(2));
  } catch (e) {
    console.error(`${(e as Error).message}\n${USAGE}`);
    process.exit(2);
  }
  if (args.help) {
    console.log(USAGE);
    return;
  }
  const { help: _help, ...options } = args;
  console.error(`fuzz: seed ${options.seed}, ${options.runs} runs per target`);
  const { report, text } = await runFuzz(options);
  console.log(text);
  process.exitCode = report.failures.length ? 1 : 0;
}

main().catch((e) => {
  console.error(e);
  process.exit(2);
});
