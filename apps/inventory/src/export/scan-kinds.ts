/**
 * What Node does with a field of a COPY row (export/csv-scan.ts): keep it, guard a text, join a text array literal,
 * format a JSON value COPY marked as left to Node.
 */
export const SCAN_NONE = 0;
export const SCAN_TEXT = 1;
export const SCAN_LIST = 2;
export const SCAN_JSON = 3;
