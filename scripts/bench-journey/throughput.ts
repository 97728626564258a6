/** Section 2: throughput with the noop executor, 10 nodes in this process and each in its own. */
import { NoopExecutor } from '../../dms/executor/noop.js'
import { jobReaches } from '../../test/helpers/network.js'
import { CONCURRENCY, network, oneJob, results, spec, table, TP_JOBS } from './common.js'
import { throughputProcesses } from './processes.js'

export interface Throughput {
  jobs: number
  seconds: number
  perSecond: number
  failed: number
  /** CPU milliseconds per job (this process: in it, every node). */
  cpuMsPerJob?: number
}

async function throughput(): Promise<Throughput> {
  const net = await network(9, new NoopExecutor()) // 9 providers + requester = 10 nodes (+ contract-db)
  try {
    await oneJob(net)
    let next = 0
    let failed = 0
    const cpu0 = process.cpuUsage()
    const t0 = performance.now()
    const worker = async () => {
      while (next < TP_JOBS) {
        next++
        const posted = await net.requester.orchestrator!.post(spec)
        const job = await jobReaches(net.requester, posted.record.id)
        if (job.state !== 'completed') failed++
      }
    }
    await Promise.all(Array.from({ length: CONCURRENCY }, worker))
    const seconds = (performance.now() - t0) / 1000
    const cpu = process.cpuUsage(cpu0)
    const cpuMsPerJob = (cpu.user + cpu.system) / 1000 / TP_JOBS
    return { jobs: TP_JOBS, seconds, perSecond: TP_JOBS / seconds, failed, cpuMsPerJob }
  } finally {
    await net.stop()
  }
}

export async function throughputSection(): Promise<void> {
  const tp = await throughput()
  const procs = await throughputProcesses()
  table(
    `2. throughput, noop executor, 10 nodes, ${CONCURRENCY} in flight`,
    ['nodes', 'jobs', 'failed', 'seconds', 'jobs/s (target >= 50)'],
    [
      ['in this one process', tp.jobs, tp.failed, tp.seconds.toFixed(1), tp.perSecond.toFixed(1)],
      [
        'each in its own process',
        procs.jobs,
        procs.failed,
        procs.seconds.toFixed(1),
        procs.perSecond.toFixed(1),
      ],
    ],
  )
  if (procs.failed > 0)
    console.log(`\n   not completed (each in its own process): ${JSON.stringify(procs.failures)}`)
  const c = procs.cpuMsPerJob
  const ms = (x: number) => x.toFixed(1)
  table(
    '   CPU ms per job by role (each in its own process; independent of the machine load)',
    ['role', 'CPU ms/job'],
    [
      ['requester', ms(c.requester)],
      ['  minus what it burns idle over the run', ms(c.minusIdle.requester)],
      ['providers (sum of 9)', ms(c.providers)],
      ['  minus what they burn idle over the run', ms(c.minusIdle.providers)],
      ['  per provider (min / max)', `${ms(Math.min(...c.perProvider))} / ${ms(Math.max(...c.perProvider))}`],
      ['contract-db', ms(c.contractDb)],
      ['  minus what it burns idle over the run', ms(c.minusIdle.contractDb)],
      ['bench REST client', ms(c.client)],
      ['all in one process (every node)', ms(tp.cpuMsPerJob ?? NaN)],
    ],
  )
  results.throughput = { inProcess: tp, processes: procs }
}
