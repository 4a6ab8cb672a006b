// Issue 37: Loopwright and the floor side by side with the peers — the same job (a read_file call,
// then the answer, through the same fake upstream, every run checked the same way) on the AI SDK,
// Mastra and LangGraph JS, each a small node:http server streaming SSE (bench/peers/*.mjs) — and the
// ratios to the best peer in each column. Pure: it reads the load rows bench/run.mjs measured.
import { fmt, table } from '../format.mjs';

/** The peers, each a server script in bench/peers/ (versions pinned in bench/peers/package.json). */
export const PEERS = [
  { name: 'AI SDK', script: 'ai-sdk.mjs', what: 'streamText, @ai-sdk/openai' },
  { name: 'Mastra', script: 'mastra.mjs', what: 'Agent, @ai-sdk/openai' },
  { name: 'LangGraph', script: 'langgraph.mjs', what: 'createReactAgent, ChatOpenAI' },
];

/** What is compared: a field of one load level; `better` says which way the best peer lies. */
const COLUMNS = [
  {
    key: 'cpu16',
    label: 'cpu/run',
    mode: 'no-delay',
    c: 16,
    field: 'cpuMsPerRun',
    better: 'lower',
    digits: 2,
  },
  {
    key: 'runs16',
    label: 'runs/s',
    mode: 'no-delay',
    c: 16,
    field: 'runsPerSec',
    better: 'higher',
    digits: 1,
  },
  {
    key: 'ttft16',
    label: 'first text p50',
    mode: 'delay',
    c: 16,
    field: 'ttftP50',
    better: 'lower',
    digits: 1,
  },
  {
    key: 'total256',
    label: 'total p50',
    mode: 'delay',
    c: 256,
    field: 'totalP50',
    better: 'lower',
    digits: 1,
  },
  {
    key: 'runs256',
    label: 'runs/s',
    mode: 'delay',
    c: 256,
    field: 'runsPerSec',
    better: 'higher',
    digits: 1,
  },
  {
    key: 'cpu256',
    label: 'cpu/run',
    mode: 'delay',
    c: 256,
    field: 'cpuMsPerRun',
    better: 'lower',
    digits: 2,
  },
  {
    key: 'rss',
    label: 'peak RSS MiB',
    mode: 'delay',
    c: 256,
    field: 'peakRssMiB',
    better: 'lower',
    digits: 0,
  },
];
/** The load levels the peers run (bench/run.mjs runs only these for them). */
export const PEER_LEVELS = [...new Set(COLUMNS.map((col) => `${col.mode}:${col.c}`))].map((k) => {
  const [mode, c] = k.split(':');
  return { mode, concurrency: Number(c) };
});
export const isPeerLevel = (modeName, concurrency) =>
  PEER_LEVELS.some((l) => l.mode === modeName && l.concurrency === concurrency);

/**
 * The side-by-side figures: a row per server (Loopwright, the floor, each peer), the best peer in
 * each column, and Loopwright's and the floor's ratios to it. For CPU, Loopwright's row also counts
 * its PostgreSQL's CPU per run apart (`withPostgres`): the peers store nothing.
 */
