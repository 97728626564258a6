/* eslint-disable require-yield */

import { decodeMessage, encodeMessage, MaxLengthError, message, streamMessage } from 'protons-runtime'
import { alloc as uint8ArrayAlloc } from 'uint8arrays/alloc'
import type { Codec, DecodeOptions } from 'protons-runtime'
import type { Uint8ArrayList } from 'uint8arraylist'

export interface Resources {
  cpu: number
  memoryBytes: number
  diskBytes: number
  gpus: number
}

export namespace Resources {
  let _codec: Codec<Resources>

  export const codec = (): Codec<Resources> => {
    if (_codec == null) {
      _codec = message<Resources>((obj, w, opts = {}) => {
        if (opts.lengthDelimited !== false) {
          w.fork()
        }

        if ((obj.cpu != null && obj.cpu !== 0)) {
          w.uint32(9)
          w.double(obj.cpu)
        }

        if ((obj.memoryBytes != null && obj.memoryBytes !== 0)) {
          w.uint32(16)
          w.uint64Number(obj.memoryBytes)
        }

        if ((obj.diskBytes != null && obj.diskBytes !== 0)) {
          w.uint32(24)
          w.uint64Number(obj.diskBytes)
        }

        if ((obj.gpus != null && obj.gpus !== 0)) {
          w.uint32(32)
          w.uint32(obj.gpus)
        }

        if (opts.lengthDelimited !== false) {
          w.ldelim()
        }
      }, (reader, length, opts = {}) => {
        const obj: any = {
          cpu: 0,
          memoryBytes: 0,
          diskBytes: 0,
          gpus: 0
        }

        const end = length == null ? reader.len : reader.pos + length

        while (reader.pos < end) {
          const tag = reader.uint32()

          switch (tag >>> 3) {
            case 1: {
              obj.cpu = reader.double()
              break
            }
            case 2: {
              obj.memoryBytes = reader.uint64Number()
              break
            }
            case 3: {
              obj.diskBytes = reader.uint64Number()
              break
            }
            case 4: {
              obj.gpus = reader.uint32()
              break
            }
            default: {
              reader.skipType(tag & 7)
              break
            }
          }
        }

        return obj
      }, function * (reader, length, prefix, opts = {}) {
        const end = length == null ? reader.len : reader.pos + length

        while (reader.pos < end) {
          const tag = reader.uint32()

          switch (tag >>> 3) {
            case 1: {
              yield {
                field: `${prefix}.cpu`,
                value: reader.double()
              }
              break
            }
            case 2: {
              yield {
                field: `${prefix}.memoryBytes`,
                value: reader.uint64Number()
              }
              break
            }
            case 3: {
              yield {
                field: `${prefix}.diskBytes`,
                value: reader.uint64Number()
              }
              break
            }
            case 4: {
              yield {
                field: `${prefix}.gpus`,
                value: reader.uint32()
              }
              break
            }
            default: {
              reader.skipType(tag & 7)
              break
            }
          }
        }
      })
    }

    return _codec
  }

  export interface ResourcesCpuFieldEvent {
    field: '$.cpu'
    value: number
  }

  export interface ResourcesMemoryBytesFieldEvent {
    field: '$.memoryBytes'
    value: number
  }

  export interface ResourcesDiskBytesFieldEvent {
    field: '$.diskBytes'
    value: number
  }

  export interface ResourcesGpusFieldEvent {
    field: '$.gpus'
    value: number
  }

  export function encode (obj: Partial<Resources>): Uint8Array<ArrayBuffer> {
    return encodeMessage(obj, Resources.codec())
  }

  export function decode (buf: Uint8Array | Uint8ArrayList, opts?: DecodeOptions<Resources>): Resources {
    return decodeMessage(buf, Resources.codec(), opts)
  }

  export function stream (buf: Uint8Array | Uint8ArrayList, opts?: DecodeOptions<Resources>): Generator<ResourcesCpuFieldEvent | ResourcesMemoryBytesFieldEvent | ResourcesDiskBytesFieldEvent | ResourcesGpusFieldEvent> {
    return streamMessage(buf, Resources.codec(), opts)
  }
}

export interface BidRequest {
  jobId: string
  maxDurationSeconds: number
  maxPrice: number
  deadline: number
  exclude: string[]
  approval?: Uint8Array<ArrayBuffer>
  funds?: Uint8Array<ArrayBuffer>
  quote?: boolean
  workloadNeeds: Uint8Array<ArrayBuffer>
}

export namespace BidRequest {
  let _codec: Codec<BidRequest>

  export const codec = (): Codec<BidRequest> => {
    if (_codec == null) {
      _codec = message<BidRequest>((obj, w, opts = {}) => {
        if (opts.lengthDelimited !== false) {
          w.fork()
        }

        if ((obj.jobId != null && obj.jobId !== '')) {
          w.uint32(10)
          w.string(obj.jobId)
        }

        if ((obj.maxDurationSeconds != null && obj.maxDurationSeconds !== 0)) {
          w.uint32(32)
          w.uint32(obj.maxDurationSeconds)
        }

        if ((obj.maxPrice != null && obj.maxPrice !== 0)) {
          w.uint32(40)
          w.uint64Number(obj.maxPrice)
        }

        if ((obj.deadline != null && obj.deadline !== 0)) {
          w.uint32(48)
          w.uint64Number(obj.deadline)
        }

        if (obj.exclude != null && obj.exclude.length > 0) {
          for (const value of obj.exclude) {
            w.uint32(58)
            w.string(value)
          }
        }

        if (obj.approval != null) {
          w.uint32(66)
          w.bytes(obj.approval)
        }

        if (obj.funds != null) {
          w.uint32(90)
          w.bytes(obj.funds)
        }

        if (obj.quote != null) {
          w.uint32(96)
          w.bool(obj.quote)
        }

        if ((obj.workloadNeeds != null && obj.workloadNeeds.byteLength > 0)) {
          w.uint32(106)
          w.bytes(obj.workloadNeeds)
        }

        if (opts.lengthDelimited !== false) {
          w.ldelim()
        }
      }, (reader, length, opts = {}) => {
        const obj: any = {
          jobId: '',
          maxDurationSeconds: 0,
          maxPrice: 0,
          deadline: 0,
          exclude: [],
          workloadNeeds: uint8ArrayAlloc(0)
        }

        const end = length == null ? reader.len : reader.pos + length

        while (reader.pos < end) {
          const tag = reader.uint32()

          switch (tag >>> 3) {
            case 1: {
              obj.jobId = reader.string()
              break
            }
            case 4: {
              obj.maxDurationSeconds = reader.uint32()
              break
            }
            case 5: {
              obj.maxPrice = reader.uint64Number()
              break
            }
            case 6: {
              obj.deadline = reader.uint64Number()
              break
            }
            case 7: {
              if (opts.limits?.exclude != null && obj.exclude.length === opts.limits.exclude) {
                throw new MaxLengthError('Decode error - repeated field "exclude" had too many elements')
              }

              obj.exclude.push(reader.string())
              break
            }
            case 8: {
              obj.approval = reader.bytes()
              break
            }
            case 11: {
              obj.funds = reader.bytes()
              break
            }
            case 12: {
              obj.quote = reader.bool()
              break
            }
            case 13: {
              obj.workloadNeeds = reader.bytes()
              break
            }
            default: {
              reader.skipType(tag & 7)
              break
            }
          }
        }

        return obj
      }, function * (reader, length, prefix, opts = {}) {
        const obj = {
          exclude: 0
        }

        const end = length == null ? reader.len : reader.pos + length

        while (reader.pos < end) {
          const tag = reader.uint32()

          switch (tag >>> 3) {
            case 1: {
              yield {
                field: `${prefix}.jobId`,
                value: reader.string()
              }
              break
            }
            case 4: {
              yield {
                field: `${prefix}.maxDurationSeconds`,
                value: reader.uint32()
              }
              break
            }
            case 5: {
              yield {
                field: `${prefix}.maxPrice`,
                value: reader.uint64Number()
              }
              break
            }
            case 6: {
              yield {
                field: `${prefix}.deadline`,
                value: reader.uint64Number()
              }
              break
            }
            case 7: {
              if (opts.limits?.exclude != null && obj.exclude === opts.limits.exclude) {
                throw new MaxLengthError('Streaming decode error - repeated field "exclude" had too many elements')
              }

              yield {
                field: `${prefix}.exclude[]`,
                index: obj.exclude,
                value: reader.string()
              }

              obj.exclude++

              break
            }
            case 8: {
              yield {
                field: `${prefix}.approval`,
                value: reader.bytes()
              }
              break
            }
            case 11: {
              yield {
                field: `${prefix}.funds`,
                value: reader.bytes()
              }
              break
            }
            case 12: {
              yield {
                field: `${prefix}.quote`,
                value: reader.bool()
              }
              break
            }
            case 13: {
              yield {
                field: `${prefix}.workloadNeeds`,
                value: reader.bytes()
              }
              break
            }
            default: {
              reader.skipType(tag & 7)
              break
            }
          }
        }
      })
    }

    return _codec
  }

  export interface BidRequestJobIdFieldEvent {
    field: '$.jobId'
    value: string
  }

  export interface BidRequestMaxDurationSecondsFieldEvent {
    field: '$.maxDurationSeconds'
    value: number
  }

  export interface BidRequestMaxPriceFieldEvent {
    field: '$.maxPrice'
    value: number
  }

  export interface BidRequestDeadlineFieldEvent {
    field: '$.deadline'
    value: number
  }

  export interface BidRequestExcludeFieldEvent {
    field: '$.exclude[]'
    index: number
    value: string
  }

  export interface BidRequestApprovalFieldEvent {
    field: '$.approval'
    value: Uint8Array<ArrayBuffer>
  }

  export interface BidRequestFundsFieldEvent {
    field: '$.funds'
    value: Uint8Array<ArrayBuffer>
  }

  export interface BidRequestQuoteFieldEvent {
    field: '$.quote'
    value: boolean
  }

  export interface BidRequestWorkloadNeedsFieldEvent {
    field: '$.workloadNeeds'
    value: Uint8Array<ArrayBuffer>
  }

  export function encode (obj: Partial<BidRequest>): Uint8Array<ArrayBuffer> {
    return encodeMessage(obj, BidRequest.codec())
  }

  export function decode (buf: Uint8Array | Uint8ArrayList, opts?: DecodeOptions<BidRequest>): BidRequest {
    return decodeMessage(buf, BidRequest.codec(), opts)
  }

  export function stream (buf: Uint8Array | Uint8ArrayList, opts?: DecodeOptions<BidRequest>): Generator<BidRequestJobIdFieldEvent | BidRequestMaxDurationSecondsFieldEvent | BidRequestMaxPriceFieldEvent | BidRequestDeadlineFieldEvent | BidRequestExcludeFieldEvent | BidRequestApprovalFieldEvent | BidRequestFundsFieldEvent | BidRequestQuoteFieldEvent | BidRequestWorkloadNeedsFieldEvent> {
    return streamMessage(buf, BidRequest.codec(), opts)
  }
}

export interface Bid {
  bid: Uint8Array<ArrayBuffer>
  approval?: Uint8Array<ArrayBuffer>
}

export namespace Bid {
  let _codec: Codec<Bid>

  export const codec = (): Codec<Bid> => {
    if (_codec == null) {
      _codec = message<Bid>((obj, w, opts = {}) => {
        if (opts.lengthDelimited !== false) {
          w.fork()
        }

        if ((obj.bid != null && obj.bid.byteLength > 0)) {
          w.uint32(10)
          w.bytes(obj.bid)
        }

        if (obj.approval != null) {
          w.uint32(18)
          w.bytes(obj.approval)
        }

        if (opts.lengthDelimited !== false) {
          w.ldelim()
        }
      }, (reader, length, opts = {}) => {
        const obj: any = {
          bid: uint8ArrayAlloc(0)
        }

        const end = length == null ? reader.len : reader.pos + length

        while (reader.pos < end) {
          const tag = reader.uint32()

          switch (tag >>> 3) {
            case 1: {
              obj.bid = reader.bytes()
              break
            }
            case 2: {
              obj.approval = reader.bytes()
              break
            }
            default: {
              reader.skipType(tag & 7)
              break
            }
          }
        }

        return obj
      }, function * (reader, length, prefix, opts = {}) {
        const end = length == null ? reader.len : reader.pos + length

        while (reader.pos < end) {
          const tag = reader.uint32()

          switch (tag >>> 3) {
            case 1: {
              yield {
                field: `${prefix}.bid`,
                value: reader.bytes()
              }
              break
            }
            case 2: {
              yield {
                field: `${prefix}.approval`,
                value: reader.bytes()
              }
              break
            }
            default: {
              reader.skipType(tag & 7)
              break
            }
          }
        }
      })
    }

    return _codec
  }

  export interface BidBidFieldEvent {
    field: '$.bid'
    value: Uint8Array<ArrayBuffer>
  }

  export interface BidApprovalFieldEvent {
    field: '$.approval'
    value: Uint8Array<ArrayBuffer>
  }

  export function encode (obj: Partial<Bid>): Uint8Array<ArrayBuffer> {
    return encodeMessage(obj, Bid.codec())
  }

  export function decode (buf: Uint8Array | Uint8ArrayList, opts?: DecodeOptions<Bid>): Bid {
    return decodeMessage(buf, Bid.codec(), opts)
  }

  export function stream (buf: Uint8Array | Uint8ArrayList, opts?: DecodeOptions<Bid>): Generator<BidBidFieldEvent | BidApprovalFieldEvent> {
    return streamMessage(buf, Bid.codec(), opts)
  }
}

export interface Decline {
  jobId: string
  provider: string
  reasons: string[]
  approval?: Uint8Array<ArrayBuffer>
}

export namespace Decline {
  let _codec: Codec<Decline>

  export const codec = (): Codec<Decline> => {
    if (_codec == null) {
      _codec = message<Decline>((obj, w, opts = {}) => {
        if (opts.lengthDelimited !== false) {
          w.fork()
        }

        if ((obj.jobId != null && obj.jobId !== '')) {
          w.uint32(10)
          w.string(obj.jobId)
        }

        if ((obj.provider != null && obj.provider !== '')) {
          w.uint32(18)
          w.string(obj.provider)
        }

        if (obj.reasons != null && obj.reasons.length > 0) {
          for (const value of obj.reasons) {
            w.uint32(26)
            w.string(value)
          }
        }

        if (obj.approval != null) {
          w.uint32(34)
          w.bytes(obj.approval)
        }

        if (opts.lengthDelimited !== false) {
          w.ldelim()
        }
      }, (reader, length, opts = {}) => {
        const obj: any = {
          jobId: '',
          provider: '',
          reasons: []
        }

        const end = length == null ? reader.len : reader.pos + length

        while (reader.pos < end) {
          const tag = reader.uint32()

          switch (tag >>> 3) {
            case 1: {
              obj.jobId = reader.string()
              break
            }
            case 2: {
              obj.provider = reader.string()
              break
            }
            case 3: {
              if (opts.limits?.reasons != null && obj.reasons.length === opts.limits.reasons) {
                throw new MaxLengthError('Decode error - repeated field "reasons" had too many elements')
              }

              obj.reasons.push(reader.string())
              break
            }
            case 4: {
              obj.approval = reader.bytes()
              break
            }
            default: {
              reader.skipType(tag & 7)
              break
            }
          }
        }

        return obj
      }, function * (reader, length, prefix, opts = {}) {
        const obj = {
          reasons: 0
        }

        const end = length == null ? reader.len : reader.pos + length

        while (reader.pos < end) {
          const tag = reader.uint32()

          switch (tag >>> 3) {
            case 1: {
              yield {
                field: `${prefix}.jobId`,
                value: reader.string()
              }
              break
            }
            case 2: {
              yield {
                field: `${prefix}.provider`,
                value: reader.string()
              }
              break
            }
            case 3: {
              if (opts.limits?.reasons != null && obj.reasons === opts.limits.reasons) {
                throw new MaxLengthError('Streaming decode error - repeated field "reasons" had too many elements')
              }

              yield {
                field: `${prefix}.reasons[]`,
                index: obj.reasons,
                value: reader.string()
              }

              obj.reasons++

              break
            }
            case 4: {
              yield {
                field: `${prefix}.approval`,
                value: reader.bytes()
              }
              break
            }
            default: {
              reader.skipType(tag & 7)
              break
            }
          }
        }
      })
    }

    return _codec
  }

