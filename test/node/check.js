'use strict'
// StrataCheck for KafkaJS: one scenario against a Strata broker, run by
// test/e2e/kafkajs_test.go as `node check.js BOOTSTRAP SCENARIO`. The last
// line it prints is its verdict: "OK scenario: what it did" or
// "FAIL scenario: why".
//
// Scenarios:
//   produce-consume  an idempotent producer writes keys, values, headers and
//                    timestamps with gzip, snappy and no compression; a
//                    consumer group reads every record back, in order per
//                    partition, and commits; the group's offsets and the
//                    topic's end offsets match what was written
//   group            two consumers of one group share four partitions
//                    (KafkaJS's own round-robin assignor, through
//                    JoinGroup/SyncGroup); together they read every record
//                    once; when one leaves, the other takes over its
//                    partitions and reads what follows
//   admin            topics with configs, metadata, configs described and
//                    altered, partitions added, offsets by time, records
//                    deleted, groups listed, described, reset and deleted,
//                    topics deleted
//   compacted        a compacted topic (keys overwritten under three codecs,
//                    a tombstone) read from the start once the cleaner has
//                    run: offsets with gaps, every key's last value
//   transactions     a transactional producer commits one transaction
//                    (with a consumer group's offsets) and aborts another; a
//                    read_committed consumer sees only the committed one

const { Kafka, CompressionTypes, CompressionCodecs, logLevel } = require('kafkajs')
CompressionCodecs[CompressionTypes.Snappy] = require('kafkajs-snappy')

const [bootstrap, scenario] = process.argv.slice(2)
const DEADLINE_MS = 55_000

class CheckFailed extends Error {}

function check (ok, message) {
  if (!ok) throw new CheckFailed(message)
}

const kafka = new Kafka({
  clientId: 'strata-kafkajs-check',
  brokers: [bootstrap],
  logLevel: logLevel.WARN,
  connectionTimeout: 5000,
  requestTimeout: 15000,
  retry: { retries: 8, initialRetryTime: 100, maxRetryTime: 2000 }
})

// consume reads `want` records of topic with a consumer group from the
// start and returns them by partition, in the order the consumer saw them.
async function consume (topic, groupId, want, options = {}) {
  const consumer = kafka.consumer({ groupId, maxWaitTimeInMs: 200, ...options })
  await consumer.connect()
  await consumer.subscribe({ topics: [topic], fromBeginning: true })
  const got = new Map()
  let n = 0
  let done
  const all = new Promise(resolve => { done = resolve })
  await consumer.run({
    autoCommit: false,
    eachMessage: async ({ partition, message }) => {
      if (!got.has(partition)) got.set(partition, [])
      got.get(partition).push(message)
      if (++n >= want) done()
    }
  })
  await all
  // Commit past the last record of each partition, then leave.
  await consumer.commitOffsets([...got].map(([partition, ms]) => ({
    topic, partition, offset: (BigInt(ms[ms.length - 1].offset) + 1n).toString()
  })))
  await consumer.disconnect()
  return got
}

