import * as apigw from 'aws-cdk-lib/aws-apigatewayv2';
import * as acm from 'aws-cdk-lib/aws-certificatemanager';
import * as route53 from 'aws-cdk-lib/aws-route53';
import * as targets from 'aws-cdk-lib/aws-route53-targets';
import { Construct } from 'constructs';
import type { CustomDomainSettings } from './settings.ts';

export interface CustomDomainProps extends CustomDomainSettings {
  readonly httpApi: apigw.IHttpApi;
  readonly stage: apigw.IHttpStage;
}

/**
 * The HTTP API on the operator's own domain (`-c domainName`, `-c certificateArn`): a regional
 * API Gateway domain name mapped at its root to the API's `$default` stage, and, when a hosted
 * zone is given, its A and AAAA alias records. The execute-api URL keeps working beside it.
 */
export class CustomDomain extends Construct {
  readonly domainName: apigw.DomainName;
  /** `https://<domain>`: the public base every `share_url` starts with. */
  readonly url: string;
  /** The target a CNAME must point to when the zone is not managed here. */
  readonly regionalDomainName: string;

  constructor(scope: Construct, id: string, props: CustomDomainProps) {
    super(scope, id);
    this.domainName = new apigw.DomainName(this, 'DomainName', {
      domainName: props.domainName,
      certificate: acm.Certificate.fromCertificateArn(this, 'Certificate', props.certificateArn),
      endpointType: apigw.EndpointType.REGIONAL,
      securityPolicy: apigw.SecurityPolicy.TLS_1_2,
    });
    new apigw.ApiMapping(this, 'ApiMapping', {
      api: props.httpApi,
      domainName: this.domainName,
      stage: props.stage,
    });
    this.url = `https://${props.domainName}`;
    this.regionalDomainName = this.domainName.regionalDomainName;

    if (props.hostedZone) {
      const zone = route53.HostedZone.fromHostedZoneAttributes(this, 'Zone', {
        hostedZoneId: props.hostedZone.id,
        zoneName: props.hostedZone.name,
      });
      const target = route53.RecordTarget.fromAlias(
        new targets.ApiGatewayv2DomainProperties(
          this.domainName.regionalDomainName,
          this.domainName.regionalHostedZoneId,
        ),
      );
      new route53.ARecord(this, 'AliasRecord', { zone, recordName: props.domainName, target });
      new route53.AaaaRecord(this, 'AliasRecordIpv6', { zone, recordName: props.domainName, target });
    }
  }
}
