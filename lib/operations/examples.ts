/**
 * Example values of the operations (`definitions.ts`) and the webhooks, written once: the document
 * shows them beside each schema and builds each operation's `curl` sample from them. They describe
 * one consistent story (a campaign, a link of one referrer, a signup, a purchase), so the examples
 * of different operations agree with each other; test/unit/openapi-examples.test.ts validates each
 * against its schema.
 */

/** The local stack's address (`npm start`), which the `curl` samples call. */
export const LOCAL_BASE_URL = 'http://127.0.0.1:3000';
