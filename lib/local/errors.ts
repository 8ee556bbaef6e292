/** A start-up problem a person can fix, printed as one line without a stack trace. */
export class LocalStackError extends Error {
  override name = 'LocalStackError';
}
