// Original file: proto/ubicrawl.proto

import type { MethodDefinition } from '@grpc/proto-loader'
import type { ControlReply as _ubicrawl_v1_ControlReply, ControlReply__Output as _ubicrawl_v1_ControlReply__Output } from '../../ubicrawl/v1/ControlReply.js';
import type { ControlRequest as _ubicrawl_v1_ControlRequest, ControlRequest__Output as _ubicrawl_v1_ControlRequest__Output } from '../../ubicrawl/v1/ControlRequest.js';
import type { StatsReply as _ubicrawl_v1_StatsReply, StatsReply__Output as _ubicrawl_v1_StatsReply__Output } from '../../ubicrawl/v1/StatsReply.js';
import type { StatsRequest as _ubicrawl_v1_StatsRequest, StatsRequest__Output as _ubicrawl_v1_StatsRequest__Output } from '../../ubicrawl/v1/StatsRequest.js';

export interface AdminDefinition {
  Control: MethodDefinition<_ubicrawl_v1_ControlRequest, _ubicrawl_v1_ControlReply, _ubicrawl_v1_ControlRequest__Output, _ubicrawl_v1_ControlReply__Output>
  GetStats: MethodDefinition<_ubicrawl_v1_StatsRequest, _ubicrawl_v1_StatsReply, _ubicrawl_v1_StatsRequest__Output, _ubicrawl_v1_StatsReply__Output>
}
