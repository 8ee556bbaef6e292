/**
 * The custom domain (`-c domainName`, `-c certificateArn`, optionally `-c hostedZoneId` and
 * `-c hostedZoneName`): the API served on it, every function's `PUBLIC_BASE_URL` (what each
 * link's `share_url` starts with) built on it, and the alias records when the zone is given.
 * Without the settings, none of it, and the base is the API's own execute-api URL.
 */
import { describe, expect, it } from 'vitest';
import { parseCustomDomain } from '../../infra/settings.ts';
import { logicalIdOf, referencedIds, resourcesOfType, type Synthesized, synth } from './synth.ts';

const DOMAIN = 'go.example.com';
const CERTIFICATE = 'arn:aws:acm:eu-west-1:123456789012:certificate/0c1d2e3f-4a5b-6c7d-8e9f-0a1b2c3d4e5f';
const ZONE = { hostedZoneId: 'Z0123456789ABCDEFGHIJ', hostedZoneName: 'example.com' };

/** A cycle of the template's references (Ref, GetAtt, Sub, DependsOn) as logical ids, if any. */
function dependencyCycle({ json }: Pick<Synthesized, 'json'>): string[] | undefined {
  const edges = new Map<string, Set<string>>();
  for (const [id, resource] of Object.entries(json.Resources)) {
    const to = referencedIds(resource.Properties ?? {});
    const raw = resource as unknown as { DependsOn?: string | string[] };
    for (const d of [raw.DependsOn ?? []].flat()) to.add(d);
    for (const sub of JSON.stringify(resource.Properties ?? {}).matchAll(/\$\{([A-Za-z0-9]+)[.}]/g)) {
      if (sub[1] && json.Resources[sub[1]]) to.add(sub[1]);
    }
    edges.set(id, to);
  }
  const state = new Map<string, 'open' | 'done'>();
  const path: string[] = [];
  const visit = (id: string): string[] | undefined => {
    if (state.get(id) === 'done' || !edges.has(id)) return undefined;
    if (state.get(id) === 'open') return [...path.slice(path.indexOf(id)), id];
    state.set(id, 'open');
    path.push(id);
    for (const next of edges.get(id) ?? []) {
      const cycle = visit(next);
      if (cycle) return cycle;
    }
    path.pop();
    state.set(id, 'done');
    return undefined;
  };
  for (const id of edges.keys()) {
    const cycle = visit(id);
    if (cycle) return cycle;
  }
  return undefined;
}

const publicBasesOf = (s: Synthesized) =>
  s.stack.allFunctions.map((fn) => s.json.Resources[logicalIdOf(fn)]?.Properties?.Environment?.Variables);

describe('without a custom domain', () => {
  const s = synth();

  it('makes no domain name, mapping or record', () => {
    expect(resourcesOfType(s.json, 'AWS::ApiGatewayV2::DomainName')).toEqual([]);
    expect(resourcesOfType(s.json, 'AWS::ApiGatewayV2::ApiMapping')).toEqual([]);
    expect(resourcesOfType(s.json, 'AWS::Route53::RecordSet')).toEqual([]);
    expect(s.json.Outputs).not.toHaveProperty('CustomDomainTarget');
  });

  it("gives every function the API's own URL as the public base, with no dependency cycle", () => {
    const apiId = logicalIdOf(s.stack.api.httpApi);
    const expected = { 'Fn::GetAtt': [apiId, 'ApiEndpoint'] };
    const bases = publicBasesOf(s);
    expect(bases.length).toBeGreaterThan(20);
    for (const env of bases) expect(env?.PUBLIC_BASE_URL).toEqual(expected);
    expect(s.json.Outputs?.PublicBaseUrl?.Value).toEqual(expected);
    // The functions now depend on the API, whose routes depend on the functions: CloudFormation
    // refuses a template whose references go round, which synth does not check.
    expect(dependencyCycle(s)).toBeUndefined();
  });
});

describe('with a domain name and a certificate', () => {
  const s = synth({ context: { domainName: DOMAIN, certificateArn: CERTIFICATE } });

  it('serves the HTTP API on the domain: a regional domain name, mapped at its root to the $default stage', () => {
    s.template.resourceCountIs('AWS::ApiGatewayV2::DomainName', 1);
    s.template.hasResourceProperties('AWS::ApiGatewayV2::DomainName', {
      DomainName: DOMAIN,
      DomainNameConfigurations: [
        { CertificateArn: CERTIFICATE, EndpointType: 'REGIONAL', SecurityPolicy: 'TLS_1_2' },
      ],
    });
    const [[domainId] = []] = resourcesOfType(s.json, 'AWS::ApiGatewayV2::DomainName');
    const mappings = resourcesOfType(s.json, 'AWS::ApiGatewayV2::ApiMapping');
    expect(mappings).toHaveLength(1);
    const mapping = mappings[0]![1].Properties!;
    expect(mapping.ApiId).toEqual({ Ref: logicalIdOf(s.stack.api.httpApi) });
    expect(mapping.DomainName).toEqual({ Ref: domainId });
    // By name, with a dependency on the stage, which must exist before it is mapped.
    expect(mapping.Stage).toBe('$default');
    expect((mappings[0]![1] as { DependsOn?: string[] }).DependsOn).toContain(logicalIdOf(s.stack.api.stage));
    expect(mapping).not.toHaveProperty('ApiMappingKey');
  });

  it('builds every share_url on it: each function carries https://<domain>', () => {
    for (const env of publicBasesOf(s)) expect(env?.PUBLIC_BASE_URL).toBe(`https://${DOMAIN}`);
    expect(s.json.Outputs?.PublicBaseUrl?.Value).toBe(`https://${DOMAIN}`);
    expect(dependencyCycle(s)).toBeUndefined();
  });

  it('creates no DNS record without a hosted zone, and outputs the name a CNAME must point to', () => {
    expect(resourcesOfType(s.json, 'AWS::Route53::RecordSet')).toEqual([]);
    const [[domainId] = []] = resourcesOfType(s.json, 'AWS::ApiGatewayV2::DomainName');
    expect(s.json.Outputs?.CustomDomainTarget?.Value).toEqual({
      'Fn::GetAtt': [domainId, 'RegionalDomainName'],
    });
  });
});

