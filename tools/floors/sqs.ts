/** The cold-start floor of a function that uses SQS alone: the SQS client with one command. */
import { SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';

const sqs = new SQSClient({});

export async function handler(event: { id?: string }) {
  await sqs.send(
    new SendMessageCommand({ QueueUrl: process.env.PURGE_QUEUE_URL, MessageBody: event.id ?? '' }),
  );
  return null;
}
