import { InvalidArgumentError } from 'commander';
import * as python from '../../core/python/numbers.js';

/** An integer as Python's int() reads a flag (`' 12 '`, `+5`, `1_000`); a usage error otherwise. */
export function parsePyInt(value: string): number {
  const n = python.parsePyInt(value);
  if (n === undefined) throw new InvalidArgumentError(`invalid int value: '${value}'`);
  return n;
}

/**
 * A float as Python's float() reads a flag (`' 2.5 '`, `1e3`, `1_0.5`); a usage error otherwise, and
 * also for `inf` and `nan`, which no interval or timeout can use.
 */
export function parsePyFloat(value: string): number {
  const n = python.parsePyFloat(value);
  if (n === undefined || !Number.isFinite(n))
    throw new InvalidArgumentError(`invalid float value: '${value}'`);
  return n;
}