async function produceConsume () {
  const topic = 'kafkajs-produce-consume'
  const admin = kafka.admin()
  await admin.connect()
  check(await admin.createTopics({ topics: [{ topic, numPartitions: 3, replicationFactor: 1 }], waitForLeaders: true }),
    `createTopics ${topic}: not created`)

  const producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1 })
  await producer.connect()
  const codecs = [['gzip', CompressionTypes.GZIP], ['snappy', CompressionTypes.Snappy], ['none', CompressionTypes.None]]
  const sent = new Map() // key -> message
  const base = Date.now() - 60_000
  for (const [name, codec] of codecs) {
    const messages = []
    for (let i = 0; i < 30; i++) {
      const key = `${name}-${i}`
      const m = {
        key,
        value: `value of ${key} `.repeat(5),
        headers: { codec: name, seq: String(i) },
        timestamp: String(base + sent.size)
      }
      sent.set(key, m)
      messages.push(m)
    }
    const acks = await producer.send({ topic, acks: -1, compression: codec, messages })
    check(acks.every(a => a.errorCode === 0), `send (${name}): ${JSON.stringify(acks)}`)
  }
  await producer.disconnect()

  const got = await consume(topic, 'kafkajs-pc-group', sent.size)
  let total = 0
  for (const [partition, ms] of got) {
    ms.forEach((m, i) => {
      check(m.offset === String(i), `partition ${partition}: record ${i} at offset ${m.offset}`)
      const want = sent.get(m.key.toString())
      check(want !== undefined, `partition ${partition}: unknown key ${m.key}`)
      check(m.value.toString() === want.value, `key ${want.key}: value ${m.value}`)
      check(m.timestamp === want.timestamp, `key ${want.key}: timestamp ${m.timestamp}, want ${want.timestamp}`)
      check(m.headers.codec.toString() === want.headers.codec && m.headers.seq.toString() === want.headers.seq,
        `key ${want.key}: headers ${JSON.stringify(m.headers)}`)
    })
    // Per key order: within a partition, each codec's keys keep their order.
    for (const [name] of codecs) {
      const seqs = ms.filter(m => m.headers.codec.toString() === name).map(m => Number(m.headers.seq))
      check(seqs.every((s, i) => i === 0 || s > seqs[i - 1]), `partition ${partition}: ${name} records out of order ${seqs}`)
    }
    total += ms.length
  }
  check(total === sent.size, `consumed ${total} records, want ${sent.size}`)

  const ends = await admin.fetchTopicOffsets(topic)
  const committed = await admin.fetchOffsets({ groupId: 'kafkajs-pc-group', topics: [topic] })
  for (const end of ends) {
    const n = (got.get(end.partition) || []).length
    check(Number(end.high) === n && Number(end.low) === 0, `partition ${end.partition}: offsets ${end.low}..${end.high}, want 0..${n}`)
    const c = committed[0].partitions.find(p => p.partition === end.partition)
    check(n === 0 || (c && Number(c.offset) === n), `partition ${end.partition}: committed ${c && c.offset}, want ${n}`)
  }
  await admin.disconnect()
  return `${sent.size} records with gzip, snappy and none, read back by a group and committed`
}

async function group () {
  const topic = 'kafkajs-group'
  const groupId = 'kafkajs-group'
  const admin = kafka.admin()
  await admin.connect()
  await admin.createTopics({ topics: [{ topic, numPartitions: 4, replicationFactor: 1 }], waitForLeaders: true })
  const producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1 })
  await producer.connect()
  const sendRound = async (round, n) => {
    const messages = []
    for (let i = 0; i < n; i++) messages.push({ key: `k${i}`, value: `${round}-${i}` })
    await producer.send({ topic, acks: -1, messages })
  }

  const seen = new Map() // value -> member
  const assigned = new Map() // member -> partitions
  let notify = () => {}
  const start = async (member) => {
    const consumer = kafka.consumer({ groupId, maxWaitTimeInMs: 200, sessionTimeout: 10000, heartbeatInterval: 500 })
    consumer.on(consumer.events.GROUP_JOIN, e => {
      assigned.set(member, (e.payload.memberAssignment[topic] || []).slice().sort())
      notify()
    })
    await consumer.connect()
    await consumer.subscribe({ topics: [topic], fromBeginning: true })
    await consumer.run({
      eachMessage: async ({ message }) => {
        const v = message.value.toString()
        check(!seen.has(v), `${v} read twice (by ${seen.get(v)} and ${member})`)
        seen.set(v, member)
        notify()
      }
    })
    return consumer
  }
  const until = async (what, cond) => {
    while (!cond()) {
      await new Promise(resolve => { notify = resolve; setTimeout(resolve, 200) })
    }
  }

  const a = await start('a')
  const b = await start('b')
  await until('both members assigned', () => (assigned.get('a') || []).length > 0 && (assigned.get('b') || []).length > 0 &&
    assigned.get('a').length + assigned.get('b').length === 4)
  check(!assigned.get('a').some(p => assigned.get('b').includes(p)), `members share partitions: ${JSON.stringify([...assigned])}`)
  await sendRound('one', 40)
  await until('round one read', () => [...seen.keys()].filter(v => v.startsWith('one-')).length === 40)
  const byMember = new Set([...seen.values()])
  check(byMember.size === 2, `round one was read by ${[...byMember]}, want both members`)

  await a.disconnect() // leaves the group: b takes every partition
  await until('b holds every partition', () => (assigned.get('b') || []).length === 4)
  await sendRound('two', 40)
  await until('round two read', () => [...seen.keys()].filter(v => v.startsWith('two-')).length === 40)
  check([...seen].filter(([v]) => v.startsWith('two-')).every(([, m]) => m === 'b'), 'round two read by another member than b')
  await b.disconnect()
  await producer.disconnect()
  await admin.disconnect()
  return '4 partitions shared by two members, 40 records read once; after one left, the other took every partition and read 40 more'
}

