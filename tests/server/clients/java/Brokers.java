import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.TopicPartitionInfo;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;

/**
 * Scenarios against a kcsim playing several brokers; each prints what it saw, one fact a line.
 *
 *   leaders BOOTSTRAP TOPIC PARTITIONS
 *     creates TOPIC, then "nodes <ids>" (DescribeCluster), "leader <p> <node>" a partition
 *     and "done".
 *   steps BOOTSTRAP TOPIC PARTITIONS GROUP MEMBERS BATCH
 *     MEMBERS consumers of GROUP (classic, auto commit) consume TOPIC while batches of BATCH
 *     records are produced, batch after batch: once each batch is consumed,
 *     "batch <n> members <how many consumed in it (the first: whoever did)>", then a line
 *     from stdin says "next"
 *     or "end". At the end the members close (committing) and each record consumed is
 *     "record <partition> <offset> <value>" (twice if consumed twice), then
 *     "coordinator <node>" (DescribeConsumerGroups) and "done".
 *   txn BOOTSTRAP IN OUT GROUP TXN_ID COUNT
 *     a read_committed consumer of IN (PARTITIONS 3) and a transactional producer to OUT:
 *     COUNT inputs, a few a transaction, each transaction sending the group's offsets.
 *     Halfway, with a transaction open and a record sent, "open" and a line from stdin;
 *     then the transaction goes on. At the end the outputs read read_committed, each
 *     "out <value>", and "done".
 */
public final class Brokers {
    public static void main(String[] args) throws Exception {
        switch (args[0]) {
            case "leaders" -> leaders(args[1], args[2], Integer.parseInt(args[3]));
            case "steps" -> steps(args[1], args[2], Integer.parseInt(args[3]), args[4],
                    Integer.parseInt(args[5]), Integer.parseInt(args[6]));
            case "txn" -> txn(args[1], args[2], args[3], args[4], args[5], Integer.parseInt(args[6]));
            default -> throw new IllegalArgumentException(args[0]);
        }
    }

    static final BufferedReader STDIN = new BufferedReader(new InputStreamReader(System.in));

    static String say(String line) throws Exception {
        System.out.println(line);
        System.out.flush();
        return STDIN.readLine();
    }

    static Admin admin(String bootstrap) {
        Properties props = new Properties();
        props.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        return Admin.create(props);
    }

    static void create(String bootstrap, int partitions, String... topics) throws Exception {
        try (Admin admin = admin(bootstrap)) {
            List<NewTopic> wanted = new ArrayList<>();
            for (String topic : topics) {
                wanted.add(new NewTopic(topic, partitions, (short) 1));
            }
            admin.createTopics(wanted).all().get(30, TimeUnit.SECONDS);
        }
    }

    static void leaders(String bootstrap, String topic, int partitions) throws Exception {
        create(bootstrap, partitions, topic);
        try (Admin admin = admin(bootstrap)) {
            List<String> ids = new ArrayList<>();
            for (Node node : admin.describeCluster().nodes().get(30, TimeUnit.SECONDS)) {
                ids.add(node.idString());
            }
            Collections.sort(ids);
            System.out.println("nodes " + String.join(",", ids));
            TopicDescription described = admin.describeTopics(List.of(topic)).allTopicNames()
                    .get(30, TimeUnit.SECONDS).get(topic);
            for (TopicPartitionInfo info : described.partitions()) {
                System.out.println("leader " + info.partition() + " " + info.leader().id());
            }
        }
        System.out.println("done");
    }

    static KafkaProducer<String, String> producer(String bootstrap, String txnId) {
        Properties props = new Properties();
        props.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        props.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        props.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        props.put(ProducerConfig.RETRY_BACKOFF_MS_CONFIG, 50);
        if (txnId != null) {
            props.put(ProducerConfig.TRANSACTIONAL_ID_CONFIG, txnId);
        }
        return new KafkaProducer<>(props);
    }

    static Properties consumerProps(String bootstrap, String group) {
        Properties props = new Properties();
        props.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        props.put(ConsumerConfig.GROUP_ID_CONFIG, group);
        props.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        props.put(ConsumerConfig.RETRY_BACKOFF_MS_CONFIG, 50);
        props.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
        props.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
        return props;
    }

    /** One member of a group, polling in its own thread until stopped. */
    static final class Member implements Runnable {
        final Properties props;
        final String topic;
        final List<String> consumed = Collections.synchronizedList(new ArrayList<>());
        final Set<String> values = ConcurrentHashMap.newKeySet();
        volatile int lastBatch = -1;  // the last batch this member consumed a record of
        final AtomicBoolean stop = new AtomicBoolean();
        final Thread thread = new Thread(this);

        Member(Properties props, String topic) {
            this.props = props;
            this.topic = topic;
            thread.start();
        }