  export interface DeclineJobIdFieldEvent {
    field: '$.jobId'
    value: string
  }

  export interface DeclineProviderFieldEvent {
    field: '$.provider'
    value: string
  }

  export interface DeclineReasonsFieldEvent {
    field: '$.reasons[]'
    index: number
    value: string
  }

  export interface DeclineApprovalFieldEvent {
    field: '$.approval'
    value: Uint8Array<ArrayBuffer>
  }

  export function encode (obj: Partial<Decline>): Uint8Array<ArrayBuffer> {
    return encodeMessage(obj, Decline.codec())
  }

  export function decode (buf: Uint8Array | Uint8ArrayList, opts?: DecodeOptions<Decline>): Decline {
    return decodeMessage(buf, Decline.codec(), opts)
  }

  export function stream (buf: Uint8Array | Uint8ArrayList, opts?: DecodeOptions<Decline>): Generator<DeclineJobIdFieldEvent | DeclineProviderFieldEvent | DeclineReasonsFieldEvent | DeclineApprovalFieldEvent> {
    return streamMessage(buf, Decline.codec(), opts)
  }
}

export interface ApprovalRequest {}

export namespace ApprovalRequest {
  let _codec: Codec<ApprovalRequest>

  export const codec = (): Codec<ApprovalRequest> => {
    if (_codec == null) {
      _codec = message<ApprovalRequest>((obj, w, opts = {}) => {
        if (opts.lengthDelimited !== false) {
          w.fork()
        }

        if (opts.lengthDelimited !== false) {
          w.ldelim()
        }
      }, (reader, length, opts = {}) => {
        const obj: any = {}

        const end = length == null ? reader.len : reader.pos + length

        while (reader.pos < end) {
          const tag = reader.uint32()

          switch (tag >>> 3) {
            default: {
              reader.skipType(tag & 7)
              break
            }
          }
        }

        return obj
      }, function * (reader, length, prefix, opts = {}) {
        const end = length == null ? reader.len : reader.pos + length

        while (reader.pos < end) {
          const tag = reader.uint32()

          switch (tag >>> 3) {
            default: {
              reader.skipType(tag & 7)
              break
            }
          }
        }
      })
    }

    return _codec
  }

  export function encode (obj: Partial<ApprovalRequest>): Uint8Array<ArrayBuffer> {
    return encodeMessage(obj, ApprovalRequest.codec())
  }

  export function decode (buf: Uint8Array | Uint8ArrayList, opts?: DecodeOptions<ApprovalRequest>): ApprovalRequest {
    return decodeMessage(buf, ApprovalRequest.codec(), opts)
  }

  export function stream (buf: Uint8Array | Uint8ArrayList, opts?: DecodeOptions<ApprovalRequest>): Generator<{}> {
    return streamMessage(buf, ApprovalRequest.codec(), opts)
  }
}

export interface ApprovalMessage {
  credential: Uint8Array<ArrayBuffer>
}

export namespace ApprovalMessage {
  let _codec: Codec<ApprovalMessage>

  export const codec = (): Codec<ApprovalMessage> => {
    if (_codec == null) {
      _codec = message<ApprovalMessage>((obj, w, opts = {}) => {
        if (opts.lengthDelimited !== false) {
          w.fork()
        }

        if ((obj.credential != null && obj.credential.byteLength > 0)) {
          w.uint32(10)
          w.bytes(obj.credential)
        }

        if (opts.lengthDelimited !== false) {
          w.ldelim()
        }
      }, (reader, length, opts = {}) => {
        const obj: any = {
          credential: uint8ArrayAlloc(0)
        }

        const end = length == null ? reader.len : reader.pos + length

        while (reader.pos < end) {
          const tag = reader.uint32()

          switch (tag >>> 3) {
            case 1: {
              obj.credential = reader.bytes()
              break
            }
            default: {
              reader.skipType(tag & 7)
              break
            }
          }
        }

        return obj
      }, function * (reader, length, prefix, opts = {}) {
        const end = length == null ? reader.len : reader.pos + length

        while (reader.pos < end) {
          const tag = reader.uint32()

          switch (tag >>> 3) {
            case 1: {
              yield {
                field: `${prefix}.credential`,
                value: reader.bytes()
              }
              break
            }
            default: {
              reader.skipType(tag & 7)
              break
            }
          }
        }
      })
    }

    return _codec
  }

  export interface ApprovalMessageCredentialFieldEvent {
    field: '$.credential'
    value: Uint8Array<ArrayBuffer>
  }

  export function encode (obj: Partial<ApprovalMessage>): Uint8Array<ArrayBuffer> {
    return encodeMessage(obj, ApprovalMessage.codec())
  }

  export function decode (buf: Uint8Array | Uint8ArrayList, opts?: DecodeOptions<ApprovalMessage>): ApprovalMessage {
    return decodeMessage(buf, ApprovalMessage.codec(), opts)
  }

  export function stream (buf: Uint8Array | Uint8ArrayList, opts?: DecodeOptions<ApprovalMessage>): Generator<ApprovalMessageCredentialFieldEvent> {
    return streamMessage(buf, ApprovalMessage.codec(), opts)
  }
}

export interface BalanceRequest {}

export namespace BalanceRequest {
  let _codec: Codec<BalanceRequest>

  export const codec = (): Codec<BalanceRequest> => {
    if (_codec == null) {
      _codec = message<BalanceRequest>((obj, w, opts = {}) => {
        if (opts.lengthDelimited !== false) {
          w.fork()
        }

        if (opts.lengthDelimited !== false) {
          w.ldelim()
        }
      }, (reader, length, opts = {}) => {
        const obj: any = {}

        const end = length == null ? reader.len : reader.pos + length

        while (reader.pos < end) {
          const tag = reader.uint32()

          switch (tag >>> 3) {
            default: {
              reader.skipType(tag & 7)
              break
            }
          }
        }

        return obj
      }, function * (reader, length, prefix, opts = {}) {
        const end = length == null ? reader.len : reader.pos + length

        while (reader.pos < end) {
          const tag = reader.uint32()

          switch (tag >>> 3) {
            default: {
              reader.skipType(tag & 7)
              break
            }
          }
        }
      })
    }

    return _codec
  }

  export function encode (obj: Partial<BalanceRequest>): Uint8Array<ArrayBuffer> {
    return encodeMessage(obj, BalanceRequest.codec())
  }

  export function decode (buf: Uint8Array | Uint8ArrayList, opts?: DecodeOptions<BalanceRequest>): BalanceRequest {
    return decodeMessage(buf, BalanceRequest.codec(), opts)
  }

  export function stream (buf: Uint8Array | Uint8ArrayList, opts?: DecodeOptions<BalanceRequest>): Generator<{}> {
    return streamMessage(buf, BalanceRequest.codec(), opts)
  }
}

export interface BalanceMessage {
  balance: number
  escrow: number
}

export namespace BalanceMessage {
  let _codec: Codec<BalanceMessage>

  export const codec = (): Codec<BalanceMessage> => {
    if (_codec == null) {
      _codec = message<BalanceMessage>((obj, w, opts = {}) => {
        if (opts.lengthDelimited !== false) {
          w.fork()
        }

        if ((obj.balance != null && obj.balance !== 0)) {
          w.uint32(8)
          w.uint64Number(obj.balance)
        }

        if ((obj.escrow != null && obj.escrow !== 0)) {
          w.uint32(16)
          w.uint64Number(obj.escrow)
        }

        if (opts.lengthDelimited !== false) {
          w.ldelim()
        }
      }, (reader, length, opts = {}) => {
        const obj: any = {
          balance: 0,
          escrow: 0
        }

        const end = length == null ? reader.len : reader.pos + length

        while (reader.pos < end) {
          const tag = reader.uint32()

          switch (tag >>> 3) {
            case 1: {
              obj.balance = reader.uint64Number()
              break
            }
            case 2: {
              obj.escrow = reader.uint64Number()
              break
            }
            default: {
              reader.skipType(tag & 7)
              break
            }
          }
        }

        return obj
      }, function * (reader, length, prefix, opts = {}) {
        const end = length == null ? reader.len : reader.pos + length

        while (reader.pos < end) {
          const tag = reader.uint32()

          switch (tag >>> 3) {
            case 1: {
              yield {
                field: `${prefix}.balance`,
                value: reader.uint64Number()
              }
              break
            }
            case 2: {
              yield {
                field: `${prefix}.escrow`,
                value: reader.uint64Number()
              }
              break
            }
            default: {
              reader.skipType(tag & 7)
              break
            }
          }
        }
      })
    }

    return _codec
  }

  export interface BalanceMessageBalanceFieldEvent {
    field: '$.balance'
    value: number
  }

  export interface BalanceMessageEscrowFieldEvent {
    field: '$.escrow'
    value: number
  }

  export function encode (obj: Partial<BalanceMessage>): Uint8Array<ArrayBuffer> {
    return encodeMessage(obj, BalanceMessage.codec())
  }

  export function decode (buf: Uint8Array | Uint8ArrayList, opts?: DecodeOptions<BalanceMessage>): BalanceMessage {
    return decodeMessage(buf, BalanceMessage.codec(), opts)
  }

  export function stream (buf: Uint8Array | Uint8ArrayList, opts?: DecodeOptions<BalanceMessage>): Generator<BalanceMessageBalanceFieldEvent | BalanceMessageEscrowFieldEvent> {
    return streamMessage(buf, BalanceMessage.codec(), opts)
  }
}

export interface FundsRequest {}

export namespace FundsRequest {
  let _codec: Codec<FundsRequest>

  export const codec = (): Codec<FundsRequest> => {
    if (_codec == null) {
      _codec = message<FundsRequest>((obj, w, opts = {}) => {
        if (opts.lengthDelimited !== false) {
          w.fork()
        }

        if (opts.lengthDelimited !== false) {
          w.ldelim()
        }
      }, (reader, length, opts = {}) => {
        const obj: any = {}

        const end = length == null ? reader.len : reader.pos + length

        while (reader.pos < end) {
          const tag = reader.uint32()

          switch (tag >>> 3) {
            default: {
              reader.skipType(tag & 7)
              break
            }
          }
        }

        return obj
      }, function * (reader, length, prefix, opts = {}) {
        const end = length == null ? reader.len : reader.pos + length

        while (reader.pos < end) {
          const tag = reader.uint32()

          switch (tag >>> 3) {
            default: {
              reader.skipType(tag & 7)
              break
            }
          }
        }
      })
    }

    return _codec
  }

  export function encode (obj: Partial<FundsRequest>): Uint8Array<ArrayBuffer> {
    return encodeMessage(obj, FundsRequest.codec())
  }

  export function decode (buf: Uint8Array | Uint8ArrayList, opts?: DecodeOptions<FundsRequest>): FundsRequest {
    return decodeMessage(buf, FundsRequest.codec(), opts)
  }

  export function stream (buf: Uint8Array | Uint8ArrayList, opts?: DecodeOptions<FundsRequest>): Generator<{}> {
    return streamMessage(buf, FundsRequest.codec(), opts)
  }
}

export interface FundsMessage {
  proof: Uint8Array<ArrayBuffer>
}

export namespace FundsMessage {
  let _codec: Codec<FundsMessage>

  export const codec = (): Codec<FundsMessage> => {
    if (_codec == null) {
      _codec = message<FundsMessage>((obj, w, opts = {}) => {
        if (opts.lengthDelimited !== false) {
          w.fork()
        }

        if ((obj.proof != null && obj.proof.byteLength > 0)) {
          w.uint32(10)
          w.bytes(obj.proof)
        }

        if (opts.lengthDelimited !== false) {
          w.ldelim()
        }
      }, (reader, length, opts = {}) => {
        const obj: any = {
          proof: uint8ArrayAlloc(0)
        }

        const end = length == null ? reader.len : reader.pos + length

        while (reader.pos < end) {
          const tag = reader.uint32()

          switch (tag >>> 3) {
            case 1: {
              obj.proof = reader.bytes()
              break
            }
            default: {
              reader.skipType(tag & 7)
              break
            }
          }
        }

        return obj
      }, function * (reader, length, prefix, opts = {}) {
        const end = length == null ? reader.len : reader.pos + length

        while (reader.pos < end) {
          const tag = reader.uint32()

          switch (tag >>> 3) {
            case 1: {
              yield {
                field: `${prefix}.proof`,
                value: reader.bytes()
              }
              break
            }
            default: {
              reader.skipType(tag & 7)
              break
            }
          }
        }
      })
    }

    return _codec
  }

  export interface FundsMessageProofFieldEvent {
    field: '$.proof'
    value: Uint8Array<ArrayBuffer>
  }

  export function encode (obj: Partial<FundsMessage>): Uint8Array<ArrayBuffer> {
    return encodeMessage(obj, FundsMessage.codec())
  }

  export function decode (buf: Uint8Array | Uint8ArrayList, opts?: DecodeOptions<FundsMessage>): FundsMessage {
    return decodeMessage(buf, FundsMessage.codec(), opts)
  }

  export function stream (buf: Uint8Array | Uint8ArrayList, opts?: DecodeOptions<FundsMessage>): Generator<FundsMessageProofFieldEvent> {
    return streamMessage(buf, FundsMessage.codec(), opts)
  }
}

export interface JobRequest {
  jobId: string
  bidId: string
}

export namespace JobRequest {
  let _codec: Codec<JobRequest>

  export const codec = (): Codec<JobRequest> => {
    if (_codec == null) {
      _codec = message<JobRequest>((obj, w, opts = {}) => {
        if (opts.lengthDelimited !== false) {
          w.fork()
        }

        if ((obj.jobId != null && obj.jobId !== '')) {
          w.uint32(10)
          w.string(obj.jobId)
        }

        if ((obj.bidId != null && obj.bidId !== '')) {
          w.uint32(18)
          w.string(obj.bidId)
        }

        if (opts.lengthDelimited !== false) {
          w.ldelim()
        }
      }, (reader, length, opts = {}) => {
        const obj: any = {
          jobId: '',
          bidId: ''
        }

        const end = length == null ? reader.len : reader.pos + length

        while (reader.pos < end) {
          const tag = reader.uint32()

          switch (tag >>> 3) {
            case 1: {
              obj.jobId = reader.string()
              break
            }
            case 2: {
              obj.bidId = reader.string()
              break
            }
            default: {
              reader.skipType(tag & 7)
              break
            }
          }
        }

        return obj
      }, function * (reader, length, prefix, opts = {}) {
        const end = length == null ? reader.len : reader.pos + length

        while (reader.pos < end) {
          const tag = reader.uint32()

          switch (tag >>> 3) {
            case 1: {
              yield {
                field: `${prefix}.jobId`,
                value: reader.string()
              }
              break
            }
            case 2: {
              yield {
                field: `${prefix}.bidId`,
                value: reader.string()
              }
              break
            }
            default: {
              reader.skipType(tag & 7)
              break
            }
          }
        }
      })
    }

    return _codec
  }

  export interface JobRequestJobIdFieldEvent {
    field: '$.jobId'
    value: string
  }

  export interface JobRequestBidIdFieldEvent {
    field: '$.bidId'
    value: string
  }

  export function encode (obj: Partial<JobRequest>): Uint8Array<ArrayBuffer> {
    return encodeMessage(obj, JobRequest.codec())
  }

  export function decode (buf: Uint8Array | Uint8ArrayList, opts?: DecodeOptions<JobRequest>): JobRequest {
    return decodeMessage(buf, JobRequest.codec(), opts)
  }

  export function stream (buf: Uint8Array | Uint8ArrayList, opts?: DecodeOptions<JobRequest>): Generator<JobRequestJobIdFieldEvent | JobRequestBidIdFieldEvent> {
    return streamMessage(buf, JobRequest.codec(), opts)
  }
}

