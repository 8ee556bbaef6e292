import { createConversion } from '../../lib/db/conversions.ts';
import { storedAnswer } from '../../lib/db/idempotency.ts';
import { httpHandler } from '../../lib/http/handler.ts';
import { CreateConversion } from '../../lib/operations/compiled.ts';

/** Endpoint 23: a sale of a referred user, in minor units of its campaign's currency. */
export const handler = httpHandler(
  { ...CreateConversion, storedAnswers: storedAnswer },
  async ({ tenant, body, idempotency }) => {
    const conversion = await createConversion(
      tenant,
      {
        campaignId: body.campaign_id,
        referredUserId: body.referred_user_id,
        amount: body.amount,
        currency: body.currency,
        externalId: body.external_id,
        metadata: body.metadata ?? {},
      },
      idempotency,
    );
    return { status: 201, body: conversion };
  },
);
