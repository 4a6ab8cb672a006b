/**
 * The server's tuned numbers, in one place: what each bounds, the measurement that chose it, and
 * whether it matters. Figures are from `npm run bench`'s 1,000-stream scenario (1,000 ~10 s model
 * streams started over 5 s on one process, two cores) unless said otherwise; the history is in
 * `git log -p -- docs/decisions/010-group-commit-and-a-light-event-log.md`.
 * Run to run, the loop delay p99 there moves by about ±5 ms: a change smaller than that is noise.
 *
 * Matter (moving them moved a figure beyond the noise): RUN_STARTS_PER_TICK, LISTENING_SOCKETS,
 * DATABASE_POOL_SIZE. The rest bound memory or the size of one piece of work
 * and were not tuned by measurement; their value is a reasonable bound, not an optimum.
 */

/*
 * Gone: MODEL_READS_PER_TICK (model answers handed on a few per tick). With the socket's native
 * readStop it took the loop delay p99 from 78–91 to 35–56 ms (decision 010). With public API only (the
 * body's pause(), issue 29) Node reads on into the body's and socket's buffers, and two pairs of
 * `node bench/run.mjs --only=capacity` measured, with the bound at 8 against none: peak RSS 918 and
 * 879 against 532 and 549 MiB, total p50 26.0 and 25.0 against 17.7 and 16.4 s, loop delay p99 48.5
 * and 45.6 against 52.2 and 48.8 ms (within the noise). It no longer earned its place.
 *
 * Gone: STREAM_WAKES_PER_TICK (the streams of one group write woken 64 sinks a tick, StreamWakes).
 * Four interleaved pairs of `node bench/run.mjs --only=capacity`, with the cap against none: loop
 * delay p99 59.4, 51.9, 49.2, 46.4 against 49.3, 48.0, 53.3, 55.6 ms (the noise), first text p50
 * 6.2–8.7 against 5.9–6.6 s. Each sink now wakes its streams in the next tick, as before it; so
 * removed: 48.6 and 53.8 ms, first text p50 5.7 s.
 */

/**
 * Run starts let through per tick (TickGate in Runs.start). Matters while many runs start at
 * once: ticks went from 21–35 ms to 4.8–7.7 ms at the median while the 1,000 started, loop delay p99
 * 27.5–31.4 ms against 29.8–40.6 in seven back-to-back pairs; 2 or 4 a tick: 29.7–32.7 ms, no
 * better (decision 010's history). One a tick was thousands a second only while ticks were short:
 * at c=256 with traces and a budget, ticks of 5–15 ms let ~100 starts a second through while ~110
 * arrived, and a start waited for the gate 287 ms at the median (1,045 ms p90) — 8 a tick, 0.9 ms
 * (a timeline of every run, `node bench/run.mjs --only=c256 --traces --budgets`); first text p50 in
 * two interleaved pairs of the same, rounds 1–3: 1,750, 1,496, 1,135 and 1,778, 2,046, 1,677 ms
 * with 1 a tick against 1,417, 1,164, 963 and 1,146, 1,222, 1,203 with 8 (docs/performance.md).
 * Its cost, at 1,000 streams (`--only=capacity`): loop delay p99 78.5 ms against 59.0–62.9 with 1
 * (4 a tick: 80.3), for first text p50 6.5–8.2 s against 9.9–10.2 s.
 */
export const RUN_STARTS_PER_TICK = 8;

/**
 * Sockets listening on the port (SO_REUSEPORT), each accepting one connection per tick (libuv
 * #3696). Matters when many clients arrive at once: with one socket a busy server accepted ~30
 * connections a second and 1,000 clients over 5 s waited up to 13 s; with eight all 1,000 are open
 * at once (decision 010). Eight was not compared with other counts.
 */
export const LISTENING_SOCKETS = 8;

/**
 * Connections in the database pool. Matters, as admission control: while the 1,000 start, queries
 * queue for a connection; 20 gave first text p50 5.0 s and loop delay p99 120 ms, 40 gave 4.1 s and
 * 142 ms, ten 8.5–9.1 s and 88–91 ms on the same day; five or six, within the noise (010). In
 * that line, what admits a run (its start, its calls' reservations) goes first: `aheadInLine`.
 */
export const DATABASE_POOL_SIZE = 10;

/**
 * At most one write of a run's text and tool output this often (FlushSchedule). 250 ms gave the
 * same loop delay (p99 93.8 and 89.7 ms against 100.5 and 84.3) for somewhat less CPU per run
 * (20.6–21.1 against 22.9–25.3 ms); 100 stays because a reader would see the text move in coarser
 * steps (010). How often a client sees text, more than a performance knob.
 */
export const FLUSH_DELAY_MS = 100;

/** A sink writes at once, without waiting for FLUSH_DELAY_MS, past this many unstored events. A bound on one write. */
export const FLUSH_MAX_EVENTS = 256;

/** A sink writes at once past this much unstored text (UTF-16 units): one row stays small. A bound. */
export const FLUSH_MAX_TEXT_CHARS = 64 * 1024;

/**
 * Stored events a sink keeps in memory for this process's streams; a stream further behind reads
 * the log. A bound on memory per run (trimmed in chunks of this size), not measured.
 */
export const SINK_WINDOW_EVENTS = 256;

/**
 * Chunks an answer's reader may hold unread before its body is paused (BodyChunks). A bound on
 * memory per answer: reads at 1,000 streams found 0–3 chunks waiting most of the time, at most 16
 * (decision 010's history); not measured as a knob.
 */
export const BODY_HIGH_WATER_CHUNKS = 16;

/*
 * Span sizes (RunTracing). Bounds, not measured: a span's size follows from what the model, a tool
 * or a client wrote (a tool's name, an answer, a prompt with content capture), and the batch
 * processor holds up to SPAN_QUEUE_MAX of them while the collector is slow or down.
 */

/** Spans the batch processor holds for the collector; past it new spans are dropped, never waited for. */
export const SPAN_QUEUE_MAX = 4096;

/**
 * The longest span name (UTF-16 units): `chat <model>`, `execute_tool <tool name>`. A model's name is
 * at most 200 characters (the session's `model`), a tool's whatever the model or an MCP server
 * wrote; 256 keeps every real one whole.
 */
export const SPAN_NAME_MAX_CHARS = 256;

/**
 * The longest attribute value (the SDK's attributeValueLengthLimit, UTF-16 units). It bounds what
 * content capture records of a prompt, an answer, a tool's arguments and its result (the message
 * arrays are cut to fit first, so they stay JSON): with two such attributes a span, a full queue
 * holds at most 4,096 × 2 × 8,192 units — 128 MiB — and only with capture on and the collector
 * gone; without capture, attributes are ids, names and counts far below it.
 */
export const SPAN_ATTRIBUTE_MAX_CHARS = 8192;

/** Attributes one span keeps (the SDK's attributeCountLimit); a span here sets about 20. */
export const SPAN_ATTRIBUTE_MAX_COUNT = 64;

/** Events and links one span keeps (a tool call's span has one event, a taken-over stretch one link). */
export const SPAN_EVENT_MAX_COUNT = 16;
