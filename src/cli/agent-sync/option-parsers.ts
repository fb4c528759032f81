import { InvalidArgumentError } from 'commander';

/** An integer as Python's int() reads a flag (`' 12 '`, `+5`, `1_000`); a usage error otherwise. */
export function parsePyInt(value: string): number {
  if (!/^\s*[+-]?\d+(?:_\d+)*\s*$/.test(value))
    throw new InvalidArgumentError(`invalid int value: '${value}'`);
  return Number(value.replace(/[\s_]/g, ''));
}

/** A float as Python's float() reads a flag; a usage error otherwise. */
export function parsePyFloat(value: string): number {
  const n = Number(value.trim());
  if (value.trim() === '' || !Number.isFinite(n))
    throw new InvalidArgumentError(`invalid float value: '${value}'`);
  return n;
}