export function comparePeers(load) {
  const level = (target, col) =>
    load.find((r) => r.target === target && r.mode === col.mode && r.concurrency === col.c);
  const rowOf = (target) => {
    const values = {};
    let errors = 0;
    let cut = false;
    let otherCores = 0;
    let measured = false;
    const seen = new Set();
    for (const col of COLUMNS) {
      const r = level(target, col);
      values[col.key] = r?.[col.field] ?? NaN;
      if (r === undefined || seen.has(r)) continue;
      seen.add(r);
      measured = true;
      errors += r.errors;
      cut ||= r.timedOut;
      otherCores = Math.max(otherCores, r.otherCores);
    }
    const pg = (key) =>
      level(
        target,
        COLUMNS.find((col) => col.key === key),
      )?.pgCpuMsPerRun ?? NaN;
    return {
      server: target,
      values,
      pgCpu16: pg('cpu16'),
      pgCpu256: pg('cpu256'),
      errors,
      cut,
      otherCores,
      measured,
    };
  };
  const rows = ['loopwright', 'floor', ...PEERS.map((p) => p.name)].map(rowOf).filter((r) => r.measured);
  const peerRows = rows.filter((r) => PEERS.some((p) => p.name === r.server));
  const best = {};
  for (const col of COLUMNS) {
    const candidates = peerRows.filter((r) => Number.isFinite(r.values[col.key]));
    if (candidates.length === 0) continue;
    const pick = (a, b) =>
      (
        col.better === 'lower'
          ? a.values[col.key] <= b.values[col.key]
          : a.values[col.key] >= b.values[col.key]
      )
        ? a
        : b;
    const winner = candidates.reduce(pick);
    best[col.key] = { peer: winner.server, value: winner.values[col.key] };
  }
  const ratiosOf = (values) =>
    Object.fromEntries(COLUMNS.map((col) => [col.key, values[col.key] / (best[col.key]?.value ?? NaN)]));
  const ratios = {};
  for (const r of rows.filter((row) => !peerRows.includes(row))) {
    ratios[r.server] = ratiosOf(r.values);
    if (Number.isFinite(r.pgCpu16)) {
      ratios[`${r.server} + PostgreSQL`] = ratiosOf({
        cpu16: r.values.cpu16 + r.pgCpu16,
        cpu256: r.values.cpu256 + r.pgCpu256,
      });
    }
  }
  return { rows, best, ratios };
}

const header = (col) => `${col.label} ${col.mode === 'delay' ? 'd' : 'nd'}${col.c}`;
const ratio = (v) => (Number.isFinite(v) ? `${fmt(v, 2)}×` : '–');

/** The comparison as text: the figures, the ratios to the best peer, Loopwright's CPU in one line. */
export function peersTable(cmp, versions) {
  const out = [];
  out.push(
    `Peers (issue 37): the same job on ${PEERS.map((p) => `${p.name} (${p.what})`).join(', ')}, each a node:http SSE server (bench/peers/, ${versions}); no peer stores anything`,
  );
  out.push(
    table(
      ['server', 'err', ...COLUMNS.map(header), 'pg cpu/run nd16', 'pg cpu/run d256', 'other load'],
      cmp.rows.map((r) => [
        `${r.server === 'loopwright' ? 'Loopwright' : r.server}${r.cut ? '*' : ''}`,
        r.errors,
        ...COLUMNS.map((col) => fmt(r.values[col.key], col.digits)),
        fmt(r.pgCpu16, 2),
        fmt(r.pgCpu256, 2),
        fmt(r.otherCores, 2),
      ]),
    ),
  );
  out.push(
    '(nd16: no delay, c=16; d16 / d256: delay mode, c=16 / c=256; times and CPU per run in ms; err: failed runs; *: a level stopped by its time limit before all its planned runs, its figures over the runs made; other load: the most cores used by processes outside the bench during a level, should be ~0)',
  );
  out.push('');
  out.push(
    table(
      ['÷ the best peer', ...COLUMNS.map(header)],
      [
        ['best peer', ...COLUMNS.map((col) => cmp.best[col.key]?.peer ?? '–')],
        ...Object.entries(cmp.ratios).map(([server, r]) => [
          server.replace('loopwright', 'Loopwright'),
          ...COLUMNS.map((col) => ratio(r[col.key])),
        ]),
      ],
    ),
  );
  out.push(
    '(best: the lowest CPU, time and RSS, the highest runs/s among the peers; "+ PostgreSQL": Loopwright\'s CPU per run with its database\'s)',
  );
  const lw = cmp.ratios.loopwright;
  const lwPg = cmp.ratios['loopwright + PostgreSQL'];
  const lightest = cmp.best.cpu16;
  if (lw && lightest) {
    out.push(
      `Server CPU per run, no delay, c=16: Loopwright ${ratio(lw.cpu16)} the lightest peer's (${lightest.peer}, ${fmt(lightest.value, 2)} ms)` +
        (lwPg ? `, ${ratio(lwPg.cpu16)} with its PostgreSQL's CPU counted.` : '.'),
    );
  }
  out.push('');
  return out.join('\n');
}
