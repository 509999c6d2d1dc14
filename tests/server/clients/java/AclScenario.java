import java.io.FileInputStream;
import java.time.Duration;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.ExecutionException;

import org.apache.kafka.clients.CommonClientConfigs;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.acl.AccessControlEntry;
import org.apache.kafka.common.acl.AclBinding;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.acl.AclPermissionType;
import org.apache.kafka.common.resource.PatternType;
import org.apache.kafka.common.resource.ResourcePattern;
import org.apache.kafka.common.resource.ResourceType;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;

/**
 * ACL scenarios as a user (USER_PROPERTIES) whom a super user (ADMIN_PROPERTIES) grants
 * rights through the Admin API (CreateAcls). Prints one JSON object per step: its name and
 * the outcome ("ok", or the simple class name of the exception the client raised).
 *
 * Usage: AclScenario BOOTSTRAP ADMIN_PROPERTIES USER_PROPERTIES USER TOPIC GROUP MESSAGES
 */
public final class AclScenario {
    private static Properties common;

    public static void main(String[] args) throws Exception {
        common = load(args[2]);
        common.put(CommonClientConfigs.BOOTSTRAP_SERVERS_CONFIG, args[0]);
        Properties adminProps = load(args[1]);
        adminProps.put(CommonClientConfigs.BOOTSTRAP_SERVERS_CONFIG, args[0]);
        String principal = "User:" + args[3];
        String topic = args[4];
        String group = args[5];
        int messages = Integer.parseInt(args[6]);
        try (Admin admin = Admin.create(adminProps)) {
            step("consume-without-group-read", () -> consume(topic, group, messages));
            grant(admin, ResourceType.GROUP, group, PatternType.LITERAL, principal,
                  AclOperation.READ, AclPermissionType.ALLOW);
            step("consume-with-group-read", () -> consume(topic, group, messages));
            step("produce-without-write", () -> produce(topic, null));
            step("transactional-without-write-on-id", () -> produce(topic, "acl-txn"));
            grant(admin, ResourceType.TOPIC, "family-", PatternType.PREFIXED, principal,
                  AclOperation.WRITE, AclPermissionType.ALLOW);
            step("produce-prefixed-a", () -> produce("family-a", null));
            step("produce-prefixed-b", () -> produce("family-b", null));
            grant(admin, ResourceType.TOPIC, "family-b", PatternType.LITERAL, principal,
                  AclOperation.WRITE, AclPermissionType.DENY);
            step("produce-denied-b", () -> produce("family-b", null));
            step("produce-still-a", () -> produce("family-a", null));
        }
    }

    interface Step {
        String run() throws Exception;
    }

    private static void step(String name, Step step) {
        String outcome;
        try {
            outcome = step.run();
        } catch (Exception e) {
            Throwable cause = e instanceof ExecutionException && e.getCause() != null ? e.getCause() : e;
            outcome = cause.getClass().getSimpleName();
        }
        System.out.println("{\"step\": \"" + name + "\", \"outcome\": \"" + outcome + "\"}");
    }

    private static void grant(Admin admin, ResourceType type, String name, PatternType pattern,
                              String principal, AclOperation operation,
                              AclPermissionType permission) throws Exception {
        admin.createAcls(List.of(new AclBinding(new ResourcePattern(type, name, pattern),
                new AccessControlEntry(principal, "*", operation, permission)))).all().get();
        System.out.println("{\"step\": \"grant " + permission + " " + operation + " " + type
                + " " + name + "\", \"outcome\": \"ok\"}");
    }

    private static String consume(String topic, String group, int messages) {
        Properties c = new Properties();
        c.putAll(common);
        c.put(ConsumerConfig.GROUP_ID_CONFIG, group);
        c.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        c.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        c.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
        c.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
        try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(c)) {
            consumer.subscribe(List.of(topic));
            int seen = 0;
            long deadline = System.currentTimeMillis() + 30_000;
            while (seen < messages && System.currentTimeMillis() < deadline) {
                seen += consumer.poll(Duration.ofMillis(200)).count();
            }
            consumer.commitSync();
            return seen == messages ? "ok" : "saw " + seen;
        }
    }

    private static String produce(String topic, String transactionalId) throws Exception {
        Properties p = new Properties();
        p.putAll(common);
        p.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        p.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        p.put(ProducerConfig.MAX_BLOCK_MS_CONFIG, "15000");
        p.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, "15000");
        p.put(ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG, "10000");
        if (transactionalId != null) {
            p.put(ProducerConfig.TRANSACTIONAL_ID_CONFIG, transactionalId);
        }
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(p)) {
            if (transactionalId != null) {
                producer.initTransactions();
                producer.beginTransaction();
            }
            producer.send(new ProducerRecord<>(topic, "k", "v")).get();
            if (transactionalId != null) {
                producer.commitTransaction();
            }
            return "ok";
        }
    }

    private static Properties load(String path) throws Exception {
        Properties props = new Properties();
        try (FileInputStream in = new FileInputStream(path)) {
            props.load(in);
        }
        return props;
    }
}
