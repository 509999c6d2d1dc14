import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.Callable;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.FutureTask;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.AlterConsumerGroupOffsetsResult;
import org.apache.kafka.clients.admin.ConsumerGroupDescription;
import org.apache.kafka.clients.admin.ConsumerGroupListing;
import org.apache.kafka.clients.admin.DeleteConsumerGroupOffsetsResult;
import org.apache.kafka.clients.admin.ListConsumerGroupOffsetsSpec;
import org.apache.kafka.clients.admin.ListConsumerGroupsOptions;
import org.apache.kafka.clients.admin.MemberDescription;
import org.apache.kafka.clients.admin.MemberToRemove;
import org.apache.kafka.clients.admin.RemoveMembersFromConsumerGroupOptions;
import org.apache.kafka.clients.admin.RemoveMembersFromConsumerGroupResult;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerGroupMetadata;
import org.apache.kafka.clients.consumer.ConsumerRebalanceListener;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.CooperativeStickyAssignor;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.consumer.RangeAssignor;
import org.apache.kafka.common.ConsumerGroupState;
import org.apache.kafka.common.KafkaFuture;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringDeserializer;

/**
 * Consumers in groups and group Admin calls of the Java client, driven over stdin/stdout.
 *
 * Each input line is a command of space-separated words; each answer is one JSON
 * object on one line: {"ok": true, ...} or {"ok": false, "error": CLASS, "message": ...}.
 *
 * Consumers (each polls on its own thread; commands on it run between polls):
 *   consumer NAME GROUP TOPIC INSTANCE_ID|- SESSION_MS [range|cooperative-sticky|-]
 *   state NAME          assignment, records, rebalance callbacks, generation, member id
 *   commit NAME [P:OFFSET:METADATA ...]   commitSync of the positions, or of the given offsets
 *   committed NAME TOPIC P [P ...]
 *   close NAME
 * Admin:
 *   list-groups [STATE ...]                 only groups in these states (KIP-518)
 *   describe GROUP
 *   offsets GROUP [GROUP ...]             one listConsumerGroupOffsets call for all groups
 *   alter GROUP TOPIC P:OFFSET [...]
 *   delete-offsets GROUP TOPIC P [...]
 *   delete-groups GROUP [GROUP ...]
 *   remove-members GROUP [INSTANCE_ID ...]  static members by instance id; none: every member
 *   exit
 *
 * Usage: GroupDriver BOOTSTRAP
 */
public final class GroupDriver {
    private static final long CALL_TIMEOUT_S = 20;

    private final String bootstrap;
    private final Admin admin;
    private final Map<String, Member> members = new HashMap<>();

