/** Configuration read once at module load; a missing required setting fails the cold start loudly. */
function required(name: string): string {
  const value = process.env[name];
  if (!value) throw new Error(`Missing required environment variable ${name}`);
  return value;
}

export const config = {
  get tableName(): string {
    return required('TABLE_NAME');
  },
  /** Deployment stage; `local` only for the local stack. */
  get stage(): string {
    return process.env.STAGE ?? 'local';
  },
  /**
   * Webhook URLs with `http` or private addresses are accepted only when this is set, and never in
   * a deployed stage (the stack does not set it, and the check below refuses it outside `local`).
   */
  get allowPrivateWebhooks(): boolean {
    return process.env.ALLOW_PRIVATE_WEBHOOKS === 'true' && (process.env.STAGE ?? 'local') === 'local';
  },
};
