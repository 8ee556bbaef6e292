/**
 * The queries of the two pages the API serves, `GET /docs` and `GET /dashboard`: here with the
 * other request schemas, apart from the pages themselves, so the operations and the OpenAPI
 * document pull in neither Redoc nor the dashboard's bundle.
 */
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

/** The two files the dashboard's page loads besides itself. */
export const DASHBOARD_ASSETS = ['app.js', 'app.css'] as const;

export const DashboardQuery = Type.Object(
  {
    asset: Type.Optional(
      Type.Union(
        DASHBOARD_ASSETS.map((a) => Type.Literal(a)),
        { description: 'Serve the script or the stylesheet the page loads instead of the page' },
      ),
    ),
    v: Type.Optional(
      Type.String({ maxLength: 64, description: 'Version of the asset, for caching; any value is accepted' }),
    ),
  },
  { additionalProperties: true },
);
