import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.time.Duration;
import java.util.List;
import java.util.Properties;
import java.util.TreeSet;

import org.apache.kafka.clients.consumer.AcknowledgeType;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaShareConsumer;
import org.apache.kafka.common.serialization.StringDeserializer;

/**
 * One KafkaShareConsumer steered by its stdin, one JSON line per record on its stdout.
 *
 * args: bootstrap group topic mode(implicit|explicit) [key=value ...]
 * stdin lines set what it does with the records it gets: "accept", "release", "reject",
 * "release-first" (release a record on its first delivery, accept it later), "stall"
 * (take the next records and then neither acknowledge nor poll again: "stalled" once the
 * whole batch is printed), "release-then-stall" (release a record on its first delivery,
 * stall on a later one), "close". The acknowledgement commit callback prints the offsets
 * whose acknowledgement the broker answered ("acked"), with the failure if any.
 */
public class ShareWorker {
    static volatile String policy = "accept";
    static volatile boolean closing = false;

    static synchronized void emit(String line) {
        System.out.println(line);
        System.out.flush();
    }

    public static void main(String[] args) throws Exception {
        String bootstrap = args[0], group = args[1], topic = args[2], mode = args[3];
        Properties props = new Properties();
        props.put("bootstrap.servers", bootstrap);
        props.put("group.id", group);
        props.put("share.acknowledgement.mode", mode);
        props.put("key.deserializer", StringDeserializer.class.getName());
        props.put("value.deserializer", StringDeserializer.class.getName());
        for (int i = 4; i < args.length; i++) {
            String[] kv = args[i].split("=", 2);
            props.put(kv[0], kv[1]);
        }
        Thread commands = new Thread(() -> {
            try (BufferedReader in = new BufferedReader(new InputStreamReader(System.in))) {
                String line;
                while ((line = in.readLine()) != null) {
                    line = line.trim();
                    if (line.equals("close")) {
                        break;
                    }
                    if (!line.isEmpty()) {
                        policy = line;
                    }
                }
            } catch (Exception e) {
                emit("{\"error\":\"stdin: " + e + "\"}");
            }
            closing = true;
        });
        commands.setDaemon(true);
        commands.start();
        boolean explicit = mode.equals("explicit");
        try (KafkaShareConsumer<String, String> consumer = new KafkaShareConsumer<>(props)) {
            consumer.setAcknowledgementCommitCallback((offsets, exception) -> {
                TreeSet<Long> done = new TreeSet<>();
                offsets.values().forEach(done::addAll);
                String failed = exception == null ? "null"
                    : "\"" + exception.toString().replace("\"", "'") + "\"";
                emit("{\"acked\":" + done.toString().replace(" ", "") + ",\"failed\":" + failed + "}");
            });
            consumer.subscribe(List.of(topic));
            emit("{\"state\":\"subscribed\"}");
            boolean stalled = false;
            while (!closing) {
                if (stalled) {
                    Thread.sleep(20);
                    continue;
                }
                ConsumerRecords<String, String> records = consumer.poll(Duration.ofMillis(100));
                String now = policy;  // read after the poll: what the test said before producing
                for (ConsumerRecord<String, String> r : records) {
                    stalled |= action(now, r.deliveryCount().orElse((short) -1)).equals("stall");
                }
                for (ConsumerRecord<String, String> r : records) {
                    short delivery = r.deliveryCount().orElse((short) -1);
                    String action = stalled ? "stall" : action(now, delivery);  // stall: held
                    if (!stalled && explicit) {
                        AcknowledgeType type = switch (action) {
                            case "release" -> AcknowledgeType.RELEASE;
                            case "reject" -> AcknowledgeType.REJECT;
                            default -> AcknowledgeType.ACCEPT;
                        };
                        consumer.acknowledge(r, type);
                    } else if (!stalled) {
                        action = "implicit";
                    }
                    emit(String.format("{\"offset\":%d,\"delivery\":%d,\"action\":\"%s\"}",
                        r.offset(), delivery, action));
                }
                if (stalled) {
                    emit("{\"stalled\":true}");
                } else if (!records.isEmpty()) {
                    consumer.commitSync();
                }
            }
        } catch (Exception e) {
            emit("{\"error\":\"" + e.toString().replace("\"", "'") + "\"}");
        }
        emit("{\"closed\":true}");
    }

    /** What `policy` does with a record on its `delivery`-th delivery. */
    static String action(String policy, short delivery) {
        return switch (policy) {
            case "release-first" -> delivery <= 1 ? "release" : "accept";
            case "release-then-stall" -> delivery <= 1 ? "release" : "stall";
            default -> policy;
        };
    }
}