        public void run() {
            try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(props)) {
                consumer.subscribe(List.of(topic));
                while (!stop.get()) {
                    for (ConsumerRecord<String, String> r : consumer.poll(Duration.ofMillis(100))) {
                        consumed.add("record " + r.partition() + " " + r.offset() + " " + r.value());
                        values.add(r.value());
                        lastBatch = Integer.parseInt(r.value().split("-")[0]);
                    }
                }
            }
        }
    }

    static void steps(String bootstrap, String topic, int partitions, String group, int members,
                      int batch) throws Exception {
        create(bootstrap, partitions, topic);
        Properties props = consumerProps(bootstrap, group);
        props.put(ConsumerConfig.AUTO_COMMIT_INTERVAL_MS_CONFIG, 100);
        props.put(ConsumerConfig.SESSION_TIMEOUT_MS_CONFIG, 10000);
        List<Member> group_ = new ArrayList<>();
        for (int i = 0; i < members; i++) {
            group_.add(new Member(props, topic));
        }
        try (KafkaProducer<String, String> producer = producer(bootstrap, null)) {
            for (int n = 0; ; n++) {
                for (int i = 0; i < batch; i++) {
                    producer.send(new ProducerRecord<>(topic, i % partitions, null, n + "-" + i));
                }
                producer.flush();
                long deadline = System.currentTimeMillis() + 60_000;
                while (System.currentTimeMillis() < deadline) {
                    Set<String> seen = new HashSet<>();
                    int consuming = 0;
                    for (Member m : group_) {
                        seen.addAll(m.values);
                        consuming += m.lastBatch == n ? 1 : 0;
                    }
                    if (seen.size() == (n + 1) * batch && (consuming == members || n == 0)) {
                        break;
                    }
                    Thread.sleep(20);
                }
                int consuming = 0;
                for (Member m : group_) {
                    consuming += m.lastBatch == n ? 1 : 0;
                }
                if (!"next".equals(say("batch " + n + " members " + consuming))) {
                    break;
                }
            }
        }
        for (Member m : group_) {
            m.stop.set(true);
        }
        for (Member m : group_) {
            m.thread.join(60_000);
            synchronized (m.consumed) {
                m.consumed.forEach(System.out::println);
            }
        }
        try (Admin admin = admin(bootstrap)) {
            System.out.println("coordinator " + admin.describeConsumerGroups(List.of(group))
                    .all().get(30, TimeUnit.SECONDS).get(group).coordinator().id());
        }
        System.out.println("done");
    }

    static void txn(String bootstrap, String in, String out, String group, String txnId,
                    int count) throws Exception {
        create(bootstrap, 3, in, out);
        try (KafkaProducer<String, String> plain = producer(bootstrap, null)) {
            for (int i = 0; i < count; i++) {
                plain.send(new ProducerRecord<>(in, i % 3, null, "v" + i));
            }
            plain.flush();
        }
        Properties props = consumerProps(bootstrap, group);
        props.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
        props.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
        props.put(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, 5);
        int processed = 0;
        boolean paused = false;
        try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(props);
             KafkaProducer<String, String> producer = producer(bootstrap, txnId)) {
            producer.initTransactions();
            consumer.subscribe(List.of(in));
            long deadline = System.currentTimeMillis() + 120_000;
            while (processed < count && System.currentTimeMillis() < deadline) {
                ConsumerRecords<String, String> records = consumer.poll(Duration.ofMillis(200));
                if (records.isEmpty()) {
                    continue;
                }
                producer.beginTransaction();
                Map<TopicPartition, OffsetAndMetadata> offsets = new HashMap<>();
                for (ConsumerRecord<String, String> r : records) {
                    producer.send(new ProducerRecord<>(out, r.partition(), null, "out-" + r.value()));
                    offsets.put(new TopicPartition(r.topic(), r.partition()),
                            new OffsetAndMetadata(r.offset() + 1));
                    processed++;
                }
                if (!paused && processed >= count / 2) {
                    producer.flush();
                    paused = true;
                    say("open");
                }
                producer.sendOffsetsToTransaction(offsets, consumer.groupMetadata());
                producer.commitTransaction();
            }
        }
        Properties reader = consumerProps(bootstrap, group + "-reader");
        reader.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
        reader.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
        try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(reader)) {
            List<TopicPartition> outs = List.of(new TopicPartition(out, 0), new TopicPartition(out, 1),
                    new TopicPartition(out, 2));
            consumer.assign(outs);
            consumer.seekToBeginning(outs);
            Map<TopicPartition, Long> ends = consumer.endOffsets(outs);
            long deadline = System.currentTimeMillis() + 30_000;
            while (System.currentTimeMillis() < deadline) {
                for (ConsumerRecord<String, String> r : consumer.poll(Duration.ofMillis(200))) {
                    System.out.println("out " + r.value());
                }
                boolean atEnd = true;
                for (TopicPartition tp : outs) {
                    atEnd &= consumer.position(tp) >= ends.get(tp);
                }
                if (atEnd) {
                    break;
                }
            }
        }
        System.out.println("done");
    }
}
