import { RemovalPolicy } from 'aws-cdk-lib';
import * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import type * as kms from 'aws-cdk-lib/aws-kms';
import { Construct } from 'constructs';
import { tableDefinition } from '../lib/table-definition.ts';
import { isProtected, type Stage } from './stage.ts';

export interface ReferralTableProps {
  readonly stage: Stage;
  /**
   * A customer-managed key for the table (its items, indexes, stream and backups); DynamoDB's
   * AWS-owned key when omitted. Switching either way is an in-place update of the table.
   */
  readonly encryptionKey?: kms.IKey;
}

/**
 * The single DynamoDB table. Its shape comes from `lib/table-definition.ts`, the same data the
 * local stack uses to create its DynamoDB Local table, so the two can never drift apart.
 */
export class ReferralTable extends Construct {
  readonly table: dynamodb.Table;

  constructor(scope: Construct, id: string, props: ReferralTableProps) {
    super(scope, id);
    const d = tableDefinition;
    const protectedStage = isProtected(props.stage);

    this.table = new dynamodb.Table(this, 'Table', {
      // A fixed physical name makes the CLI and the console easy to use, and it makes any change
      // that would *replace* the table (a key schema edit) fail instead of silently emptying it.
      tableName: `referrals-${props.stage}`,
      partitionKey: { name: d.partitionKey, type: dynamodb.AttributeType.STRING },
      sortKey: { name: d.sortKey, type: dynamodb.AttributeType.STRING },
      // Traffic is spiky and unknown; on-demand never throttles on a provisioned limit we guessed.
      billingMode: dynamodb.BillingMode.PAY_PER_REQUEST,
      timeToLiveAttribute: d.ttlAttribute,
      stream: dynamodb.StreamViewType[d.streamViewType],
      ...(props.encryptionKey
        ? { encryption: dynamodb.TableEncryption.CUSTOMER_MANAGED, encryptionKey: props.encryptionKey }
        : {}),
      // PITR everywhere: a bad deploy or script can corrupt dev data too, and it costs little.
      pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
      // prod data outlives the stack: deletion protection stops an API/console delete, RETAIN
      // stops a `cdk destroy` or a stack rollback from taking the table with it.
      deletionProtection: protectedStage,
      removalPolicy: protectedStage ? RemovalPolicy.RETAIN : RemovalPolicy.DESTROY,
    });

    for (const gsi of d.globalSecondaryIndexes) {
      this.table.addGlobalSecondaryIndex({
        indexName: gsi.indexName,
        partitionKey: { name: gsi.partitionKey, type: dynamodb.AttributeType.STRING },
        sortKey: { name: gsi.sortKey, type: dynamodb.AttributeType.STRING },
        // Only what the index's readers use (lib/table-definition.ts): every other attribute of an
        // item costs no index storage and no index write when it changes.
        projectionType: dynamodb.ProjectionType.INCLUDE,
        nonKeyAttributes: [...gsi.projectedAttributes],
      });
    }
  }
}
