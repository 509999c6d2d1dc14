import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.Callable;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.DescribeClusterResult;
import org.apache.kafka.clients.admin.ListOffsetsResult;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;

/**
 * Create a topic, produce, fetch by assign(), read offsets and delete the topic with
 * the Java client. Each step prints one JSON object on a line; a failing step prints
 * {"step": ..., "error": ...} and the process exits with status 1.
 *
 * Usage: BrokerSmoke BOOTSTRAP TOPIC [MESSAGES] [PARTITIONS] [COMPRESSION] [IDEMPOTENCE]
 * COMPRESSION is a compression.type (default none); IDEMPOTENCE is true, false or
 * default (the client's own default; without the argument: false).
 */
public final class BrokerSmoke {
    private static final long STEP_TIMEOUT_S = 15;

    public static void main(String[] args) throws Exception {
        String bootstrap = args[0];
        String topic = args[1];
        int messages = args.length > 2 ? Integer.parseInt(args[2]) : 1000;
        int partitions = args.length > 3 ? Integer.parseInt(args[3]) : 3;
        String compression = args.length > 4 ? args[4] : "none";
        String idempotence = args.length > 5 ? args[5] : "false";
        List<TopicPartition> tps = new ArrayList<>();
        for (int p = 0; p < partitions; p++) {
            tps.add(new TopicPartition(topic, p));
        }
        int status = 0;
        try (Admin admin = Admin.create(adminProps(bootstrap))) {
            step("create", () -> {
                admin.createTopics(List.of(new NewTopic(topic, partitions, (short) 1)))
                        .all().get(STEP_TIMEOUT_S, TimeUnit.SECONDS);
                return obj("created", true);
            });
            step("list", () -> {
                Set<String> names = admin.listTopics().names().get(STEP_TIMEOUT_S, TimeUnit.SECONDS);
                Map<String, TopicDescription> desc = admin.describeTopics(List.of(topic))
                        .allTopicNames().get(STEP_TIMEOUT_S, TimeUnit.SECONDS);
                TopicDescription td = desc.get(topic);
                List<Integer> leaders = new ArrayList<>();
                for (var info : td.partitions()) {
                    leaders.add(info.leader() == null ? -1 : info.leader().id());
                }
                return obj("present", names.contains(topic), "partitions", td.partitions().size(),
                        "leaders", leaders);
            });
            step("cluster", () -> {
                DescribeClusterResult result = admin.describeCluster();
                String clusterId = result.clusterId().get(STEP_TIMEOUT_S, TimeUnit.SECONDS);
                Collection<Node> nodes = result.nodes().get(STEP_TIMEOUT_S, TimeUnit.SECONDS);
                Node controller = result.controller().get(STEP_TIMEOUT_S, TimeUnit.SECONDS);
                List<Object> list = new ArrayList<>();
                for (Node n : nodes) {
                    list.add(obj("id", n.id(), "host", n.host(), "port", n.port()));
                }
                return obj("cluster_id", clusterId, "nodes", list,
                        "controller", controller == null ? -1 : controller.id());
            });
            step("produce", () -> produce(bootstrap, topic, messages, compression, idempotence));
            step("consume", () -> consume(bootstrap, tps, messages));
            step("offsets", () -> {
                try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(consumerProps(bootstrap))) {
                    Map<TopicPartition, Long> begin = consumer.beginningOffsets(tps);
                    Map<TopicPartition, Long> end = consumer.endOffsets(tps);
                    return obj("earliest", byPartition(begin), "latest", byPartition(end));
                }
            });
            step("admin_offsets", () -> {
                Map<TopicPartition, OffsetSpec> earliest = new HashMap<>();
                Map<TopicPartition, OffsetSpec> latest = new HashMap<>();
                for (TopicPartition tp : tps) {
                    earliest.put(tp, OffsetSpec.earliest());
                    latest.put(tp, OffsetSpec.latest());
                }
                var e = admin.listOffsets(earliest).all().get(STEP_TIMEOUT_S, TimeUnit.SECONDS);
                var l = admin.listOffsets(latest).all().get(STEP_TIMEOUT_S, TimeUnit.SECONDS);
                Map<TopicPartition, Long> eo = new HashMap<>();
                Map<TopicPartition, Long> lo = new HashMap<>();
                for (Map.Entry<TopicPartition, ListOffsetsResult.ListOffsetsResultInfo> x : e.entrySet()) {
                    eo.put(x.getKey(), x.getValue().offset());
                }
                for (Map.Entry<TopicPartition, ListOffsetsResult.ListOffsetsResultInfo> x : l.entrySet()) {
                    lo.put(x.getKey(), x.getValue().offset());
                }
                return obj("earliest", byPartition(eo), "latest", byPartition(lo));
            });
            step("delete", () -> {
                admin.deleteTopics(List.of(topic)).all().get(STEP_TIMEOUT_S, TimeUnit.SECONDS);
                long deadline = System.currentTimeMillis() + 5000;
                boolean listed = true;
                while (listed && System.currentTimeMillis() < deadline) {
                    listed = admin.listTopics().names().get(STEP_TIMEOUT_S, TimeUnit.SECONDS).contains(topic);
                    if (listed) {
                        Thread.sleep(100);
                    }
                }
                return obj("still_listed", listed);
            });
        } catch (StepFailed failed) {
            status = 1;
        }
        System.out.flush();
        System.exit(status);
    }

    private static Map<String, Object> produce(String bootstrap, String topic, int messages,
                                               String compression, String idempotence) throws Exception {
        Properties props = common(bootstrap);
        props.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        props.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        props.put(ProducerConfig.ACKS_CONFIG, "all");
        props.put(ProducerConfig.COMPRESSION_TYPE_CONFIG, compression);
        if (!idempotence.equals("default")) {
            props.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, idempotence);
        }
        props.put(ProducerConfig.LINGER_MS_CONFIG, "5");
        props.put(ProducerConfig.MAX_BLOCK_MS_CONFIG, "10000");
        props.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, "15000");
        AtomicInteger acked = new AtomicInteger();
        Map<Integer, Integer> perPartition = new ConcurrentHashMap<>();
        List<String> errors = java.util.Collections.synchronizedList(new ArrayList<>());
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(props)) {
            for (int i = 0; i < messages; i++) {
                producer.send(new ProducerRecord<>(topic, "key-" + i, "value-" + i), (md, ex) -> {
                    if (ex != null) {
                        errors.add(ex.toString());
                    } else {
                        acked.incrementAndGet();
                        perPartition.merge(md.partition(), 1, Integer::sum);
                    }
                });
            }
            producer.flush();
        }
        return obj("acked", acked.get(), "errors", errors.size(),
                "first_error", errors.isEmpty() ? null : errors.get(0),
                "per_partition", new TreeMap<>(perPartition));
    }

    private static Map<String, Object> consume(String bootstrap, List<TopicPartition> tps, int expected) {
        Map<String, String> seen = new HashMap<>();
        Map<Integer, List<Long>> offsets = new TreeMap<>();
        int records = 0;
        int badValues = 0;
        int duplicates = 0;
        try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(consumerProps(bootstrap))) {
            consumer.assign(tps);
            consumer.seekToBeginning(tps);
            long deadline = System.currentTimeMillis() + 20000;
            long quietUntil = Long.MAX_VALUE;
            while (System.currentTimeMillis() < Math.min(deadline, quietUntil)) {
                for (ConsumerRecord<String, String> r : consumer.poll(Duration.ofMillis(200))) {
                    records++;
                    if (seen.put(r.key(), r.value()) != null) {
                        duplicates++;
                    }
                    if (r.key() == null || !r.value().equals("value-" + r.key().substring(4))) {
                        badValues++;
                    }
                    offsets.computeIfAbsent(r.partition(), p -> new ArrayList<>()).add(r.offset());
                }
                if (records >= expected && quietUntil == Long.MAX_VALUE) {
                    quietUntil = System.currentTimeMillis() + 500;
                }
            }
        }
        Map<Integer, Integer> perPartition = new TreeMap<>();
        int gaps = 0;
        for (Map.Entry<Integer, List<Long>> e : offsets.entrySet()) {
            List<Long> list = e.getValue();
            perPartition.put(e.getKey(), list.size());
            for (int i = 0; i < list.size(); i++) {
                if (list.get(i) != i) {
                    gaps++;
                    break;
                }
            }
        }
        return obj("records", records, "distinct_keys", seen.size(), "bad_values", badValues,
                "duplicates", duplicates, "per_partition", perPartition,
                "partitions_with_offset_gaps", gaps);
    }

    private static Properties common(String bootstrap) {
        Properties props = new Properties();
        props.put("bootstrap.servers", bootstrap);
        props.put("client.id", "kcsim-java-smoke");
        props.put("request.timeout.ms", "5000");
        props.put("socket.connection.setup.timeout.ms", "3000");
        props.put("socket.connection.setup.timeout.max.ms", "5000");
        props.put("reconnect.backoff.max.ms", "1000");
        props.put("retry.backoff.max.ms", "1000");
        return props;
    }

    private static Properties adminProps(String bootstrap) {
        Properties props = common(bootstrap);
        props.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, "10000");
        return props;
    }

    private static Properties consumerProps(String bootstrap) {
        Properties props = common(bootstrap);
        props.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
        props.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
        props.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        props.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        props.put(ConsumerConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, "10000");
        props.put(ConsumerConfig.FETCH_MAX_WAIT_MS_CONFIG, "100");
        return props;
    }

    private static Map<String, Long> byPartition(Map<TopicPartition, Long> offsets) {
        Map<String, Long> out = new TreeMap<>();
        for (Map.Entry<TopicPartition, Long> e : offsets.entrySet()) {
            out.put(Integer.toString(e.getKey().partition()), e.getValue());
        }
        return out;
    }

    // -- steps and JSON ------------------------------------------------------------

    private static final class StepFailed extends Exception {
        StepFailed(Throwable cause) {
            super(cause);
        }
    }

    private static void step(String name, Callable<Map<String, Object>> body) throws StepFailed {
        long start = System.nanoTime();
        try {
            Map<String, Object> result = new java.util.LinkedHashMap<>();
            result.put("step", name);
            result.putAll(body.call());
            result.put("ms", (System.nanoTime() - start) / 1_000_000);
            System.out.println(json(result));
        } catch (Throwable t) {
            Throwable root = t;
            while (root.getCause() != null && root.getCause() != root) {
                root = root.getCause();
            }
            System.out.println(json(obj("step", name, "error", t.toString(), "cause", root.toString(),
                    "ms", (System.nanoTime() - start) / 1_000_000)));
            System.out.flush();
            throw new StepFailed(t);
        }
    }

    private static Map<String, Object> obj(Object... kv) {
        return Json.obj(kv);
    }

    private static String json(Object v) {
        return Json.json(v);
    }
}
