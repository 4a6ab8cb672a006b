import { DataSource } from 'typeorm';
import { dataSourceOptions } from '../../src/persistence/data-source-options';
import { aheadInLine, PriorityPool } from '../../src/persistence/priority-pool';
import { createTestDatabase } from '../support/database';

// While every pooled connection is busy, what admits a run goes first (aheadInLine).
describe('the line for a pooled connection', () => {
  let dataSource: DataSource;
  let url: string;

  beforeAll(async () => {
    url = await createTestDatabase();
    dataSource = await new DataSource(dataSourceOptions(url, 1)).initialize();
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

  it('takes back the connection of a statement that failed, and of a transaction rolled back', async () => {
    // With one connection, a place not given back would leave every later statement waiting.
    await expect(dataSource.query('SELECT 1 / $1::int', [0])).rejects.toMatchObject({ code: '22012' });
    await expect(
      dataSource.transaction(async (tx) => {
        await tx.query('SELECT 1 / $1::int', [0]);
      }),
    ).rejects.toMatchObject({ code: '22012' });
    await expect(aheadInLine(() => dataSource.query('SELECT $1::int AS n', [1]))).resolves.toEqual([
      { n: 1 },
    ]);
  });

  it('answers the promise form of connect, and counts a client released twice once', async () => {
    const pool = new PriorityPool({ connectionString: url, max: 1 });
    try {
      const first = await pool.connect();
      first.release();
      expect(() => first.release()).toThrow(/already been released/);
      // Counted twice, the next two would pass the line and wait in pg-pool's, in order of asking.
      const holder = await pool.connect();
      const order: string[] = [];
      const record = pool.connect().then((c) => {
        order.push('record');
        c.release();
      });
      const start = aheadInLine(() => pool.connect()).then((c) => {
        order.push('start');
        c.release();
      });
      holder.release();
      await Promise.all([record, start]);
      expect(order).toEqual(['start', 'record']);
    } finally {
      await pool.end();
    }
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