async function adminScenario () {
  const topic = 'kafkajs-admin'
  const groupId = 'kafkajs-admin-group'
  const admin = kafka.admin()
  await admin.connect()
  check(await admin.createTopics({
    topics: [{ topic, numPartitions: 2, replicationFactor: 1, configEntries: [{ name: 'retention.ms', value: '3600000' }] }],
    waitForLeaders: true
  }), 'createTopics: not created')
  check(!(await admin.createTopics({ topics: [{ topic, numPartitions: 2 }] })), 'createTopics again: created twice')
  check((await admin.listTopics()).includes(topic), 'listTopics: topic missing')

  const meta = await admin.fetchTopicMetadata({ topics: [topic] })
  check(meta.topics.length === 1 && meta.topics[0].partitions.length === 2, `fetchTopicMetadata: ${JSON.stringify(meta)}`)

  const described = await admin.describeConfigs({ includeSynonyms: false, resources: [{ type: 2, name: topic }] })
  const retention = described.resources[0].configEntries.find(e => e.configName === 'retention.ms')
  check(retention && retention.configValue === '3600000', `describeConfigs retention.ms: ${JSON.stringify(retention)}`)
  await admin.alterConfigs({ validateOnly: false, resources: [{ type: 2, name: topic, configEntries: [{ name: 'retention.ms', value: '7200000' }] }] })
  const after = await admin.describeConfigs({ includeSynonyms: false, resources: [{ type: 2, name: topic, configNames: ['retention.ms'] }] })
  check(after.resources[0].configEntries[0].configValue === '7200000', `alterConfigs: retention.ms now ${JSON.stringify(after.resources[0].configEntries)}`)
  let refused = false
  try {
    await admin.alterConfigs({ validateOnly: false, resources: [{ type: 2, name: topic, configEntries: [{ name: 'no.such.config', value: '1' }] }] })
  } catch (e) {
    refused = true
  }
  check(refused, 'alterConfigs with an unknown key was accepted')

  await admin.createPartitions({ topicPartitions: [{ topic, count: 3 }] })
  const grown = await admin.fetchTopicMetadata({ topics: [topic] })
  check(grown.topics[0].partitions.length === 3, `createPartitions: ${grown.topics[0].partitions.length} partitions, want 3`)

  const producer = kafka.producer()
  await producer.connect()
  const t0 = Date.now() - 10_000
  const messages = []
  for (let i = 0; i < 10; i++) messages.push({ partition: 0, value: `r${i}`, timestamp: String(t0 + i * 1000) })
  await producer.send({ topic, acks: -1, messages })
  await producer.disconnect()

  const byTime = await admin.fetchTopicOffsetsByTimestamp(topic, t0 + 4500)
  const p0 = byTime.find(p => p.partition === 0)
  check(p0 && p0.offset === '5', `fetchTopicOffsetsByTimestamp: ${JSON.stringify(byTime)}, want offset 5 in partition 0`)

  await admin.deleteTopicRecords({ topic, partitions: [{ partition: 0, offset: '3' }] })
  const offsets = await admin.fetchTopicOffsets(topic)
  const o0 = offsets.find(p => p.partition === 0)
  check(o0.low === '3' && o0.high === '10', `after deleteTopicRecords: ${JSON.stringify(o0)}, want 3..10`)

  await consume(topic, groupId, 7)
  const groups = await admin.listGroups()
  check(groups.groups.some(g => g.groupId === groupId), `listGroups: ${JSON.stringify(groups)}`)
  const desc = await admin.describeGroups([groupId])
  check(desc.groups[0].groupId === groupId && desc.groups[0].state === 'Empty', `describeGroups: ${JSON.stringify(desc.groups[0])}`)
  await admin.setOffsets({ groupId, topic, partitions: [{ partition: 0, offset: '4' }] })
  const reset = await admin.fetchOffsets({ groupId, topics: [topic] })
  const r0 = reset[0].partitions.find(p => p.partition === 0)
  check(r0.offset === '4', `setOffsets: partition 0 at ${r0.offset}, want 4`)
  await admin.deleteGroups([groupId])
  check(!(await admin.listGroups()).groups.some(g => g.groupId === groupId), 'deleteGroups: the group is still listed')

  await admin.deleteTopics({ topics: [topic] })
  check(!(await admin.listTopics()).includes(topic), 'deleteTopics: the topic is still listed')
  await admin.disconnect()
  return 'create (with configs), metadata, describe/alter configs, create partitions, offsets by time, delete records, groups listed/described/reset/deleted, delete topic'
}