export interface JobRequestReply {
  locked: boolean
  lockedUntil: number
}

export namespace JobRequestReply {
  let _codec: Codec<JobRequestReply>

  export const codec = (): Codec<JobRequestReply> => {
    if (_codec == null) {
      _codec = message<JobRequestReply>((obj, w, opts = {}) => {
        if (opts.lengthDelimited !== false) {
          w.fork()
        }

        if ((obj.locked != null && obj.locked !== false)) {
          w.uint32(8)
          w.bool(obj.locked)
        }

        if ((obj.lockedUntil != null && obj.lockedUntil !== 0)) {
          w.uint32(16)
          w.uint64Number(obj.lockedUntil)
        }

        if (opts.lengthDelimited !== false) {
          w.ldelim()
        }
      }, (reader, length, opts = {}) => {
        const obj: any = {
          locked: false,
          lockedUntil: 0
        }

        const end = length == null ? reader.len : reader.pos + length

        while (reader.pos < end) {
          const tag = reader.uint32()

          switch (tag >>> 3) {
            case 1: {
              obj.locked = reader.bool()
              break
            }
            case 2: {
              obj.lockedUntil = reader.uint64Number()
              break
            }
            default: {
              reader.skipType(tag & 7)
              break
            }
          }
        }

        return obj
      }, function * (reader, length, prefix, opts = {}) {
        const end = length == null ? reader.len : reader.pos + length

        while (reader.pos < end) {
          const tag = reader.uint32()

          switch (tag >>> 3) {
            case 1: {
              yield {
                field: `${prefix}.locked`,
                value: reader.bool()
              }
              break
            }
            case 2: {
              yield {
                field: `${prefix}.lockedUntil`,
                value: reader.uint64Number()
              }
              break
            }
            default: {
              reader.skipType(tag & 7)
              break
            }
          }
        }
      })
    }

    return _codec
  }

  export interface JobRequestReplyLockedFieldEvent {
    field: '$.locked'
    value: boolean
  }

  export interface JobRequestReplyLockedUntilFieldEvent {
    field: '$.lockedUntil'
    value: number
  }

  export function encode (obj: Partial<JobRequestReply>): Uint8Array<ArrayBuffer> {
    return encodeMessage(obj, JobRequestReply.codec())
  }

  export function decode (buf: Uint8Array | Uint8ArrayList, opts?: DecodeOptions<JobRequestReply>): JobRequestReply {
    return decodeMessage(buf, JobRequestReply.codec(), opts)
  }

  export function stream (buf: Uint8Array | Uint8ArrayList, opts?: DecodeOptions<JobRequestReply>): Generator<JobRequestReplyLockedFieldEvent | JobRequestReplyLockedUntilFieldEvent> {
    return streamMessage(buf, JobRequestReply.codec(), opts)
  }
}

export interface ContractRequest {
  contract: Uint8Array<ArrayBuffer>
}

export namespace ContractRequest {
  let _codec: Codec<ContractRequest>

  export const codec = (): Codec<ContractRequest> => {
    if (_codec == null) {
      _codec = message<ContractRequest>((obj, w, opts = {}) => {
        if (opts.lengthDelimited !== false) {
          w.fork()
        }

        if ((obj.contract != null && obj.contract.byteLength > 0)) {
          w.uint32(10)
          w.bytes(obj.contract)
        }

        if (opts.lengthDelimited !== false) {
          w.ldelim()
        }
      }, (reader, length, opts = {}) => {
        const obj: any = {
          contract: uint8ArrayAlloc(0)
        }

        const end = length == null ? reader.len : reader.pos + length

        while (reader.pos < end) {
          const tag = reader.uint32()

          switch (tag >>> 3) {
            case 1: {
              obj.contract = reader.bytes()
              break
            }
            default: {
              reader.skipType(tag & 7)
              break
            }
          }
        }

        return obj
      }, function * (reader, length, prefix, opts = {}) {
        const end = length == null ? reader.len : reader.pos + length

        while (reader.pos < end) {
          const tag = reader.uint32()

          switch (tag >>> 3) {
            case 1: {
              yield {
                field: `${prefix}.contract`,
                value: reader.bytes()
              }
              break
            }
            default: {
              reader.skipType(tag & 7)
              break
            }
          }
        }
      })
    }

    return _codec
  }

  export interface ContractRequestContractFieldEvent {
    field: '$.contract'
    value: Uint8Array<ArrayBuffer>
  }

  export function encode (obj: Partial<ContractRequest>): Uint8Array<ArrayBuffer> {
    return encodeMessage(obj, ContractRequest.codec())
  }

  export function decode (buf: Uint8Array | Uint8ArrayList, opts?: DecodeOptions<ContractRequest>): ContractRequest {
    return decodeMessage(buf, ContractRequest.codec(), opts)
  }

  export function stream (buf: Uint8Array | Uint8ArrayList, opts?: DecodeOptions<ContractRequest>): Generator<ContractRequestContractFieldEvent> {
    return streamMessage(buf, ContractRequest.codec(), opts)
  }
}

export interface ContractSignReply {
  providerSignature: string
}

export namespace ContractSignReply {
  let _codec: Codec<ContractSignReply>

  export const codec = (): Codec<ContractSignReply> => {
    if (_codec == null) {
      _codec = message<ContractSignReply>((obj, w, opts = {}) => {
        if (opts.lengthDelimited !== false) {
          w.fork()
        }

        if ((obj.providerSignature != null && obj.providerSignature !== '')) {
          w.uint32(10)
          w.string(obj.providerSignature)
        }

        if (opts.lengthDelimited !== false) {
          w.ldelim()
        }
      }, (reader, length, opts = {}) => {
        const obj: any = {
          providerSignature: ''
        }

        const end = length == null ? reader.len : reader.pos + length

        while (reader.pos < end) {
          const tag = reader.uint32()

          switch (tag >>> 3) {
            case 1: {
              obj.providerSignature = reader.string()
              break
            }
            default: {
              reader.skipType(tag & 7)
              break
            }
          }
        }

        return obj
      }, function * (reader, length, prefix, opts = {}) {
        const end = length == null ? reader.len : reader.pos + length

        while (reader.pos < end) {
          const tag = reader.uint32()

          switch (tag >>> 3) {
            case 1: {
              yield {
                field: `${prefix}.providerSignature`,
                value: reader.string()
              }
              break
            }
            default: {
              reader.skipType(tag & 7)
              break
            }
          }
        }
      })
    }

    return _codec
  }

  export interface ContractSignReplyProviderSignatureFieldEvent {
    field: '$.providerSignature'
    value: string
  }

  export function encode (obj: Partial<ContractSignReply>): Uint8Array<ArrayBuffer> {
    return encodeMessage(obj, ContractSignReply.codec())
  }

  export function decode (buf: Uint8Array | Uint8ArrayList, opts?: DecodeOptions<ContractSignReply>): ContractSignReply {
    return decodeMessage(buf, ContractSignReply.codec(), opts)
  }

  export function stream (buf: Uint8Array | Uint8ArrayList, opts?: DecodeOptions<ContractSignReply>): Generator<ContractSignReplyProviderSignatureFieldEvent> {
    return streamMessage(buf, ContractSignReply.codec(), opts)
  }
}

export interface ContractProofMessage {
  proof: Uint8Array<ArrayBuffer>
}

export namespace ContractProofMessage {
  let _codec: Codec<ContractProofMessage>

  export const codec = (): Codec<ContractProofMessage> => {
    if (_codec == null) {
      _codec = message<ContractProofMessage>((obj, w, opts = {}) => {
        if (opts.lengthDelimited !== false) {
          w.fork()
        }

        if ((obj.proof != null && obj.proof.byteLength > 0)) {
          w.uint32(10)
          w.bytes(obj.proof)
        }

        if (opts.lengthDelimited !== false) {
          w.ldelim()
        }
      }, (reader, length, opts = {}) => {
        const obj: any = {
          proof: uint8ArrayAlloc(0)
        }

        const end = length == null ? reader.len : reader.pos + length

        while (reader.pos < end) {
          const tag = reader.uint32()

          switch (tag >>> 3) {
            case 1: {
              obj.proof = reader.bytes()
              break
            }
            default: {
              reader.skipType(tag & 7)
              break
            }
          }
        }

        return obj
      }, function * (reader, length, prefix, opts = {}) {
        const end = length == null ? reader.len : reader.pos + length

        while (reader.pos < end) {
          const tag = reader.uint32()

          switch (tag >>> 3) {
            case 1: {
              yield {
                field: `${prefix}.proof`,
                value: reader.bytes()
              }
              break
            }
            default: {
              reader.skipType(tag & 7)
              break
            }
          }
        }
      })
    }

    return _codec
  }

  export interface ContractProofMessageProofFieldEvent {
    field: '$.proof'
    value: Uint8Array<ArrayBuffer>
  }

  export function encode (obj: Partial<ContractProofMessage>): Uint8Array<ArrayBuffer> {
    return encodeMessage(obj, ContractProofMessage.codec())
  }

  export function decode (buf: Uint8Array | Uint8ArrayList, opts?: DecodeOptions<ContractProofMessage>): ContractProofMessage {
    return decodeMessage(buf, ContractProofMessage.codec(), opts)
  }

  export function stream (buf: Uint8Array | Uint8ArrayList, opts?: DecodeOptions<ContractProofMessage>): Generator<ContractProofMessageProofFieldEvent> {
    return streamMessage(buf, ContractProofMessage.codec(), opts)
  }
}

export interface StartNoteRequest {
  note: Uint8Array<ArrayBuffer>
}

export namespace StartNoteRequest {
  let _codec: Codec<StartNoteRequest>

  export const codec = (): Codec<StartNoteRequest> => {
    if (_codec == null) {
      _codec = message<StartNoteRequest>((obj, w, opts = {}) => {
        if (opts.lengthDelimited !== false) {
          w.fork()
        }

        if ((obj.note != null && obj.note.byteLength > 0)) {
          w.uint32(10)
          w.bytes(obj.note)
        }

        if (opts.lengthDelimited !== false) {
          w.ldelim()
        }
      }, (reader, length, opts = {}) => {
        const obj: any = {
          note: uint8ArrayAlloc(0)
        }

        const end = length == null ? reader.len : reader.pos + length

        while (reader.pos < end) {
          const tag = reader.uint32()

          switch (tag >>> 3) {
            case 1: {
              obj.note = reader.bytes()
              break
            }
            default: {
              reader.skipType(tag & 7)
              break
            }
          }
        }

        return obj
      }, function * (reader, length, prefix, opts = {}) {
        const end = length == null ? reader.len : reader.pos + length

        while (reader.pos < end) {
          const tag = reader.uint32()

          switch (tag >>> 3) {
            case 1: {
              yield {
                field: `${prefix}.note`,
                value: reader.bytes()
              }
              break
            }
            default: {
              reader.skipType(tag & 7)
              break
            }
          }
        }
      })
    }

    return _codec
  }

  export interface StartNoteRequestNoteFieldEvent {
    field: '$.note'
    value: Uint8Array<ArrayBuffer>
  }

  export function encode (obj: Partial<StartNoteRequest>): Uint8Array<ArrayBuffer> {
    return encodeMessage(obj, StartNoteRequest.codec())
  }

  export function decode (buf: Uint8Array | Uint8ArrayList, opts?: DecodeOptions<StartNoteRequest>): StartNoteRequest {
    return decodeMessage(buf, StartNoteRequest.codec(), opts)
  }

  export function stream (buf: Uint8Array | Uint8ArrayList, opts?: DecodeOptions<StartNoteRequest>): Generator<StartNoteRequestNoteFieldEvent> {
    return streamMessage(buf, StartNoteRequest.codec(), opts)
  }
}

export interface StartAck {
  contractId: string
  startedAt: number
}

export namespace StartAck {
  let _codec: Codec<StartAck>

  export const codec = (): Codec<StartAck> => {
    if (_codec == null) {
      _codec = message<StartAck>((obj, w, opts = {}) => {
        if (opts.lengthDelimited !== false) {
          w.fork()
        }

        if ((obj.contractId != null && obj.contractId !== '')) {
          w.uint32(10)
          w.string(obj.contractId)
        }

        if ((obj.startedAt != null && obj.startedAt !== 0)) {
          w.uint32(16)
          w.uint64Number(obj.startedAt)
        }

        if (opts.lengthDelimited !== false) {
          w.ldelim()
        }
      }, (reader, length, opts = {}) => {
        const obj: any = {
          contractId: '',
          startedAt: 0
        }

        const end = length == null ? reader.len : reader.pos + length

        while (reader.pos < end) {
          const tag = reader.uint32()

          switch (tag >>> 3) {
            case 1: {
              obj.contractId = reader.string()
              break
            }
            case 2: {
              obj.startedAt = reader.uint64Number()
              break
            }
            default: {
              reader.skipType(tag & 7)
              break
            }
          }
        }

        return obj
      }, function * (reader, length, prefix, opts = {}) {
        const end = length == null ? reader.len : reader.pos + length

        while (reader.pos < end) {
          const tag = reader.uint32()

          switch (tag >>> 3) {
            case 1: {
              yield {
                field: `${prefix}.contractId`,
                value: reader.string()
              }
              break
            }
            case 2: {
              yield {
                field: `${prefix}.startedAt`,
                value: reader.uint64Number()
              }
              break
            }
            default: {
              reader.skipType(tag & 7)
              break
            }
          }
        }
      })
    }

    return _codec
  }

  export interface StartAckContractIdFieldEvent {
    field: '$.contractId'
    value: string
  }

  export interface StartAckStartedAtFieldEvent {
    field: '$.startedAt'
    value: number
  }

  export function encode (obj: Partial<StartAck>): Uint8Array<ArrayBuffer> {
    return encodeMessage(obj, StartAck.codec())
  }

  export function decode (buf: Uint8Array | Uint8ArrayList, opts?: DecodeOptions<StartAck>): StartAck {
    return decodeMessage(buf, StartAck.codec(), opts)
  }

  export function stream (buf: Uint8Array | Uint8ArrayList, opts?: DecodeOptions<StartAck>): Generator<StartAckContractIdFieldEvent | StartAckStartedAtFieldEvent> {
    return streamMessage(buf, StartAck.codec(), opts)
  }
}

export interface Invocation {
  contract: Uint8Array<ArrayBuffer>
  proof: Uint8Array<ArrayBuffer>
  inputs: InputFile[]
  workload: Uint8Array<ArrayBuffer>
}

export namespace Invocation {
  let _codec: Codec<Invocation>

