// The SSE load client of the benchmark. Forked by bench/run.mjs (IPC), so it never shares an event
// loop with the server it measures. Messages in: { id, op: 'load' | 'approval', ...params };
// out: { id, result } or { id, error }. Exits when the parent goes away.
import { Agent, request } from 'node:http';

const agent = new Agent({ keepAlive: true, maxSockets: Infinity, keepAliveMsecs: 10_000 });
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/**
 * POSTs `body` as JSON to `url` and reads the answer as an event stream. `onEvent(type, data, now)`
 * is called for every event (`data` is the raw JSON text). Resolves when the stream ends; rejects on
 * a status other than 200, a network error, or `timeoutMs`.
 */
function openStream(url, body, onEvent, timeoutMs) {
  return new Promise((resolve, reject) => {
    const payload = JSON.stringify(body);
    let settled = false;
    const finish = (err) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      if (err) reject(err);
      else resolve();
    };
    const req = request(
      url,
      {
        method: 'POST',
        agent,
        headers: {
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(payload),
          accept: 'text/event-stream',
        },
      },
      (res) => {
        res.setEncoding('utf8');
        if (res.statusCode !== 200) {
          let text = '';
          res.on('data', (d) => (text += d));
          res.on('end', () => finish(new Error(`HTTP ${res.statusCode}: ${text.slice(0, 300)}`)));
          return;
        }
        let buffer = '';
        res.on('data', (chunk) => {
          const now = performance.now();
          buffer += chunk;
          let end;
          while ((end = buffer.indexOf('\n\n')) !== -1) {
            const frame = buffer.slice(0, end);
            buffer = buffer.slice(end + 2);
            let type = 'message';
            let data = '';
            for (const line of frame.split('\n')) {
              if (line.startsWith('event: ')) type = line.slice(7);
              else if (line.startsWith('data: '))
                data = data === '' ? line.slice(6) : `${data}\n${line.slice(6)}`;
            }
            if (data === '' && type === 'message') continue; // a comment (": ping")
            try {
              onEvent(type, data, now);
            } catch (err) {
              req.destroy();
              finish(err);
              return;
            }
          }
        });
        res.on('end', () => finish());
        res.on('error', finish);
        res.on('aborted', () => finish(new Error('stream aborted by the server')));
      },
    );
    const timer = setTimeout(() => {
      req.destroy();
      finish(new Error(`no end after ${timeoutMs} ms`));
    }, timeoutMs);
    req.on('error', finish);
    req.end(payload);
  });
}

function postJson(url, body, timeoutMs) {
  return new Promise((resolve, reject) => {
    const payload = JSON.stringify(body);
    const req = request(
      url,
      {
        method: 'POST',
        agent,
        headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) },
        timeout: timeoutMs,
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (d) => (text += d));
        res.on('end', () => resolve({ status: res.statusCode, text }));
        res.on('error', reject);
      },
    );
    req.on('timeout', () => req.destroy(new Error(`no answer after ${timeoutMs} ms`)));
    req.on('error', reject);
    req.end(payload);
  });
}

/** Streams that have sent their first event and not yet ended, now and at most (per load job). */
const streams = { open: 0, peak: 0 };

/** One run: POST, then time to the first `text` event and to `done`; the answer must be exactly `expectText`. */
async function oneRun({ url, model, expectText, runTimeoutMs }) {
  const t0 = performance.now();
  let ttft;
  let total;
  let texts = 0;
  let text = '';
  let status;
  let failure;
  let open = false;
  try {
    await openStream(
      url,
      { prompt: 'Read bench-input.txt and tell me what it says.', model },
      (type, data, now) => {
        if (!open) {
          open = true;
          streams.peak = Math.max(streams.peak, ++streams.open);
        }
        if (type === 'text') {
          texts++;
          text += JSON.parse(data).delta;
          if (ttft === undefined) ttft = now - t0;
        } else if (type === 'done') {
          total = now - t0;
          status = JSON.parse(data).status;
        } else if (type === 'error') {
          failure = `error event: ${data.slice(0, 300)}`;
        }
      },
      runTimeoutMs,
    );
  } finally {
    if (open) streams.open--;
  }
  if (failure) throw new Error(failure);
  if (total === undefined) throw new Error('stream ended without done');
  if (status !== 'completed') throw new Error(`done with status ${status}`);
  if (text !== expectText)
    throw new Error(`answer text differs from the model's (${texts} text events): ${text.slice(0, 80)}…`);
  return { ttft, total };
}