// readAll reads topic's partition 0 from its start to its end with a
// fresh consumer group.
async function readAll (topic, run) {
  const admin = kafka.admin()
  await admin.connect()
  const end = (await admin.fetchTopicOffsets(topic)).find(p => p.partition === 0)
  await admin.disconnect()
  const consumer = kafka.consumer({ groupId: `kafkajs-read-${run}`, maxWaitTimeInMs: 200 })
  await consumer.connect()
  await consumer.subscribe({ topics: [topic], fromBeginning: true })
  const got = []
  let done
  const all = new Promise(resolve => { done = resolve })
  await consumer.run({
    eachMessage: async ({ message }) => {
      got.push(message)
      if (BigInt(message.offset) + 1n >= BigInt(end.high)) done()
    }
  })
  await all
  await consumer.disconnect()
  return got
}

async function compacted () {
  const topic = 'kafkajs-compacted'
  const admin = kafka.admin()
  await admin.connect()
  await admin.createTopics({
    topics: [{
      topic,
      numPartitions: 1,
      replicationFactor: 1,
      configEntries: [
        { name: 'cleanup.policy', value: 'compact' },
        { name: 'segment.bytes', value: '4096' },
        { name: 'min.cleanable.dirty.ratio', value: '0.01' }
      ]
    }],
    waitForLeaders: true
  })
  await admin.disconnect()
  const producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1 })
  await producer.connect()
  const want = new Map()
  let written = 0
  const codecs = [['gzip', CompressionTypes.GZIP], ['snappy', CompressionTypes.Snappy], ['none', CompressionTypes.None]]
  for (const [name, codec] of codecs) {
    for (let round = 0; round < 4; round++) {
      for (let k = 0; k < 10; k++) {
        const key = `key-${k}`
        const value = k === 3 && name === 'none' && round === 3 ? null : `${key}-${name}-${round}-${'x'.repeat(100)}`
        await producer.send({ topic, acks: -1, compression: codec, messages: [{ partition: 0, key, value }] })
        want.set(key, value)
        written++
      }
    }
  }
  for (let i = 0; i < 30; i++) {
    const key = `filler-${i}`
    await producer.send({ topic, acks: -1, messages: [{ partition: 0, key, value: 'f'.repeat(400) }] })
    want.set(key, 'f'.repeat(400))
    written++
  }
  await producer.disconnect()

  // The cleaner leaves one record per key, plus up to one more per
  // codec's last batch (a batch is never left empty).
  let got = []
  const deadline = Date.now() + 30_000
  for (let run = 0; ; run++) {
    got = await readAll(topic, run)
    if (got.filter(m => m.key.toString().startsWith('key-')).length <= 10 + codecs.length) break
    check(Date.now() < deadline, `compaction: still ${got.length} records after 30 s`)
    await new Promise(resolve => setTimeout(resolve, 500))
  }
  const last = new Map()
  let prev = -1n
  let gaps = 0
  for (const m of got) {
    const o = BigInt(m.offset)
    check(o > prev, `offset ${o} after ${prev}`)
    if (o > prev + 1n) gaps++
    prev = o
    last.set(m.key.toString(), m.value === null ? null : m.value.toString())
  }
  check(gaps > 0, 'no gap in the offsets: the log was not compacted')
  for (const [key, value] of want) {
    check(last.has(key) && last.get(key) === value, `${key} reads ${last.get(key)}, want ${value}`)
  }
  check(last.size === want.size, `${last.size} keys read, want ${want.size}`)
  return `${got.length} of ${written} records after compaction, every key's last value, key-3's tombstone`
}