  export const codec = (): Codec<Invocation> => {
    if (_codec == null) {
      _codec = message<Invocation>((obj, w, opts = {}) => {
        if (opts.lengthDelimited !== false) {
          w.fork()
        }

        if ((obj.contract != null && obj.contract.byteLength > 0)) {
          w.uint32(10)
          w.bytes(obj.contract)
        }

        if ((obj.proof != null && obj.proof.byteLength > 0)) {
          w.uint32(18)
          w.bytes(obj.proof)
        }

        if (obj.inputs != null && obj.inputs.length > 0) {
          for (const value of obj.inputs) {
            w.uint32(42)
            InputFile.codec().encode(value, w)
          }
        }

        if ((obj.workload != null && obj.workload.byteLength > 0)) {
          w.uint32(66)
          w.bytes(obj.workload)
        }

        if (opts.lengthDelimited !== false) {
          w.ldelim()
        }
      }, (reader, length, opts = {}) => {
        const obj: any = {
          contract: uint8ArrayAlloc(0),
          proof: uint8ArrayAlloc(0),
          inputs: [],
          workload: uint8ArrayAlloc(0)
        }

        const end = length == null ? reader.len : reader.pos + length

        while (reader.pos < end) {
          const tag = reader.uint32()

          switch (tag >>> 3) {
            case 1: {
              obj.contract = reader.bytes()
              break
            }
            case 2: {
              obj.proof = reader.bytes()
              break
            }
            case 5: {
              if (opts.limits?.inputs != null && obj.inputs.length === opts.limits.inputs) {
                throw new MaxLengthError('Decode error - repeated field "inputs" had too many elements')
              }

              obj.inputs.push(InputFile.codec().decode(reader, reader.uint32(), {
                limits: opts.limits?.inputs$
              }))
              break
            }
            case 8: {
              obj.workload = reader.bytes()
              break
            }
            default: {
              reader.skipType(tag & 7)
              break
            }
          }
        }

        return obj
      }, function * (reader, length, prefix, opts = {}) {
        const obj = {
          inputs: 0
        }

        const end = length == null ? reader.len : reader.pos + length

        while (reader.pos < end) {
          const tag = reader.uint32()

          switch (tag >>> 3) {
            case 1: {
              yield {
                field: `${prefix}.contract`,
                value: reader.bytes()
              }
              break
            }
            case 2: {
              yield {
                field: `${prefix}.proof`,
                value: reader.bytes()
              }
              break
            }
            case 5: {
              if (opts.limits?.inputs != null && obj.inputs === opts.limits.inputs) {
                throw new MaxLengthError('Streaming decode error - repeated field "inputs" had too many elements')
              }

              for (const evt of InputFile.codec().stream(reader, reader.uint32(), `${prefix}.inputs[]`, {
                limits: opts.limits?.inputs$
              })) {
                yield {
                  ...evt,
                  index: obj.inputs
                }
              }

              obj.inputs++

              break
            }
            case 8: {
              yield {
                field: `${prefix}.workload`,
                value: reader.bytes()
              }
              break
            }
            default: {
              reader.skipType(tag & 7)
              break
            }
          }
        }
      })
    }

    return _codec
  }

  export interface InvocationContractFieldEvent {
    field: '$.contract'
    value: Uint8Array<ArrayBuffer>
  }

  export interface InvocationProofFieldEvent {
    field: '$.proof'
    value: Uint8Array<ArrayBuffer>
  }

  export interface InvocationInputsPathFieldEvent {
    field: '$.inputs[].path'
    value: string
    index: number
  }

  export interface InvocationInputsSha256FieldEvent {
    field: '$.inputs[].sha256'
    value: string
    index: number
  }

  export interface InvocationInputsSizeFieldEvent {
    field: '$.inputs[].size'
    value: number
    index: number
  }

  export interface InvocationInputsSourcePeerFieldEvent {
    field: '$.inputs[].source.peer'
    value: string
    index: number
  }

  export interface InvocationInputsSourceAddrsFieldEvent {
    field: '$.inputs[].source.addrs[]'
    index: number
    value: string
  }

  export interface InvocationInputsSourceArchiveFieldEvent {
    field: '$.inputs[].source.archive'
    value: string
    index: number
  }

  export interface InvocationInputsSourceArchiveSizeFieldEvent {
    field: '$.inputs[].source.archiveSize'
    value: number
    index: number
  }

  export interface InvocationInputsSourceEntryFieldEvent {
    field: '$.inputs[].source.entry'
    value: string
    index: number
  }

  export interface InvocationInputsSourceGrantFieldEvent {
    field: '$.inputs[].source.grant'
    value: Uint8Array<ArrayBuffer>
    index: number
  }

  export interface InvocationWorkloadFieldEvent {
    field: '$.workload'
    value: Uint8Array<ArrayBuffer>
  }

  export function encode (obj: Partial<Invocation>): Uint8Array<ArrayBuffer> {
    return encodeMessage(obj, Invocation.codec())
  }

  export function decode (buf: Uint8Array | Uint8ArrayList, opts?: DecodeOptions<Invocation>): Invocation {
    return decodeMessage(buf, Invocation.codec(), opts)
  }

  export function stream (buf: Uint8Array | Uint8ArrayList, opts?: DecodeOptions<Invocation>): Generator<InvocationContractFieldEvent | InvocationProofFieldEvent | InvocationInputsPathFieldEvent | InvocationInputsSha256FieldEvent | InvocationInputsSizeFieldEvent | InvocationInputsSourcePeerFieldEvent | InvocationInputsSourceAddrsFieldEvent | InvocationInputsSourceArchiveFieldEvent | InvocationInputsSourceArchiveSizeFieldEvent | InvocationInputsSourceEntryFieldEvent | InvocationInputsSourceGrantFieldEvent | InvocationWorkloadFieldEvent> {
    return streamMessage(buf, Invocation.codec(), opts)
  }
}

export interface InputFile {
  path: string
  sha256: string
  size: number
  source?: InputSource
}

export namespace InputFile {
  let _codec: Codec<InputFile>

  export const codec = (): Codec<InputFile> => {
    if (_codec == null) {
      _codec = message<InputFile>((obj, w, opts = {}) => {
        if (opts.lengthDelimited !== false) {
          w.fork()
        }

        if ((obj.path != null && obj.path !== '')) {
          w.uint32(10)
          w.string(obj.path)
        }

        if ((obj.sha256 != null && obj.sha256 !== '')) {
          w.uint32(18)
          w.string(obj.sha256)
        }

        if ((obj.size != null && obj.size !== 0)) {
          w.uint32(24)
          w.uint64Number(obj.size)
        }

        if (obj.source != null) {
          w.uint32(34)
          InputSource.codec().encode(obj.source, w)
        }

        if (opts.lengthDelimited !== false) {
          w.ldelim()
        }
      }, (reader, length, opts = {}) => {
        const obj: any = {
          path: '',
          sha256: '',
          size: 0
        }

        const end = length == null ? reader.len : reader.pos + length

        while (reader.pos < end) {
          const tag = reader.uint32()

          switch (tag >>> 3) {
            case 1: {
              obj.path = reader.string()
              break
            }
            case 2: {
              obj.sha256 = reader.string()
              break
            }
            case 3: {
              obj.size = reader.uint64Number()
              break
            }
            case 4: {
              obj.source = InputSource.codec().decode(reader, reader.uint32(), {
                limits: opts.limits?.source
              })
              break
            }
            default: {
              reader.skipType(tag & 7)
              break
            }
          }
        }

        return obj
      }, function * (reader, length, prefix, opts = {}) {
        const end = length == null ? reader.len : reader.pos + length

        while (reader.pos < end) {
          const tag = reader.uint32()

          switch (tag >>> 3) {
            case 1: {
              yield {
                field: `${prefix}.path`,
                value: reader.string()
              }
              break
            }
            case 2: {
              yield {
                field: `${prefix}.sha256`,
                value: reader.string()
              }
              break
            }
            case 3: {
              yield {
                field: `${prefix}.size`,
                value: reader.uint64Number()
              }
              break
            }
            case 4: {
              yield * InputSource.codec().stream(reader, reader.uint32(), `${prefix}.source`, {
                limits: opts.limits?.source
              })

              break
            }
            default: {
              reader.skipType(tag & 7)
              break
            }
          }
        }
      })
    }

    return _codec
  }

  export interface InputFilePathFieldEvent {
    field: '$.path'
    value: string
  }

  export interface InputFileSha256FieldEvent {
    field: '$.sha256'
    value: string
  }

  export interface InputFileSizeFieldEvent {
    field: '$.size'
    value: number
  }

  export interface InputFileSourcePeerFieldEvent {
    field: '$.source.peer'
    value: string
  }

  export interface InputFileSourceAddrsFieldEvent {
    field: '$.source.addrs[]'
    index: number
    value: string
  }

  export interface InputFileSourceArchiveFieldEvent {
    field: '$.source.archive'
    value: string
  }

  export interface InputFileSourceArchiveSizeFieldEvent {
    field: '$.source.archiveSize'
    value: number
  }

  export interface InputFileSourceEntryFieldEvent {
    field: '$.source.entry'
    value: string
  }

  export interface InputFileSourceGrantFieldEvent {
    field: '$.source.grant'
    value: Uint8Array<ArrayBuffer>
  }

  export function encode (obj: Partial<InputFile>): Uint8Array<ArrayBuffer> {
    return encodeMessage(obj, InputFile.codec())
  }

  export function decode (buf: Uint8Array | Uint8ArrayList, opts?: DecodeOptions<InputFile>): InputFile {
    return decodeMessage(buf, InputFile.codec(), opts)
  }

  export function stream (buf: Uint8Array | Uint8ArrayList, opts?: DecodeOptions<InputFile>): Generator<InputFilePathFieldEvent | InputFileSha256FieldEvent | InputFileSizeFieldEvent | InputFileSourcePeerFieldEvent | InputFileSourceAddrsFieldEvent | InputFileSourceArchiveFieldEvent | InputFileSourceArchiveSizeFieldEvent | InputFileSourceEntryFieldEvent | InputFileSourceGrantFieldEvent> {
    return streamMessage(buf, InputFile.codec(), opts)
  }
}

export interface InputSource {
  peer: string
  addrs: string[]
  archive: string
  archiveSize: number
  entry: string
  grant: Uint8Array<ArrayBuffer>
}

export namespace InputSource {
  let _codec: Codec<InputSource>

  export const codec = (): Codec<InputSource> => {
    if (_codec == null) {
      _codec = message<InputSource>((obj, w, opts = {}) => {
        if (opts.lengthDelimited !== false) {
          w.fork()
        }

        if ((obj.peer != null && obj.peer !== '')) {
          w.uint32(10)
          w.string(obj.peer)
        }

        if (obj.addrs != null && obj.addrs.length > 0) {
          for (const value of obj.addrs) {
            w.uint32(18)
            w.string(value)
          }
        }

        if ((obj.archive != null && obj.archive !== '')) {
          w.uint32(26)
          w.string(obj.archive)
        }

        if ((obj.archiveSize != null && obj.archiveSize !== 0)) {
          w.uint32(32)
          w.uint64Number(obj.archiveSize)
        }

        if ((obj.entry != null && obj.entry !== '')) {
          w.uint32(42)
          w.string(obj.entry)
        }

        if ((obj.grant != null && obj.grant.byteLength > 0)) {
          w.uint32(50)
          w.bytes(obj.grant)
        }

        if (opts.lengthDelimited !== false) {
          w.ldelim()
        }
      }, (reader, length, opts = {}) => {
        const obj: any = {
          peer: '',
          addrs: [],
          archive: '',
          archiveSize: 0,
          entry: '',
          grant: uint8ArrayAlloc(0)
        }

        const end = length == null ? reader.len : reader.pos + length

        while (reader.pos < end) {
          const tag = reader.uint32()

          switch (tag >>> 3) {
            case 1: {
              obj.peer = reader.string()
              break
            }
            case 2: {
              if (opts.limits?.addrs != null && obj.addrs.length === opts.limits.addrs) {
                throw new MaxLengthError('Decode error - repeated field "addrs" had too many elements')
              }

              obj.addrs.push(reader.string())
              break
            }
            case 3: {
              obj.archive = reader.string()
              break
            }
            case 4: {
              obj.archiveSize = reader.uint64Number()
              break
            }
            case 5: {
              obj.entry = reader.string()
              break
            }
            case 6: {
              obj.grant = reader.bytes()
              break
            }
            default: {
              reader.skipType(tag & 7)
              break
            }
          }
        }

        return obj
      }, function * (reader, length, prefix, opts = {}) {
        const obj = {
          addrs: 0
        }

        const end = length == null ? reader.len : reader.pos + length

        while (reader.pos < end) {
          const tag = reader.uint32()

          switch (tag >>> 3) {
            case 1: {
              yield {
                field: `${prefix}.peer`,
                value: reader.string()
              }
              break
            }
            case 2: {
              if (opts.limits?.addrs != null && obj.addrs === opts.limits.addrs) {
                throw new MaxLengthError('Streaming decode error - repeated field "addrs" had too many elements')
              }

              yield {
                field: `${prefix}.addrs[]`,
                index: obj.addrs,
                value: reader.string()
              }

              obj.addrs++

              break
            }
            case 3: {
              yield {
                field: `${prefix}.archive`,
                value: reader.string()
              }
              break
            }
            case 4: {
              yield {
                field: `${prefix}.archiveSize`,
                value: reader.uint64Number()
              }
              break
            }
            case 5: {
              yield {
                field: `${prefix}.entry`,
                value: reader.string()
              }
              break
            }
            case 6: {
              yield {
                field: `${prefix}.grant`,
                value: reader.bytes()
              }
              break
            }
            default: {
              reader.skipType(tag & 7)
              break
            }
          }
        }
      })
    }

    return _codec
  }

  export interface InputSourcePeerFieldEvent {
    field: '$.peer'
    value: string
  }

  export interface InputSourceAddrsFieldEvent {
    field: '$.addrs[]'
    index: number
    value: string
  }

  export interface InputSourceArchiveFieldEvent {
    field: '$.archive'
    value: string
  }

  export interface InputSourceArchiveSizeFieldEvent {
    field: '$.archiveSize'
    value: number
  }

  export interface InputSourceEntryFieldEvent {
    field: '$.entry'
    value: string
  }

  export interface InputSourceGrantFieldEvent {
    field: '$.grant'
    value: Uint8Array<ArrayBuffer>
  }

  export function encode (obj: Partial<InputSource>): Uint8Array<ArrayBuffer> {
    return encodeMessage(obj, InputSource.codec())
  }

  export function decode (buf: Uint8Array | Uint8ArrayList, opts?: DecodeOptions<InputSource>): InputSource {
    return decodeMessage(buf, InputSource.codec(), opts)
  }

  export function stream (buf: Uint8Array | Uint8ArrayList, opts?: DecodeOptions<InputSource>): Generator<InputSourcePeerFieldEvent | InputSourceAddrsFieldEvent | InputSourceArchiveFieldEvent | InputSourceArchiveSizeFieldEvent | InputSourceEntryFieldEvent | InputSourceGrantFieldEvent> {
    return streamMessage(buf, InputSource.codec(), opts)
  }
}

export interface InvocationReply {
  allocationId: string
}

export namespace InvocationReply {
  let _codec: Codec<InvocationReply>

  export const codec = (): Codec<InvocationReply> => {
    if (_codec == null) {
      _codec = message<InvocationReply>((obj, w, opts = {}) => {
        if (opts.lengthDelimited !== false) {
          w.fork()
        }

        if ((obj.allocationId != null && obj.allocationId !== '')) {
          w.uint32(10)
          w.string(obj.allocationId)
        }

        if (opts.lengthDelimited !== false) {
          w.ldelim()
        }
      }, (reader, length, opts = {}) => {
        const obj: any = {
          allocationId: ''
        }

        const end = length == null ? reader.len : reader.pos + length

        while (reader.pos < end) {
          const tag = reader.uint32()

          switch (tag >>> 3) {
            case 1: {
              obj.allocationId = reader.string()
              break
            }
            default: {
              reader.skipType(tag & 7)
              break
            }
          }
        }

        return obj
      }, function * (reader, length, prefix, opts = {}) {
        const end = length == null ? reader.len : reader.pos + length

        while (reader.pos < end) {
          const tag = reader.uint32()

          switch (tag >>> 3) {
            case 1: {
              yield {
                field: `${prefix}.allocationId`,
                value: reader.string()
              }
              break
            }
            default: {
              reader.skipType(tag & 7)
              break
            }
          }
        }
      })
    }

    return _codec
  }

  export interface InvocationReplyAllocationIdFieldEvent {
    field: '$.allocationId'
    value: string
  }

  export function encode (obj: Partial<InvocationReply>): Uint8Array<ArrayBuffer> {
    return encodeMessage(obj, InvocationReply.codec())
  }

  export function decode (buf: Uint8Array | Uint8ArrayList, opts?: DecodeOptions<InvocationReply>): InvocationReply {
    return decodeMessage(buf, InvocationReply.codec(), opts)
  }

  export function stream (buf: Uint8Array | Uint8ArrayList, opts?: DecodeOptions<InvocationReply>): Generator<InvocationReplyAllocationIdFieldEvent> {
    return streamMessage(buf, InvocationReply.codec(), opts)
  }
}

export interface JobUpdate {
  jobId: string
  allocationId: string
  state: string
  at: number
  detail?: string
  usage?: LiveUsage
}

