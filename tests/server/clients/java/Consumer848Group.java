import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.Callable;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.ConsumerGroupDescription;
import org.apache.kafka.clients.admin.MemberDescription;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.OffsetSpec;
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
 * Three KafkaConsumers with group.protocol=consumer (KIP-848) in one group share a
 * 6-partition topic, consume what was produced and commit; then one leaves and the
 * other two take over its partitions and consume what is produced next.
 *
 * Each step prints one JSON object on a line; a failing step prints
 * {"step": ..., "error": ...} and the process exits with status 1.
 *
 * Usage: Consumer848Group BOOTSTRAP TOPIC GROUP MESSAGES_PER_PHASE
 */
public final class Consumer848Group {
    private static final int PARTITIONS = 6;
    private static final int MEMBERS = 3;
    private static final long STEP_TIMEOUT_MS = 40_000;

    /** One consumer polling on its own thread; the main thread reads what it saw. */
    private static final class Member implements Runnable {
        final String name;
        final KafkaConsumer<String, String> consumer;
        final AtomicReference<Set<Integer>> assignment = new AtomicReference<>(Set.of());
        final Map<String, Integer> seen = new ConcurrentHashMap<>();
        final List<String> errors = new CopyOnWriteArrayList<>();
        final AtomicBoolean commitRequested = new AtomicBoolean();
        final AtomicBoolean committed = new AtomicBoolean();
        final AtomicBoolean stop = new AtomicBoolean();
        final Thread thread;

        Member(String name, Properties props, String topic) {
            this.name = name;
            this.consumer = new KafkaConsumer<>(props);
            this.consumer.subscribe(List.of(topic));
            this.thread = new Thread(this, name);
        }

        @Override
        public void run() {
            try {
                while (!stop.get()) {
                    for (ConsumerRecord<String, String> r : consumer.poll(Duration.ofMillis(100))) {
                        seen.merge(r.value(), 1, Integer::sum);
                    }
                    Set<Integer> now = new TreeSet<>();
                    for (TopicPartition tp : consumer.assignment()) {
                        now.add(tp.partition());
                    }
                    assignment.set(now);
                    if (commitRequested.getAndSet(false)) {
                        consumer.commitSync(Duration.ofSeconds(10));
                        committed.set(true);
                    }
                }
            } catch (Throwable t) {
                errors.add(t.toString());
            } finally {
                consumer.close(Duration.ofSeconds(10));
            }
        }
    }

    public static void main(String[] args) throws Exception {
        String bootstrap = args[0];
        String topic = args[1];
        String group = args[2];
        int perPhase = Integer.parseInt(args[3]);
        List<Member> members = new ArrayList<>();
        int status = 0;
        try (Admin admin = Admin.create(adminProps(bootstrap))) {
            step("create", () -> {
                admin.createTopics(List.of(new NewTopic(topic, PARTITIONS, (short) 1)))
                        .all().get(15, TimeUnit.SECONDS);
                return obj("created", true);
            });
            step("produce-1", () -> produce(bootstrap, topic, 0, perPhase));
            step("join", () -> {
                for (int i = 0; i < MEMBERS; i++) {
                    Member m = new Member("c" + i, consumerProps(bootstrap, group, "c" + i), topic);
                    members.add(m);
                    m.thread.start();
                }
                waitFor(() -> union(members).size() == PARTITIONS && allNonEmpty(members)
                        && disjoint(members), "three members sharing all partitions");
                return obj("assignments", assignments(members));
            });
            step("consume-1", () -> {
                waitFor(() -> distinct(members).size() >= perPhase, perPhase + " records");
                return consumedReport(members, 0, perPhase);
            });
            step("commit-1", () -> commitAll(members));
            step("describe-1", () -> describe(admin, group));
            step("leave", () -> {
                Member leaving = members.get(0);
                leaving.stop.set(true);
                leaving.thread.join(20_000);
                List<Member> rest = members.subList(1, members.size());
                waitFor(() -> union(rest).size() == PARTITIONS && disjoint(rest),
                        "two members sharing all partitions");
                return obj("left", leaving.name, "left_errors", leaving.errors,
                        "assignments", assignments(rest));
            });
            step("produce-2", () -> produce(bootstrap, topic, perPhase, perPhase));
            step("consume-2", () -> {
                List<Member> rest = members.subList(1, members.size());
                waitFor(() -> distinct(rest).containsAll(values(perPhase, perPhase)),
                        "the second phase's records");
                return consumedReport(rest, perPhase, perPhase);
            });
            step("commit-2", () -> commitAll(members.subList(1, members.size())));
            step("describe-2", () -> describe(admin, group));
            step("offsets", () -> {
                Map<TopicPartition, OffsetAndMetadata> committed = admin
                        .listConsumerGroupOffsets(group).partitionsToOffsetAndMetadata()
                        .get(15, TimeUnit.SECONDS);
                Map<TopicPartition, OffsetSpec> latest = new HashMap<>();
                for (int p = 0; p < PARTITIONS; p++) {
                    latest.put(new TopicPartition(topic, p), OffsetSpec.latest());
                }
                Map<String, Long> ends = new TreeMap<>();
                admin.listOffsets(latest).all().get(15, TimeUnit.SECONDS)
                        .forEach((tp, info) -> ends.put(Integer.toString(tp.partition()), info.offset()));
                Map<String, Long> commits = new TreeMap<>();
                committed.forEach((tp, om) -> commits.put(Integer.toString(tp.partition()), om.offset()));
                return obj("committed", commits, "end", ends);
            });
        } catch (StepFailed e) {
            status = 1;
        } finally {
            for (Member m : members) {
                m.stop.set(true);
            }
            for (Member m : members) {
                m.thread.join(20_000);
            }
        }
        System.out.flush();
        System.exit(status);
    }

