import { DataSource } from 'typeorm';
import { dataSourceOptions } from '../../src/persistence/data-source-options';
import { createTestDatabase } from '../support/database';

// The pool's client prepares every statement with parameters once per connection (decision 010).
describe('prepared statements', () => {
  let dataSource: DataSource;

  beforeAll(async () => {
    dataSource = await new DataSource(dataSourceOptions(await createTestDatabase(), 1)).initialize();
  });
  afterAll(async () => {
    await dataSource?.destroy();
  });

  const prepared = async (text: string): Promise<number> => {
    const rows: { n: number }[] = await dataSource.query(
      'SELECT count(*)::int AS n FROM pg_prepared_statements WHERE statement = $1',
      [text],
    );
    return rows[0].n;
  };

  it('prepares a statement with parameters once, and runs it again by name', async () => {
    const text = 'SELECT $1::int + 1 AS answer';
    expect(await dataSource.query(text, [41])).toEqual([{ answer: 42 }]);
    expect(await dataSource.query(text, [1])).toEqual([{ answer: 2 }]);
    expect(await prepared(text)).toBe(1);
  });

  it('runs statements without parameters unnamed', async () => {
    const text = 'SELECT 7 AS seven';
    expect(await dataSource.query(text)).toEqual([{ seven: 7 }]);
    expect(await prepared(text)).toBe(0);
  });

  it('keeps transactions and errors as they were', async () => {
    await expect(
      dataSource.transaction(async (tx) => {
        await tx.query('SELECT $1::int AS one', [1]);
        await tx.query('SELECT 1 / $1::int', [0]);
      }),
    ).rejects.toMatchObject({ code: '22012' });
    expect(await dataSource.query('SELECT $1::text AS ok', ['yes'])).toEqual([{ ok: 'yes' }]);
  });
});