describe('with a hosted zone too', () => {
  const s = synth({ context: { domainName: DOMAIN, certificateArn: CERTIFICATE, ...ZONE } });

  it('creates the A and AAAA alias records of the domain in that zone', () => {
    const [[domainId] = []] = resourcesOfType(s.json, 'AWS::ApiGatewayV2::DomainName');
    const records = resourcesOfType(s.json, 'AWS::Route53::RecordSet').map(([, r]) => r.Properties!);
    expect(records.map((r) => r.Type).sort()).toEqual(['A', 'AAAA']);
    for (const record of records) {
      expect(record).toMatchObject({
        HostedZoneId: ZONE.hostedZoneId,
        Name: `${DOMAIN}.`,
        AliasTarget: {
          DNSName: { 'Fn::GetAtt': [domainId, 'RegionalDomainName'] },
          HostedZoneId: { 'Fn::GetAtt': [domainId, 'RegionalHostedZoneId'] },
        },
      });
    }
    expect(s.json.Outputs).not.toHaveProperty('CustomDomainTarget');
    for (const env of publicBasesOf(s)) expect(env?.PUBLIC_BASE_URL).toBe(`https://${DOMAIN}`);
  });
});

it('the cycle check finds a cycle (a function whose environment refers to a route that invokes it)', () => {
  const json = {
    Resources: {
      Fn: {
        Type: 'AWS::Lambda::Function',
        Properties: { Environment: { Variables: { X: { Ref: 'Route' } } } },
      },
      Route: {
        Type: 'AWS::ApiGatewayV2::Route',
        Properties: { Target: { 'Fn::Sub': `integrations/${'$'}{Integration}` } },
      },
      Integration: {
        Type: 'AWS::ApiGatewayV2::Integration',
        Properties: { IntegrationUri: { 'Fn::GetAtt': ['Fn', 'Arn'] } },
      },
    },
  };
  expect(dependencyCycle({ json })).toEqual(['Fn', 'Route', 'Integration', 'Fn']);
});

describe('the settings', () => {
  const none: Record<
    'domainName' | 'certificateArn' | 'hostedZoneId' | 'hostedZoneName',
    string | undefined
  > = {
    domainName: undefined,
    certificateArn: undefined,
    hostedZoneId: undefined,
    hostedZoneName: undefined,
  };

  it('are read as given, a trailing dot and capitals aside', () => {
    expect(parseCustomDomain(none)).toBeUndefined();
    expect(
      parseCustomDomain({ ...none, domainName: 'Go.Example.com.', certificateArn: CERTIFICATE, ...ZONE }),
    ).toEqual({
      domainName: DOMAIN,
      certificateArn: CERTIFICATE,
      hostedZone: { id: ZONE.hostedZoneId, name: ZONE.hostedZoneName },
    });
  });

  it('refuse a half-given or malformed setting, failing the synth', () => {
    const cases: Array<[Partial<typeof none>, RegExp]> = [
      [{ domainName: DOMAIN }, /go together/],
      [{ certificateArn: CERTIFICATE }, /go together/],
      [{ domainName: 'https://go.example.com', certificateArn: CERTIFICATE }, /not a domain name/],
      [
        { domainName: DOMAIN, certificateArn: 'arn:aws:iam::123456789012:role/x' },
        /not an ACM certificate ARN/,
      ],
      [{ domainName: DOMAIN, certificateArn: CERTIFICATE, hostedZoneId: ZONE.hostedZoneId }, /go together/],
      [
        { domainName: DOMAIN, certificateArn: CERTIFICATE, ...ZONE, hostedZoneName: 'example.org' },
        /not in the hosted zone/,
      ],
      [
        { domainName: DOMAIN, certificateArn: CERTIFICATE, ...ZONE, hostedZoneId: 'example.com' },
        /hosted zone id/,
      ],
      [{ ...ZONE }, /need -c domainName/],
    ];
    for (const [values, message] of cases) {
      expect(() => parseCustomDomain({ ...none, ...values }), JSON.stringify(values)).toThrow(message);
    }
    expect(() => synth({ context: { certificateArn: CERTIFICATE } })).toThrow(/go together/);
  });
});
