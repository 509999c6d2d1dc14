import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.TimeUnit;

import org.apache.kafka.clients.admin.AbortTransactionSpec;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.LogDirDescription;
import org.apache.kafka.clients.admin.ProducerState;
import org.apache.kafka.clients.admin.RecordsToDelete;
import org.apache.kafka.clients.admin.ReplicaInfo;
import org.apache.kafka.common.TopicPartition;

/**
 * The Admin calls on a partition's log, one per mode; each prints what it saw, one fact a line.
 *
 *   abort BOOTSTRAP TOPIC
 *     aborts every open transaction of partition 0 as kafka-transactions does
 *     (describeProducers, then abortTransaction): "aborted <producer id>" for each.
 *   logdirs BOOTSTRAP TOPIC
 *     describeLogDirs of node 1: "<log dir> <partition> <size> <offset lag>" for TOPIC's.
 *   delete BOOTSTRAP TOPIC OFFSET
 *     deleteRecords of partition 0 before OFFSET: "low <low watermark>" or "failed <exception>".
 */
public final class LogAdmin {
    public static void main(String[] args) throws Exception {
        Properties props = new Properties();
        props.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, args[1]);
        try (Admin admin = Admin.create(props)) {
            switch (args[0]) {
                case "abort" -> abort(admin, new TopicPartition(args[2], 0));
                case "logdirs" -> logDirs(admin, args[2]);
                case "delete" -> delete(admin, new TopicPartition(args[2], 0), Long.parseLong(args[3]));
                default -> throw new IllegalArgumentException(args[0]);
            }
        }
    }

    static void abort(Admin admin, TopicPartition tp) throws Exception {
        List<ProducerState> producers = admin.describeProducers(List.of(tp)).partitionResult(tp)
                .get(30, TimeUnit.SECONDS).activeProducers();
        for (ProducerState producer : producers) {
            if (producer.currentTransactionStartOffset().isEmpty()) {
                continue;
            }
            admin.abortTransaction(new AbortTransactionSpec(tp, producer.producerId(),
                    (short) producer.producerEpoch(), producer.coordinatorEpoch().orElse(0)))
                    .all().get(30, TimeUnit.SECONDS);
            System.out.println("aborted " + producer.producerId());
        }
    }

    static void logDirs(Admin admin, String topic) throws Exception {
        Map<String, LogDirDescription> dirs = admin.describeLogDirs(List.of(1)).allDescriptions()
                .get(30, TimeUnit.SECONDS).get(1);
        for (Map.Entry<String, LogDirDescription> dir : dirs.entrySet()) {
            for (Map.Entry<TopicPartition, ReplicaInfo> replica : dir.getValue().replicaInfos().entrySet()) {
                if (replica.getKey().topic().equals(topic)) {
                    System.out.println(dir.getKey() + " " + replica.getKey().partition() + " "
                            + replica.getValue().size() + " " + replica.getValue().offsetLag());
                }
            }
        }
    }

    static void delete(Admin admin, TopicPartition tp, long offset) throws Exception {
        try {
            long low = admin.deleteRecords(Map.of(tp, RecordsToDelete.beforeOffset(offset)))
                    .lowWatermarks().get(tp).get(30, TimeUnit.SECONDS).lowWatermark();
            System.out.println("low " + low);
        } catch (java.util.concurrent.ExecutionException e) {
            System.out.println("failed " + e.getCause().getClass().getSimpleName());
        }
    }
}
