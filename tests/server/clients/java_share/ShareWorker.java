import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.time.Duration;
import java.util.List;
import java.util.Properties;

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
 * (take the next records and then neither acknowledge nor poll again), "close".
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
                    short delivery = r.deliveryCount().orElse((short) -1);
                    String action = now.equals("release-first")
                        ? (delivery <= 1 ? "release" : "accept") : now;
                    if (action.equals("stall")) {
                        stalled = true;
                    } else if (explicit) {
                        AcknowledgeType type = switch (action) {
                            case "release" -> AcknowledgeType.RELEASE;
                            case "reject" -> AcknowledgeType.REJECT;
                            default -> AcknowledgeType.ACCEPT;
                        };
                        consumer.acknowledge(r, type);
                    } else {
                        action = "implicit";
                    }
                    emit(String.format("{\"offset\":%d,\"delivery\":%d,\"action\":\"%s\"}",
                        r.offset(), delivery, action));
                }
                if (!records.isEmpty() && !stalled) {
                    consumer.commitSync();
                }
            }
        } catch (Exception e) {
            emit("{\"error\":\"" + e.toString().replace("\"", "'") + "\"}");
        }
        emit("{\"closed\":true}");
    }
}
