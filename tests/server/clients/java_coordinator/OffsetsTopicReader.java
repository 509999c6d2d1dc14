import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;

import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.protocol.ApiMessage;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.coordinator.common.runtime.CoordinatorRecord;
import org.apache.kafka.coordinator.group.GroupCoordinatorRecordSerde;

/**
 * Reads __consumer_offsets from the beginning to its end offsets with a plain consumer and
 * decodes every record with Kafka's own GroupCoordinatorRecordSerde; prints one JSON line per
 * record (partition, offset, timestamp, record type, key and value as Kafka's generated JSON
 * converters show them), then a summary line.
 *
 * The KIP-1249 paused-partitions record has no Kafka type: Kafka's serde refuses its type id
 * (asserted here), and the record is decoded by hand from the KIP's schema instead.
 *
 * Usage: OffsetsTopicReader BOOTSTRAP PAUSED_TYPE_ID
 */
public final class OffsetsTopicReader {
    private static final String TOPIC = "__consumer_offsets";
    private static final ObjectMapper JSON = new ObjectMapper();

    public static void main(String[] args) throws Exception {
        String bootstrap = args[0];
        short pausedType = Short.parseShort(args[1]);
        Properties props = new Properties();
        props.put("bootstrap.servers", bootstrap);
        props.put("key.deserializer", ByteArrayDeserializer.class.getName());
        props.put("value.deserializer", ByteArrayDeserializer.class.getName());
        props.put("enable.auto.commit", "false");
        props.put("auto.offset.reset", "earliest");
        GroupCoordinatorRecordSerde serde = new GroupCoordinatorRecordSerde();
        int records = 0;
        int unknownRefused = 0;
        try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(props)) {
            List<TopicPartition> partitions = new ArrayList<>();
            for (PartitionInfo info : consumer.partitionsFor(TOPIC, Duration.ofSeconds(30))) {
                partitions.add(new TopicPartition(TOPIC, info.partition()));
            }
            consumer.assign(partitions);
            consumer.seekToBeginning(partitions);
            Map<TopicPartition, Long> end = consumer.endOffsets(partitions, Duration.ofSeconds(30));
            long deadline = System.currentTimeMillis() + 60_000;
            while (!caughtUp(consumer, end)) {
                if (System.currentTimeMillis() > deadline) {
                    throw new IllegalStateException("did not reach the end offsets " + end);
                }
                for (ConsumerRecord<byte[], byte[]> r : consumer.poll(Duration.ofMillis(500))) {
                    ObjectNode line = JsonNodeFactory.instance.objectNode();
                    line.put("partition", r.partition());
                    line.put("offset", r.offset());
                    line.put("timestamp", r.timestamp());
                    short type = ByteBuffer.wrap(r.key()).getShort();
                    line.put("type", type);
                    if (type == pausedType) {
                        try {
                            serde.deserialize(ByteBuffer.wrap(r.key()),
                                r.value() == null ? null : ByteBuffer.wrap(r.value()));
                            throw new IllegalStateException("Kafka's serde accepted type " + type);
                        } catch (RuntimeException expected) {
                            if (expected instanceof IllegalStateException) throw expected;
                            unknownRefused++;
                        }
                        line.set("key", pausedKey(r.key()));
                        line.set("value", r.value() == null ? null : pausedValue(r.value()));
                    } else {
                        CoordinatorRecord rec = serde.deserialize(ByteBuffer.wrap(r.key()),
                            r.value() == null ? null : ByteBuffer.wrap(r.value()));
                        line.put("key_type", rec.key().getClass().getSimpleName());
                        line.set("key", toJson(rec.key(), (short) 0));
                        if (rec.value() == null) {
                            line.putNull("value");
                        } else {
                            line.put("value_version", rec.value().version());
                            line.set("value", toJson(rec.value().message(), rec.value().version()));
                        }
                    }
                    System.out.println(JSON.writeValueAsString(line));
                    records++;
                }
            }
        }
        ObjectNode summary = JsonNodeFactory.instance.objectNode();
        summary.put("records", records);
        summary.put("paused_refused_by_kafka_serde", unknownRefused);
        System.out.println(JSON.writeValueAsString(summary));
    }

    private static boolean caughtUp(KafkaConsumer<byte[], byte[]> consumer,
                                    Map<TopicPartition, Long> end) {
        for (Map.Entry<TopicPartition, Long> e : end.entrySet()) {
            if (consumer.position(e.getKey()) < e.getValue()) return false;
        }
        return true;
    }

    /** The generated JSON converter of a Kafka message: what Kafka's own tools print. */
    private static JsonNode toJson(ApiMessage message, short version) throws Exception {
        Class<?> converter = Class.forName(message.getClass().getName() + "JsonConverter");
        return (JsonNode) converter.getMethod("write", message.getClass(), short.class)
            .invoke(null, message, version);
    }

    /** PausedTopicPartitionsKey v0: int16 type, then GroupId as an int16-length string. */
    private static JsonNode pausedKey(byte[] key) {
        ByteBuffer buf = ByteBuffer.wrap(key);
        buf.getShort();
        ObjectNode node = JsonNodeFactory.instance.objectNode();
        node.put("groupId", classicString(buf));
        if (buf.hasRemaining()) throw new IllegalStateException("bytes after the paused key");
        return node;
    }

    /** PausedTopicPartitionsValue v0 (flexible): [TopicId uuid, Partitions []int32], tags. */
    private static JsonNode pausedValue(byte[] value) {
        ByteBuffer buf = ByteBuffer.wrap(value);
        short version = buf.getShort();
        if (version != 0) throw new IllegalStateException("paused value version " + version);
        ArrayNode topics = JsonNodeFactory.instance.arrayNode();
        int count = unsignedVarint(buf) - 1;
        for (int i = 0; i < count; i++) {
            ObjectNode topic = JsonNodeFactory.instance.objectNode();
            topic.put("topicId", new Uuid(buf.getLong(), buf.getLong()).toString());
            ArrayNode parts = JsonNodeFactory.instance.arrayNode();
            int n = unsignedVarint(buf) - 1;
            for (int j = 0; j < n; j++) parts.add(buf.getInt());
            topic.set("partitions", parts);
            skipTags(buf);
            topics.add(topic);
        }
        skipTags(buf);
        if (buf.hasRemaining()) throw new IllegalStateException("bytes after the paused value");
        ObjectNode node = JsonNodeFactory.instance.objectNode();
        node.set("pausedTopicPartitions", topics);
        return node;
    }

    private static String classicString(ByteBuffer buf) {
        byte[] bytes = new byte[buf.getShort()];
        buf.get(bytes);
        return new String(bytes, StandardCharsets.UTF_8);
    }

    private static void skipTags(ByteBuffer buf) {
        int tags = unsignedVarint(buf);
        for (int i = 0; i < tags; i++) {
            unsignedVarint(buf);
            buf.position(buf.position() + unsignedVarint(buf));
        }
    }

    private static int unsignedVarint(ByteBuffer buf) {
        int value = 0;
        for (int shift = 0; ; shift += 7) {
            byte b = buf.get();
            value |= (b & 0x7f) << shift;
            if ((b & 0x80) == 0) return value;
        }
    }
}