async function transactions () {
  const topic = 'kafkajs-txn'
  const groupId = 'kafkajs-txn-group'
  const admin = kafka.admin()
  await admin.connect()
  await admin.createTopics({ topics: [{ topic, numPartitions: 1, replicationFactor: 1 }], waitForLeaders: true })

  const producer = kafka.producer({ transactionalId: 'kafkajs-txn-producer', idempotent: true, maxInFlightRequests: 1 })
  await producer.connect()
  const committed = await producer.transaction()
  await committed.send({ topic, messages: [{ value: 'c0' }, { value: 'c1' }, { value: 'c2' }] })
  await committed.sendOffsets({ consumerGroupId: groupId, topics: [{ topic, partitions: [{ partition: 0, offset: '2' }] }] })
  await committed.commit()
  const aborted = await producer.transaction()
  await aborted.send({ topic, messages: [{ value: 'a0' }, { value: 'a1' }] })
  await aborted.abort()
  const last = await producer.transaction()
  await last.send({ topic, messages: [{ value: 'c3' }] })
  await last.commit()
  await producer.disconnect()

  const got = await consume(topic, 'kafkajs-txn-reader', 4, { readUncommitted: false })
  const values = (got.get(0) || []).map(m => m.value.toString())
  check(values.join(',') === 'c0,c1,c2,c3', `read_committed consumer read ${values}, want c0,c1,c2,c3`)
  const offsets = await admin.fetchOffsets({ groupId, topics: [topic] })
  check(offsets[0].partitions[0].offset === '2', `offsets committed in the transaction: ${JSON.stringify(offsets)}`)
  await admin.disconnect()
  return 'one transaction committed with group offsets, one aborted; read_committed reads only the committed records'
}

const scenarios = { 'produce-consume': produceConsume, group, admin: adminScenario, compacted, transactions }

async function main () {
  const run = scenarios[scenario]
  if (!run) {
    console.log(`FAIL ${scenario}: unknown scenario`)
    process.exit(2)
  }
  const watchdog = setTimeout(() => {
    console.log(`FAIL ${scenario}: not done within ${DEADLINE_MS / 1000} s`)
    process.exit(3)
  }, DEADLINE_MS)
  try {
    const summary = await run()
    clearTimeout(watchdog)
    console.log(`OK ${scenario}: ${summary}`)
    process.exit(0)
  } catch (e) {
    console.error(e)
    const why = e instanceof CheckFailed ? e.message : `${e.name}: ${e.message}${e.type ? ` (${e.type})` : ''}`
    console.log(`FAIL ${scenario}: ${why.replace(/\n/g, ' ')}`)
    process.exit(1)
  }
}

main()
