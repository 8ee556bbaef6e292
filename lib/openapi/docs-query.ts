/** The query of `GET /docs`: kept apart from the page itself so the document does not pull in Redoc. */
import { Type } from '@sinclair/typebox';

/** The one asset `GET /docs` serves besides the page: Redoc's standalone bundle. */
export const REDOC_ASSET = 'redoc.standalone.js';

export const DocsQuery = Type.Object(
  {
    asset: Type.Optional(
      Type.Literal(REDOC_ASSET, { description: 'Serve the script the page loads instead of the page' }),
    ),
    v: Type.Optional(
      Type.String({ maxLength: 64, description: 'Version of the asset, for caching; any value is accepted' }),
    ),
  },
  { additionalProperties: true },
);
