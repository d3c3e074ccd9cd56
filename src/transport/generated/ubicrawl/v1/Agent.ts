// Original file: proto/ubicrawl.proto

import type { MethodDefinition } from '@grpc/proto-loader'
import type { BlacklistSync as _ubicrawl_v1_BlacklistSync, BlacklistSync__Output as _ubicrawl_v1_BlacklistSync__Output } from '../../ubicrawl/v1/BlacklistSync.js';
import type { ClaimReply as _ubicrawl_v1_ClaimReply, ClaimReply__Output as _ubicrawl_v1_ClaimReply__Output } from '../../ubicrawl/v1/ClaimReply.js';
import type { ClaimRequest as _ubicrawl_v1_ClaimRequest, ClaimRequest__Output as _ubicrawl_v1_ClaimRequest__Output } from '../../ubicrawl/v1/ClaimRequest.js';
import type { ControlReply as _ubicrawl_v1_ControlReply, ControlReply__Output as _ubicrawl_v1_ControlReply__Output } from '../../ubicrawl/v1/ControlReply.js';
import type { ControlRequest as _ubicrawl_v1_ControlRequest, ControlRequest__Output as _ubicrawl_v1_ControlRequest__Output } from '../../ubicrawl/v1/ControlRequest.js';
import type { DigestCheck as _ubicrawl_v1_DigestCheck, DigestCheck__Output as _ubicrawl_v1_DigestCheck__Output } from '../../ubicrawl/v1/DigestCheck.js';
import type { DigestSettleAck as _ubicrawl_v1_DigestSettleAck, DigestSettleAck__Output as _ubicrawl_v1_DigestSettleAck__Output } from '../../ubicrawl/v1/DigestSettleAck.js';
import type { DigestSettlements as _ubicrawl_v1_DigestSettlements, DigestSettlements__Output as _ubicrawl_v1_DigestSettlements__Output } from '../../ubicrawl/v1/DigestSettlements.js';
import type { DigestVerdicts as _ubicrawl_v1_DigestVerdicts, DigestVerdicts__Output as _ubicrawl_v1_DigestVerdicts__Output } from '../../ubicrawl/v1/DigestVerdicts.js';
import type { HandOverReply as _ubicrawl_v1_HandOverReply, HandOverReply__Output as _ubicrawl_v1_HandOverReply__Output } from '../../ubicrawl/v1/HandOverReply.js';
import type { HandOverRequest as _ubicrawl_v1_HandOverRequest, HandOverRequest__Output as _ubicrawl_v1_HandOverRequest__Output } from '../../ubicrawl/v1/HandOverRequest.js';
import type { HeartbeatReply as _ubicrawl_v1_HeartbeatReply, HeartbeatReply__Output as _ubicrawl_v1_HeartbeatReply__Output } from '../../ubicrawl/v1/HeartbeatReply.js';
import type { HeartbeatRequest as _ubicrawl_v1_HeartbeatRequest, HeartbeatRequest__Output as _ubicrawl_v1_HeartbeatRequest__Output } from '../../ubicrawl/v1/HeartbeatRequest.js';
import type { IpReply as _ubicrawl_v1_IpReply, IpReply__Output as _ubicrawl_v1_IpReply__Output } from '../../ubicrawl/v1/IpReply.js';
import type { IpRequest as _ubicrawl_v1_IpRequest, IpRequest__Output as _ubicrawl_v1_IpRequest__Output } from '../../ubicrawl/v1/IpRequest.js';
import type { JoinReply as _ubicrawl_v1_JoinReply, JoinReply__Output as _ubicrawl_v1_JoinReply__Output } from '../../ubicrawl/v1/JoinReply.js';
import type { JoinRequest as _ubicrawl_v1_JoinRequest, JoinRequest__Output as _ubicrawl_v1_JoinRequest__Output } from '../../ubicrawl/v1/JoinRequest.js';
import type { StatsReply as _ubicrawl_v1_StatsReply, StatsReply__Output as _ubicrawl_v1_StatsReply__Output } from '../../ubicrawl/v1/StatsReply.js';
import type { StatsRequest as _ubicrawl_v1_StatsRequest, StatsRequest__Output as _ubicrawl_v1_StatsRequest__Output } from '../../ubicrawl/v1/StatsRequest.js';
import type { UrlBatch as _ubicrawl_v1_UrlBatch, UrlBatch__Output as _ubicrawl_v1_UrlBatch__Output } from '../../ubicrawl/v1/UrlBatch.js';
import type { UrlBatchAck as _ubicrawl_v1_UrlBatchAck, UrlBatchAck__Output as _ubicrawl_v1_UrlBatchAck__Output } from '../../ubicrawl/v1/UrlBatchAck.js';

