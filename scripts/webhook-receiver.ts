/**
 * `npm run webhook-receiver -- [port]`: a webhook receiver for trying the local stack's webhooks
 * (the README's walkthrough starts one). It listens on 127.0.0.1 (port 4000 unless given), checks
 * each delivery's signature with `WEBHOOK_SECRET` (the campaign's `webhook_secret`) through the
 * `standardwebhooks` library, as a consumer would, prints one line per delivery and answers 204,
 * or 401 when the signature does not verify (the stack then retries it, as it would any failure).
 * A GET answers 200 and prints nothing, so a script can wait until it listens.
 * It stops with Ctrl-C, a SIGTERM, or when the shell that started it in the background exits.
 */
import { createServer } from 'node:http';
import { Webhook } from 'standardwebhooks';

const port = Number(process.argv[2] ?? process.env.PORT ?? 4000);
const secret = process.env.WEBHOOK_SECRET;
if (!Number.isInteger(port) || port <= 0 || port > 65535) {
  console.error(`webhook-receiver: "${process.argv[2]}" is not a port number`);
  process.exit(2);
}
if (!secret?.startsWith('whsec_')) {
  console.error("webhook-receiver: set WEBHOOK_SECRET to the campaign's webhook_secret (whsec_…)");
  process.exit(2);
}
const verifier = new Webhook(secret);

interface WebhookBody {
  type: string;
  data: {
    action_type?: string;
    referred_user_id?: string;
    amount?: number;
    refunded_amount?: number;
    currency?: string;
    /** A reward's (`reward.*`): whose, in which state. */
    type?: string;
    status?: string;
    recipient_id?: string;
    referral_link?: {
      referral_code?: string;
      total_clicks?: number;
      total_referrals?: number;
      total_conversions?: number;
      total_revenue?: number;
    };
  };
}

/** What happened, on which link, and the link's counters as the event carries them. */
function summary({ type, data }: WebhookBody): string {
  const link = data.referral_link;
  if (type.startsWith('reward.')) {
    return `${data.type ?? 'reward'} of ${data.amount} ${data.currency} to ${data.recipient_id}, now ${data.status}`;
  }
  if (type.startsWith('conversion.')) {
    const refunded = data.refunded_amount ? `, ${data.refunded_amount} refunded` : '';
    return `conversion of ${data.amount} ${data.currency}${refunded} on ${link?.referral_code} (total_conversions ${link?.total_conversions}, total_revenue ${link?.total_revenue})`;
  }
  const what =
    data.action_type !== undefined
      ? `action "${data.action_type}"`
      : `referred user "${data.referred_user_id}"`;
  return `${what} on ${link?.referral_code} (total_clicks ${link?.total_clicks}, total_referrals ${link?.total_referrals})`;
}

const server = createServer((req, res) => {
  if (req.method === 'GET') {
    res.writeHead(200, { 'content-type': 'text/plain' }).end('webhook receiver: POST deliveries to /hook\n');
    return;
  }
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    const body = Buffer.concat(chunks).toString('utf8');
    const id = String(req.headers['webhook-id'] ?? '');
    let event: WebhookBody;
    try {
      event = verifier.verify(body, {
        'webhook-id': id,
        'webhook-timestamp': String(req.headers['webhook-timestamp'] ?? ''),
        'webhook-signature': String(req.headers['webhook-signature'] ?? ''),
      }) as WebhookBody;
    } catch (err) {
      console.log(`webhook ✗ ${req.method} ${req.url} ${id}: ${(err as Error).message}; answered 401`);
      res.writeHead(401).end();
      return;
    }
    console.log(`webhook ✓ ${event.type} ${id}, signature verified: ${summary(event)}`);
    res.writeHead(204).end();
  });
});

server.on('error', (err: NodeJS.ErrnoException) => {
  console.error(
    err.code === 'EADDRINUSE'
      ? `webhook-receiver: port ${port} is in use; pass another one (npm run webhook-receiver -- 4001)`
      : `webhook-receiver: ${err.message}`,
  );
  process.exit(1);
});
server.listen(port, '127.0.0.1', () => console.log(`webhook receiver on http://127.0.0.1:${port}/hook`));

const stop = () => server.close(() => process.exit(0));
process.on('SIGINT', stop);
process.on('SIGTERM', stop);
// Started in the background (`&`) by a shell that then exits: stop with it, leave nothing behind.
const parent = process.ppid;
setInterval(() => {
  if (process.ppid !== parent) stop();
}, 1000).unref();
