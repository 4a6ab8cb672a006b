// Applies a three-file change through the tools' commit (dist/), pausing for ever before step
// `PAUSE_AT` after printing "paused": the test kills it there. Args: workspace root, PAUSE_AT.
const { join } = require('node:path');
const { commitChanges } = require('../../../dist/tools/fs/file-change-plan.js');

const [root, pauseAt] = [process.argv[2], Number(process.argv[3])];
const change = (name, before, after) => ({
  path: name,
  absPath: join(root, name),
  before: before === null ? null : Buffer.from(before),
  after: after === null ? null : Buffer.from(after),
});
commitChanges(
  root,
  [change('a.txt', 'old a\n', 'new a\n'), change('b.txt', null, 'new b\n'), change('c.txt', 'old c\n', null)],
  {
    beforeStep: async (step) => {
      if (step !== pauseAt) return;
      // A pending promise alone does not keep Node alive: without the timer the process could exit
      // (code 0) before the test's kill arrives.
      setInterval(() => {}, 60_000);
      process.stdout.write('paused\n');
      await new Promise(() => {});
    },
  },
).then(() => process.stdout.write('done\n'));
