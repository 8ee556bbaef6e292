/**
 * The cold-start floor of a function that uses DynamoDB and SQS (the queue and stream consumers
 * that send messages): the document client with one command, and the SQS client with one.
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { DynamoDBDocumentClient, GetCommand } from '@aws-sdk/lib-dynamodb';

const db = DynamoDBDocumentClient.from(new DynamoDBClient({}));
const sqs = new SQSClient({});

export async function handler(event: { id?: string }) {
  const { Item } = await db.send(
    new GetCommand({ TableName: process.env.TABLE_NAME, Key: { PK: `ITEM#${event.id ?? ''}`, SK: 'ITEM' } }),
  );
  await sqs.send(
    new SendMessageCommand({ QueueUrl: process.env.PURGE_QUEUE_URL, MessageBody: JSON.stringify(Item) }),
  );
  return Item ?? null;
}