/**
 * `runs` runs, `concurrency` at a time; stops starting new ones after `maxMs`. With `rampMs`, worker
 * i starts i/concurrency of it late, so that the streams do not all begin (and end) in the same
 * instant round after round: arrivals spread over a run's duration, as independent clients would.
 * Throughput is runs over the wall time less the last worker's start offset (rampMs·(c−1)/c): the
 * time the level would have taken had every worker been running from the start.
 */
async function load(p) {
  const samples = [];
  const errors = [];
  let started = 0;
  streams.peak = streams.open;
  const t0 = performance.now();
  const deadline = t0 + p.maxMs;
  const rampMs = p.rampMs ?? 0;
  const worker = async (_, i) => {
    if (rampMs > 0 && i > 0) await sleep((i * rampMs) / p.concurrency);
    // `nth`: the worker's how-manieth run (0: its first, which arrives on the ramp).
    for (let nth = 0; started < p.runs && performance.now() < deadline; nth++) {
      started++;
      try {
        samples.push({ ...(await oneRun(p)), nth });
      } catch (err) {
        errors.push(err instanceof Error ? err.message : String(err));
      }
    }
  };
  await Promise.all(Array.from({ length: p.concurrency }, worker));
  const wallMs = performance.now() - t0;
  const activeMs = wallMs - (rampMs * (p.concurrency - 1)) / p.concurrency;
  return {
    samples,
    errors: errors.slice(0, 20),
    errorCount: errors.length,
    started,
    wallMs,
    runsPerSec: samples.length / (activeMs / 1000),
    peakOpenStreams: streams.peak,
    timedOut: started < p.runs,
  };
}

/**
 * Approval latency, one run at a time: open the stream on `streamUrl` (safe mode, the model asks for
 * write_file), wait for tool_approval_required, pause `pauseMs`, POST the approval to `approveBase`,
 * and time from sending the POST to the next event on the original stream.
 */
async function approval(p) {
  const samples = [];
  const posts = [];
  const errors = [];
  const deadline = performance.now() + p.maxMs;
  let done = 0;
  while (done < p.runs && performance.now() < deadline) {
    done++;
    try {
      let runId;
      let sentAt;
      let latency;
      let nextType;
      let posting;
      await openStream(
        p.streamUrl,
        { prompt: 'Write out.txt.', model: p.model, mode: 'safe' },
        (type, data, now) => {
          if (type === 'run_started') runId = JSON.parse(data).runId;
          else if (sentAt !== undefined && latency === undefined) {
            latency = now - sentAt;
            nextType = type;
          }
          if (type === 'tool_approval_required') {
            const { toolCallId } = JSON.parse(data);
            posting = (async () => {
              await sleep(p.pauseMs);
              const url = `${p.approveBase}/v1/runs/${runId}/tool-calls/${encodeURIComponent(toolCallId)}/approval`;
              sentAt = performance.now();
              const answer = await postJson(url, { approve: true }, p.runTimeoutMs);
              posts.push(performance.now() - sentAt);
              if (answer.status !== 202)
                throw new Error(`approval answered ${answer.status}: ${answer.text.slice(0, 200)}`);
            })();
            posting.catch(() => {});
          }
          if (type === 'error') throw new Error(`error event: ${data.slice(0, 300)}`);
        },
        p.runTimeoutMs,
      );
      if (posting === undefined) throw new Error('no tool_approval_required event');
      await posting;
      if (latency === undefined) throw new Error('no event after the approval');
      if (nextType !== 'tool_call_result')
        throw new Error(`next event was ${nextType}, expected tool_call_result`);
      samples.push(latency);
    } catch (err) {
      errors.push(err instanceof Error ? err.message : String(err));
    }
  }
  return {
    samples,
    posts,
    errors: errors.slice(0, 20),
    errorCount: errors.length,
    started: done,
    timedOut: done < p.runs,
  };
}

process.on('message', (msg) => {
  const job =
    msg.op === 'load'
      ? load(msg)
      : msg.op === 'approval'
        ? approval(msg)
        : Promise.reject(new Error(`unknown op ${msg.op}`));
  job.then(
    (result) => process.send({ id: msg.id, result }),
    (err) => process.send({ id: msg.id, error: err instanceof Error ? err.stack : String(err) }),
  );
});
process.on('disconnect', () => process.exit(0));
