/** How a collection task ends other than in success: what a retry cannot change, and a cancel. */
/**
 * PostgreSQL refused a value of the COPY (SQLSTATE class 22, data exception: an invalid date, a number
 * out of range, bad UTF-8 or JSON): bad data a retry cannot fix, so the task fails at once with
 * ERROR_INVALID_COST_DATA. PostgreSQL's message and COPY's context quote the value ("invalid input
 * syntax for type date: "..."", "COPY cost, line 12, column billed_date: ..."), which came from the
 * source: the task's error names the column alone, the rest goes to the log (`detail`).
 */
export function copyDataError(e: unknown): TaskFailure | undefined {
  const err = e as { code?: unknown; message?: string; where?: string; column?: string };
  if (typeof err?.code !== 'string' || !err.code.startsWith('22')) return undefined;
  const column = /column (\w+)/.exec(err.where ?? '')?.[1] ?? err.column;
  const row = /COPY \w+, line (\d+)/.exec(err.where ?? '')?.[1];
  const where = err.where ? ` (${err.where.split('\n')[0].slice(0, 200)})` : '';
  return new TaskFailure(
    'ERROR_INVALID_COST_DATA',
    `PostgreSQL refused a row of the cost data (SQLSTATE ${err.code}${row ? `, COPY row ${row}` : ''}${column ? `, column ${column}` : ''}).`,
    `${err.message?.slice(0, 200)}${where}`,
  );
}

export const tooManyTagKeys = (max: number) =>
  new TaskFailure('ERROR_COLLECT_LIMIT', `The data source has more than ${max} distinct tag or additional_info keys (COLLECT_MAX_TAG_KEYS).`);

/** The task failed for a reason a retry cannot change. `detail` is for the log alone. */
export class TaskFailure extends Error {
  constructor(
    readonly code: string,
    message: string,
    readonly detail?: string,
  ) {
    super(message);
  }
}
export class TaskCanceled extends Error {}
