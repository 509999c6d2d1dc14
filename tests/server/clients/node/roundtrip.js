// Produce MESSAGES records, consume them in GROUP and commit, with kafkajs and the client
// settings given as JSON (ssl: a CA file, or none; sasl: kafkajs' own settings). Prints one
// JSON object per step; a failing step exits with status 1.
//
// Usage: node roundtrip.js SETTINGS_JSON TOPIC GROUP MESSAGES
'use strict';
const fs = require('fs');
const { Kafka, logLevel } = require('kafkajs');

async function main() {
  const settings = JSON.parse(process.argv[2]);
  const [topic, group] = [process.argv[3], process.argv[4]];
  const messages = Number(process.argv[5]);
  const config = { clientId: 'kcsim-kafkajs', brokers: settings.brokers, logLevel: logLevel.ERROR,
                   retry: { retries: 3 } };
  if (settings.caFile) config.ssl = { ca: [fs.readFileSync(settings.caFile, 'utf-8')] };
  if (settings.sasl) config.sasl = settings.sasl;
  const kafka = new Kafka(config);

  const producer = kafka.producer();
  await producer.connect();
  const records = [];
  for (let i = 0; i < messages; i++) records.push({ key: `k${i}`, value: `v${i}` });
  await producer.send({ topic, messages: records });
  await producer.disconnect();
  console.log(JSON.stringify({ step: 'produce', sent: messages }));

  const consumer = kafka.consumer({ groupId: group });
  await consumer.connect();
  await consumer.subscribe({ topic, fromBeginning: true });
  let seen = 0;
  let last = null;
  const done = new Promise((resolve) => {
    consumer.run({
      autoCommit: false,
      eachMessage: async ({ partition, message }) => {
        seen += 1;
        last = { partition, offset: message.offset };
        if (seen === messages) resolve();
      },
    });
  });
  let timer;
  const timeout = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`saw ${seen} of ${messages} records`)), 30000);
  });
  await Promise.race([done, timeout]);
  clearTimeout(timer);
  await consumer.commitOffsets([{ topic, partition: last.partition,
                                  offset: String(Number(last.offset) + 1) }]);
  await consumer.disconnect();

  const admin = kafka.admin();
  await admin.connect();
  const [fetched] = await admin.fetchOffsets({ groupId: group, topics: [topic] });
  await admin.disconnect();
  const committed = fetched.partitions.reduce((sum, p) => sum + Math.max(Number(p.offset), 0), 0);
  console.log(JSON.stringify({ step: 'consume', seen, committed }));
}

main().catch((error) => {
  console.log(JSON.stringify({ step: 'error', error: String(error) }));
  process.exit(1);
});
