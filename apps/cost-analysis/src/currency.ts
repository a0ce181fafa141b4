/** ISO 4217 codes and currency conversion through rates quoted against one base currency. */
const ISO_4217 = new Set(Intl.supportedValuesOf('currency'));

export function isIsoCurrency(code: string): boolean {
  return /^[A-Z]{3}$/.test(code) && ISO_4217.has(code);
}

export function isValidRate(rate: number): boolean {
  return typeof rate === 'number' && Number.isFinite(rate) && rate > 0;
}

/** A `{"CUR": rate}` JSON object from configuration; a bad code or rate stops the start. */
export function parseRates(raw: string, name: string): Record<string, number> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    throw new Error(`${name} must be a JSON object of currency: rate`);
  }
  if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) throw new Error(`${name} must be a JSON object`);
  const rates: Record<string, number> = {};
  for (const [code, rate] of Object.entries(parsed)) {
    if (!isIsoCurrency(code)) throw new Error(`${name}: ${code} is not an ISO 4217 currency code`);
    if (!isValidRate(rate as number)) throw new Error(`${name}: the rate of ${code} must be a positive number`);
    rates[code] = rate as number;
  }
  return rates;
}

/** `amount` in `from` expressed in each of `to`, with rates per 1 unit of the base currency. */
export function convert(amount: number, from: string, to: readonly string[], rates: Record<string, number>): Record<string, number> {
  const out: Record<string, number> = {};
  for (const c of to) out[c] = (amount * rates[c]) / rates[from];
  return out;
}
