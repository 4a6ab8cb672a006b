import type { MigrationInterface, QueryRunner } from 'typeorm';
import { reserveBudgets } from './1797850000000-reservation-batches';

/**
 * `reserve_budgets` made in a fixed number of statements whatever the batch's size. Calling
 * `reserve_budget` once per reservation cost PostgreSQL ~1 ms each (five statements, each touching
 * the key's counter row), so a batch of ten at c=256 held the row for ~90 ms. Now the batch locks
 * its counters (and those its replacing reservations held) once, gives back what the replacing ones
 * held, folds the spend deltas in, reads the counters, decides each reservation in order in memory
 * — exactly as `reserve_budget` decides one (the output that fits every limit beside the prompt; -1
 * when it would fit once the reservations in flight are given back, -2 when it will not or a
 * counter it needs is gone) — and writes the counters and the reservations once.
 */
export class SetReservations1797870000000 implements MigrationInterface {
  name = 'SetReservations1797870000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE OR REPLACE FUNCTION reserve_budgets(p_asks jsonb) RETURNS TABLE (place integer, granted integer)
      LANGUAGE plpgsql AS $$
      DECLARE
        replacing uuid[];
        cs text[]; ws text[];
        tok numeric[]; cost numeric[]; rtok numeric[]; rusd numeric[];
        places integer[] := '{}'; grants integer[] := '{}';
        r_run uuid[] := '{}'; r_owner text[] := '{}'; r_i integer[] := '{}';
        r_tok numeric[] := '{}'; r_usd numeric[] := '{}';
        a jsonb; n integer := 0; j integer; i integer; k integer;
        c text; w text; lim numeric; unit text;
        prompt_tokens numeric; prompt_usd numeric; out_usd numeric; max_out integer; min_out integer;
        fit numeric; free numeric; found_counters integer; limits integer; mine integer[];
      BEGIN
        SELECT coalesce(array_agg((e.ask->>'run')::uuid), '{}') INTO replacing
          FROM jsonb_array_elements(p_asks) AS e(ask) WHERE (e.ask->>'replacing')::boolean;
        -- The counters the asks may create: a key's, an end user's, and a run's only while it runs.
        INSERT INTO key_spend (owner, window_kind, window_start)
        SELECT DISTINCT x.c, x.w, budget_window(x.w)
          FROM jsonb_array_elements(p_asks) AS e(ask),
               LATERAL unnest(ARRAY(SELECT jsonb_array_elements_text(e.ask->'counters')),
                              ARRAY(SELECT jsonb_array_elements_text(e.ask->'windows'))) AS x(c, w)
         WHERE x.w <> 'run' OR x.c = 'run/' || (e.ask->>'run')
            OR EXISTS (SELECT 1 FROM runs r WHERE r.id = substr(x.c, 5)::uuid AND r.status IN ('running', 'requires_action'))
         ORDER BY 1, 2
        ON CONFLICT DO NOTHING;
        -- Every row this statement changes, locked once, in the order every statement locks them.
        PERFORM 1 FROM key_spend k
         WHERE (k.owner, k.window_kind, k.window_start) IN (
                 SELECT x.c, x.w, budget_window(x.w)
                   FROM jsonb_array_elements(p_asks) AS e(ask),
                        LATERAL unnest(ARRAY(SELECT jsonb_array_elements_text(e.ask->'counters')),
                                       ARRAY(SELECT jsonb_array_elements_text(e.ask->'windows'))) AS x(c, w)
                 UNION
                 SELECT b.counter, b.window_kind, b.window_start FROM budget_reservations b
                  WHERE b.run_id = ANY(replacing))
         ORDER BY k.owner, k.window_kind, k.window_start
           FOR UPDATE;
        -- What the replacing reservations' runs held, given back.
        WITH gone AS (
          DELETE FROM budget_reservations b WHERE b.run_id = ANY(replacing)
          RETURNING b.counter, b.window_kind, b.window_start, b.tokens, b.cost_usd
        ), moved AS (
          SELECT counter, window_kind, window_start, sum(tokens) AS t, sum(cost_usd) AS u
            FROM gone GROUP BY 1, 2, 3
        )
        UPDATE key_spend k SET reserved_tokens = k.reserved_tokens - m.t, reserved_usd = k.reserved_usd - m.u
          FROM moved m
         WHERE k.owner = m.counter AND k.window_kind = m.window_kind AND k.window_start = m.window_start;
        -- The batch's counters as they stand, their deltas folded in.
        SELECT array_agg(x.c ORDER BY x.c, x.w), array_agg(x.w ORDER BY x.c, x.w) INTO cs, ws
          FROM (SELECT DISTINCT u.c, u.w
                  FROM jsonb_array_elements(p_asks) AS e(ask),
                       LATERAL unnest(ARRAY(SELECT jsonb_array_elements_text(e.ask->'counters')),
                                      ARRAY(SELECT jsonb_array_elements_text(e.ask->'windows'))) AS u(c, w)) x;
        IF cs IS NOT NULL THEN
          PERFORM fold_spend(cs, ws);
        END IF;
        SELECT array_agg(k.tokens::numeric ORDER BY t.n), array_agg(k.cost_usd::numeric ORDER BY t.n),
               array_agg(k.reserved_tokens::numeric ORDER BY t.n), array_agg(k.reserved_usd ORDER BY t.n)
          INTO tok, cost, rtok, rusd
          FROM unnest(cs, ws) WITH ORDINALITY AS t(c, w, n)
          LEFT JOIN key_spend k ON k.owner = t.c AND k.window_kind = t.w AND k.window_start = budget_window(t.w);
        -- Each reservation in order, as reserve_budget decides one.
        FOR a IN SELECT e.ask FROM jsonb_array_elements(p_asks) WITH ORDINALITY AS e(ask, o) ORDER BY e.o LOOP
          prompt_tokens := (a->>'promptTokens')::numeric;
          prompt_usd := (a->>'promptUsd')::numeric;
          out_usd := (a->>'outUsd')::numeric;
          max_out := (a->>'maxOut')::integer;
          min_out := (a->>'minOut')::integer;
          fit := max_out; free := max_out; found_counters := 0; mine := '{}';
          limits := coalesce(jsonb_array_length(a->'counters'), 0);
          FOR j IN 0 .. limits - 1 LOOP
            c := a->'counters'->>j; w := a->'windows'->>j;
            unit := a->'units'->>j; lim := (a->'amounts'->>j)::numeric;
            i := array_position(cs, c);
            WHILE i IS NOT NULL AND ws[i] <> w LOOP
              i := array_position(cs, c, i + 1);
            END LOOP;
            CONTINUE WHEN i IS NULL OR tok[i] IS NULL;
            found_counters := found_counters + 1;
            IF NOT i = ANY(mine) THEN mine := mine || i; END IF;
            IF unit = 'tokens' THEN
              fit := least(fit, lim - tok[i] - rtok[i] - prompt_tokens);
              free := least(free, lim - tok[i] - prompt_tokens);
            ELSIF out_usd > 0 THEN
              fit := least(fit, floor((lim - cost[i] - rusd[i] - prompt_usd) / out_usd));
              free := least(free, floor((lim - cost[i] - prompt_usd) / out_usd));
            ELSE
              IF lim - cost[i] - rusd[i] - prompt_usd < 0 THEN fit := -1; END IF;
              IF lim - cost[i] - prompt_usd < 0 THEN free := -1; END IF;
            END IF;
          END LOOP;
          places := places || n;
          IF found_counters < limits THEN
            grants := grants || -2;
          ELSIF fit < min_out THEN
            grants := grants || (CASE WHEN free >= min_out THEN -1 ELSE -2 END);
          ELSE
            grants := grants || fit::integer;
            FOREACH k IN ARRAY mine LOOP
              rtok[k] := rtok[k] + prompt_tokens + fit;
              rusd[k] := rusd[k] + prompt_usd + fit * out_usd;
              r_run := r_run || (a->>'run')::uuid;
              r_owner := r_owner || (a->>'owner');
              r_i := r_i || k;
              r_tok := r_tok || (prompt_tokens + fit);
              r_usd := r_usd || (prompt_usd + fit * out_usd);
            END LOOP;
          END IF;
          n := n + 1;
        END LOOP;
        IF array_length(r_run, 1) > 0 THEN
          UPDATE key_spend k SET reserved_tokens = t.rt, reserved_usd = t.ru
            FROM unnest(cs, ws, rtok, rusd) AS t(c, w, rt, ru)
           WHERE k.owner = t.c AND k.window_kind = t.w AND k.window_start = budget_window(t.w)
             AND (k.reserved_tokens <> t.rt OR k.reserved_usd <> t.ru);
          INSERT INTO budget_reservations (run_id, counter, window_kind, window_start, owner, tokens, cost_usd)
          SELECT r.run, cs[r.i], ws[r.i], budget_window(ws[r.i]), min(r.owner), sum(r.t), sum(r.u)
            FROM unnest(r_run, r_owner, r_i, r_tok, r_usd) AS r(run, owner, i, t, u)
           GROUP BY r.run, r.i
          ON CONFLICT (run_id, counter, window_kind, window_start)
          DO UPDATE SET tokens = budget_reservations.tokens + excluded.tokens,
                        cost_usd = budget_reservations.cost_usd + excluded.cost_usd;
        END IF;
        RETURN QUERY SELECT p.place, p.granted FROM unnest(places, grants) AS p(place, granted);
      END $$`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(reserveBudgets(true));
  }
}