export namespace JobUpdate {
  let _codec: Codec<JobUpdate>

  export const codec = (): Codec<JobUpdate> => {
    if (_codec == null) {
      _codec = message<JobUpdate>((obj, w, opts = {}) => {
        if (opts.lengthDelimited !== false) {
          w.fork()
        }

        if ((obj.jobId != null && obj.jobId !== '')) {
          w.uint32(10)
          w.string(obj.jobId)
        }

        if ((obj.allocationId != null && obj.allocationId !== '')) {
          w.uint32(18)
          w.string(obj.allocationId)
        }

        if ((obj.state != null && obj.state !== '')) {
          w.uint32(26)
          w.string(obj.state)
        }

        if ((obj.at != null && obj.at !== 0)) {
          w.uint32(32)
          w.uint64Number(obj.at)
        }

        if (obj.detail != null) {
          w.uint32(42)
          w.string(obj.detail)
        }

        if (obj.usage != null) {
          w.uint32(50)
          LiveUsage.codec().encode(obj.usage, w)
        }

        if (opts.lengthDelimited !== false) {
          w.ldelim()
        }
      }, (reader, length, opts = {}) => {
        const obj: any = {
          jobId: '',
          allocationId: '',
          state: '',
          at: 0
        }

        const end = length == null ? reader.len : reader.pos + length

        while (reader.pos < end) {
          const tag = reader.uint32()

          switch (tag >>> 3) {
            case 1: {
              obj.jobId = reader.string()
              break
            }
            case 2: {
              obj.allocationId = reader.string()
              break
            }
            case 3: {
              obj.state = reader.string()
              break
            }
            case 4: {
              obj.at = reader.uint64Number()
              break
            }
            case 5: {
              obj.detail = reader.string()
              break
            }
            case 6: {
              obj.usage = LiveUsage.codec().decode(reader, reader.uint32(), {
                limits: opts.limits?.usage
              })
              break
            }
            default: {
              reader.skipType(tag & 7)
              break
            }
          }
        }

        return obj
      }, function * (reader, length, prefix, opts = {}) {
        const end = length == null ? reader.len : reader.pos + length

        while (reader.pos < end) {
          const tag = reader.uint32()

          switch (tag >>> 3) {
            case 1: {
              yield {
                field: `${prefix}.jobId`,
                value: reader.string()
              }
              break
            }
            case 2: {
              yield {
                field: `${prefix}.allocationId`,
                value: reader.string()
              }
              break
            }
            case 3: {
              yield {
                field: `${prefix}.state`,
                value: reader.string()
              }
              break
            }
            case 4: {
              yield {
                field: `${prefix}.at`,
                value: reader.uint64Number()
              }
              break
            }
            case 5: {
              yield {
                field: `${prefix}.detail`,
                value: reader.string()
              }
              break
            }
            case 6: {
              yield * LiveUsage.codec().stream(reader, reader.uint32(), `${prefix}.usage`, {
                limits: opts.limits?.usage
              })

              break
            }
            default: {
              reader.skipType(tag & 7)
              break
            }
          }
        }
      })
    }

    return _codec
  }

  export interface JobUpdateJobIdFieldEvent {
    field: '$.jobId'
    value: string
  }

  export interface JobUpdateAllocationIdFieldEvent {
    field: '$.allocationId'
    value: string
  }

  export interface JobUpdateStateFieldEvent {
    field: '$.state'
    value: string
  }

  export interface JobUpdateAtFieldEvent {
    field: '$.at'
    value: number
  }

  export interface JobUpdateDetailFieldEvent {
    field: '$.detail'
    value: string
  }

  export interface JobUpdateUsageCpuSecondsFieldEvent {
    field: '$.usage.cpuSeconds'
    value: number
  }

  export interface JobUpdateUsageMemoryBytesFieldEvent {
    field: '$.usage.memoryBytes'
    value: number
  }

  export interface JobUpdateUsageLogBytesFieldEvent {
    field: '$.usage.logBytes'
    value: number
  }

  export interface JobUpdateUsageWallSecondsFieldEvent {
    field: '$.usage.wallSeconds'
    value: number
  }

  export function encode (obj: Partial<JobUpdate>): Uint8Array<ArrayBuffer> {
    return encodeMessage(obj, JobUpdate.codec())
  }

  export function decode (buf: Uint8Array | Uint8ArrayList, opts?: DecodeOptions<JobUpdate>): JobUpdate {
    return decodeMessage(buf, JobUpdate.codec(), opts)
  }

  export function stream (buf: Uint8Array | Uint8ArrayList, opts?: DecodeOptions<JobUpdate>): Generator<JobUpdateJobIdFieldEvent | JobUpdateAllocationIdFieldEvent | JobUpdateStateFieldEvent | JobUpdateAtFieldEvent | JobUpdateDetailFieldEvent | JobUpdateUsageCpuSecondsFieldEvent | JobUpdateUsageMemoryBytesFieldEvent | JobUpdateUsageLogBytesFieldEvent | JobUpdateUsageWallSecondsFieldEvent> {
    return streamMessage(buf, JobUpdate.codec(), opts)
  }
}

export interface LiveUsage {
  cpuSeconds: number
  memoryBytes: number
  logBytes: number
  wallSeconds: number
}

export namespace LiveUsage {
  let _codec: Codec<LiveUsage>

  export const codec = (): Codec<LiveUsage> => {
    if (_codec == null) {
      _codec = message<LiveUsage>((obj, w, opts = {}) => {
        if (opts.lengthDelimited !== false) {
          w.fork()
        }

        if ((obj.cpuSeconds != null && obj.cpuSeconds !== 0)) {
          w.uint32(9)
          w.double(obj.cpuSeconds)
        }

        if ((obj.memoryBytes != null && obj.memoryBytes !== 0)) {
          w.uint32(16)
          w.uint64Number(obj.memoryBytes)
        }

        if ((obj.logBytes != null && obj.logBytes !== 0)) {
          w.uint32(24)
          w.uint64Number(obj.logBytes)
        }

        if ((obj.wallSeconds != null && obj.wallSeconds !== 0)) {
          w.uint32(33)
          w.double(obj.wallSeconds)
        }

        if (opts.lengthDelimited !== false) {
          w.ldelim()
        }
      }, (reader, length, opts = {}) => {
        const obj: any = {
          cpuSeconds: 0,
          memoryBytes: 0,
          logBytes: 0,
          wallSeconds: 0
        }

        const end = length == null ? reader.len : reader.pos + length

        while (reader.pos < end) {
          const tag = reader.uint32()

          switch (tag >>> 3) {
            case 1: {
              obj.cpuSeconds = reader.double()
              break
            }
            case 2: {
              obj.memoryBytes = reader.uint64Number()
              break
            }
            case 3: {
              obj.logBytes = reader.uint64Number()
              break
            }
            case 4: {
              obj.wallSeconds = reader.double()
              break
            }
            default: {
              reader.skipType(tag & 7)
              break
            }
          }
        }

        return obj
      }, function * (reader, length, prefix, opts = {}) {
        const end = length == null ? reader.len : reader.pos + length

        while (reader.pos < end) {
          const tag = reader.uint32()

          switch (tag >>> 3) {
            case 1: {
              yield {
                field: `${prefix}.cpuSeconds`,
                value: reader.double()
              }
              break
            }
            case 2: {
              yield {
                field: `${prefix}.memoryBytes`,
                value: reader.uint64Number()
              }
              break
            }
            case 3: {
              yield {
                field: `${prefix}.logBytes`,
                value: reader.uint64Number()
              }
              break
            }
            case 4: {
              yield {
                field: `${prefix}.wallSeconds`,
                value: reader.double()
              }
              break
            }
            default: {
              reader.skipType(tag & 7)
              break
            }
          }
        }
      })
    }

    return _codec
  }

  export interface LiveUsageCpuSecondsFieldEvent {
    field: '$.cpuSeconds'
    value: number
  }

  export interface LiveUsageMemoryBytesFieldEvent {
    field: '$.memoryBytes'
    value: number
  }

  export interface LiveUsageLogBytesFieldEvent {
    field: '$.logBytes'
    value: number
  }

  export interface LiveUsageWallSecondsFieldEvent {
    field: '$.wallSeconds'
    value: number
  }

  export function encode (obj: Partial<LiveUsage>): Uint8Array<ArrayBuffer> {
    return encodeMessage(obj, LiveUsage.codec())
  }

  export function decode (buf: Uint8Array | Uint8ArrayList, opts?: DecodeOptions<LiveUsage>): LiveUsage {
    return decodeMessage(buf, LiveUsage.codec(), opts)
  }

  export function stream (buf: Uint8Array | Uint8ArrayList, opts?: DecodeOptions<LiveUsage>): Generator<LiveUsageCpuSecondsFieldEvent | LiveUsageMemoryBytesFieldEvent | LiveUsageLogBytesFieldEvent | LiveUsageWallSecondsFieldEvent> {
    return streamMessage(buf, LiveUsage.codec(), opts)
  }
}

export interface OutputFile {
  path: string
  sha256: string
  size: number
}

export namespace OutputFile {
  let _codec: Codec<OutputFile>

  export const codec = (): Codec<OutputFile> => {
    if (_codec == null) {
      _codec = message<OutputFile>((obj, w, opts = {}) => {
        if (opts.lengthDelimited !== false) {
          w.fork()
        }

        if ((obj.path != null && obj.path !== '')) {
          w.uint32(10)
          w.string(obj.path)
        }

        if ((obj.sha256 != null && obj.sha256 !== '')) {
          w.uint32(18)
          w.string(obj.sha256)
        }

        if ((obj.size != null && obj.size !== 0)) {
          w.uint32(24)
          w.uint64Number(obj.size)
        }

        if (opts.lengthDelimited !== false) {
          w.ldelim()
        }
      }, (reader, length, opts = {}) => {
        const obj: any = {
          path: '',
          sha256: '',
          size: 0
        }

        const end = length == null ? reader.len : reader.pos + length

        while (reader.pos < end) {
          const tag = reader.uint32()

          switch (tag >>> 3) {
            case 1: {
              obj.path = reader.string()
              break
            }
            case 2: {
              obj.sha256 = reader.string()
              break
            }
            case 3: {
              obj.size = reader.uint64Number()
              break
            }
            default: {
              reader.skipType(tag & 7)
              break
            }
          }
        }

        return obj
      }, function * (reader, length, prefix, opts = {}) {
        const end = length == null ? reader.len : reader.pos + length

        while (reader.pos < end) {
          const tag = reader.uint32()

          switch (tag >>> 3) {
            case 1: {
              yield {
                field: `${prefix}.path`,
                value: reader.string()
              }
              break
            }
            case 2: {
              yield {
                field: `${prefix}.sha256`,
                value: reader.string()
              }
              break
            }
            case 3: {
              yield {
                field: `${prefix}.size`,
                value: reader.uint64Number()
              }
              break
            }
            default: {
              reader.skipType(tag & 7)
              break
            }
          }
        }
      })
    }

    return _codec
  }

  export interface OutputFilePathFieldEvent {
    field: '$.path'
    value: string
  }

  export interface OutputFileSha256FieldEvent {
    field: '$.sha256'
    value: string
  }

  export interface OutputFileSizeFieldEvent {
    field: '$.size'
    value: number
  }

  export function encode (obj: Partial<OutputFile>): Uint8Array<ArrayBuffer> {
    return encodeMessage(obj, OutputFile.codec())
  }

  export function decode (buf: Uint8Array | Uint8ArrayList, opts?: DecodeOptions<OutputFile>): OutputFile {
    return decodeMessage(buf, OutputFile.codec(), opts)
  }

  export function stream (buf: Uint8Array | Uint8ArrayList, opts?: DecodeOptions<OutputFile>): Generator<OutputFilePathFieldEvent | OutputFileSha256FieldEvent | OutputFileSizeFieldEvent> {
    return streamMessage(buf, OutputFile.codec(), opts)
  }
}

export interface OutputArchive {
  sha256: string
  size: number
}

export namespace OutputArchive {
  let _codec: Codec<OutputArchive>

  export const codec = (): Codec<OutputArchive> => {
    if (_codec == null) {
      _codec = message<OutputArchive>((obj, w, opts = {}) => {
        if (opts.lengthDelimited !== false) {
          w.fork()
        }

        if ((obj.sha256 != null && obj.sha256 !== '')) {
          w.uint32(10)
          w.string(obj.sha256)
        }

        if ((obj.size != null && obj.size !== 0)) {
          w.uint32(16)
          w.uint64Number(obj.size)
        }

        if (opts.lengthDelimited !== false) {
          w.ldelim()
        }
      }, (reader, length, opts = {}) => {
        const obj: any = {
          sha256: '',
          size: 0
        }

        const end = length == null ? reader.len : reader.pos + length

        while (reader.pos < end) {
          const tag = reader.uint32()

          switch (tag >>> 3) {
            case 1: {
              obj.sha256 = reader.string()
              break
            }
            case 2: {
              obj.size = reader.uint64Number()
              break
            }
            default: {
              reader.skipType(tag & 7)
              break
            }
          }
        }

        return obj
      }, function * (reader, length, prefix, opts = {}) {
        const end = length == null ? reader.len : reader.pos + length

        while (reader.pos < end) {
          const tag = reader.uint32()

          switch (tag >>> 3) {
            case 1: {
              yield {
                field: `${prefix}.sha256`,
                value: reader.string()
              }
              break
            }
            case 2: {
              yield {
                field: `${prefix}.size`,
                value: reader.uint64Number()
              }
              break
            }
            default: {
              reader.skipType(tag & 7)
              break
            }
          }
        }
      })
    }

    return _codec
  }

  export interface OutputArchiveSha256FieldEvent {
    field: '$.sha256'
    value: string
  }

  export interface OutputArchiveSizeFieldEvent {
    field: '$.size'
    value: number
  }

  export function encode (obj: Partial<OutputArchive>): Uint8Array<ArrayBuffer> {
    return encodeMessage(obj, OutputArchive.codec())
  }

  export function decode (buf: Uint8Array | Uint8ArrayList, opts?: DecodeOptions<OutputArchive>): OutputArchive {
    return decodeMessage(buf, OutputArchive.codec(), opts)
  }

  export function stream (buf: Uint8Array | Uint8ArrayList, opts?: DecodeOptions<OutputArchive>): Generator<OutputArchiveSha256FieldEvent | OutputArchiveSizeFieldEvent> {
    return streamMessage(buf, OutputArchive.codec(), opts)
  }
}

export interface JobResult {
  jobId: string
  receipt: Uint8Array<ArrayBuffer>
  stdout: string
  stderr: string
  truncated: boolean
  outputs: OutputFile[]
  archive?: OutputArchive
  members: MemberOutcome[]
}

export namespace JobResult {
  let _codec: Codec<JobResult>

