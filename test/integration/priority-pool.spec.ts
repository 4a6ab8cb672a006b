import { DataSource } from 'typeorm';
import { dataSourceOptions } from '../../src/persistence/data-source-options';
import { aheadInLine } from '../../src/persistence/priority-pool';
import { createTestDatabase } from '../support/database';

// While every pooled connection is busy, what admits a run goes first (aheadInLine).
describe('the line for a pooled connection', () => {
  let dataSource: DataSource;

  beforeAll(async () => {
    dataSource = await new DataSource(dataSourceOptions(await createTestDatabase(), 1)).initialize();
  });
  afterAll(async () => {
    await dataSource?.destroy();
  });

  it('serves statements ahead first, in their order, then the others in theirs', async () => {
    // The pool's one connection, held until every statement below waits for it.
    const holder = dataSource.createQueryRunner();
    await holder.connect();
    const order: string[] = [];
    const statement = (name: string) =>
      dataSource.query('SELECT $1::text AS name', [name]).then(() => void order.push(name));
    const all = [
      statement('record 1'),
      aheadInLine(() => statement('start 1')),
      statement('record 2'),
      aheadInLine(() => statement('start 2')),
    ];
    // Every statement is in the line (TypeORM asks the pool within a few ticks).
    for (let i = 0; i < 20; i++) await new Promise((resolve) => setImmediate(resolve));
    await holder.release();
    await Promise.all(all);
    expect(order).toEqual(['start 1', 'start 2', 'record 1', 'record 2']);
  });

  it('keeps the order of the others when nothing is ahead', async () => {
    const holder = dataSource.createQueryRunner();
    await holder.connect();
    const order: number[] = [];
    const all = [1, 2, 3].map((n) =>
      dataSource.query('SELECT $1::int AS n', [n]).then(() => void order.push(n)),
    );
    for (let i = 0; i < 20; i++) await new Promise((resolve) => setImmediate(resolve));
    await holder.release();
    await Promise.all(all);
    expect(order).toEqual([1, 2, 3]);
  });
});
