import java.io.FileInputStream;
import java.util.Properties;

import org.apache.kafka.clients.CommonClientConfigs;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.StringSerializer;

/**
 * One producer that keeps its connections for SECONDS, sending a record every 100 ms, with
 * the client settings of a properties file: long enough for its SASL session to expire
 * several times, so it must re-authenticate (KIP-368) to go on. Prints one JSON object;
 * a failing send exits with status 1.
 *
 * Usage: LongSession BOOTSTRAP PROPERTIES_FILE TOPIC SECONDS
 */
public final class LongSession {
    public static void main(String[] args) throws Exception {
        Properties p = new Properties();
        try (FileInputStream in = new FileInputStream(args[1])) {
            p.load(in);
        }
        p.put(CommonClientConfigs.BOOTSTRAP_SERVERS_CONFIG, args[0]);
        p.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        p.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        long end = System.currentTimeMillis() + 1000L * Integer.parseInt(args[3]);
        int sent = 0;
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(p)) {
            while (System.currentTimeMillis() < end) {
                producer.send(new ProducerRecord<>(args[2], "k", "v" + sent)).get();
                sent++;
                Thread.sleep(100);
            }
        } catch (Exception e) {
            String message = SecureClient.describe(e).replace("\\", "\\\\").replace("\"", "\\\"");
            System.out.println("{\"error\": \"" + message + "\", \"sent\": " + sent + "}");
            System.exit(1);
        }
        System.out.println("{\"sent\": " + sent + "}");
    }
}