  export const codec = (): Codec<JobResult> => {
    if (_codec == null) {
      _codec = message<JobResult>((obj, w, opts = {}) => {
        if (opts.lengthDelimited !== false) {
          w.fork()
        }

        if ((obj.jobId != null && obj.jobId !== '')) {
          w.uint32(10)
          w.string(obj.jobId)
        }

        if ((obj.receipt != null && obj.receipt.byteLength > 0)) {
          w.uint32(18)
          w.bytes(obj.receipt)
        }

        if ((obj.stdout != null && obj.stdout !== '')) {
          w.uint32(26)
          w.string(obj.stdout)
        }

        if ((obj.stderr != null && obj.stderr !== '')) {
          w.uint32(34)
          w.string(obj.stderr)
        }

        if ((obj.truncated != null && obj.truncated !== false)) {
          w.uint32(40)
          w.bool(obj.truncated)
        }

        if (obj.outputs != null && obj.outputs.length > 0) {
          for (const value of obj.outputs) {
            w.uint32(50)
            OutputFile.codec().encode(value, w)
          }
        }

        if (obj.archive != null) {
          w.uint32(58)
          OutputArchive.codec().encode(obj.archive, w)
        }

        if (obj.members != null && obj.members.length > 0) {
          for (const value of obj.members) {
            w.uint32(66)
            MemberOutcome.codec().encode(value, w)
          }
        }

        if (opts.lengthDelimited !== false) {
          w.ldelim()
        }
      }, (reader, length, opts = {}) => {
        const obj: any = {
          jobId: '',
          receipt: uint8ArrayAlloc(0),
          stdout: '',
          stderr: '',
          truncated: false,
          outputs: [],
          members: []
        }

        const end = length == null ? reader.len : reader.pos + length

        while (reader.pos < end) {
          const tag = reader.uint32()

          switch (tag >>> 3) {
            case 1: {
              obj.jobId = reader.string()
              break
            }
            case 2: {
              obj.receipt = reader.bytes()
              break
            }
            case 3: {
              obj.stdout = reader.string()
              break
            }
            case 4: {
              obj.stderr = reader.string()
              break
            }
            case 5: {
              obj.truncated = reader.bool()
              break
            }
            case 6: {
              if (opts.limits?.outputs != null && obj.outputs.length === opts.limits.outputs) {
                throw new MaxLengthError('Decode error - repeated field "outputs" had too many elements')
              }

              obj.outputs.push(OutputFile.codec().decode(reader, reader.uint32(), {
                limits: opts.limits?.outputs$
              }))
              break
            }
            case 7: {
              obj.archive = OutputArchive.codec().decode(reader, reader.uint32(), {
                limits: opts.limits?.archive
              })
              break
            }
            case 8: {
              if (opts.limits?.members != null && obj.members.length === opts.limits.members) {
                throw new MaxLengthError('Decode error - repeated field "members" had too many elements')
              }

              obj.members.push(MemberOutcome.codec().decode(reader, reader.uint32(), {
                limits: opts.limits?.members$
              }))
              break
            }
            default: {
              reader.skipType(tag & 7)
              break
            }
          }
        }

        return obj
      }, function * (reader, length, prefix, opts = {}) {
        const obj = {
          outputs: 0,
          members: 0
        }

        const end = length == null ? reader.len : reader.pos + length

        while (reader.pos < end) {
          const tag = reader.uint32()

          switch (tag >>> 3) {
            case 1: {
              yield {
                field: `${prefix}.jobId`,
                value: reader.string()
              }
              break
            }
            case 2: {
              yield {
                field: `${prefix}.receipt`,
                value: reader.bytes()
              }
              break
            }
            case 3: {
              yield {
                field: `${prefix}.stdout`,
                value: reader.string()
              }
              break
            }
            case 4: {
              yield {
                field: `${prefix}.stderr`,
                value: reader.string()
              }
              break
            }
            case 5: {
              yield {
                field: `${prefix}.truncated`,
                value: reader.bool()
              }
              break
            }
            case 6: {
              if (opts.limits?.outputs != null && obj.outputs === opts.limits.outputs) {
                throw new MaxLengthError('Streaming decode error - repeated field "outputs" had too many elements')
              }

              for (const evt of OutputFile.codec().stream(reader, reader.uint32(), `${prefix}.outputs[]`, {
                limits: opts.limits?.outputs$
              })) {
                yield {
                  ...evt,
                  index: obj.outputs
                }
              }

              obj.outputs++

              break
            }
            case 7: {
              yield * OutputArchive.codec().stream(reader, reader.uint32(), `${prefix}.archive`, {
                limits: opts.limits?.archive
              })

              break
            }
            case 8: {
              if (opts.limits?.members != null && obj.members === opts.limits.members) {
                throw new MaxLengthError('Streaming decode error - repeated field "members" had too many elements')
              }

              for (const evt of MemberOutcome.codec().stream(reader, reader.uint32(), `${prefix}.members[]`, {
                limits: opts.limits?.members$
              })) {
                yield {
                  ...evt,
                  index: obj.members
                }
              }

              obj.members++

              break
            }
            default: {
              reader.skipType(tag & 7)
              break
            }
          }
        }
      })
    }

    return _codec
  }

  export interface JobResultJobIdFieldEvent {
    field: '$.jobId'
    value: string
  }

  export interface JobResultReceiptFieldEvent {
    field: '$.receipt'
    value: Uint8Array<ArrayBuffer>
  }

  export interface JobResultStdoutFieldEvent {
    field: '$.stdout'
    value: string
  }

  export interface JobResultStderrFieldEvent {
    field: '$.stderr'
    value: string
  }

  export interface JobResultTruncatedFieldEvent {
    field: '$.truncated'
    value: boolean
  }

  export interface JobResultOutputsPathFieldEvent {
    field: '$.outputs[].path'
    value: string
    index: number
  }

  export interface JobResultOutputsSha256FieldEvent {
    field: '$.outputs[].sha256'
    value: string
    index: number
  }

  export interface JobResultOutputsSizeFieldEvent {
    field: '$.outputs[].size'
    value: number
    index: number
  }

  export interface JobResultArchiveSha256FieldEvent {
    field: '$.archive.sha256'
    value: string
  }

  export interface JobResultArchiveSizeFieldEvent {
    field: '$.archive.size'
    value: number
  }

  export interface JobResultMembersNameFieldEvent {
    field: '$.members[].name'
    value: string
    index: number
  }

  export interface JobResultMembersStatusFieldEvent {
    field: '$.members[].status'
    value: string
    index: number
  }

  export interface JobResultMembersExitCodeFieldEvent {
    field: '$.members[].exitCode'
    value: number
    index: number
  }

  export interface JobResultMembersReasonFieldEvent {
    field: '$.members[].reason'
    value: string
    index: number
  }

  export interface JobResultMembersStdoutFieldEvent {
    field: '$.members[].stdout'
    value: string
    index: number
  }

  export interface JobResultMembersStderrFieldEvent {
    field: '$.members[].stderr'
    value: string
    index: number
  }

  export interface JobResultMembersTruncatedFieldEvent {
    field: '$.members[].truncated'
    value: boolean
    index: number
  }

  export function encode (obj: Partial<JobResult>): Uint8Array<ArrayBuffer> {
    return encodeMessage(obj, JobResult.codec())
  }

  export function decode (buf: Uint8Array | Uint8ArrayList, opts?: DecodeOptions<JobResult>): JobResult {
    return decodeMessage(buf, JobResult.codec(), opts)
  }

  export function stream (buf: Uint8Array | Uint8ArrayList, opts?: DecodeOptions<JobResult>): Generator<JobResultJobIdFieldEvent | JobResultReceiptFieldEvent | JobResultStdoutFieldEvent | JobResultStderrFieldEvent | JobResultTruncatedFieldEvent | JobResultOutputsPathFieldEvent | JobResultOutputsSha256FieldEvent | JobResultOutputsSizeFieldEvent | JobResultArchiveSha256FieldEvent | JobResultArchiveSizeFieldEvent | JobResultMembersNameFieldEvent | JobResultMembersStatusFieldEvent | JobResultMembersExitCodeFieldEvent | JobResultMembersReasonFieldEvent | JobResultMembersStdoutFieldEvent | JobResultMembersStderrFieldEvent | JobResultMembersTruncatedFieldEvent> {
    return streamMessage(buf, JobResult.codec(), opts)
  }
}

export interface MemberOutcome {
  name: string
  status: string
  exitCode: number
  reason?: string
  stdout: string
  stderr: string
  truncated: boolean
}

export namespace MemberOutcome {
  let _codec: Codec<MemberOutcome>

  export const codec = (): Codec<MemberOutcome> => {
    if (_codec == null) {
      _codec = message<MemberOutcome>((obj, w, opts = {}) => {
        if (opts.lengthDelimited !== false) {
          w.fork()
        }

        if ((obj.name != null && obj.name !== '')) {
          w.uint32(10)
          w.string(obj.name)
        }

        if ((obj.status != null && obj.status !== '')) {
          w.uint32(18)
          w.string(obj.status)
        }

        if ((obj.exitCode != null && obj.exitCode !== 0)) {
          w.uint32(24)
          w.sint32(obj.exitCode)
        }

        if (obj.reason != null) {
          w.uint32(34)
          w.string(obj.reason)
        }

        if ((obj.stdout != null && obj.stdout !== '')) {
          w.uint32(42)
          w.string(obj.stdout)
        }

        if ((obj.stderr != null && obj.stderr !== '')) {
          w.uint32(50)
          w.string(obj.stderr)
        }

        if ((obj.truncated != null && obj.truncated !== false)) {
          w.uint32(56)
          w.bool(obj.truncated)
        }

        if (opts.lengthDelimited !== false) {
          w.ldelim()
        }
      }, (reader, length, opts = {}) => {
        const obj: any = {
          name: '',
          status: '',
          exitCode: 0,
          stdout: '',
          stderr: '',
          truncated: false
        }

        const end = length == null ? reader.len : reader.pos + length

        while (reader.pos < end) {
          const tag = reader.uint32()

          switch (tag >>> 3) {
            case 1: {
              obj.name = reader.string()
              break
            }
            case 2: {
              obj.status = reader.string()
              break
            }
            case 3: {
              obj.exitCode = reader.sint32()
              break
            }
            case 4: {
              obj.reason = reader.string()
              break
            }
            case 5: {
              obj.stdout = reader.string()
              break
            }
            case 6: {
              obj.stderr = reader.string()
              break
            }
            case 7: {
              obj.truncated = reader.bool()
              break
            }
            default: {
              reader.skipType(tag & 7)
              break
            }
          }
        }

        return obj
      }, function * (reader, length, prefix, opts = {}) {
        const end = length == null ? reader.len : reader.pos + length

        while (reader.pos < end) {
          const tag = reader.uint32()

          switch (tag >>> 3) {
            case 1: {
              yield {
                field: `${prefix}.name`,
                value: reader.string()
              }
              break
            }
            case 2: {
              yield {
                field: `${prefix}.status`,
                value: reader.string()
              }
              break
            }
            case 3: {
              yield {
                field: `${prefix}.exitCode`,
                value: reader.sint32()
              }
              break
            }
            case 4: {
              yield {
                field: `${prefix}.reason`,
                value: reader.string()
              }
              break
            }
            case 5: {
              yield {
                field: `${prefix}.stdout`,
                value: reader.string()
              }
              break
            }
            case 6: {
              yield {
                field: `${prefix}.stderr`,
                value: reader.string()
              }
              break
            }
            case 7: {
              yield {
                field: `${prefix}.truncated`,
                value: reader.bool()
              }
              break
            }
            default: {
              reader.skipType(tag & 7)
              break
            }
          }
        }
      })
    }

    return _codec
  }

  export interface MemberOutcomeNameFieldEvent {
    field: '$.name'
    value: string
  }

  export interface MemberOutcomeStatusFieldEvent {
    field: '$.status'
    value: string
  }

  export interface MemberOutcomeExitCodeFieldEvent {
    field: '$.exitCode'
    value: number
  }

  export interface MemberOutcomeReasonFieldEvent {
    field: '$.reason'
    value: string
  }

  export interface MemberOutcomeStdoutFieldEvent {
    field: '$.stdout'
    value: string
  }

  export interface MemberOutcomeStderrFieldEvent {
    field: '$.stderr'
    value: string
  }

  export interface MemberOutcomeTruncatedFieldEvent {
    field: '$.truncated'
    value: boolean
  }

  export function encode (obj: Partial<MemberOutcome>): Uint8Array<ArrayBuffer> {
    return encodeMessage(obj, MemberOutcome.codec())
  }

  export function decode (buf: Uint8Array | Uint8ArrayList, opts?: DecodeOptions<MemberOutcome>): MemberOutcome {
    return decodeMessage(buf, MemberOutcome.codec(), opts)
  }

  export function stream (buf: Uint8Array | Uint8ArrayList, opts?: DecodeOptions<MemberOutcome>): Generator<MemberOutcomeNameFieldEvent | MemberOutcomeStatusFieldEvent | MemberOutcomeExitCodeFieldEvent | MemberOutcomeReasonFieldEvent | MemberOutcomeStdoutFieldEvent | MemberOutcomeStderrFieldEvent | MemberOutcomeTruncatedFieldEvent> {
    return streamMessage(buf, MemberOutcome.codec(), opts)
  }
}

export interface BlobChunkRequest {
  sha256: string
  offset: number
  length: number
  grant?: Uint8Array<ArrayBuffer>
}

export namespace BlobChunkRequest {
  let _codec: Codec<BlobChunkRequest>

  export const codec = (): Codec<BlobChunkRequest> => {
    if (_codec == null) {
      _codec = message<BlobChunkRequest>((obj, w, opts = {}) => {
        if (opts.lengthDelimited !== false) {
          w.fork()
        }

        if ((obj.sha256 != null && obj.sha256 !== '')) {
          w.uint32(10)
          w.string(obj.sha256)
        }

        if ((obj.offset != null && obj.offset !== 0)) {
          w.uint32(16)
          w.uint64Number(obj.offset)
        }

        if ((obj.length != null && obj.length !== 0)) {
          w.uint32(24)
          w.uint32(obj.length)
        }

        if (obj.grant != null) {
          w.uint32(34)
          w.bytes(obj.grant)
        }

        if (opts.lengthDelimited !== false) {
          w.ldelim()
        }
      }, (reader, length, opts = {}) => {
        const obj: any = {
          sha256: '',
          offset: 0,
          length: 0
        }

        const end = length == null ? reader.len : reader.pos + length

        while (reader.pos < end) {
          const tag = reader.uint32()

          switch (tag >>> 3) {
            case 1: {
              obj.sha256 = reader.string()
              break
            }
            case 2: {
              obj.offset = reader.uint64Number()
              break
            }
            case 3: {
              obj.length = reader.uint32()
              break
            }
            case 4: {
              obj.grant = reader.bytes()
              break
            }
            default: {
              reader.skipType(tag & 7)
              break
            }
          }
        }

        return obj
      }, function * (reader, length, prefix, opts = {}) {
        const end = length == null ? reader.len : reader.pos + length

        while (reader.pos < end) {
          const tag = reader.uint32()

          switch (tag >>> 3) {
            case 1: {
              yield {
                field: `${prefix}.sha256`,
                value: reader.string()
              }
              break
            }
            case 2: {
              yield {
                field: `${prefix}.offset`,
                value: reader.uint64Number()
              }
              break
            }
            case 3: {
              yield {
                field: `${prefix}.length`,
                value: reader.uint32()
              }
              break
            }
            case 4: {
              yield {
                field: `${prefix}.grant`,
                value: reader.bytes()
              }
              break
            }
            default: {
              reader.skipType(tag & 7)
              break
            }
          }
        }
      })
    }

    return _codec
  }

  export interface BlobChunkRequestSha256FieldEvent {
    field: '$.sha256'
    value: string
  }

  export interface BlobChunkRequestOffsetFieldEvent {
    field: '$.offset'
    value: number
  }

  export interface BlobChunkRequestLengthFieldEvent {
    field: '$.length'
    value: number
  }

  export interface BlobChunkRequestGrantFieldEvent {
    field: '$.grant'
    value: Uint8Array<ArrayBuffer>
  }

  export function encode (obj: Partial<BlobChunkRequest>): Uint8Array<ArrayBuffer> {
    return encodeMessage(obj, BlobChunkRequest.codec())
  }

  export function decode (buf: Uint8Array | Uint8ArrayList, opts?: DecodeOptions<BlobChunkRequest>): BlobChunkRequest {
    return decodeMessage(buf, BlobChunkRequest.codec(), opts)
  }

  export function stream (buf: Uint8Array | Uint8ArrayList, opts?: DecodeOptions<BlobChunkRequest>): Generator<BlobChunkRequestSha256FieldEvent | BlobChunkRequestOffsetFieldEvent | BlobChunkRequestLengthFieldEvent | BlobChunkRequestGrantFieldEvent> {
    return streamMessage(buf, BlobChunkRequest.codec(), opts)
  }
}

export interface BlobChunk {
  size: number
  data: Uint8Array<ArrayBuffer>
}

export namespace BlobChunk {
  let _codec: Codec<BlobChunk>

