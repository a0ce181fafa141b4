/** Bind parameters and identifier quoting: the only two ways anything reaches the SQL text. */

export class Params {
  readonly values: unknown[] = [];

  /** Adds a bind parameter and answers its placeholder (optionally with a cast to a fixed type name). */
  add(value: unknown, cast?: string): string {
    this.values.push(value);
    const ph = `$${this.values.length}`;
    return cast ? `${ph}::${cast}` : ph;
  }
}

/** A double-quoted SQL identifier. Only ever called on names from a resource's field map or on generated names. */
export function quoteIdent(name: string): string {
  if (typeof name !== 'string' || name.length === 0 || name.includes('\0')) {
    throw new Error(`invalid SQL identifier: ${JSON.stringify(name)}`);
  }
  return `"${name.replace(/"/g, '""')}"`;
}

/** `table` or `schema.table`, each part quoted. */
export function quoteTable(name: string): string {
  if (/^[A-Za-z_][A-Za-z0-9_$]*\.[A-Za-z_][A-Za-z0-9_$]*$/.test(name)) {
    return name
      .split('.')
      .map((p) => quoteIdent(p))
      .join('.');
  }
  return quoteIdent(name);
}

export interface CompiledSql {
  text: string;
  values: unknown[];
}

/** Bind parameters plus a counter for generated aliases, shared by one statement's compilation. */
export class Ctx extends Params {
  private n = 0;
  uid(prefix = 'a'): string {
    this.n += 1;
    return `__q${prefix}${this.n}`;
  }
}
