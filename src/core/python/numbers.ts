/**
 * Renders a float exactly like Python's `repr(float)`: the shortest round-trip digits, exponent form
 * when the decimal exponent is < -4 or >= 16 (`1e+16`, `1e-05`), `.0` on integral values, and
 * `inf` / `-inf` / `nan` for the non-finite ones.
 */
export function pyFloatRepr(x: number): string {
  if (Number.isNaN(x)) return 'nan';
  if (!Number.isFinite(x)) return x > 0 ? 'inf' : '-inf';
  if (x === 0) return Object.is(x, -0) ? '-0.0' : '0.0';
  const magnitude = Math.abs(x);
  if (magnitude >= 1e-4 && magnitude < 1e16) {
    // JS prints this range in fixed notation with the same shortest digits as repr (timestamps land here).
    const fixed = String(x);
    return fixed.includes('.') ? fixed : `${fixed}.0`;
  }
  // toExponential() without an argument yields the shortest digits that round-trip, as repr does.
  const [mantissa = '', expText = '0'] = x.toExponential().split('e');
  const exp = Number(expText);
  const sign = x < 0 ? '-' : '';
  const digits = mantissa.replace('-', '').replace('.', '');
  if (exp < -4 || exp >= 16) {
    const m = digits.length > 1 ? `${digits[0]}.${digits.slice(1)}` : digits;
    return `${sign}${m}e${exp < 0 ? '-' : '+'}${String(Math.abs(exp)).padStart(2, '0')}`;
  }
  if (exp < 0) return `${sign}0.${'0'.repeat(-exp - 1)}${digits}`;
  if (digits.length <= exp + 1) return `${sign}${digits}${'0'.repeat(exp + 1 - digits.length)}.0`;
  return `${sign}${digits.slice(0, exp + 1)}.${digits.slice(exp + 1)}`;
}