  export const codec = (): Codec<BlobChunk> => {
    if (_codec == null) {
      _codec = message<BlobChunk>((obj, w, opts = {}) => {
        if (opts.lengthDelimited !== false) {
          w.fork()
        }

        if ((obj.size != null && obj.size !== 0)) {
          w.uint32(8)
          w.uint64Number(obj.size)
        }

        if ((obj.data != null && obj.data.byteLength > 0)) {
          w.uint32(18)
          w.bytes(obj.data)
        }

        if (opts.lengthDelimited !== false) {
          w.ldelim()
        }
      }, (reader, length, opts = {}) => {
        const obj: any = {
          size: 0,
          data: uint8ArrayAlloc(0)
        }

        const end = length == null ? reader.len : reader.pos + length

        while (reader.pos < end) {
          const tag = reader.uint32()

          switch (tag >>> 3) {
            case 1: {
              obj.size = reader.uint64Number()
              break
            }
            case 2: {
              obj.data = reader.bytes()
              break
            }
            default: {
              reader.skipType(tag & 7)
              break
            }
          }
        }

        return obj
      }, function * (reader, length, prefix, opts = {}) {
        const end = length == null ? reader.len : reader.pos + length

        while (reader.pos < end) {
          const tag = reader.uint32()

          switch (tag >>> 3) {
            case 1: {
              yield {
                field: `${prefix}.size`,
                value: reader.uint64Number()
              }
              break
            }
            case 2: {
              yield {
                field: `${prefix}.data`,
                value: reader.bytes()
              }
              break
            }
            default: {
              reader.skipType(tag & 7)
              break
            }
          }
        }
      })
    }

    return _codec
  }

  export interface BlobChunkSizeFieldEvent {
    field: '$.size'
    value: number
  }

  export interface BlobChunkDataFieldEvent {
    field: '$.data'
    value: Uint8Array<ArrayBuffer>
  }

  export function encode (obj: Partial<BlobChunk>): Uint8Array<ArrayBuffer> {
    return encodeMessage(obj, BlobChunk.codec())
  }

  export function decode (buf: Uint8Array | Uint8ArrayList, opts?: DecodeOptions<BlobChunk>): BlobChunk {
    return decodeMessage(buf, BlobChunk.codec(), opts)
  }

  export function stream (buf: Uint8Array | Uint8ArrayList, opts?: DecodeOptions<BlobChunk>): Generator<BlobChunkSizeFieldEvent | BlobChunkDataFieldEvent> {
    return streamMessage(buf, BlobChunk.codec(), opts)
  }
}

export interface BlobRelease {
  sha256: string
  jobId: string
}

export namespace BlobRelease {
  let _codec: Codec<BlobRelease>

  export const codec = (): Codec<BlobRelease> => {
    if (_codec == null) {
      _codec = message<BlobRelease>((obj, w, opts = {}) => {
        if (opts.lengthDelimited !== false) {
          w.fork()
        }

        if ((obj.sha256 != null && obj.sha256 !== '')) {
          w.uint32(10)
          w.string(obj.sha256)
        }

        if ((obj.jobId != null && obj.jobId !== '')) {
          w.uint32(18)
          w.string(obj.jobId)
        }

        if (opts.lengthDelimited !== false) {
          w.ldelim()
        }
      }, (reader, length, opts = {}) => {
        const obj: any = {
          sha256: '',
          jobId: ''
        }

        const end = length == null ? reader.len : reader.pos + length

        while (reader.pos < end) {
          const tag = reader.uint32()

          switch (tag >>> 3) {
            case 1: {
              obj.sha256 = reader.string()
              break
            }
            case 2: {
              obj.jobId = reader.string()
              break
            }
            default: {
              reader.skipType(tag & 7)
              break
            }
          }
        }

        return obj
      }, function * (reader, length, prefix, opts = {}) {
        const end = length == null ? reader.len : reader.pos + length

        while (reader.pos < end) {
          const tag = reader.uint32()

          switch (tag >>> 3) {
            case 1: {
              yield {
                field: `${prefix}.sha256`,
                value: reader.string()
              }
              break
            }
            case 2: {
              yield {
                field: `${prefix}.jobId`,
                value: reader.string()
              }
              break
            }
            default: {
              reader.skipType(tag & 7)
              break
            }
          }
        }
      })
    }

    return _codec
  }

  export interface BlobReleaseSha256FieldEvent {
    field: '$.sha256'
    value: string
  }

  export interface BlobReleaseJobIdFieldEvent {
    field: '$.jobId'
    value: string
  }

  export function encode (obj: Partial<BlobRelease>): Uint8Array<ArrayBuffer> {
    return encodeMessage(obj, BlobRelease.codec())
  }

  export function decode (buf: Uint8Array | Uint8ArrayList, opts?: DecodeOptions<BlobRelease>): BlobRelease {
    return decodeMessage(buf, BlobRelease.codec(), opts)
  }

  export function stream (buf: Uint8Array | Uint8ArrayList, opts?: DecodeOptions<BlobRelease>): Generator<BlobReleaseSha256FieldEvent | BlobReleaseJobIdFieldEvent> {
    return streamMessage(buf, BlobRelease.codec(), opts)
  }
}

export interface BlobReleaseReply {
  removed: boolean
}

export namespace BlobReleaseReply {
  let _codec: Codec<BlobReleaseReply>

  export const codec = (): Codec<BlobReleaseReply> => {
    if (_codec == null) {
      _codec = message<BlobReleaseReply>((obj, w, opts = {}) => {
        if (opts.lengthDelimited !== false) {
          w.fork()
        }

        if ((obj.removed != null && obj.removed !== false)) {
          w.uint32(8)
          w.bool(obj.removed)
        }

        if (opts.lengthDelimited !== false) {
          w.ldelim()
        }
      }, (reader, length, opts = {}) => {
        const obj: any = {
          removed: false
        }

        const end = length == null ? reader.len : reader.pos + length

        while (reader.pos < end) {
          const tag = reader.uint32()

          switch (tag >>> 3) {
            case 1: {
              obj.removed = reader.bool()
              break
            }
            default: {
              reader.skipType(tag & 7)
              break
            }
          }
        }

        return obj
      }, function * (reader, length, prefix, opts = {}) {
        const end = length == null ? reader.len : reader.pos + length

        while (reader.pos < end) {
          const tag = reader.uint32()

          switch (tag >>> 3) {
            case 1: {
              yield {
                field: `${prefix}.removed`,
                value: reader.bool()
              }
              break
            }
            default: {
              reader.skipType(tag & 7)
              break
            }
          }
        }
      })
    }

    return _codec
  }

  export interface BlobReleaseReplyRemovedFieldEvent {
    field: '$.removed'
    value: boolean
  }

  export function encode (obj: Partial<BlobReleaseReply>): Uint8Array<ArrayBuffer> {
    return encodeMessage(obj, BlobReleaseReply.codec())
  }

  export function decode (buf: Uint8Array | Uint8ArrayList, opts?: DecodeOptions<BlobReleaseReply>): BlobReleaseReply {
    return decodeMessage(buf, BlobReleaseReply.codec(), opts)
  }

  export function stream (buf: Uint8Array | Uint8ArrayList, opts?: DecodeOptions<BlobReleaseReply>): Generator<BlobReleaseReplyRemovedFieldEvent> {
    return streamMessage(buf, BlobReleaseReply.codec(), opts)
  }
}

export interface JobLog {
  jobId: string
  allocationId: string
  stream: string
  seq: number
  data: string
  member?: string
}

export namespace JobLog {
  let _codec: Codec<JobLog>

  export const codec = (): Codec<JobLog> => {
    if (_codec == null) {
      _codec = message<JobLog>((obj, w, opts = {}) => {
        if (opts.lengthDelimited !== false) {
          w.fork()
        }

        if ((obj.jobId != null && obj.jobId !== '')) {
          w.uint32(10)
          w.string(obj.jobId)
        }

        if ((obj.allocationId != null && obj.allocationId !== '')) {
          w.uint32(18)
          w.string(obj.allocationId)
        }

        if ((obj.stream != null && obj.stream !== '')) {
          w.uint32(26)
          w.string(obj.stream)
        }

        if ((obj.seq != null && obj.seq !== 0)) {
          w.uint32(32)
          w.uint32(obj.seq)
        }

        if ((obj.data != null && obj.data !== '')) {
          w.uint32(42)
          w.string(obj.data)
        }

        if (obj.member != null) {
          w.uint32(50)
          w.string(obj.member)
        }

        if (opts.lengthDelimited !== false) {
          w.ldelim()
        }
      }, (reader, length, opts = {}) => {
        const obj: any = {
          jobId: '',
          allocationId: '',
          stream: '',
          seq: 0,
          data: ''
        }

        const end = length == null ? reader.len : reader.pos + length

        while (reader.pos < end) {
          const tag = reader.uint32()

          switch (tag >>> 3) {
            case 1: {
              obj.jobId = reader.string()
              break
            }
            case 2: {
              obj.allocationId = reader.string()
              break
            }
            case 3: {
              obj.stream = reader.string()
              break
            }
            case 4: {
              obj.seq = reader.uint32()
              break
            }
            case 5: {
              obj.data = reader.string()
              break
            }
            case 6: {
              obj.member = reader.string()
              break
            }
            default: {
              reader.skipType(tag & 7)
              break
            }
          }
        }

        return obj
      }, function * (reader, length, prefix, opts = {}) {
        const end = length == null ? reader.len : reader.pos + length

        while (reader.pos < end) {
          const tag = reader.uint32()

          switch (tag >>> 3) {
            case 1: {
              yield {
                field: `${prefix}.jobId`,
                value: reader.string()
              }
              break
            }
            case 2: {
              yield {
                field: `${prefix}.allocationId`,
                value: reader.string()
              }
              break
            }
            case 3: {
              yield {
                field: `${prefix}.stream`,
                value: reader.string()
              }
              break
            }
            case 4: {
              yield {
                field: `${prefix}.seq`,
                value: reader.uint32()
              }
              break
            }
            case 5: {
              yield {
                field: `${prefix}.data`,
                value: reader.string()
              }
              break
            }
            case 6: {
              yield {
                field: `${prefix}.member`,
                value: reader.string()
              }
              break
            }
            default: {
              reader.skipType(tag & 7)
              break
            }
          }
        }
      })
    }

    return _codec
  }

  export interface JobLogJobIdFieldEvent {
    field: '$.jobId'
    value: string
  }

  export interface JobLogAllocationIdFieldEvent {
    field: '$.allocationId'
    value: string
  }

  export interface JobLogStreamFieldEvent {
    field: '$.stream'
    value: string
  }

  export interface JobLogSeqFieldEvent {
    field: '$.seq'
    value: number
  }

  export interface JobLogDataFieldEvent {
    field: '$.data'
    value: string
  }

  export interface JobLogMemberFieldEvent {
    field: '$.member'
    value: string
  }

  export function encode (obj: Partial<JobLog>): Uint8Array<ArrayBuffer> {
    return encodeMessage(obj, JobLog.codec())
  }

  export function decode (buf: Uint8Array | Uint8ArrayList, opts?: DecodeOptions<JobLog>): JobLog {
    return decodeMessage(buf, JobLog.codec(), opts)
  }

  export function stream (buf: Uint8Array | Uint8ArrayList, opts?: DecodeOptions<JobLog>): Generator<JobLogJobIdFieldEvent | JobLogAllocationIdFieldEvent | JobLogStreamFieldEvent | JobLogSeqFieldEvent | JobLogDataFieldEvent | JobLogMemberFieldEvent> {
    return streamMessage(buf, JobLog.codec(), opts)
  }
}

export interface SettleRequest {
  contractId: string
  receipt: Uint8Array<ArrayBuffer>
  verification: Uint8Array<ArrayBuffer>
}

export namespace SettleRequest {
  let _codec: Codec<SettleRequest>

  export const codec = (): Codec<SettleRequest> => {
    if (_codec == null) {
      _codec = message<SettleRequest>((obj, w, opts = {}) => {
        if (opts.lengthDelimited !== false) {
          w.fork()
        }

        if ((obj.contractId != null && obj.contractId !== '')) {
          w.uint32(10)
          w.string(obj.contractId)
        }

        if ((obj.receipt != null && obj.receipt.byteLength > 0)) {
          w.uint32(18)
          w.bytes(obj.receipt)
        }

        if ((obj.verification != null && obj.verification.byteLength > 0)) {
          w.uint32(26)
          w.bytes(obj.verification)
        }

        if (opts.lengthDelimited !== false) {
          w.ldelim()
        }
      }, (reader, length, opts = {}) => {
        const obj: any = {
          contractId: '',
          receipt: uint8ArrayAlloc(0),
          verification: uint8ArrayAlloc(0)
        }

        const end = length == null ? reader.len : reader.pos + length

        while (reader.pos < end) {
          const tag = reader.uint32()

          switch (tag >>> 3) {
            case 1: {
              obj.contractId = reader.string()
              break
            }
            case 2: {
              obj.receipt = reader.bytes()
              break
            }
            case 3: {
              obj.verification = reader.bytes()
              break
            }
            default: {
              reader.skipType(tag & 7)
              break
            }
          }
        }

        return obj
      }, function * (reader, length, prefix, opts = {}) {
        const end = length == null ? reader.len : reader.pos + length

        while (reader.pos < end) {
          const tag = reader.uint32()

          switch (tag >>> 3) {
            case 1: {
              yield {
                field: `${prefix}.contractId`,
                value: reader.string()
              }
              break
            }
            case 2: {
              yield {
                field: `${prefix}.receipt`,
                value: reader.bytes()
              }
              break
            }
            case 3: {
              yield {
                field: `${prefix}.verification`,
                value: reader.bytes()
              }
              break
            }
            default: {
              reader.skipType(tag & 7)
              break
            }
          }
        }
      })
    }

    return _codec
  }

  export interface SettleRequestContractIdFieldEvent {
    field: '$.contractId'
    value: string
  }

  export interface SettleRequestReceiptFieldEvent {
    field: '$.receipt'
    value: Uint8Array<ArrayBuffer>
  }

  export interface SettleRequestVerificationFieldEvent {
    field: '$.verification'
    value: Uint8Array<ArrayBuffer>
  }

  export function encode (obj: Partial<SettleRequest>): Uint8Array<ArrayBuffer> {
    return encodeMessage(obj, SettleRequest.codec())
  }

  export function decode (buf: Uint8Array | Uint8ArrayList, opts?: DecodeOptions<SettleRequest>): SettleRequest {
    return decodeMessage(buf, SettleRequest.codec(), opts)
  }

  export function stream (buf: Uint8Array | Uint8ArrayList, opts?: DecodeOptions<SettleRequest>): Generator<SettleRequestContractIdFieldEvent | SettleRequestReceiptFieldEvent | SettleRequestVerificationFieldEvent> {
    return streamMessage(buf, SettleRequest.codec(), opts)
  }
}

export interface SettlementMessage {
  settlement: Uint8Array<ArrayBuffer>
}

export namespace SettlementMessage {
  let _codec: Codec<SettlementMessage>

  export const codec = (): Codec<SettlementMessage> => {
    if (_codec == null) {
      _codec = message<SettlementMessage>((obj, w, opts = {}) => {
        if (opts.lengthDelimited !== false) {
          w.fork()
        }

        if ((obj.settlement != null && obj.settlement.byteLength > 0)) {
          w.uint32(10)
          w.bytes(obj.settlement)
        }

        if (opts.lengthDelimited !== false) {
          w.ldelim()
        }
      }, (reader, length, opts = {}) => {
        const obj: any = {
          settlement: uint8ArrayAlloc(0)
        }

        const end = length == null ? reader.len : reader.pos + length

        while (reader.pos < end) {
          const tag = reader.uint32()

          switch (tag >>> 3) {
            case 1: {
              obj.settlement = reader.bytes()
              break
            }
            default: {
              reader.skipType(tag & 7)
              break
            }
          }
        }

        return obj
      }, function * (reader, length, prefix, opts = {}) {
        const end = length == null ? reader.len : reader.pos + length

        while (reader.pos < end) {
          const tag = reader.uint32()

          switch (tag >>> 3) {
            case 1: {
              yield {
                field: `${prefix}.settlement`,
                value: reader.bytes()
              }
              break
            }
            default: {
              reader.skipType(tag & 7)
              break
            }
          }
        }
      })
    }

    return _codec
  }

