// Scenarios against a kcsim playing several brokers, with kafkajs; the same lines as
// java/Brokers.java prints, one fact a line.
//
//   node brokers.js leaders BOOTSTRAP TOPIC PARTITIONS
//     creates TOPIC, then "nodes <ids>" (the cluster's brokers) and "leader <p> <node>".
//   node brokers.js steps BOOTSTRAP TOPIC PARTITIONS GROUP MEMBERS BATCH
//     MEMBERS consumers of GROUP (auto commit) consume TOPIC while batches of BATCH records
//     are produced: once each batch is consumed, "batch <n> members <how many consumed in
//     it> (the first batch: whoever consumed it)", then a line from stdin says "next" or "end". At the end the members stop
//     (committing) and each record consumed is "record <partition> <offset> <value>", then
//     "done". BOOTSTRAP may name several brokers, comma-separated.
'use strict';
const readline = require('readline');
const { Kafka, logLevel } = require('kafkajs');

const lines = readline.createInterface({ input: process.stdin })[Symbol.asyncIterator]();

async function say(line) {
  console.log(line);
  const next = await lines.next();
  return next.done ? 'end' : next.value;
}

function kafkaOf(bootstrap) {
  return new Kafka({ clientId: 'kcsim-kafkajs', brokers: bootstrap.split(','),
                     logLevel: logLevel[process.env.KAFKAJS_LOG || 'NOTHING'], retry: { retries: 10, initialRetryTime: 50 } });
}

async function create(kafka, topic, partitions) {
  const admin = kafka.admin();
  await admin.connect();
  await admin.createTopics({ topics: [{ topic, numPartitions: partitions }], waitForLeaders: true });
  return admin;
}

async function leaders(bootstrap, topic, partitions) {
  const admin = await create(kafkaOf(bootstrap), topic, partitions);
  const cluster = await admin.describeCluster();
  console.log(`nodes ${cluster.brokers.map((b) => b.nodeId).sort().join(',')}`);
  const [described] = (await admin.fetchTopicMetadata({ topics: [topic] })).topics;
  for (const p of described.partitions) console.log(`leader ${p.partitionId} ${p.leader}`);
  await admin.disconnect();
  console.log('done');
}

const sleep = (ms) => new Promise((resolve) => { setTimeout(resolve, ms); });

async function steps(bootstrap, topic, partitions, group, count, batch) {
  const kafka = kafkaOf(bootstrap);
  await (await create(kafka, topic, partitions)).disconnect();
  const members = [];
  for (let i = 0; i < count; i++) {
    const member = { consumed: [], lastBatch: -1,
                     consumer: kafka.consumer({ groupId: group, sessionTimeout: 10000,
                                                retry: { retries: 20, initialRetryTime: 50 } }) };
    await member.consumer.connect();
    await member.consumer.subscribe({ topic, fromBeginning: true });
    member.consumer.run({ autoCommitInterval: 100, eachMessage: async ({ partition, message }) => {
      const value = message.value.toString();
      member.consumed.push(`record ${partition} ${message.offset} ${value}`);
      member.lastBatch = Number(value.split('-')[0]);
    } });
    members.push(member);
  }
  const producer = kafka.producer();
  await producer.connect();
  for (let n = 0; ; n++) {
    const messages = [];
    for (let i = 0; i < batch; i++) messages.push({ partition: i % partitions, value: `${n}-${i}` });
    await producer.send({ topic, messages });
    const deadline = Date.now() + 60000;
    let consuming = 0;
    while (Date.now() < deadline) {
      const seen = new Set(members.flatMap((m) => m.consumed.map((r) => r.split(' ')[3])));
      consuming = members.filter((m) => m.lastBatch === n).length;
      if (seen.size === (n + 1) * batch && (consuming === count || n === 0)) break;
      await sleep(20);
    }
    if (await say(`batch ${n} members ${consuming}`) !== 'next') break;
  }
  await producer.disconnect();
  for (const m of members) await m.consumer.disconnect();
  for (const m of members) m.consumed.forEach((line) => console.log(line));
  console.log('done');
}

async function main() {
  const [mode, bootstrap, topic, partitions, group, count, batch] = process.argv.slice(2);
  if (mode === 'leaders') await leaders(bootstrap, topic, Number(partitions));
  else await steps(bootstrap, topic, Number(partitions), group, Number(count), Number(batch));
  process.exit(0);
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
