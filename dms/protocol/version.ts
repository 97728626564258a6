/**
 * The DMS protocol version: said in every envelope (`ActorSystemInit.version`), and a message from
 * a peer saying another is refused before its payload is decoded (`bad_version`, logged once per
 * peer). Peers of different versions do not talk; upgrade the contract-db first, then providers,
 * then requesters. Spec: specs/protocol.md ("Versions").
 *
 * - 1: dms 0.1 and every build up to the bid request's needs: envelopes said 1 whatever they
 *   carried (protocols 2 and 3 below were named in the specs only).
 * - 2: the invocation carries the workload whole (`Invocation.workload`).
 * - 3: the contract terms sign the workload's hash (`ContractTerms.workloadHash`).
 * - 4: the contract terms reference the bid instead of copying its resources, image and max
 *   duration, and the bid request carries the workload's needs (`BidRequest.workloadNeeds`)
 *   instead of its image, resources, network and members; the first number an envelope says
 *   other than 1.
 */
export const PROTOCOL_VERSION = 4
