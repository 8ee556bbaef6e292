/** The query of `GET /dashboard`: kept apart from the page so the OpenAPI document does not pull in the bundle. */
import { Type } from '@sinclair/typebox';

/** The two files the page loads besides itself. */
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
