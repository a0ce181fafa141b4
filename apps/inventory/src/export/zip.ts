import { once } from 'node:events';
import type { Writable } from 'node:stream';
import { crc32, createDeflateRaw } from 'node:zlib';
import { drained } from './drain';

/**
 * A streaming ZIP writer (deflate, sizes in data descriptors), so an archive of any size is written
 * with constant memory straight to its destination. Entries and the archive stay below 4 GiB (no ZIP64).
 */
export class ZipWriter {
  private offset = 0;
  private readonly entries: { name: Buffer; crc: number; compressed: number; size: number; offset: number }[] = [];
  private readonly dosTime: number;
  private readonly dosDate: number;

  constructor(
    private readonly out: Writable,
    now = new Date(),
  ) {
    this.dosTime = (now.getUTCHours() << 11) | (now.getUTCMinutes() << 5) | Math.floor(now.getUTCSeconds() / 2);
    this.dosDate = ((now.getUTCFullYear() - 1980) << 9) | ((now.getUTCMonth() + 1) << 5) | now.getUTCDate();
  }

  private async raw(buf: Buffer) {
    this.offset += buf.length;
    if (!this.out.write(buf)) await drained(this.out);
  }

  /** Starts an entry; write its bytes with `write`, then `close` it before the next one. */
  async entry(fileName: string) {
    const name = Buffer.from(fileName, 'utf8');
    const start = this.offset;
    const header = Buffer.alloc(30);
    header.writeUInt32LE(0x04034b50, 0);
    header.writeUInt16LE(20, 4); // version needed
    header.writeUInt16LE(0x0808, 6); // data descriptor + UTF-8 names
    header.writeUInt16LE(8, 8); // deflate
    header.writeUInt16LE(this.dosTime, 10);
    header.writeUInt16LE(this.dosDate, 12);
    header.writeUInt16LE(name.length, 26);
    await this.raw(Buffer.concat([header, name]));

    let crc = 0;
    let size = 0;
    let compressed = 0;
    const deflate = createDeflateRaw({ level: 5 });
    deflate.on('data', (chunk: Buffer) => {
      compressed += chunk.length;
      if (!this.out.write(chunk)) deflate.pause();
    });
    const resume = () => deflate.resume();
    const abort = () => deflate.destroy(new Error('output closed'));
    this.out.on('drain', resume);
    this.out.on('close', abort);
    return {
      /** Resolves once the data is compressed (a buffer may then be reused). */
      write: async (data: Buffer | string) => {
        const buf = typeof data === 'string' ? Buffer.from(data, 'utf8') : data;
        crc = crc32(buf, crc);
        size += buf.length;
        await new Promise<void>((resolve, reject) => deflate.write(buf, (err) => (err ? reject(err) : resolve())));
      },
      close: async () => {
        deflate.end();
        await once(deflate, 'end');
        this.out.off('drain', resume);
        this.out.off('close', abort);
        this.offset += compressed;
        if (this.offset > 0xffffffff) throw new Error('zip archive larger than 4 GiB');
        const dd = Buffer.alloc(16);
        dd.writeUInt32LE(0x08074b50, 0);
        dd.writeUInt32LE(crc >>> 0, 4);
        dd.writeUInt32LE(compressed, 8);
        dd.writeUInt32LE(size, 12);
        await this.raw(dd);
        this.entries.push({ name, crc: crc >>> 0, compressed, size, offset: start });
      },
    };
  }

  /** Writes the central directory; the caller ends the output stream. */
  async finish() {
    const cdStart = this.offset;
    for (const e of this.entries) {
      const h = Buffer.alloc(46);
      h.writeUInt32LE(0x02014b50, 0);
      h.writeUInt16LE(20, 4);
      h.writeUInt16LE(20, 6);
      h.writeUInt16LE(0x0808, 8);
      h.writeUInt16LE(8, 10);
      h.writeUInt16LE(this.dosTime, 12);
      h.writeUInt16LE(this.dosDate, 14);
      h.writeUInt32LE(e.crc, 16);
      h.writeUInt32LE(e.compressed, 20);
      h.writeUInt32LE(e.size, 24);
      h.writeUInt16LE(e.name.length, 28);
      h.writeUInt32LE(e.offset, 42);
      await this.raw(Buffer.concat([h, e.name]));
    }
    const end = Buffer.alloc(22);
    end.writeUInt32LE(0x06054b50, 0);
    end.writeUInt16LE(this.entries.length, 8);
    end.writeUInt16LE(this.entries.length, 10);
    end.writeUInt32LE(this.offset - cdStart, 12);
    end.writeUInt32LE(cdStart, 16);
    await this.raw(end);
  }
}
