import type { FastifyBodyParser, FastifyInstance } from 'fastify';
import { JSON_MAX_DEPTH, jsonNestingExceeds } from '../common/json-depth';
import { makeJsonStorable } from '../common/storable-text';

type DefaultJsonParser = ReturnType<FastifyInstance['getDefaultJsonParser']>;

/** A body nested too deep: a 400 in the same shape as malformed JSON (a SyntaxError with a status). */
class JsonTooDeepError extends SyntaxError {
  readonly statusCode = 400;
  constructor() {
    super(`Request body is nested more than ${JSON_MAX_DEPTH} levels deep`);
  }
}

/**
 * Fastify's JSON parser (prototype-poisoning checks included) behind two guards every route needs:
 * nesting deeper than JSON_MAX_DEPTH is a 400 before anything walks the value (class-transformer
 * recurses and would overflow the stack), and strings PostgreSQL cannot hold — only a `\u` escape can
 * put U+0000 or a lone surrogate into a decoded body — become U+FFFD, keys included. An empty body is
 * no body (a cancel from a client that sends its JSON content type everywhere).
 */
export function jsonBodyParser(parseJson: DefaultJsonParser): FastifyBodyParser<string> {
  return (request, body, done) => {
    const text = body.toString();
    if (text === '') return done(null, undefined);
    if (jsonNestingExceeds(text)) return done(new JsonTooDeepError(), undefined);
    void parseJson(request, text, (error, value) => {
      if (error) done(error, undefined);
      else done(null, text.includes('\\u') ? makeJsonStorable(value) : value);
    });
  };
}