  export interface SettlementMessageSettlementFieldEvent {
    field: '$.settlement'
    value: Uint8Array<ArrayBuffer>
  }

  export function encode (obj: Partial<SettlementMessage>): Uint8Array<ArrayBuffer> {
    return encodeMessage(obj, SettlementMessage.codec())
  }

  export function decode (buf: Uint8Array | Uint8ArrayList, opts?: DecodeOptions<SettlementMessage>): SettlementMessage {
    return decodeMessage(buf, SettlementMessage.codec(), opts)
  }

  export function stream (buf: Uint8Array | Uint8ArrayList, opts?: DecodeOptions<SettlementMessage>): Generator<SettlementMessageSettlementFieldEvent> {
    return streamMessage(buf, SettlementMessage.codec(), opts)
  }
}

export interface TerminateRequest {
  contractId: string
  reason: string
  detail?: string
  receipt?: Uint8Array<ArrayBuffer>
}

export namespace TerminateRequest {
  let _codec: Codec<TerminateRequest>

  export const codec = (): Codec<TerminateRequest> => {
    if (_codec == null) {
      _codec = message<TerminateRequest>((obj, w, opts = {}) => {
        if (opts.lengthDelimited !== false) {
          w.fork()
        }

        if ((obj.contractId != null && obj.contractId !== '')) {
          w.uint32(10)
          w.string(obj.contractId)
        }

        if ((obj.reason != null && obj.reason !== '')) {
          w.uint32(18)
          w.string(obj.reason)
        }

        if (obj.detail != null) {
          w.uint32(26)
          w.string(obj.detail)
        }

        if (obj.receipt != null) {
          w.uint32(34)
          w.bytes(obj.receipt)
        }

        if (opts.lengthDelimited !== false) {
          w.ldelim()
        }
      }, (reader, length, opts = {}) => {
        const obj: any = {
          contractId: '',
          reason: ''
        }

        const end = length == null ? reader.len : reader.pos + length

        while (reader.pos < end) {
          const tag = reader.uint32()

          switch (tag >>> 3) {
            case 1: {
              obj.contractId = reader.string()
              break
            }
            case 2: {
              obj.reason = reader.string()
              break
            }
            case 3: {
              obj.detail = reader.string()
              break
            }
            case 4: {
              obj.receipt = reader.bytes()
              break
            }
            default: {
              reader.skipType(tag & 7)
              break
            }
          }
        }

        return obj
      }, function * (reader, length, prefix, opts = {}) {
        const end = length == null ? reader.len : reader.pos + length

        while (reader.pos < end) {
          const tag = reader.uint32()

          switch (tag >>> 3) {
            case 1: {
              yield {
                field: `${prefix}.contractId`,
                value: reader.string()
              }
              break
            }
            case 2: {
              yield {
                field: `${prefix}.reason`,
                value: reader.string()
              }
              break
            }
            case 3: {
              yield {
                field: `${prefix}.detail`,
                value: reader.string()
              }
              break
            }
            case 4: {
              yield {
                field: `${prefix}.receipt`,
                value: reader.bytes()
              }
              break
            }
            default: {
              reader.skipType(tag & 7)
              break
            }
          }
        }
      })
    }

    return _codec
  }

  export interface TerminateRequestContractIdFieldEvent {
    field: '$.contractId'
    value: string
  }

  export interface TerminateRequestReasonFieldEvent {
    field: '$.reason'
    value: string
  }

  export interface TerminateRequestDetailFieldEvent {
    field: '$.detail'
    value: string
  }

  export interface TerminateRequestReceiptFieldEvent {
    field: '$.receipt'
    value: Uint8Array<ArrayBuffer>
  }

  export function encode (obj: Partial<TerminateRequest>): Uint8Array<ArrayBuffer> {
    return encodeMessage(obj, TerminateRequest.codec())
  }

  export function decode (buf: Uint8Array | Uint8ArrayList, opts?: DecodeOptions<TerminateRequest>): TerminateRequest {
    return decodeMessage(buf, TerminateRequest.codec(), opts)
  }

  export function stream (buf: Uint8Array | Uint8ArrayList, opts?: DecodeOptions<TerminateRequest>): Generator<TerminateRequestContractIdFieldEvent | TerminateRequestReasonFieldEvent | TerminateRequestDetailFieldEvent | TerminateRequestReceiptFieldEvent> {
    return streamMessage(buf, TerminateRequest.codec(), opts)
  }
}

export interface JobCancel {
  jobId: string
  contractId: string
}

export namespace JobCancel {
  let _codec: Codec<JobCancel>

  export const codec = (): Codec<JobCancel> => {
    if (_codec == null) {
      _codec = message<JobCancel>((obj, w, opts = {}) => {
        if (opts.lengthDelimited !== false) {
          w.fork()
        }

        if ((obj.jobId != null && obj.jobId !== '')) {
          w.uint32(10)
          w.string(obj.jobId)
        }

        if ((obj.contractId != null && obj.contractId !== '')) {
          w.uint32(18)
          w.string(obj.contractId)
        }

        if (opts.lengthDelimited !== false) {
          w.ldelim()
        }
      }, (reader, length, opts = {}) => {
        const obj: any = {
          jobId: '',
          contractId: ''
        }

        const end = length == null ? reader.len : reader.pos + length

        while (reader.pos < end) {
          const tag = reader.uint32()

          switch (tag >>> 3) {
            case 1: {
              obj.jobId = reader.string()
              break
            }
            case 2: {
              obj.contractId = reader.string()
              break
            }
            default: {
              reader.skipType(tag & 7)
              break
            }
          }
        }

        return obj
      }, function * (reader, length, prefix, opts = {}) {
        const end = length == null ? reader.len : reader.pos + length

        while (reader.pos < end) {
          const tag = reader.uint32()

          switch (tag >>> 3) {
            case 1: {
              yield {
                field: `${prefix}.jobId`,
                value: reader.string()
              }
              break
            }
            case 2: {
              yield {
                field: `${prefix}.contractId`,
                value: reader.string()
              }
              break
            }
            default: {
              reader.skipType(tag & 7)
              break
            }
          }
        }
      })
    }

    return _codec
  }

  export interface JobCancelJobIdFieldEvent {
    field: '$.jobId'
    value: string
  }

  export interface JobCancelContractIdFieldEvent {
    field: '$.contractId'
    value: string
  }

  export function encode (obj: Partial<JobCancel>): Uint8Array<ArrayBuffer> {
    return encodeMessage(obj, JobCancel.codec())
  }

  export function decode (buf: Uint8Array | Uint8ArrayList, opts?: DecodeOptions<JobCancel>): JobCancel {
    return decodeMessage(buf, JobCancel.codec(), opts)
  }

  export function stream (buf: Uint8Array | Uint8ArrayList, opts?: DecodeOptions<JobCancel>): Generator<JobCancelJobIdFieldEvent | JobCancelContractIdFieldEvent> {
    return streamMessage(buf, JobCancel.codec(), opts)
  }
}

export interface JobCancelReply {
  stopping: boolean
}

export namespace JobCancelReply {
  let _codec: Codec<JobCancelReply>

  export const codec = (): Codec<JobCancelReply> => {
    if (_codec == null) {
      _codec = message<JobCancelReply>((obj, w, opts = {}) => {
        if (opts.lengthDelimited !== false) {
          w.fork()
        }

        if ((obj.stopping != null && obj.stopping !== false)) {
          w.uint32(8)
          w.bool(obj.stopping)
        }

        if (opts.lengthDelimited !== false) {
          w.ldelim()
        }
      }, (reader, length, opts = {}) => {
        const obj: any = {
          stopping: false
        }

        const end = length == null ? reader.len : reader.pos + length

        while (reader.pos < end) {
          const tag = reader.uint32()

          switch (tag >>> 3) {
            case 1: {
              obj.stopping = reader.bool()
              break
            }
            default: {
              reader.skipType(tag & 7)
              break
            }
          }
        }

        return obj
      }, function * (reader, length, prefix, opts = {}) {
        const end = length == null ? reader.len : reader.pos + length

        while (reader.pos < end) {
          const tag = reader.uint32()

          switch (tag >>> 3) {
            case 1: {
              yield {
                field: `${prefix}.stopping`,
                value: reader.bool()
              }
              break
            }
            default: {
              reader.skipType(tag & 7)
              break
            }
          }
        }
      })
    }

    return _codec
  }

  export interface JobCancelReplyStoppingFieldEvent {
    field: '$.stopping'
    value: boolean
  }

  export function encode (obj: Partial<JobCancelReply>): Uint8Array<ArrayBuffer> {
    return encodeMessage(obj, JobCancelReply.codec())
  }

  export function decode (buf: Uint8Array | Uint8ArrayList, opts?: DecodeOptions<JobCancelReply>): JobCancelReply {
    return decodeMessage(buf, JobCancelReply.codec(), opts)
  }

  export function stream (buf: Uint8Array | Uint8ArrayList, opts?: DecodeOptions<JobCancelReply>): Generator<JobCancelReplyStoppingFieldEvent> {
    return streamMessage(buf, JobCancelReply.codec(), opts)
  }
}

export interface BidRelease {
  jobId: string
  bidId: string
}

export namespace BidRelease {
  let _codec: Codec<BidRelease>

  export const codec = (): Codec<BidRelease> => {
    if (_codec == null) {
      _codec = message<BidRelease>((obj, w, opts = {}) => {
        if (opts.lengthDelimited !== false) {
          w.fork()
        }

        if ((obj.jobId != null && obj.jobId !== '')) {
          w.uint32(10)
          w.string(obj.jobId)
        }

        if ((obj.bidId != null && obj.bidId !== '')) {
          w.uint32(18)
          w.string(obj.bidId)
        }

        if (opts.lengthDelimited !== false) {
          w.ldelim()
        }
      }, (reader, length, opts = {}) => {
        const obj: any = {
          jobId: '',
          bidId: ''
        }

        const end = length == null ? reader.len : reader.pos + length

        while (reader.pos < end) {
          const tag = reader.uint32()

          switch (tag >>> 3) {
            case 1: {
              obj.jobId = reader.string()
              break
            }
            case 2: {
              obj.bidId = reader.string()
              break
            }
            default: {
              reader.skipType(tag & 7)
              break
            }
          }
        }

        return obj
      }, function * (reader, length, prefix, opts = {}) {
        const end = length == null ? reader.len : reader.pos + length

        while (reader.pos < end) {
          const tag = reader.uint32()

          switch (tag >>> 3) {
            case 1: {
              yield {
                field: `${prefix}.jobId`,
                value: reader.string()
              }
              break
            }
            case 2: {
              yield {
                field: `${prefix}.bidId`,
                value: reader.string()
              }
              break
            }
            default: {
              reader.skipType(tag & 7)
              break
            }
          }
        }
      })
    }

    return _codec
  }

  export interface BidReleaseJobIdFieldEvent {
    field: '$.jobId'
    value: string
  }

  export interface BidReleaseBidIdFieldEvent {
    field: '$.bidId'
    value: string
  }

  export function encode (obj: Partial<BidRelease>): Uint8Array<ArrayBuffer> {
    return encodeMessage(obj, BidRelease.codec())
  }

  export function decode (buf: Uint8Array | Uint8ArrayList, opts?: DecodeOptions<BidRelease>): BidRelease {
    return decodeMessage(buf, BidRelease.codec(), opts)
  }

  export function stream (buf: Uint8Array | Uint8ArrayList, opts?: DecodeOptions<BidRelease>): Generator<BidReleaseJobIdFieldEvent | BidReleaseBidIdFieldEvent> {
    return streamMessage(buf, BidRelease.codec(), opts)
  }
}

export interface CapacityNews {
  provider: string
  free?: Resources
  at: number
  approval?: Uint8Array<ArrayBuffer>
}

export namespace CapacityNews {
  let _codec: Codec<CapacityNews>

  export const codec = (): Codec<CapacityNews> => {
    if (_codec == null) {
      _codec = message<CapacityNews>((obj, w, opts = {}) => {
        if (opts.lengthDelimited !== false) {
          w.fork()
        }

        if ((obj.provider != null && obj.provider !== '')) {
          w.uint32(10)
          w.string(obj.provider)
        }

        if (obj.free != null) {
          w.uint32(18)
          Resources.codec().encode(obj.free, w)
        }

        if ((obj.at != null && obj.at !== 0)) {
          w.uint32(24)
          w.uint64Number(obj.at)
        }

        if (obj.approval != null) {
          w.uint32(34)
          w.bytes(obj.approval)
        }

        if (opts.lengthDelimited !== false) {
          w.ldelim()
        }
      }, (reader, length, opts = {}) => {
        const obj: any = {
          provider: '',
          at: 0
        }

        const end = length == null ? reader.len : reader.pos + length

        while (reader.pos < end) {
          const tag = reader.uint32()

          switch (tag >>> 3) {
            case 1: {
              obj.provider = reader.string()
              break
            }
            case 2: {
              obj.free = Resources.codec().decode(reader, reader.uint32(), {
                limits: opts.limits?.free
              })
              break
            }
            case 3: {
              obj.at = reader.uint64Number()
              break
            }
            case 4: {
              obj.approval = reader.bytes()
              break
            }
            default: {
              reader.skipType(tag & 7)
              break
            }
          }
        }

        return obj
      }, function * (reader, length, prefix, opts = {}) {
        const end = length == null ? reader.len : reader.pos + length

        while (reader.pos < end) {
          const tag = reader.uint32()

          switch (tag >>> 3) {
            case 1: {
              yield {
                field: `${prefix}.provider`,
                value: reader.string()
              }
              break
            }
            case 2: {
              yield * Resources.codec().stream(reader, reader.uint32(), `${prefix}.free`, {
                limits: opts.limits?.free
              })

              break
            }
            case 3: {
              yield {
                field: `${prefix}.at`,
                value: reader.uint64Number()
              }
              break
            }
            case 4: {
              yield {
                field: `${prefix}.approval`,
                value: reader.bytes()
              }
              break
            }
            default: {
              reader.skipType(tag & 7)
              break
            }
          }
        }
      })
    }

    return _codec
  }

  export interface CapacityNewsProviderFieldEvent {
    field: '$.provider'
    value: string
  }

  export interface CapacityNewsFreeCpuFieldEvent {
    field: '$.free.cpu'
    value: number
  }

  export interface CapacityNewsFreeMemoryBytesFieldEvent {
    field: '$.free.memoryBytes'
    value: number
  }

  export interface CapacityNewsFreeDiskBytesFieldEvent {
    field: '$.free.diskBytes'
    value: number
  }

  export interface CapacityNewsFreeGpusFieldEvent {
    field: '$.free.gpus'
    value: number
  }

  export interface CapacityNewsAtFieldEvent {
    field: '$.at'
    value: number
  }

  export interface CapacityNewsApprovalFieldEvent {
    field: '$.approval'
    value: Uint8Array<ArrayBuffer>
  }

  export function encode (obj: Partial<CapacityNews>): Uint8Array<ArrayBuffer> {
    return encodeMessage(obj, CapacityNews.codec())
  }

  export function decode (buf: Uint8Array | Uint8ArrayList, opts?: DecodeOptions<CapacityNews>): CapacityNews {
    return decodeMessage(buf, CapacityNews.codec(), opts)
  }

  export function stream (buf: Uint8Array | Uint8ArrayList, opts?: DecodeOptions<CapacityNews>): Generator<CapacityNewsProviderFieldEvent | CapacityNewsFreeCpuFieldEvent | CapacityNewsFreeMemoryBytesFieldEvent | CapacityNewsFreeDiskBytesFieldEvent | CapacityNewsFreeGpusFieldEvent | CapacityNewsAtFieldEvent | CapacityNewsApprovalFieldEvent> {
    return streamMessage(buf, CapacityNews.codec(), opts)
  }
}
