import java.io.FileInputStream;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Properties;

import org.apache.kafka.clients.CommonClientConfigs;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;

/**
 * Produce MESSAGES records, then consume them in GROUP and commit, with the client
 * settings of a properties file (security.protocol, ssl.*). Prints one JSON object
 * per step; a failing step exits with status 1.
 *
 * Usage: SecureClient BOOTSTRAP PROPERTIES_FILE TOPIC GROUP MESSAGES
 */
public final class SecureClient {
    public static void main(String[] args) throws Exception {
        Properties common = new Properties();
        try (FileInputStream in = new FileInputStream(args[1])) {
            common.load(in);
        }
        common.put(CommonClientConfigs.BOOTSTRAP_SERVERS_CONFIG, args[0]);
        String topic = args[2];
        String group = args[3];
        int messages = Integer.parseInt(args[4]);
        try {
            Properties p = new Properties();
            p.putAll(common);
            p.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
            p.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
            try (KafkaProducer<String, String> producer = new KafkaProducer<>(p)) {
                for (int i = 0; i < messages; i++) {
                    producer.send(new ProducerRecord<>(topic, "k" + i, "v" + i)).get();
                }
            }
            System.out.println("{\"step\": \"produce\", \"sent\": " + messages + "}");
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
                    ConsumerRecords<String, String> records = consumer.poll(Duration.ofMillis(200));
                    seen += records.count();
                }
                consumer.commitSync();
                Map<TopicPartition, OffsetAndMetadata> committed =
                        consumer.committed(consumer.assignment());
                long total = 0;
                for (OffsetAndMetadata o : committed.values()) {
                    total += o == null ? 0 : o.offset();
                }
                System.out.println("{\"step\": \"consume\", \"seen\": " + seen
                        + ", \"committed\": " + total + "}");
            }
        } catch (Exception e) {
            String message = describe(e).replace("\\", "\\\\").replace("\"", "\\\"");
            System.out.println("{\"step\": \"error\", \"error\": \"" + message + "\"}");
            System.exit(1);
        }
    }

    /** The exception and its causes, which say why (a refused login, a bad setting). */
    static String describe(Throwable e) {
        StringBuilder text = new StringBuilder(String.valueOf(e));
        for (Throwable cause = e.getCause(); cause != null; cause = cause.getCause()) {
            text.append(" <- ").append(cause);
        }
        return text.toString();
    }
}
