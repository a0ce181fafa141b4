/** What Node does with a field of a COPY row (export/csv-scan.ts): keep it, guard a text, join a text array literal. */
export const SCAN_NONE = 0;
export const SCAN_TEXT = 1;
export const SCAN_LIST = 2;
