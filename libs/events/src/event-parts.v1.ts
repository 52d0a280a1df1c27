import 'reflect-metadata';
import { Type } from 'class-transformer';
import {
  IsArray,
  IsBoolean,
  IsIn,
  IsInt,
  IsNotEmpty,
  IsNumber,
  IsOptional,
  IsString,
  Min,
  ValidateNested,
} from 'class-validator';

/** The state of one window of one policy after the decision. */
export class WindowStateV1 {
  /** Window name, unique within its policy. */
  @IsString()
  @IsNotEmpty()
  name!: string;

  /** `burst` or `sustained`: which deny reason this window produces. */
  @IsIn(['burst', 'sustained'])
  role!: 'burst' | 'sustained';

  /** Units per period (token bucket: capacity). */
  @IsInt()
  @Min(1)
  limit!: number;

  /** Units left after the decision; absent on coalesced denials, which carry no per-window state. */
  @IsOptional()
  @IsNumber({ allowNaN: false, allowInfinity: false })
  remaining?: number;

  /** Milliseconds until the window resets (token bucket: until one unit refills). */
  @IsOptional()
  @IsNumber({ allowNaN: false, allowInfinity: false })
  @Min(0)
  reset_ms?: number;

  /** True when this window could not afford the cost; on a shadow policy that is a would-deny. */
  @IsOptional()
  @IsBoolean()
  would_deny?: boolean;
}

/** One applicable policy of the decision, with its windows. */
export class PolicyOutcomeV1 {
  /** Policy name as in the policy file. */
  @IsString()
  @IsNotEmpty()
  name!: string;

  /** `enforce` policies can deny; `shadow` ones only count and report `would_deny`. */
  @IsIn(['enforce', 'shadow'])
  mode!: 'enforce' | 'shadow';

  /** The policy's composite key value for this request (token dims hashed). */
  @IsString()
  key!: string;

  /** The policy's windows in declaration order. */
  @IsArray()
  @ValidateNested({ each: true })
  @Type(() => WindowStateV1)
  windows!: WindowStateV1[];
}
