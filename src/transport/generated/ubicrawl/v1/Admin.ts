// Original file: proto/ubicrawl.proto

import type { MethodDefinition } from '@grpc/proto-loader'
import type { ArchiveChunk as _ubicrawl_v1_ArchiveChunk, ArchiveChunk__Output as _ubicrawl_v1_ArchiveChunk__Output } from '../../ubicrawl/v1/ArchiveChunk.js';
import type { ArchiveFileRequest as _ubicrawl_v1_ArchiveFileRequest, ArchiveFileRequest__Output as _ubicrawl_v1_ArchiveFileRequest__Output } from '../../ubicrawl/v1/ArchiveFileRequest.js';
import type { ArchiveList as _ubicrawl_v1_ArchiveList, ArchiveList__Output as _ubicrawl_v1_ArchiveList__Output } from '../../ubicrawl/v1/ArchiveList.js';
import type { ArchiveListRequest as _ubicrawl_v1_ArchiveListRequest, ArchiveListRequest__Output as _ubicrawl_v1_ArchiveListRequest__Output } from '../../ubicrawl/v1/ArchiveListRequest.js';
import type { ControlReply as _ubicrawl_v1_ControlReply, ControlReply__Output as _ubicrawl_v1_ControlReply__Output } from '../../ubicrawl/v1/ControlReply.js';
import type { ControlRequest as _ubicrawl_v1_ControlRequest, ControlRequest__Output as _ubicrawl_v1_ControlRequest__Output } from '../../ubicrawl/v1/ControlRequest.js';
import type { StatsReply as _ubicrawl_v1_StatsReply, StatsReply__Output as _ubicrawl_v1_StatsReply__Output } from '../../ubicrawl/v1/StatsReply.js';
import type { StatsRequest as _ubicrawl_v1_StatsRequest, StatsRequest__Output as _ubicrawl_v1_StatsRequest__Output } from '../../ubicrawl/v1/StatsRequest.js';

export interface AdminDefinition {
  Control: MethodDefinition<_ubicrawl_v1_ControlRequest, _ubicrawl_v1_ControlReply, _ubicrawl_v1_ControlRequest__Output, _ubicrawl_v1_ControlReply__Output>
  GetStats: MethodDefinition<_ubicrawl_v1_StatsRequest, _ubicrawl_v1_StatsReply, _ubicrawl_v1_StatsRequest__Output, _ubicrawl_v1_StatsReply__Output>
  ListArchive: MethodDefinition<_ubicrawl_v1_ArchiveListRequest, _ubicrawl_v1_ArchiveList, _ubicrawl_v1_ArchiveListRequest__Output, _ubicrawl_v1_ArchiveList__Output>
  ReadArchiveFile: MethodDefinition<_ubicrawl_v1_ArchiveFileRequest, _ubicrawl_v1_ArchiveChunk, _ubicrawl_v1_ArchiveFileRequest__Output, _ubicrawl_v1_ArchiveChunk__Output>
}