    private GroupDriver(String bootstrap) {
        this.bootstrap = bootstrap;
        Properties props = common(bootstrap, "kcsim-java-group-admin");
        props.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, "15000");
        this.admin = Admin.create(props);
    }

    public static void main(String[] args) throws Exception {
        GroupDriver driver = new GroupDriver(args[0]);
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        String line;
        while ((line = in.readLine()) != null) {
            line = line.trim();
            if (line.isEmpty()) {
                continue;
            }
            String[] words = line.split(" ");
            if (words[0].equals("exit")) {
                break;
            }
            Map<String, Object> answer;
            try {
                answer = new LinkedHashMap<>();
                answer.put("ok", true);
                answer.putAll(driver.execute(words));
            } catch (Throwable t) {
                Throwable root = t;
                while ((root instanceof ExecutionException || root instanceof java.util.concurrent.CompletionException)
                        && root.getCause() != null) {
                    root = root.getCause();
                }
                answer = obj("ok", false, "error", root.getClass().getSimpleName(),
                        "message", String.valueOf(root.getMessage()), "trace", t.toString());
            }
            System.out.println(json(answer));
            System.out.flush();
        }
        driver.shutdown();
        System.exit(0);
    }

    private void shutdown() {
        for (Member m : members.values()) {
            m.stop();
        }
        admin.close(Duration.ofSeconds(5));
    }

    private Map<String, Object> execute(String[] w) throws Exception {
        switch (w[0]) {
            case "consumer": {
                String instance = w[4].equals("-") ? null : w[4];
                String assignor = w.length > 6 && !w[6].equals("-") ? w[6] : null;
                Member m = new Member(w[1], w[2], w[3], instance, Integer.parseInt(w[5]), assignor);
                members.put(w[1], m);
                m.start();
                return obj();
            }
            case "state":
                return member(w[1]).state();
            case "commit": {
                Member m = member(w[1]);
                Map<TopicPartition, OffsetAndMetadata> offsets = new HashMap<>();
                for (int i = 2; i < w.length; i++) {
                    String[] parts = w[i].split(":", 3);
                    offsets.put(new TopicPartition(m.topic, Integer.parseInt(parts[0])),
                            new OffsetAndMetadata(Long.parseLong(parts[1]), parts.length > 2 ? parts[2] : ""));
                }
                return m.call(c -> {
                    if (offsets.isEmpty()) {
                        c.commitSync(Duration.ofSeconds(CALL_TIMEOUT_S));
                    } else {
                        c.commitSync(offsets, Duration.ofSeconds(CALL_TIMEOUT_S));
                    }
                    return obj();
                });
            }
            case "committed": {
                Member m = member(w[1]);
                Set<TopicPartition> tps = new HashSet<>();
                for (int i = 3; i < w.length; i++) {
                    tps.add(new TopicPartition(w[2], Integer.parseInt(w[i])));
                }
                return m.call(c -> obj("offsets", offsetsJson(c.committed(tps, Duration.ofSeconds(CALL_TIMEOUT_S)))));
            }
            case "close": {
                Member m = members.remove(w[1]);
                if (m == null) {
                    throw new IllegalArgumentException("no consumer " + w[1]);
                }
                m.stop();
                return obj("error", m.failure);
            }
            case "list-groups": {
                ListConsumerGroupsOptions options = new ListConsumerGroupsOptions();
                if (w.length > 1) {
                    Set<ConsumerGroupState> states = new HashSet<>();
                    for (int i = 1; i < w.length; i++) {
                        states.add(ConsumerGroupState.parse(w[i]));
                    }
                    options.inStates(states);
                }
                Map<String, Object> groups = new TreeMap<>();
                for (ConsumerGroupListing g : admin.listConsumerGroups(options).all().get(CALL_TIMEOUT_S, TimeUnit.SECONDS)) {
                    groups.put(g.groupId(), g.state().map(Object::toString).orElse(null));
                }
                return obj("groups", groups);
            }
            case "describe": {
                ConsumerGroupDescription d = admin.describeConsumerGroups(List.of(w[1]))
                        .describedGroups().get(w[1]).get(CALL_TIMEOUT_S, TimeUnit.SECONDS);
                List<Object> list = new ArrayList<>();
                for (MemberDescription md : d.members()) {
                    List<Object> assigned = new ArrayList<>();
                    for (TopicPartition tp : md.assignment().topicPartitions()) {
                        assigned.add(List.of(tp.topic(), tp.partition()));
                    }
                    list.add(obj("member_id", md.consumerId(), "instance_id", md.groupInstanceId().orElse(null),
                            "client_id", md.clientId(), "host", md.host(), "assignment", assigned));
                }
                return obj("state", d.state().toString(), "assignor", d.partitionAssignor(),
                        "simple", d.isSimpleConsumerGroup(), "members", list,
                        "coordinator", d.coordinator() == null ? null : d.coordinator().id());
            }
            case "offsets": {
                Map<String, ListConsumerGroupOffsetsSpec> specs = new LinkedHashMap<>();
                for (int i = 1; i < w.length; i++) {
                    specs.put(w[i], new ListConsumerGroupOffsetsSpec());
                }
                Map<String, Map<TopicPartition, OffsetAndMetadata>> all = admin.listConsumerGroupOffsets(specs)
                        .all().get(CALL_TIMEOUT_S, TimeUnit.SECONDS);
                Map<String, Object> groups = new TreeMap<>();
                for (Map.Entry<String, Map<TopicPartition, OffsetAndMetadata>> e : all.entrySet()) {
                    groups.put(e.getKey(), offsetsJson(e.getValue()));
                }
                return obj("groups", groups);
            }
            case "alter": {
                Map<TopicPartition, OffsetAndMetadata> offsets = new HashMap<>();
                for (int i = 3; i < w.length; i++) {
                    String[] parts = w[i].split(":", 2);
                    offsets.put(new TopicPartition(w[2], Integer.parseInt(parts[0])),
                            new OffsetAndMetadata(Long.parseLong(parts[1])));
                }
                AlterConsumerGroupOffsetsResult result = admin.alterConsumerGroupOffsets(w[1], offsets);
                Map<String, Object> partitions = new TreeMap<>();
                for (TopicPartition tp : offsets.keySet()) {
                    partitions.put(Integer.toString(tp.partition()), errorOf(result.partitionResult(tp)));
                }
                return obj("partitions", partitions);
            }
            case "delete-offsets": {
                Set<TopicPartition> tps = new HashSet<>();
                for (int i = 3; i < w.length; i++) {
                    tps.add(new TopicPartition(w[2], Integer.parseInt(w[i])));
                }
                DeleteConsumerGroupOffsetsResult result = admin.deleteConsumerGroupOffsets(w[1], tps);
                Map<String, Object> partitions = new TreeMap<>();
                for (TopicPartition tp : tps) {
                    partitions.put(Integer.toString(tp.partition()), errorOf(result.partitionResult(tp)));
                }
                return obj("partitions", partitions, "all", errorOf(result.all()));
            }
            case "delete-groups": {
                Map<String, KafkaFuture<Void>> deleted = admin.deleteConsumerGroups(
                        Arrays.asList(w).subList(1, w.length)).deletedGroups();
                Map<String, Object> groups = new TreeMap<>();
                for (Map.Entry<String, KafkaFuture<Void>> e : deleted.entrySet()) {
                    groups.put(e.getKey(), errorOf(e.getValue()));
                }
                return obj("groups", groups);
            }
            case "remove-members": {
                List<MemberToRemove> remove = new ArrayList<>();
                for (int i = 2; i < w.length; i++) {
                    remove.add(new MemberToRemove(w[i]));
                }
                RemoveMembersFromConsumerGroupOptions options = remove.isEmpty()
                        ? new RemoveMembersFromConsumerGroupOptions()
                        : new RemoveMembersFromConsumerGroupOptions(remove);
                RemoveMembersFromConsumerGroupResult result = admin.removeMembersFromConsumerGroup(w[1], options);
                Map<String, Object> members = new TreeMap<>();
                for (MemberToRemove m : remove) {
                    members.put(m.groupInstanceId(), errorOf(result.memberResult(m)));
                }
                return obj("members", members, "all", errorOf(result.all()));
            }
            default:
                throw new IllegalArgumentException("unknown command " + w[0]);
        }
    }

    private Member member(String name) {
        Member m = members.get(name);
        if (m == null) {
            throw new IllegalArgumentException("no consumer " + name);
        }
        return m;
    }

    /** The simple class name of the failure of a future, or null when it succeeded. */
    private static String errorOf(KafkaFuture<?> future) throws InterruptedException {
        try {
            future.get(CALL_TIMEOUT_S, TimeUnit.SECONDS);
            return null;
        } catch (ExecutionException e) {
            return e.getCause().getClass().getSimpleName();
        } catch (java.util.concurrent.TimeoutException e) {
            return "TimeoutException";
        }
    }

    private static Map<String, Object> offsetsJson(Map<TopicPartition, OffsetAndMetadata> offsets) {
        Map<String, Object> out = new TreeMap<>();
        for (Map.Entry<TopicPartition, OffsetAndMetadata> e : offsets.entrySet()) {
            OffsetAndMetadata om = e.getValue();
            out.put(e.getKey().topic() + ":" + e.getKey().partition(),
                    om == null ? null : obj("offset", om.offset(), "metadata", om.metadata()));
        }
        return out;
    }

    private interface ConsumerCall {
        Map<String, Object> apply(KafkaConsumer<String, String> consumer) throws Exception;
    }

    /** One KafkaConsumer polling on its own thread. */
    private final class Member implements ConsumerRebalanceListener {
        final String name;
        final String topic;
        final KafkaConsumer<String, String> consumer;
        final ConcurrentLinkedQueue<FutureTask<Map<String, Object>>> tasks = new ConcurrentLinkedQueue<>();
        final List<List<Object>> records = new ArrayList<>();
        final Thread thread;
        volatile boolean closing;
        volatile String failure;
        volatile Map<String, Object> snapshot = obj("assignment", List.of(), "records", List.of(),
                "assigned_events", 0, "revoked_events", 0, "generation", -1, "member_id", "");
        int assignedEvents;
        int revokedEvents;

        Member(String name, String group, String topic, String instanceId, int sessionMs,
               String assignor) {
            this.name = name;
            this.topic = topic;
            Properties props = common(bootstrap, "kcsim-java-" + name);
            props.put(ConsumerConfig.GROUP_ID_CONFIG, group);
            if (instanceId != null) {
                props.put(ConsumerConfig.GROUP_INSTANCE_ID_CONFIG, instanceId);
            }
            props.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
            props.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
            props.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
            props.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
            props.put(ConsumerConfig.SESSION_TIMEOUT_MS_CONFIG, Integer.toString(sessionMs));
            props.put(ConsumerConfig.HEARTBEAT_INTERVAL_MS_CONFIG, "200");
            props.put(ConsumerConfig.MAX_POLL_INTERVAL_MS_CONFIG, "30000");
            props.put(ConsumerConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, "15000");
            props.put(ConsumerConfig.FETCH_MAX_WAIT_MS_CONFIG, "100");
            if (assignor != null) {
                Map<String, String> assignors = Map.of("range", RangeAssignor.class.getName(),
                        "cooperative-sticky", CooperativeStickyAssignor.class.getName());
                props.put(ConsumerConfig.PARTITION_ASSIGNMENT_STRATEGY_CONFIG, assignors.get(assignor));
            }
            this.consumer = new KafkaConsumer<>(props);
            this.thread = new Thread(this::run, "consumer-" + name);
            this.thread.setDaemon(true);
        }

        void start() {
            thread.start();
        }

        void run() {
            try {
                consumer.subscribe(List.of(topic), this);
                while (!closing) {
                    FutureTask<Map<String, Object>> task;
                    while ((task = tasks.poll()) != null) {
                        task.run();
                    }
                    for (ConsumerRecord<String, String> r : consumer.poll(Duration.ofMillis(50))) {
                        records.add(List.of(r.partition(), r.offset(), r.key() == null ? "" : r.key()));
                    }
                    publish();
                }
            } catch (Throwable t) {
                failure = t.toString();
            } finally {
                FutureTask<Map<String, Object>> task;
                while ((task = tasks.poll()) != null) {
                    task.cancel(false);
                }
                try {
                    consumer.close(Duration.ofSeconds(5));
                } catch (Throwable t) {
                    if (failure == null) {
                        failure = "close: " + t;
                    }
                }
            }
        }

        void publish() {
            List<Integer> assigned = new ArrayList<>();
            for (TopicPartition tp : consumer.assignment()) {
                assigned.add(tp.partition());
            }
            assigned.sort(null);
            ConsumerGroupMetadata meta = consumer.groupMetadata();
            snapshot = obj("assignment", assigned, "records", new ArrayList<>(records),
                    "assigned_events", assignedEvents, "revoked_events", revokedEvents,
                    "generation", meta.generationId(), "member_id", meta.memberId());
        }

        Map<String, Object> state() {
            Map<String, Object> s = new LinkedHashMap<>(snapshot);
            s.put("error", failure);
            return s;
        }

        Map<String, Object> call(ConsumerCall body) throws Exception {
            FutureTask<Map<String, Object>> task = new FutureTask<>(() -> body.apply(consumer));
            tasks.add(task);
            if (!thread.isAlive()) {
                throw new IllegalStateException("consumer " + name + " stopped: " + failure);
            }
            return task.get(CALL_TIMEOUT_S + 5, TimeUnit.SECONDS);
        }

        void stop() {
            closing = true;
            try {
                thread.join(15000);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }

        @Override
        public void onPartitionsAssigned(Collection<TopicPartition> partitions) {
            assignedEvents++;
        }

        @Override
        public void onPartitionsRevoked(Collection<TopicPartition> partitions) {
            revokedEvents++;
        }
    }

    private static Properties common(String bootstrap, String clientId) {
        Properties props = new Properties();
        props.put("bootstrap.servers", bootstrap);
        props.put("client.id", clientId);
        props.put("request.timeout.ms", "10000");
        props.put("socket.connection.setup.timeout.ms", "3000");
        props.put("socket.connection.setup.timeout.max.ms", "5000");
        props.put("reconnect.backoff.max.ms", "1000");
        props.put("retry.backoff.max.ms", "1000");
        return props;
    }

    // -- JSON ----------------------------------------------------------------------

    private static Map<String, Object> obj(Object... kv) {
        return Json.obj(kv);
    }

    private static String json(Object v) {
        return Json.json(v);
    }
}