export interface AgentDefinition {
  CheckDigests: MethodDefinition<_ubicrawl_v1_DigestCheck, _ubicrawl_v1_DigestVerdicts, _ubicrawl_v1_DigestCheck__Output, _ubicrawl_v1_DigestVerdicts__Output>
  ClaimHosts: MethodDefinition<_ubicrawl_v1_ClaimRequest, _ubicrawl_v1_ClaimReply, _ubicrawl_v1_ClaimRequest__Output, _ubicrawl_v1_ClaimReply__Output>
  Control: MethodDefinition<_ubicrawl_v1_ControlRequest, _ubicrawl_v1_ControlReply, _ubicrawl_v1_ControlRequest__Output, _ubicrawl_v1_ControlReply__Output>
  DigestStream: MethodDefinition<_ubicrawl_v1_DigestCheck, _ubicrawl_v1_DigestVerdicts, _ubicrawl_v1_DigestCheck__Output, _ubicrawl_v1_DigestVerdicts__Output>
  GetStats: MethodDefinition<_ubicrawl_v1_StatsRequest, _ubicrawl_v1_StatsReply, _ubicrawl_v1_StatsRequest__Output, _ubicrawl_v1_StatsReply__Output>
  HandOverHosts: MethodDefinition<_ubicrawl_v1_HandOverRequest, _ubicrawl_v1_HandOverReply, _ubicrawl_v1_HandOverRequest__Output, _ubicrawl_v1_HandOverReply__Output>
  Heartbeat: MethodDefinition<_ubicrawl_v1_HeartbeatRequest, _ubicrawl_v1_HeartbeatReply, _ubicrawl_v1_HeartbeatRequest__Output, _ubicrawl_v1_HeartbeatReply__Output>
  HeartbeatStream: MethodDefinition<_ubicrawl_v1_HeartbeatRequest, _ubicrawl_v1_HeartbeatReply, _ubicrawl_v1_HeartbeatRequest__Output, _ubicrawl_v1_HeartbeatReply__Output>
  IpGrants: MethodDefinition<_ubicrawl_v1_IpRequest, _ubicrawl_v1_IpReply, _ubicrawl_v1_IpRequest__Output, _ubicrawl_v1_IpReply__Output>
  Join: MethodDefinition<_ubicrawl_v1_JoinRequest, _ubicrawl_v1_JoinReply, _ubicrawl_v1_JoinRequest__Output, _ubicrawl_v1_JoinReply__Output>
  SettleDigests: MethodDefinition<_ubicrawl_v1_DigestSettlements, _ubicrawl_v1_DigestSettleAck, _ubicrawl_v1_DigestSettlements__Output, _ubicrawl_v1_DigestSettleAck__Output>
  SubmitUrls: MethodDefinition<_ubicrawl_v1_UrlBatch, _ubicrawl_v1_UrlBatchAck, _ubicrawl_v1_UrlBatch__Output, _ubicrawl_v1_UrlBatchAck__Output>
  SyncBlacklist: MethodDefinition<_ubicrawl_v1_BlacklistSync, _ubicrawl_v1_BlacklistSync, _ubicrawl_v1_BlacklistSync__Output, _ubicrawl_v1_BlacklistSync__Output>
}
