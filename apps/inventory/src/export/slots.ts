import { ApiError } from '@platform/errors';

/**
 * How many export downloads one process streams at once, in all and per requester (issue #23). A
 * download holds a database connection for as long as it streams, and a client that reads slowly keeps
 * it for up to the export statement timeout (10 minutes): without a bound, a few slow downloads of one
 * caller would take the whole pool (10 connections) and every other request would wait for one. Past
 * either bound the download is 429 ERROR_TOO_MANY_EXPORTS with Retry-After, before anything is sent;
 * the URL stays valid for a retry. The bounds are per process: each replica protects its own pool.
 */
export class DownloadSlots {
  private total = 0;
  private readonly byUser = new Map<string, number>();

  constructor(
    private readonly max: number,
    private readonly maxPerUser: number,
  ) {}

  /** Takes a slot for `user` (domain and user of the export's requester); the answer gives it back, once. */
  take(user: string): () => void {
    const mine = this.byUser.get(user) ?? 0;
    if (mine >= this.maxPerUser || this.total >= this.max) {
      const why = mine >= this.maxPerUser ? `${this.maxPerUser} of your exports are downloading` : `${this.max} exports are downloading`;
      throw new ApiError(429, 'ERROR_TOO_MANY_EXPORTS', `Too many exports at once: ${why}; retry when one has finished.`, { retryAfterSeconds: 5 });
    }
    this.total += 1;
    this.byUser.set(user, mine + 1);
    let given = false;
    return () => {
      if (given) return;
      given = true;
      this.total -= 1;
      const left = (this.byUser.get(user) ?? 1) - 1;
      if (left > 0) this.byUser.set(user, left);
      else this.byUser.delete(user);
    };
  }
}
