/**
 * What a stage costs a month before any request: its CloudWatch alarms, counted in the synthesized
 * template (`test/infra/fixed-cost.test.ts` runs this on the dev and prod templates and pins the
 * figures that docs/deploying.md gives). Everything else of a stage is billed per use (Lambda, API
 * Gateway, DynamoDB on demand, SQS, logs by the GB), the KMS key of `-c kms=true` aside ($1).
 *
 * CloudWatch bills an alarm per metric it watches: a standard-resolution metric alarm $0.10 a
 * month, one on a high-resolution metric (a period under 60 s) $0.30; an alarm on a metric math
 * expression counts each metric the expression reads (the expressions themselves are free); a
 * composite alarm $0.50. us-east-1 list prices as known to the author (2025); check them.
 */
export const ALARM_PRICES = { standardMetric: 0.1, highResolutionMetric: 0.3, composite: 0.5 };

interface TemplateLike {
  Resources: Record<string, { Type: string; Properties?: Record<string, unknown> }>;
}

interface MetricQuery {
  MetricStat?: { Period?: number };
}

export interface FixedCost {
  /** Metric alarms (resources), of which metric math alarms. */
  alarms: number;
  mathAlarms: number;
  /** Alarm metrics billed: one per plain alarm, one per metric a math alarm reads. */
  standardMetrics: number;
  highResolutionMetrics: number;
  composites: number;
  usdPerMonth: number;
}

export function fixedMonthlyCost(template: TemplateLike): FixedCost {
  const cost: FixedCost = {
    ...{ alarms: 0, mathAlarms: 0, standardMetrics: 0, highResolutionMetrics: 0, composites: 0 },
    usdPerMonth: 0,
  };
  for (const resource of Object.values(template.Resources)) {
    if (resource.Type === 'AWS::CloudWatch::CompositeAlarm') cost.composites++;
    if (resource.Type !== 'AWS::CloudWatch::Alarm') continue;
    cost.alarms++;
    const props = resource.Properties ?? {};
    const queries = props.Metrics as MetricQuery[] | undefined;
    const periods = queries
      ? queries.flatMap((q) => (q.MetricStat ? [q.MetricStat.Period ?? 60] : []))
      : [Number(props.Period ?? 60)];
    if (queries) cost.mathAlarms++;
    for (const period of periods) {
      if (period < 60) cost.highResolutionMetrics++;
      else cost.standardMetrics++;
    }
  }
  const p = ALARM_PRICES;
  cost.usdPerMonth =
    Math.round(
      (cost.standardMetrics * p.standardMetric +
        cost.highResolutionMetrics * p.highResolutionMetric +
        cost.composites * p.composite) *
        100,
    ) / 100;
  return cost;
}
