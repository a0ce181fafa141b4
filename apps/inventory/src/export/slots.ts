import { errors } from '@platform/errors';

export interface SlotBounds {
  /** Downloads the process streams at once. */
  max: number;
  /** ... of one domain: below `max`, so that one tenant never holds every slot (issue #32). */
  maxPerDomain: number;
  /** ... of one requester. */
  maxPerUser: number;
}

/**
 * How many export downloads one process streams at once: in all, per domain and per requester (issues
 * #23, #32). A download holds a database connection for as long as it streams: without a bound, a few
 * slow downloads of one caller would take the whole pool (10 connections) and every other request would
 * wait for one. The domain bound keeps slots for other tenants: however many users one domain has, it
 * holds at most `maxPerDomain` (half the slots by default), so another domain's download still finds one.
 * A client that reads slower than the minimum rate loses its slot (libs/http enforceMinRate). Past a
 * bound the download is 429 ERROR_TOO_MANY_EXPORTS with Retry-After, before anything is sent; the URL
 * stays valid for a retry. The bounds are per process: each replica protects its own pool.
 */
export class DownloadSlots {
  private total = 0;
  private readonly byDomain = new Map<string, number>();
  private readonly byUser = new Map<string, number>();

  constructor(private readonly b: SlotBounds) {
    if (b.max > 1 && b.maxPerDomain >= b.max) {
      throw new Error(`EXPORT_MAX_DOWNLOADS_PER_DOMAIN (${b.maxPerDomain}) must be below EXPORT_MAX_DOWNLOADS (${b.max}): one domain would take every slot`);
    }
  }

  /** Takes a slot for a requester of a domain; the answer gives it back, once. */
  take(domainId: string, userId: string): () => void {
    const user = `${domainId}/${userId}`;
    const mine = this.byUser.get(user) ?? 0;
    const ours = this.byDomain.get(domainId) ?? 0;
    const why =
      mine >= this.b.maxPerUser
        ? `${this.b.maxPerUser} of your exports are downloading`
        : ours >= this.b.maxPerDomain
          ? `${this.b.maxPerDomain} exports of your domain are downloading`
          : this.total >= this.b.max
            ? `${this.b.max} exports are downloading`
            : undefined;
    if (why) throw errors.tooManyRequests('ERROR_TOO_MANY_EXPORTS', `Too many exports at once: ${why}; retry when one has finished.`, 5);
    this.total += 1;
    this.byDomain.set(domainId, ours + 1);
    this.byUser.set(user, mine + 1);
    let given = false;
    return () => {
      if (given) return;
      given = true;
      this.total -= 1;
      decrement(this.byDomain, domainId);
      decrement(this.byUser, user);
    };
  }
}

function decrement(counts: Map<string, number>, key: string) {
  const left = (counts.get(key) ?? 1) - 1;
  if (left > 0) counts.set(key, left);
  else counts.delete(key);
}
