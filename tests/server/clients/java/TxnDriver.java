import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.TimeUnit;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;

/**
 * Transactional scenarios, one per mode; each prints what it saw, one fact a line.
 *
 *   loop BOOTSTRAP IN OUT GROUP TXN_ID COUNT [classic|consumer]
 *     produces COUNT records "v<i>" to IN, then consumes them read_committed in group GROUP
 *     (of the classic protocol, or KIP-848's)
 *     and, one record per transaction, produces "out-v<i>" to OUT with the consumed offset
 *     sent to the transaction; transactions commit and abort in turn (an aborted record is
 *     processed again). After each end: "commit|abort <offset> committed=<group offset>".
 *   fence BOOTSTRAP OUT TXN_ID
 *     a second producer with the same transactional id fences the first, whose commit
 *     then fails: "fenced <exception>", then "second committed".
 *   hang BOOTSTRAP OUT TXN_ID TIMEOUT_MS
 *     opens a transaction with one record and prints "open"; on a line from stdin tries
 *     to commit it: "commit failed <exception>" or "committed".
 */
public final class TxnDriver {
    public static void main(String[] args) throws Exception {
        switch (args[0]) {
            case "loop" -> loop(args[1], args[2], args[3], args[4], args[5], Integer.parseInt(args[6]),
                    args.length > 7 ? args[7] : "classic");
            case "fence" -> fence(args[1], args[2], args[3]);
            case "hang" -> hang(args[1], args[2], args[3], Integer.parseInt(args[4]));
            default -> throw new IllegalArgumentException(args[0]);
        }
    }

    static void createTopics(String bootstrap, String... topics) throws Exception {
        Properties props = new Properties();
        props.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        try (Admin admin = Admin.create(props)) {
            List<NewTopic> wanted = new ArrayList<>();
            for (String topic : topics) {
                wanted.add(new NewTopic(topic, 1, (short) 1));
            }
            admin.createTopics(wanted).all().get(30, TimeUnit.SECONDS);
        }
    }

    static KafkaProducer<String, String> producer(String bootstrap, String txnId, Integer timeoutMs) {
        Properties props = new Properties();
        props.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        props.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        props.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        if (txnId != null) {
            props.put(ProducerConfig.TRANSACTIONAL_ID_CONFIG, txnId);
        }
        if (timeoutMs != null) {
            props.put(ProducerConfig.TRANSACTION_TIMEOUT_CONFIG, timeoutMs);
        }
        return new KafkaProducer<>(props);
    }

    static void loop(String bootstrap, String in, String out, String group, String txnId,
                     int count, String protocol) throws Exception {
        createTopics(bootstrap, in, out);
        try (KafkaProducer<String, String> plain = producer(bootstrap, null, null)) {
            for (int i = 0; i < count; i++) {
                plain.send(new ProducerRecord<>(in, 0, "k" + i, "v" + i));
            }
            plain.flush();
        }
        Properties props = new Properties();
        props.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        props.put(ConsumerConfig.GROUP_ID_CONFIG, group);
        props.put(ConsumerConfig.GROUP_PROTOCOL_CONFIG, protocol);
        props.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
        props.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
        props.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        props.put(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, 1);
        props.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
        props.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
        TopicPartition source = new TopicPartition(in, 0);
        try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(props);
             KafkaProducer<String, String> producer = producer(bootstrap, txnId, null)) {
            producer.initTransactions();
            consumer.subscribe(Collections.singleton(in));
            int transactions = 0;
            long deadline = System.currentTimeMillis() + 60_000;
            while (System.currentTimeMillis() < deadline) {
                List<ConsumerRecord<String, String>> records = new ArrayList<>();
                consumer.poll(Duration.ofMillis(200)).forEach(records::add);
                if (records.isEmpty()) {
                    OffsetAndMetadata done = consumer.committed(Collections.singleton(source)).get(source);
                    if (done != null && done.offset() >= count) {
                        break;
                    }
                    continue;
                }
                for (ConsumerRecord<String, String> record : records) {
                    boolean commit = transactions++ % 2 == 1;
                    producer.beginTransaction();
                    producer.send(new ProducerRecord<>(out, 0, record.key(), "out-" + record.value()));
                    producer.sendOffsetsToTransaction(
                            Map.of(source, new OffsetAndMetadata(record.offset() + 1)),
                            consumer.groupMetadata());
                    if (commit) {
                        producer.commitTransaction();
                    } else {
                        producer.abortTransaction();
                        consumer.seek(source, record.offset());
                    }
                    OffsetAndMetadata committed = consumer.committed(Collections.singleton(source)).get(source);
                    System.out.println((commit ? "commit " : "abort ") + record.offset() + " committed="
                            + (committed == null ? -1 : committed.offset()));
                    if (!commit) {
                        break;
                    }
                }
            }
        }
        System.out.println("done");
    }

    static void fence(String bootstrap, String out, String txnId) throws Exception {
        createTopics(bootstrap, out);
        KafkaProducer<String, String> first = producer(bootstrap, txnId, null);
        first.initTransactions();
        first.beginTransaction();
        first.send(new ProducerRecord<>(out, 0, "k", "zombie")).get(30, TimeUnit.SECONDS);
        try (KafkaProducer<String, String> second = producer(bootstrap, txnId, null)) {
            second.initTransactions();
            try {
                first.commitTransaction();
                System.out.println("first committed");
            } catch (Exception e) {
                System.out.println("fenced " + e.getClass().getSimpleName());
            } finally {
                first.close(Duration.ZERO);
            }
            second.beginTransaction();
            second.send(new ProducerRecord<>(out, 0, "k", "second"));
            second.commitTransaction();
            System.out.println("second committed");
        }
    }

    static void hang(String bootstrap, String out, String txnId, int timeoutMs) throws Exception {
        createTopics(bootstrap, out);
        try (KafkaProducer<String, String> producer = producer(bootstrap, txnId, timeoutMs)) {
            producer.initTransactions();
            producer.beginTransaction();
            producer.send(new ProducerRecord<>(out, 0, "k", "hanging")).get(30, TimeUnit.SECONDS);
            System.out.println("open");
            System.out.flush();
            new BufferedReader(new InputStreamReader(System.in)).readLine();
            try {
                producer.commitTransaction();
                System.out.println("committed");
            } catch (Exception e) {
                System.out.println("commit failed " + e.getClass().getSimpleName());
            }
        }
    }
}
