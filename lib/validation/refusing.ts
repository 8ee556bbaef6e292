import { ApiError } from '../domain/errors.ts';
import type { Validator } from './validator.ts';

/**
 * A validator that answers a refused value with one fixed error, say the redirect's 404 for a code
 * that cannot exist. Apart from `validator.ts` so that such a route bundles no error description.
 */
export function refusing<T>(
  check: (value: unknown) => boolean,
  error: { code: ApiError['code']; message: string },
): Validator<T> {
  return (value) => {
    if (check(value)) return value as T;
    throw new ApiError(error.code, error.message);
  };
}
