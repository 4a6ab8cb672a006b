import { jsonNestingExceeds } from '../common/json-depth';
import type { ResponseFormat } from '../common/response-format';
import { checkAgainst, compileSchema } from '../tools/json-schema';

/** At most this many corrective turns per run: the answer goes back once with what is wrong. */
export const OUTPUT_CORRECTIONS = 1;

/** How much of the problems a corrective turn (and the run's error) quotes. */
const PROBLEM_MAX_CHARS = 2_000;

/**
 * What the loop does with a final answer of a run that has a responseFormat:
 * - `valid`: its parsed value is `done.output`, `text` (the JSON, without a Markdown fence around
 *   it) the stored answer;
 * - `correct`: it goes back to the model with `problem`, as a user message, and the loop goes on;
 * - `invalid`: the run fails `INVALID_OUTPUT` (no correction left).
 */
export type AnswerCheck =
  | { kind: 'valid'; output: unknown; text: string }
  | { kind: 'correct'; problem: string }
  | { kind: 'invalid'; problem: string };

/** Whether `answer` is JSON valid against the format's schema, and what is wrong with it if not. */
export function checkAnswer(
  format: ResponseFormat,
  answer: string,
): { ok: true; output: unknown; text: string } | { ok: false; problem: string } {
  const text = unfenced(answer.trim());
  if (text === '') return { ok: false, problem: 'the answer is empty; it must be a JSON object' };
  // Before parsing: ajv and JSON.stringify recurse per level (common/json-depth.ts).
  if (jsonNestingExceeds(text)) return { ok: false, problem: 'the answer nests deeper than 64 levels' };
  let output: unknown;
  try {
    output = JSON.parse(text);
  } catch (err) {
    return { ok: false, problem: `the answer is not JSON (${(err as Error).message})` };
  }
  // The schema was compiled when the run's format was accepted (sessions/response-format.ts).
  const check = checkAgainst(compileSchema(format.schema), output, 'the answer');
  if (!check.ok) return { ok: false, problem: bounded(check.message) };
  return { ok: true, output, text };
}

/**
 * The loop's verdict on a final answer: valid, one more try (while the run has a correction left
 * and a model call after this one), or the end.
 */
export function judgeAnswer(
  format: ResponseFormat,
  answer: string,
  run: { outputCorrections: number; lastIteration: boolean },
): AnswerCheck {
  const checked = checkAnswer(format, answer);
  if (checked.ok) return { kind: 'valid', output: checked.output, text: checked.text };
  const mayCorrect = run.outputCorrections < OUTPUT_CORRECTIONS && !run.lastIteration;
  return { kind: mayCorrect ? 'correct' : 'invalid', problem: checked.problem };
}

/** The user message that sends an answer back to the model. */
export function correctionPrompt(problem: string): string {
  return (
    `Your answer does not match the required JSON format: ${problem}. ` +
    'Answer again with only the JSON value, valid against the schema, and nothing around it.'
  );
}

/** The run's error message when its answer stayed invalid. */
export function invalidOutputMessage(problem: string): string {
  return `The final answer does not match responseFormat: ${problem}`;
}

/** ```json … ``` (or ``` … ```) around the whole answer is taken off: the JSON is what is inside. */
function unfenced(text: string): string {
  const fence = /^```[a-zA-Z]*\n([\s\S]*)\n```$/.exec(text);
  return fence ? fence[1].trim() : text;
}

function bounded(text: string): string {
  return text.length > PROBLEM_MAX_CHARS ? `${text.slice(0, PROBLEM_MAX_CHARS)}…` : text;
}
