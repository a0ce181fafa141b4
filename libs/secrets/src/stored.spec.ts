import { randomBytes } from 'node:crypto';
import { SecretBox } from './secret-box';
import { isSealedJson, isSealedText, openJson, openText, sealJson, sealText, secretAad } from './stored';

describe('stored forms of sealed values', () => {
  const box = new SecretBox([randomBytes(32)]);
  const aad = secretAad('mod:table.column', 'd1', 'id-1');

  it('binds a value to its purpose and record key, unambiguously', () => {
    expect(secretAad('p', 'a:b', 'c')).not.toBe(secretAad('p', 'a', 'b:c'));
    expect(secretAad('p', 'd1', 'x')).not.toBe(secretAad('q', 'd1', 'x'));
  });

  it('seals JSON into a recognisable object and opens it; plain JSON passes through', () => {
    const secret = { token: 'tok-123', nested: { a: [1, 2] } };
    const sealed = sealJson(box, secret, aad);
    expect(sealed.sealed).toBe('v1');
    expect(isSealedJson(sealed)).toBe(true);
    expect(JSON.stringify(sealed)).not.toContain('tok-123');
    expect(openJson(box, sealed, aad)).toEqual(secret);
    expect(openJson(box, JSON.parse(JSON.stringify(sealed)), aad)).toEqual(secret);
    for (const plain of [secret, {}, { sealed: 'v2' }, [], 'x', null]) {
      expect(isSealedJson(plain)).toBe(false);
      expect(openJson(box, plain, aad)).toEqual(plain);
    }
    expect(() => openJson(box, sealed, secretAad('mod:table.column', 'd1', 'id-2'))).toThrow(/does not open/);
    expect(() => openJson(box, { sealed: 'v1', key_id: 1 }, aad)).toThrow(/not in the sealed format/);
  });

  it('seals text with a prefix plain secrets never have, and opens it; plain text passes through', () => {
    const sealed = sealText(box, 'JBSWY3DPEHPK3PXP', aad);
    expect(sealed).toMatch(/^sealed:v1:[0-9a-f]{16}:[A-Za-z0-9+/=]+:[A-Za-z0-9+/=]+:[A-Za-z0-9+/=]+$/);
    expect(sealed).not.toContain('JBSWY3DPEHPK3PXP');
    expect(isSealedText(sealed)).toBe(true);
    expect(openText(box, sealed, aad)).toBe('JBSWY3DPEHPK3PXP');
    expect(isSealedText('JBSWY3DPEHPK3PXP')).toBe(false);
    expect(openText(box, 'JBSWY3DPEHPK3PXP', aad)).toBe('JBSWY3DPEHPK3PXP');
    expect(() => openText(box, sealed, secretAad('mod:table.column', 'd2', 'id-1'))).toThrow(/does not open/);
    expect(() => openText(box, 'sealed:v1:abc', aad)).toThrow(/not in the sealed format/);
  });
});