    // -- group helpers -------------------------------------------------------------

    private static Set<Integer> union(List<Member> members) {
        Set<Integer> all = new TreeSet<>();
        for (Member m : members) {
            all.addAll(m.assignment.get());
        }
        return all;
    }

    private static boolean allNonEmpty(List<Member> members) {
        for (Member m : members) {
            if (m.assignment.get().isEmpty()) {
                return false;
            }
        }
        return true;
    }

    private static boolean disjoint(List<Member> members) {
        int total = 0;
        for (Member m : members) {
            total += m.assignment.get().size();
        }
        return total == union(members).size();
    }

    private static Map<String, Object> assignments(List<Member> members) {
        Map<String, Object> out = new TreeMap<>();
        for (Member m : members) {
            out.put(m.name, new ArrayList<>(m.assignment.get()));
        }
        return out;
    }

    private static Set<String> distinct(List<Member> members) {
        Set<String> all = new HashSet<>();
        for (Member m : members) {
            all.addAll(m.seen.keySet());
        }
        return all;
    }

    private static Set<String> values(int from, int count) {
        Set<String> out = new HashSet<>();
        for (int i = from; i < from + count; i++) {
            out.add("v" + i);
        }
        return out;
    }

    private static Map<String, Object> consumedReport(List<Member> members, int from, int count) {
        Map<String, Object> per = new TreeMap<>();
        int duplicates = 0;
        for (Member m : members) {
            int mine = 0;
            for (Map.Entry<String, Integer> e : m.seen.entrySet()) {
                int i = Integer.parseInt(e.getKey().substring(1));
                if (i >= from && i < from + count) {
                    mine++;
                }
                duplicates += e.getValue() - 1;
            }
            per.put(m.name, mine);
        }
        Set<String> wanted = values(from, count);
        Set<String> got = distinct(members);
        got.retainAll(wanted);
        List<String> errors = new ArrayList<>();
        for (Member m : members) {
            errors.addAll(m.errors);
        }
        return obj("distinct", got.size(), "per_member", per, "duplicates", duplicates,
                "errors", errors);
    }

    private static Map<String, Object> commitAll(List<Member> members) throws Exception {
        for (Member m : members) {
            m.committed.set(false);
            m.commitRequested.set(true);
        }
        waitFor(() -> {
            for (Member m : members) {
                if (!m.committed.get()) {
                    return false;
                }
            }
            return true;
        }, "every member's commitSync");
        return obj("committed_by", members.size());
    }

    private static Map<String, Object> describe(Admin admin, String group) throws Exception {
        ConsumerGroupDescription d = admin.describeConsumerGroups(List.of(group))
                .describedGroups().get(group).get(15, TimeUnit.SECONDS);
        Map<String, Object> members = new TreeMap<>();
        for (MemberDescription m : d.members()) {
            List<Integer> parts = new ArrayList<>();
            for (TopicPartition tp : m.assignment().topicPartitions()) {
                parts.add(tp.partition());
            }
            parts.sort(null);
            members.put(m.clientId(), parts);
        }
        return obj("state", String.valueOf(d.state()), "members", members,
                "assignor", d.partitionAssignor());
    }

    private static Map<String, Object> produce(String bootstrap, String topic, int from, int count)
            throws Exception {
        Properties props = common(bootstrap);
        props.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        props.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        props.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, "false");
        props.put(ProducerConfig.ACKS_CONFIG, "all");
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(props)) {
            for (int i = from; i < from + count; i++) {
                producer.send(new ProducerRecord<>(topic, i % PARTITIONS, "k" + i, "v" + i));
            }
            producer.flush();
        }
        return obj("produced", count);
    }

    private interface Check {
        boolean ok() throws Exception;
    }

    private static void waitFor(Check check, String what) throws Exception {
        long deadline = System.currentTimeMillis() + STEP_TIMEOUT_MS;
        while (!check.ok()) {
            if (System.currentTimeMillis() > deadline) {
                throw new IllegalStateException("timed out waiting for " + what);
            }
            Thread.sleep(50);
        }
    }

    // -- configuration -------------------------------------------------------------

    private static Properties common(String bootstrap) {
        Properties props = new Properties();
        props.put("bootstrap.servers", bootstrap);
        props.put("request.timeout.ms", "10000");
        props.put("reconnect.backoff.max.ms", "1000");
        props.put("retry.backoff.max.ms", "1000");
        return props;
    }

    private static Properties adminProps(String bootstrap) {
        Properties props = common(bootstrap);
        props.put(AdminClientConfig.CLIENT_ID_CONFIG, "kcsim-848-admin");
        props.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, "15000");
        return props;
    }

    private static Properties consumerProps(String bootstrap, String group, String clientId) {
        Properties props = common(bootstrap);
        props.put(ConsumerConfig.CLIENT_ID_CONFIG, clientId);
        props.put(ConsumerConfig.GROUP_ID_CONFIG, group);
        props.put(ConsumerConfig.GROUP_PROTOCOL_CONFIG, "consumer");
        props.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
        props.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
        props.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        props.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        props.put(ConsumerConfig.FETCH_MAX_WAIT_MS_CONFIG, "100");
        props.put(ConsumerConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, "15000");
        return props;
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
            Map<String, Object> result = new LinkedHashMap<>();
            result.put("step", name);
            result.putAll(body.call());
            result.put("ms", (System.nanoTime() - start) / 1_000_000);
            System.out.println(json(result));
            System.out.flush();
        } catch (Throwable t) {
            System.out.println(json(obj("step", name, "error", t.toString(),
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
