import 'reflect-metadata';
import { Equals, IsNotEmpty, IsOptional, IsRFC3339, IsString, Matches } from 'class-validator';
import { CLOUDEVENTS_SPECVERSION, EVENT_DATA_CONTENT_TYPE } from './event-types';

/** Crockford base32, 26 characters: a ULID (coalesced-denial ids are ULID-shaped too). */
export const ULID_PATTERN = /^[0-9A-HJKMNP-TV-Z]{26}$/;

/**
 * The CloudEvents 1.0 structured-mode envelope shared by Tally's events. Subclasses pin `type` and
 * `data`. Unknown extension attributes are tolerated on consume (CloudEvents forward compatibility).
 */
export abstract class TallyCloudEventV1 {
  /** CloudEvents version; always `1.0`. */
  @Equals(CLOUDEVENTS_SPECVERSION)
  specversion!: typeof CLOUDEVENTS_SPECVERSION;

  /** Decision id (ULID), or the deterministic id of a coalesced denial: consumers deduplicate on it. */
  @Matches(ULID_PATTERN, { message: 'id must be a ULID' })
  id!: string;

  /** Producer of the event: `tally/decision-api`. */
  @IsString()
  @IsNotEmpty()
  source!: string;

  /** Redis server time of the decision, RFC 3339 UTC with milliseconds. */
  @IsRFC3339()
  time!: string;

  /** `<policy>/<key>` of the first (binding) policy; absent when no policy applied. */
  @IsOptional()
  @IsString()
  @IsNotEmpty()
  subject?: string;

  /** Media type of `data`: `application/json`. */
  @Equals(EVENT_DATA_CONTENT_TYPE)
  datacontenttype!: typeof EVENT_DATA_CONTENT_TYPE;
}
