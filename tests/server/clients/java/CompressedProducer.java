import java.util.Collections;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.TimeUnit;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.serialization.StringSerializer;

/**
 * For each compression type given, create a one-partition topic named after it and
 * produce MESSAGES records (key "k<i>", value "<type>-<i>" repeated, header "i") in
 * batches of that type. Prints one line per record: topic, offset, key.
 *
 * Usage: CompressedProducer BOOTSTRAP MESSAGES TYPE...
 */
public final class CompressedProducer {
    public static void main(String[] args) throws Exception {
        String bootstrap = args[0];
        int messages = Integer.parseInt(args[1]);
        List<String> types = List.of(args).subList(2, args.length);
        Properties admin = new Properties();
        admin.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        try (Admin client = Admin.create(admin)) {
            for (String type : types) {
                client.createTopics(Collections.singleton(new NewTopic("java-" + type, 1, (short) 1)))
                        .all().get(30, TimeUnit.SECONDS);
            }
        }
        for (String type : types) {
            Properties props = new Properties();
            props.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
            props.put(ProducerConfig.COMPRESSION_TYPE_CONFIG, type);
            props.put(ProducerConfig.LINGER_MS_CONFIG, 50);
            props.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
            props.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
            try (KafkaProducer<String, String> producer = new KafkaProducer<>(props)) {
                List<java.util.concurrent.Future<RecordMetadata>> sent = new java.util.ArrayList<>();
                for (int i = 0; i < messages; i++) {
                    ProducerRecord<String, String> record = new ProducerRecord<>(
                            "java-" + type, 0, "k" + i, (type + "-" + i + ";").repeat(20));
                    record.headers().add("i", Integer.toString(i).getBytes());
                    sent.add(producer.send(record));
                }
                producer.flush();
                for (int i = 0; i < messages; i++) {
                    RecordMetadata m = sent.get(i).get(30, TimeUnit.SECONDS);
                    System.out.println(m.topic() + " " + m.offset() + " k" + i);
                }
            }
        }
    }
}
