/**
 * A stage's fixed monthly cost, its CloudWatch alarms, counted in the synthesized templates
 * (`tools/fixed-cost.ts`), and the figures docs/deploying.md gives for it.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { projectRoot } from '../../infra/functions.ts';
import { fixedMonthlyCost } from '../../tools/fixed-cost.ts';
import { synth, synthProd } from './synth.ts';

const deploying = readFileSync(join(projectRoot, 'docs/deploying.md'), 'utf8');

describe('fixed monthly cost of a stage', () => {
  it('prices each alarm metric, each metric a math alarm reads, high resolution and composites apart', () => {
    const alarm = (properties: Record<string, unknown>) => ({
      Type: 'AWS::CloudWatch::Alarm',
      Properties: properties,
    });
    const cost = fixedMonthlyCost({
      Resources: {
        plain: alarm({ Period: 300 }),
        fast: alarm({ Period: 10 }),
        math: alarm({
          Metrics: [{ Expression: 'a + b' }, { MetricStat: { Period: 60 } }, { MetricStat: { Period: 60 } }],
        }),
        composite: { Type: 'AWS::CloudWatch::CompositeAlarm' },
        other: { Type: 'AWS::SQS::Queue' },
      },
    });
    expect(cost).toEqual({
      alarms: 3,
      mathAlarms: 1,
      standardMetrics: 3,
      highResolutionMetrics: 1,
      composites: 1,
      usdPerMonth: 1.1,
    });
  });

  it('is the same for dev and prod, and is what docs/deploying.md says', () => {
    const dev = fixedMonthlyCost(synth({ stage: 'dev' }).json);
    const prod = fixedMonthlyCost(synthProd().json);
    expect(prod).toEqual(dev);
    const usd = `$${dev.usdPerMonth.toFixed(2)}`;
    for (const figure of [
      `${dev.alarms} metric alarms`,
      `${dev.mathAlarms} of them on metric math`,
      `${dev.standardMetrics} alarm metrics`,
      `${dev.composites} composite alarms`,
      `${usd} a month`,
    ]) {
      expect(deploying, `docs/deploying.md gives "${figure}"`).toContain(figure);
    }
    // The default is the full set, whatever the stage.
    expect(fixedMonthlyCost(synth({ stage: 'dev', context: { alarmSet: 'full' } }).json)).toEqual(dev);
  });

  it('is lower with -c alarmSet=minimal, and is what docs/deploying.md says', () => {
    const full = fixedMonthlyCost(synth({ stage: 'dev' }).json);
    const minimal = fixedMonthlyCost(synth({ stage: 'dev', context: { alarmSet: 'minimal' } }).json);
    expect(minimal.alarms).toBeLessThan(full.alarms / 4);
    expect(minimal.usdPerMonth).toBeLessThan(full.usdPerMonth / 4);
    const figure =
      `${minimal.alarms} metric alarms (${minimal.mathAlarms} on metric math, ${minimal.standardMetrics} alarm ` +
      `metrics) and ${minimal.composites} composite alarm: **$${minimal.usdPerMonth.toFixed(2)} a month**`;
    expect(deploying.replace(/\s+/g, ' '), `docs/deploying.md gives "${figure}"`).toContain(figure);
  });
});
